/*
 * simulate.c - `muster simulate -f cluster.yaml`: schedule offline on a temporary
 * store with a simulated clock and print where everything ended up.
 *
 * This is musterd's own path, nothing re-implemented: store_open, sched_open,
 * model_manifest_parse + model_validate_all (strict fields), sched_apply, then sched_cycle per
 * tick.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "internal.h"
#include "scheduler.h"
#include "store.h"

#define MAX_CYCLES 100

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    remove(path);
    return 0;
}

static void remove_tree(const char *dir)
{
    if (dir)
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int is_evicted(json_t *pod)
{
    if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp"))
        return 1;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        const char *status = json_string_value(json_object_get(c, "status"));
        if (type && !strcmp(type, MODEL_COND_DISRUPTION_TARGET) && status &&
            !strcmp(status, "True"))
            return 1;
    }
    return 0;
}

struct pods_ctx {
    json_t *pods;
    int terminating;
};

static int collect_pod(void *ctx, const char *key, json_t *pod)
{
    struct pods_ctx *pc = ctx;
    json_t *spec = json_object_get(pod, "spec"), *status = json_object_get(pod, "status");
    json_t *node = json_object_get(spec, "nodeName");
    json_t *nom = json_object_get(status, "nominatedNodeName");
    json_t *phase = json_object_get(status, "phase");
    int evicted = is_evicted(pod);
    if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp"))
        pc->terminating = 1;
    json_object_set_new(pc->pods, key,
                        json_pack("{s:O, s:O, s:o, s:b}", "node", node ? node : json_null(),
                                  "nominatedNode", nom ? nom : json_null(), "phase",
                                  phase ? json_incref(phase) : json_string("Pending"), "evicted",
                                  evicted));
    return 0;
}

/* The outcome so far. Pods that disappeared since prev (evicted and then removed after the
 * grace period) stay in the outcome, marked evicted. *terminating: some pod is still
 * terminating, so later cycles will change things. */
static json_t *snapshot(struct sched *s, struct store *st, json_t *prev, int *terminating,
                        struct err *err)
{
    struct pods_ctx pc = {json_object(), 0};
    json_t *jobs = NULL, *out = NULL, *list = NULL;
    MDB_txn *txn = NULL;
    if (store_txn_begin(st, STORE_READ, &txn, err) < 0 ||
        store_each(txn, MODEL_POD, NULL, collect_pod, &pc, err) < 0)
        goto out;
    store_txn_abort(&txn);
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(prev, "pods"), key, v)
    {
        if (!json_object_get(pc.pods, key)) {
            json_t *gone = json_deep_copy(v);
            json_object_set_new(gone, "evicted", json_true());
            json_object_set_new(pc.pods, key, gone);
        }
    }
    if (sched_jobs(s, NULL, &list, err) < 0)
        goto out;
    jobs = json_object();
    size_t i;
    json_t *job;
    json_array_foreach(list, i, job)
    {
        const char *id = json_string_value(json_object_get(job, "id"));
        json_t *why = NULL;
        if (!id)
            continue;
        sched_why(s, id, &why, NULL);
        json_t *code = json_object_get(json_object_get(why, "primary"), "code");
        json_object_set_new(
            jobs, id,
            json_pack("{s:O, s:O}", "state",
                      json_object_get(job, "state") ? json_object_get(job, "state") : json_null(),
                      "why", code ? code : json_null()));
        json_decref(why);
    }
    json_t *queues = json_object(), *all = NULL, *q;
    size_t qi;
    if (sched_queues(s, &all, err) < 0)
        goto out;
    json_array_foreach(all, qi, q) json_object_set_new(
        queues, json_string_value(json_object_get(q, "name")),
        json_pack("{s:O,s:O,s:O}", "allocated", json_object_get(q, "allocated"), "deserved",
                  json_object_get(q, "deserved"), "share", json_object_get(q, "share")));
    json_decref(all);
    out = json_pack("{s:O, s:O, s:o}", "pods", pc.pods, "jobs", jobs, "queues", queues);
    *terminating = pc.terminating;
out:
    store_txn_abort(&txn);
    json_decref(pc.pods);
    json_decref(jobs);
    json_decref(list);
    return out;
}

