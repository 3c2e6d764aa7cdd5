/*
 * replay.c - `muster replay -f cluster.yaml --trace jobs.csv [--policy-a A --policy-b B]
 * [--out DIR] [--horizon SECONDS] [--starve SECONDS]`: the real scheduler in virtual time
 * (docs/replay.md).
 *
 * musterd's own path, as `muster simulate`: a temporary store (sync none), sched_open with
 * the policy's options (a policy file is a musterd config file: cycle_interval, max_wait,
 * queueing_strategy, grace_period), sched_apply of the cluster, then per cycle time t (every
 * cycle_interval from the start): the jobs arrived by t are applied, the pods whose runtime
 * is over are deleted (a Job controller's cleanup; a pod that passed its
 * activeDeadlineSeconds was already marked Failed by the scheduler and is deleted too), and
 * sched_cycle(t) runs. What the cycle decided is read back from the audit log ("placed",
 * "reserved", "preempted", "deadline-exceeded", the "backfill" of a placed record): the
 * replay keeps no scheduling logic of its own. While no job waits, time jumps to the next
 * arrival or end.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "clock.h"
#include "internal.h"
#include "replay.h"
#include "scheduler.h"
#include "server.h"
#include "store.h"

#define REPLAY_T0_MS 1767225600000LL /* 2026-01-01T00:00:00Z: the trace's time 0 */
#define REPLAY_HORIZON_MS (3LL * 86400 * 1000)

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

/* ---- the end of jobs: a min-heap of (time, job) ---- */

struct ev {
    int64_t t;
    int job; /* -1: a wake-up only (a cycle must run then: a job passes its limit) */
};
struct heap {
    struct ev *e;
    size_t n, cap;
};

static void heap_push(struct heap *h, int64_t t, int job)
{
    XGROW(h->e, h->n + 1, h->cap);
    size_t i = h->n++;
    while (i > 0 && h->e[(i - 1) / 2].t > t) {
        h->e[i] = h->e[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->e[i] = (struct ev){t, job};
}

static struct ev heap_pop(struct heap *h)
{
    struct ev top = h->e[0], last = h->e[--h->n];
    size_t i = 0;
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= h->n)
            break;
        if (k + 1 < h->n && h->e[k + 1].t < h->e[k].t)
            k++;
        if (h->e[k].t >= last.t)
            break;
        h->e[i] = h->e[k];
        i = k;
    }
    if (h->n)
        h->e[i] = last;
    return top;
}

/* ---- one run ---- */

struct rstate {
    const struct replay_trace *t;
    struct replay_run *r;
    struct sched *s;
    struct store *st;
    json_t *index; /* "replay/<id>" -> job index */
    struct heap ends;
    uint64_t seq; /* audit records read up to */
    size_t next;  /* next arrival */
    long pending, running, done;
    double used, capacity;
    const char *res; /* the utilisation's resource */
    int64_t now;     /* the time of the cycle being read back */
};

static double job_use(const struct rstate *rs, const struct replay_job *j)
{
    int64_t v = 0;
    if (!strcmp(rs->res, "nvidia.com/gpu"))
        return (double)j->gpu * j->pods;
    model_quantity_parse(j->cpu, 1, &v, NULL);
    return (double)v / 1000.0 * j->pods;
}

/* Capacity of the resource over the manifest's nodes. */
static double capacity(const struct model_manifest *m, const char *res)
{
    double sum = 0;
    for (size_t i = 0; i < m->n; i++) {
        json_t *o = m->docs[i].obj;
        const char *kind = json_string_value(json_object_get(o, "kind"));
        if (!kind || strcmp(kind, "Node"))
            continue;
        json_t *q =
            json_object_get(json_object_get(json_object_get(o, "status"), "allocatable"), res);
        int64_t v = 0;
        const char *text = json_string_value(q);
        char num[32];
        if (json_is_integer(q)) {
            snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(q));
            text = num;
        }
        if (text && model_quantity_parse(text, model_resource_is_milli(res), &v, NULL) == 0)
            sum += model_resource_is_milli(res) ? (double)v / 1000.0 : (double)v;
    }
    return sum;
}

