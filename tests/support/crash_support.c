/*
 * crash_support.c - shared by the SIGKILL crash tests; see crash_support.h.
 */
#include "crash_support.h"

#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "sched_invariants.h"
#include "scheduler.h"

char *crash_config(const char *body)
{
    static int seq;
    char path[256];
    snprintf(path, sizeof(path), "/tmp/muster-crash-%d-%d.yaml", (int)getpid(), seq++);
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write '%s'", path);
    fprintf(f, "%ssync: full\nlog_level: error\n", body);
    fclose(f);
    return strdup(path);
}

void crash_config_free(char *path)
{
    if (!path)
        return;
    unlink(path);
    free(path);
}

void crash_post_yaml(const struct musterd *m, char *yaml)
{
    static const char *const hdr[] = {"Content-Type: application/yaml", NULL};
    struct http_resp r;
    http_request("POST", m->base, "/api/v1/manifests", yaml, hdr, &r);
    ck_assert_msg(r.status == -1 || r.status == 200 || r.status == 201, "apply: %ld %s", r.status,
                  r.body ? r.body : "");
    http_resp_free(&r);
    free(yaml);
}

void crash_kill(struct musterd *m, int max_us)
{
    usleep((useconds_t)(rand() % (max_us > 0 ? max_us : 1)));
    kill(m->pid, SIGKILL);
    waitpid(m->pid, NULL, 0);
}

/* Every bound pod was placed by exactly one "placed" record, on the node it is bound to. */
struct placed_ctx {
    json_t *node_of; /* pod key -> node from the audit log */
    int dup;
    char msg[256];
};

static int placed_cb(void *ctx, uint64_t seq, const char *json, size_t len)
{
    struct placed_ctx *pc = ctx;
    json_t *rec = json_loadb(json, len, 0, NULL), *pods, *nodes;
    if (!rec)
        return -1;
    if (strcmp(json_string_value(json_object_get(rec, "kind")), "placed") == 0) {
        pods = json_object_get(rec, "pods");
        nodes = json_object_get(rec, "nodes");
        for (size_t i = 0; i < json_array_size(pods); i++) {
            const char *pod = json_string_value(json_array_get(pods, i));
            if (json_object_get(pc->node_of, pod) && !pc->dup) {
                pc->dup = 1;
                snprintf(pc->msg, sizeof(pc->msg), "pod '%s' placed twice (seq %llu)", pod,
                         (unsigned long long)seq);
            }
            json_object_set(pc->node_of, pod, json_array_get(nodes, i));
        }
    }
    json_decref(rec);
    return 0;
}

static int bound_cb(void *ctx, const char *key, json_t *pod)
{
    struct placed_ctx *pc = ctx;
    const char *node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    json_t *placed = json_object_get(pc->node_of, key);
    if (node && (!placed || strcmp(node, json_string_value(placed)) != 0) && !pc->dup) {
        pc->dup = 1;
        snprintf(pc->msg, sizeof(pc->msg), "pod '%s' bound to '%s' but placed on '%s'", key, node,
                 placed ? json_string_value(placed) : "(nothing)");
    }
    return 0;
}

int crash_check_store(const char *dir, int kill_no, crash_check_fn extra, void *ctx)
{
    struct store_options so = {.dir = dir};
    struct store *st = NULL;
    struct err err = ERR_INIT;
    char msg[512];
    MDB_txn *txn = NULL;
    struct placed_ctx pc = {.node_of = json_object()};

    ck_assert_msg(store_open(&so, &st, &err) == 0, "kill %d: reopen: %s", kill_no, err.msg);
    ck_assert_msg(sched_invariants_check(st, msg, sizeof(msg)) == 0, "kill %d: %s", kill_no, msg);
    ck_assert_int_eq(store_txn_begin(st, STORE_READ, &txn, &err), 0);
    ck_assert_int_eq(store_audit_scan(txn, 1, 0, placed_cb, &pc, &err), 0);
    ck_assert_int_eq(store_each(txn, MODEL_POD, NULL, bound_cb, &pc, &err), 0);
    ck_assert_msg(!pc.dup, "kill %d: %s", kill_no, pc.msg);
    if (extra)
        extra(txn, kill_no, ctx);
    store_txn_abort(&txn);
    int placed = (int)json_object_size(pc.node_of);
    json_decref(pc.node_of);
    store_close(st);
    return placed;
}

void crash_replay_store(const char *dir, const struct sched_options *opts)
{
    struct store_options so = {.dir = dir};
    struct store *st = NULL;
    struct sched *s = NULL;
    struct err err = ERR_INIT;
    MDB_txn *txn = NULL;
    uint64_t first = 0;
    json_t *rep = NULL;
    ck_assert_msg(store_open(&so, &st, &err) == 0, "replay: reopen: %s", err.msg);
    ck_assert_int_eq(store_txn_begin(st, STORE_READ, &txn, &err), 0);
    ck_assert_int_eq(store_history_first_seq(txn, &first, &err), 0);
    store_txn_abort(&txn);
    ck_assert_msg(sched_open(st, opts, &s, &err) == 0, "replay: %s", err.msg);
    ck_assert_msg(sched_replay(s, first ? first : 1, 0, 1, &rep, &err) == 0, "replay: %s", err.msg);
    char *diff =
        json_dumps(json_array_get(json_object_get(rep, "cyclesDiffering"), 0), JSON_INDENT(1));
    ck_assert_msg(json_is_true(json_object_get(rep, "ok")),
                  "replay over the killed musterd's log: %lld of %lld cycles differ, the first: %s",
                  (long long)json_integer_value(json_object_get(rep, "differences")),
                  (long long)json_integer_value(json_object_get(rep, "cycles")), diff);
    ck_assert_int_gt(json_integer_value(json_object_get(rep, "decisions")), 0);
    free(diff);
    json_decref(rep);
    sched_close(s);
    store_close(st);
}