int cli__load_manifest(struct cli *cli, const char *path, struct model_manifest *m, struct err *err)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f)
        return err_set(err, ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    for (size_t got = 1; got > 0;) {
        XGROW(buf, len + 65536 + 1, cap);
        got = fread(buf + len, 1, 65536, f);
        len += got;
    }
    /* a directory or a closed stdin reads as empty: say so rather than simulate nothing */
    int failed = ferror(f), saved = errno;
    if (f != stdin)
        fclose(f);
    if (failed) {
        free(buf);
        return err_set(err, ERR_IO, "cannot read '%s': %s", path, strerror(saved));
    }
    int rc = model_manifest_parse(buf, len, MODEL_FMT_AUTO, m, err);
    if (rc == 0 && m->n == 0)
        rc = err_set(err, ERR_INVALID, "'%s' holds no documents", path);
    json_t *errors = json_array();
    if (rc == 0)
        model_validate_all(m, buf, len, MODEL_FIELDS_STRICT, errors, NULL);
    free(buf);
    if (rc == 0 && json_array_size(errors) > 0) {
        rc = err_set(err, ERR_INVALID, "%zu errors in '%s'", json_array_size(errors), path);
        cli->errors = json_incref(errors);
    }
    json_decref(errors);
    return rc;
}

static int parse_tick(struct cli *cli, int64_t *tick_ms, struct err *err)
{
    const char *t = cli__flag(cli, "tick");
    if (!t)
        return 0;
    char *end = NULL;
    double x = strtod(t, &end);
    if (end == t || *end || x <= 0 || x > 86400.0 * 365)
        return err_set(err, ERR_INVALID,
                       "flag '--tick' needs a positive number of seconds, got '%s'", t);
    *tick_ms = (int64_t)(x * 1000.0);
    return 0;
}

/* Runs the cycles; *out new outcome. */
static int run(struct cli *cli, struct store *st, struct model_manifest *m, uint64_t cycles,
               int64_t tick_ms, json_t **out, struct err *err)
{
    struct sched *s = NULL;
    struct sched_options opts = {.mark_running = 1, .grace_ms = 30000};
    json_t *results = NULL, *snap = NULL;
    int64_t now = clock_now_ms();
    int rc, terminating = 0;
    if ((rc = sched_open(st, &opts, &s, err)) < 0 ||
        (rc = sched_apply(s, m, now, &results, err)) < 0)
        goto out;
    if (!(snap = snapshot(s, st, NULL, &terminating, err))) {
        rc = err->code ? err->code : ERR_INTERNAL;
        goto out;
    }
    uint64_t max = cycles ? cycles : MAX_CYCLES;
    for (uint64_t i = 0; i < max; i++) {
        now += tick_ms;
        if ((rc = sched_cycle(s, now, NULL, err)) < 0)
            goto out;
        json_t *next = snapshot(s, st, snap, &terminating, err);
        if (!next) {
            rc = err->code ? err->code : ERR_INTERNAL;
            goto out;
        }
        int same = json_equal(next, snap);
        json_decref(snap);
        snap = next;
        if (!cycles && same && !terminating)
            break;
    }
    *out = json_incref(snap);
out:
    json_decref(snap);
    json_decref(results);
    sched_close(s);
    return rc;
}

int cli__cmd_simulate(struct cli *cli)
{
    struct err err = ERR_INIT;
    struct model_manifest m = {0};
    struct store *st = NULL;
    json_t *outcome = NULL;
    char dir[4096];
    const char *tmp = getenv("TMPDIR");
    uint64_t cycles = 0;
    int64_t tick_ms = 1000;
    int made = 0, rc = CLI_EXIT_OK;
    const char *path = cli__flag(cli, "filename");
    if (!path)
        return cli__usage_error(cli, "simulate needs -f cluster.yaml");
    if (cli->npos > 0)
        return cli__usage_error(cli, "unexpected argument '%s'", cli->pos[0]);
    if (cli__flag_u64(cli, "cycles", &cycles, &err) < 0 || parse_tick(cli, &tick_ms, &err) < 0)
        return cli__usage_error(cli, "%s", err.msg);
    if (cli__load_manifest(cli, path, &m, &err) < 0)
        goto fail;
    snprintf(dir, sizeof(dir), "%s/muster-simulate-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        err_set(&err, ERR_IO, "cannot create a temporary directory in '%s': %s",
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        goto fail;
    }
    made = 1;
    struct store_options so = {.dir = dir, .sync = STORE_SYNC_NONE};
    if (store_open(&so, &st, &err) < 0 || run(cli, st, &m, cycles, tick_ms, &outcome, &err) < 0)
        goto fail;
    if (cli->output == CLI_OUT_YAML) {
        cli__print_doc(cli, outcome);
    } else {
        char *s = json_dumps(outcome, JSON_INDENT(2) | JSON_SORT_KEYS);
        printf("%s\n", s);
        free(s);
    }
    goto out;
fail:
    rc = cli__fail(cli, &err);
out:
    json_decref(outcome);
    store_close(st);
    if (made)
        remove_tree(dir);
    model_manifest_free(&m);
    return rc;
}