/* Applies docs (an array, taken) at now. */
static int apply_docs(struct rstate *rs, json_t *docs, int64_t now, struct err *err)
{
    struct model_manifest m = {0};
    size_t i;
    json_t *d;
    m.docs = xcalloc(json_array_size(docs) + 1, sizeof(*m.docs));
    json_array_foreach(docs, i, d)
    {
        m.docs[m.n].index = (int)m.n + 1;
        m.docs[m.n++].obj = json_incref(d);
    }
    json_decref(docs);
    json_t *res = NULL;
    int rc = m.n ? sched_apply(rs->s, &m, now, &res, err) : 0;
    json_decref(res);
    model_manifest_free(&m);
    return rc;
}

static int arrivals(struct rstate *rs, int64_t t_ms, struct err *err)
{
    json_t *docs = json_array();
    while (rs->next < rs->t->n && rs->t->jobs[rs->next].arrival_ms <= t_ms) {
        json_t *jd = replay_job_docs(&rs->t->jobs[rs->next++], REPLAY_T0_MS);
        json_array_extend(docs, jd);
        json_decref(jd);
        rs->pending++;
    }
    return apply_docs(rs, docs, REPLAY_T0_MS + t_ms, err);
}

/* Deletes job ji's pods and PodGroup (the pods ran their time). */
static int finish(struct rstate *rs, int ji, int64_t t_ms, struct err *err)
{
    const struct replay_job *j = &rs->t->jobs[ji];
    struct replay_outcome *o = &rs->r->out[ji];
    int rc = 0;
    for (int i = 0; rc == 0 && i < j->pods; i++) {
        char key[128], name[96];
        replay_pod_name(j, i, name, sizeof(name));
        snprintf(key, sizeof(key), "replay/%s", name);
        rc = sched_delete_by(rs->s, MODEL_POD, key, REPLAY_T0_MS + t_ms, NULL, err);
        if (rc == ERR_NOT_FOUND) { /* a preemption victim removed already */
            err_clear(err);
            rc = 0;
        }
    }
    if (rc == 0 && replay_job_is_gang(j)) {
        char key[128];
        snprintf(key, sizeof(key), "replay/%s", j->id);
        rc = sched_delete_by(rs->s, MODEL_PODGROUP, key, REPLAY_T0_MS + t_ms, NULL, err);
        if (rc == ERR_NOT_FOUND) {
            err_clear(err);
            rc = 0;
        }
    }
    if (o->running) {
        o->running = 0;
        rs->running--;
        rs->used -= job_use(rs, j);
    }
    if (o->end_ms < 0)
        o->end_ms = t_ms;
    rs->done++;
    return rc;
}

static int ends(struct rstate *rs, int64_t t_ms, struct err *err)
{
    int rc = 0;
    while (rc == 0 && rs->ends.n && rs->ends.e[0].t <= t_ms) {
        struct ev e = heap_pop(&rs->ends);
        if (e.job >= 0 && (rs->r->out[e.job].end_ms < 0 || rs->r->out[e.job].running))
            rc = finish(rs, e.job, e.t, err);
    }
    return rc;
}

static int job_of(struct rstate *rs, json_t *rec)
{
    json_t *ix = json_object_get(rs->index, json_string_value(json_object_get(rec, "job")));
    return ix ? (int)json_integer_value(ix) : -1;
}

static void started(struct rstate *rs, int ji, int64_t t_ms, json_t *rec)
{
    const struct replay_job *j = &rs->t->jobs[ji];
    struct replay_outcome *o = &rs->r->out[ji];
    if (json_object_get(rec, "backfill"))
        o->backfilled = 1;
    if (o->start_ms >= 0)
        return; /* a later pod of an elastic job */
    o->start_ms = t_ms;
    o->running = 1;
    rs->pending--;
    rs->running++;
    rs->used += job_use(rs, j);
    /* a job that runs past its limit is ended by the scheduler (activeDeadlineSeconds: its
     * "deadline-exceeded" record); the others are deleted when their runtime is over */
    if (!(j->limit_ms > 0 && j->runtime_ms > j->limit_ms))
        heap_push(&rs->ends, t_ms + j->runtime_ms, ji);
    else /* the cycle at start + limit must run, even when nothing else happens then */
        heap_push(&rs->ends, t_ms + j->limit_ms, -1);
}

static int read_record(void *ctx, uint64_t seq, const char *json, size_t len)
{
    struct rstate *rs = ctx;
    rs->seq = seq;
    int placed = !!memmem(json, len, "\"kind\":\"placed\"", 15);
    int reserved = !placed && memmem(json, len, "\"kind\":\"reserved\"", 17);
    int preempted = !placed && !reserved && memmem(json, len, "\"kind\":\"preempted\"", 18);
    int deadline = !placed && !reserved && !preempted &&
                   memmem(json, len, "\"kind\":\"deadline-exceeded\"", 26);
    if (!placed && !reserved && !preempted && !deadline)
        return 0;
    json_t *rec = json_loadb(json, len, 0, NULL);
    int ji = job_of(rs, rec);
    int64_t t_ms = rs->now; /* the records after cycle t are of time t */
    if (ji >= 0 && placed)
        started(rs, ji, t_ms, rec);
    else if (ji >= 0 && reserved)
        rs->r->out[ji].reserved = 1;
    if (ji >= 0 && placed && json_object_get(rec, "backfill"))
        rs->r->backfills++;
    if (ji >= 0 && reserved)
        rs->r->reservations++;
    if (ji >= 0 && deadline && !rs->r->out[ji].killed) {
        rs->r->out[ji].killed = 1;
        rs->r->out[ji].end_ms = t_ms;
        rs->r->deadlines++;
        heap_push(&rs->ends, t_ms, ji); /* its Failed pods go */
    }
    if (ji >= 0 && preempted && !rs->r->out[ji].preempted) {
        rs->r->out[ji].preempted = 1;
        rs->r->out[ji].end_ms = t_ms;
        heap_push(&rs->ends, t_ms, ji); /* its pods go */
    }
    json_decref(rec);
    return 0;
}

static int read_audit(struct rstate *rs, struct err *err)
{
    MDB_txn *txn = NULL;
    int rc = store_txn_begin(rs->st, STORE_READ, &txn, err);
    if (rc == 0)
        rc = store_audit_scan(txn, rs->seq + 1, 0, read_record, rs, err);
    store_txn_abort(&txn);
    return rc;
}

static void sample(struct rstate *rs, int64_t t_ms, json_t *sum)
{
    struct replay_run *r = rs->r;
    (void)sum;
    XGROW(r->samples, r->nsamples + 1, r->capsamples);
    json_t *resv = NULL;
    long nresv = 0;
    if (sched_reservations(rs->s, &resv, NULL) == 0)
        nresv = (long)json_array_size(resv);
    json_decref(resv);
    r->samples[r->nsamples++] =
        (struct replay_sample){t_ms, rs->used, rs->capacity, rs->pending, rs->running, nresv};
}

/* The queues the trace names that the cluster does not define (weight 1). New array. */
static json_t *missing_queues(const struct model_manifest *m, const struct replay_trace *t)
{
    json_t *have = json_object(), *docs = json_array();
    for (size_t i = 0; i < m->n; i++) {
        json_t *o = m->docs[i].obj;
        const char *kind = json_string_value(json_object_get(o, "kind"));
        if (kind && !strcmp(kind, "Queue"))
            json_object_set_new(
                have, json_string_value(json_object_get(json_object_get(o, "metadata"), "name")),
                json_true());
    }
    json_object_set_new(have, "default", json_true());
    for (size_t i = 0; i < t->n; i++) {
        const char *q = t->jobs[i].queue;
        if (!q || json_object_get(have, q))
            continue;
        json_object_set_new(have, q, json_true());
        json_array_append_new(docs, json_pack("{s:s,s:s,s:{s:s},s:{s:i}}", "apiVersion",
                                              "scheduling.volcano.sh/v1beta1", "kind", "Queue",
                                              "metadata", "name", q, "spec", "weight", 1));
    }
    json_decref(have);
    return docs;
}

static int run_loop(struct rstate *rs, int64_t interval, int64_t horizon, struct err *err)
{
    int rc = 0;
    int64_t t = 0;
    while (rc == 0 && t <= horizon) {
        if ((rc = arrivals(rs, t, err)) < 0 || (rc = ends(rs, t, err)) < 0)
            break;
        json_t *sum = NULL;
        if ((rc = sched_cycle(rs->s, REPLAY_T0_MS + t, &sum, err)) < 0)
            break;
        rs->r->cycles++;
        rs->now = t;
        rc = read_audit(rs, err);
        sample(rs, t, sum);
        json_decref(sum);
        if (rs->done == (long)rs->t->n)
            break;
        t += interval;
        if (rs->pending == 0) { /* nothing waits: to the next arrival or end */
            int64_t next = horizon + interval;
            if (rs->next < rs->t->n)
                next = rs->t->jobs[rs->next].arrival_ms;
            if (rs->ends.n && rs->ends.e[0].t < next)
                next = rs->ends.e[0].t;
            if (next > t)
                t += (next - t + interval - 1) / interval * interval;
        }
    }
    rs->r->end_ms = t;
    return rc;
}

/* Runs the trace under policy c (NULL: musterd's defaults) into r. */
static int run(struct model_manifest *m, const struct replay_trace *t,
               const struct server_config *c, struct replay_run *r, int64_t horizon,
               struct err *err)
{
    char dir[4096];
    const char *tmp = getenv("TMPDIR");
    struct store *st = NULL;
    struct rstate rs = {.t = t, .r = r, .index = json_object()};
    int rc = 0, made = 0;
    int64_t t0 = clock_mono_ms();
    snprintf(dir, sizeof(dir), "%s/muster-replay-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        rc = err_set(err, ERR_IO, "cannot create a temporary directory in '%s': %s",
                     tmp && *tmp ? tmp : "/tmp", strerror(errno));
        goto out;
    }
    made = 1;
    r->out = xcalloc(t->n + 1, sizeof(*r->out));
    for (size_t i = 0; i < t->n; i++) {
        r->out[i].start_ms = r->out[i].end_ms = -1;
        char *id = xasprintf("replay/%s", t->jobs[i].id);
        json_object_set_new(rs.index, id, json_integer((json_int_t)i));
        free(id);
    }
    double iv = c && c->cycle_interval > 0 ? c->cycle_interval : 1.0;
    r->interval_s = iv;
    r->max_wait_ms = c ? c->max_wait_ms : 0;
    r->strict = c ? c->default_queueing == MODEL_QUEUEING_STRICT_FIFO : 0;
    struct sched_options opts = {.mark_running = 1,
                                 .grace_ms = c && c->grace_ms > 0 ? c->grace_ms : 1,
                                 .max_wait_ms = r->max_wait_ms,
                                 .default_queueing = c ? c->default_queueing : 0};
    struct store_options so = {.dir = dir, .sync = STORE_SYNC_NONE};
    rs.res = t->uses_gpu ? "nvidia.com/gpu" : "cpu";
    rs.capacity = capacity(m, rs.res);
    if ((rc = store_open(&so, &st, err)) < 0 || (rc = sched_open(st, &opts, &rs.s, err)) < 0)
        goto out;
    rs.st = st;
    json_t *res = NULL;
    if ((rc = sched_apply(rs.s, m, REPLAY_T0_MS, &res, err)) < 0)
        goto out;
    json_decref(res);
    if ((rc = apply_docs(&rs, missing_queues(m, t), REPLAY_T0_MS, err)) < 0)
        goto out;
    rc = run_loop(&rs, (int64_t)(iv * 1000.0 + 0.5), horizon, err);
out:
    r->wall_s = (double)(clock_mono_ms() - t0) / 1000.0;
    sched_close(rs.s);
    store_close(st);
    if (made)
        nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    json_decref(rs.index);
    free(rs.ends.e);
    return rc;
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

static int parse_secs(struct cli *cli, const char *flag, int64_t *ms, struct err *err)
{
    const char *v = cli__flag(cli, flag);
    if (!v)
        return 0;
    char *end = NULL;
    double x = strtod(v, &end);
    if (end == v || *end || x <= 0 || x > 86400.0 * 3650)
        return err_set(err, ERR_INVALID, "flag '--%s' needs a positive number of seconds, got '%s'",
                       flag, v);
    *ms = (int64_t)(x * 1000.0);
    return 0;
}

static int write_json(const char *dir, json_t *doc, struct err *err)
{
    char *path = xasprintf("%s/replay.json", dir);
    int rc = json_dump_file(doc, path, JSON_INDENT(1) | JSON_SORT_KEYS) == 0
                 ? 0
                 : err_set(err, ERR_IO, "cannot write '%s'", path);
    free(path);
    return rc;
}

int cli__cmd_replay(struct cli *cli)
{
    struct err err = ERR_INIT;
    struct model_manifest m = {0};
    struct replay_trace t = {0};
    struct server_config pc[2];
    struct replay_run runs[2];
    const char *files[2] = {cli__flag(cli, "policy-a"), cli__flag(cli, "policy-b")};
    const char *path = cli__flag(cli, "filename"), *trace = cli__flag(cli, "trace");
    const char *dir = cli__flag(cli, "out") ? cli__flag(cli, "out") : "replay-out";
    json_t *sums[2] = {NULL, NULL}, *doc = NULL;
    int64_t horizon = -1, starve = -1;
    int np = 0, rc = CLI_EXIT_OK;
    memset(runs, 0, sizeof(runs));
    if (!path || !trace)
        return cli__usage_error(cli, "replay needs -f cluster.yaml and --trace jobs.csv");
    if (cli->npos > 0)
        return cli__usage_error(cli, "unexpected argument '%s'", cli->pos[0]);
    if (!files[0] && files[1])
        return cli__usage_error(cli, "--policy-b needs --policy-a");
    if (parse_secs(cli, "horizon", &horizon, &err) < 0 ||
        parse_secs(cli, "starve", &starve, &err) < 0)
        return cli__usage_error(cli, "%s", err.msg);
    for (int i = 0; i < 2; i++)
        server_config_init(&pc[i]);
    np = files[1] ? 2 : 1;
    for (int i = 0; i < np && files[i]; i++)
        if (server_config_load(&pc[i], files[i], &err) < 0) {
            rc = cli__usage_error(cli, "policy '%s': %s", files[i], err.msg);
            goto out;
        }
    if (cli__load_manifest(cli, path, &m, &err) < 0 || replay_trace_load(trace, &t, &err) < 0)
        goto fail;
    if (horizon < 0)
        horizon = t.jobs[t.n - 1].arrival_ms + REPLAY_HORIZON_MS;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        err_set(&err, ERR_IO, "cannot create '%s': %s", dir, strerror(errno));
        goto fail;
    }
    doc = json_pack("{s:s,s:s,s:[]}", "cluster", path, "trace", trace, "runs");
    for (int i = 0; i < np; i++) {
        runs[i].label = files[i] ? base_name(files[i]) : "default";
        if (run(&m, &t, files[i] ? &pc[i] : NULL, &runs[i], horizon, &err) < 0)
            goto fail;
        int64_t bound = starve >= 0 ? starve
                                    : (runs[i].max_wait_ms > 0 ? runs[i].max_wait_ms : 3600000) +
                                          t.longest_limit_ms;
        sums[i] = replay_summary(&t, &runs[i], bound);
        json_array_append(json_object_get(doc, "runs"), sums[i]);
        if (replay_write_csv(dir, &t, &runs[i], &err) < 0)
            goto fail;
    }
    if (write_json(dir, doc, &err) < 0)
        goto fail;
    if (cli->output == CLI_OUT_JSON)
        cli__print_doc(cli, doc);
    else
        replay_print(sums[0], sums[1]);
    goto out;
fail:
    rc = cli__fail(cli, &err);
out:
    for (int i = 0; i < 2; i++) {
        json_decref(sums[i]);
        free(runs[i].out);
        free(runs[i].samples);
        server_config_release(&pc[i]);
    }
    json_decref(doc);
    replay_trace_free(&t);
    model_manifest_free(&m);
    return rc;
}
