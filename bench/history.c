/*
 * history.c - bench_history: time travel at 5,000 nodes with a week of history (issue #26).
 *
 * Writes a week straight through the store (store_put, store_pod_bind, store_delete, why
 * documents and audit records, as the scheduler's writers make them, each simulated minute
 * one write transaction): --nodes nodes (default 5,000), every minute --rate pods (default
 * 10) applied, bound and, the minute after, marked Running, each deleted --life minutes
 * (default 360) after it arrived, so about rate x life pods live at once; every hour a node
 * is cordoned or uncordoned. Audit records carry the simulated times, which end now.
 *
 * Then asks the past as GET /api/v1/state and .../why do (sched_state_at, sched_why_at,
 * then the answer serialized): --queries points spread evenly over the week's records (by
 * seq) and as many by time (?at=), and prints each kind's median, p90 and max in ms.
 *
 *     bench_history [--nodes 5000] [--minutes 10080] [--rate 10] [--life 360] [--queries 21]
 *                   [--keep DIR]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "scheduler.h"
#include "store.h"

struct cfg {
    int nodes, minutes, rate, life, queries;
    const char *keep;
};

static void die(const char *what, const struct err *err)
{
    fprintf(stderr, "bench_history: %s: %s\n", what, err ? err->msg : "");
    exit(1);
}

static json_t *node_doc(int i, int cordoned)
{
    char name[32], block[32];
    snprintf(name, sizeof(name), "node-%05d", i);
    snprintf(block, sizeof(block), "block-%03d", i / 32);
    return json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:b},s:{s:{s:s,s:s,s:s,s:s}}}", "apiVersion",
                     "v1", "kind", "Node", "metadata", "name", name, "labels",
                     "network.topology.nvidia.com/block", block, "spec", "unschedulable",
                     cordoned, "status", "allocatable", "cpu", "64", "memory", "512Gi", "pods",
                     "110", "nvidia.com/gpu", "8");
}

static json_t *pod_doc(long id, const char *created)
{
    char name[32];
    snprintf(name, sizeof(name), "job-%07ld", id);
    return json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:{s:s}},s:{s:i,s:[{s:s,s:s,s:{s:{s:s,s:s,s:s}}}]},"
                     "s:{s:s}}",
                     "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
                     "week", "creationTimestamp", created, "labels", "app", "bench", "spec",
                     "priority", (int)(id % 7) * 10, "containers", "name", "main", "image",
                     "trainer:1", "resources", "requests", "cpu", "4", "memory", "32Gi",
                     "nvidia.com/gpu", "1", "status", "phase", "Pending");
}

static void audit(MDB_txn *txn, const char *kind, const char *ts, const char *job, long cycle)
{
    struct err err = ERR_INIT;
    json_t *rec = json_pack("{s:s,s:s,s:I}", "kind", kind, "ts", ts, "cycle", (json_int_t)cycle);
    if (job)
        json_object_set_new(rec, "job", json_string(job));
    if (store_audit_append(txn, rec, NULL, &err) < 0)
        die("audit", &err);
    json_decref(rec);
}

struct minute {
    struct cfg *c;
    long m;
    int64_t t0;
};

static int write_minute(MDB_txn *txn, void *ctx, struct err *err)
{
    struct minute *w = ctx;
    struct cfg *c = w->c;
    char ts[64], key[64], node[32];
    int64_t now = w->t0 + w->m * 60000;
    clock_format_rfc3339_ms(now, ts, sizeof(ts));
    int rc = 0;
    for (int i = 0; rc == 0 && i < c->rate; i++) { /* arrivals */
        long id = w->m * c->rate + i;
        json_t *p = pod_doc(id, ts);
        rc = store_put(txn, MODEL_POD, p, NULL, err);
        json_decref(p);
        snprintf(key, sizeof(key), "week/job-%07ld", id);
        audit(txn, "applied", ts, key, w->m);
    }
    for (int i = 0; rc == 0 && i < c->rate; i++) { /* this minute's cycle binds them */
        long id = w->m * c->rate + i;
        snprintf(key, sizeof(key), "week/job-%07ld", id);
        snprintf(node, sizeof(node), "node-%05ld", (id * 7919) % c->nodes);
        rc = store_pod_bind(txn, key, node, ts, err);
        json_t *why = json_pack("{s:s,s:s,s:I,s:{s:s}}", "job", key, "state", "Scheduled",
                                "cycle", (json_int_t)w->m, "primary", "code", "Placed");
        if (rc == 0)
            rc = store_doc_put(txn, STORE_DB_WHY, key, why, err);
        json_decref(why);
    }
    audit(txn, "placed", ts, NULL, w->m);
    for (int i = 0; rc == 0 && w->m > 0 && i < c->rate; i++) { /* last minute's run */
        long id = (w->m - 1) * c->rate + i;
        json_t *p = NULL;
        snprintf(key, sizeof(key), "week/job-%07ld", id);
        if ((rc = store_get(txn, MODEL_POD, key, &p, err)) == 0) {
            model_pod_set_phase(p, "Running", NULL, NULL);
            rc = store_put(txn, MODEL_POD, p, NULL, err);
        }
        json_decref(p);
    }
    audit(txn, "running", ts, NULL, w->m);
    for (int i = 0; rc == 0 && w->m >= c->life && i < c->rate; i++) { /* departures */
        long id = (w->m - c->life) * c->rate + i;
        snprintf(key, sizeof(key), "week/job-%07ld", id);
        rc = store_delete(txn, MODEL_POD, key, NULL, err);
        if (rc == 0)
            rc = store_doc_delete(txn, STORE_DB_WHY, key, err);
        audit(txn, "deleted", ts, key, w->m);
    }
    if (rc == 0 && w->m % 60 == 0) { /* a node cordoned, or back */
        json_t *n = node_doc((int)((w->m / 60) % c->nodes), (int)((w->m / 60) % 2));
        rc = store_put(txn, MODEL_NODE, n, NULL, err);
        json_decref(n);
        audit(txn, "applied", ts, NULL, w->m);
    }
    audit(txn, "cycle", ts, NULL, w->m);
    return rc;
}

static int write_nodes(MDB_txn *txn, void *ctx, struct err *err)
{
    struct minute *w = ctx;
    char ts[64];
    clock_format_rfc3339_ms(w->t0, ts, sizeof(ts));
    for (int i = 0; i < w->c->nodes; i++) {
        json_t *n = node_doc(i, 0);
        int rc = store_put(txn, MODEL_NODE, n, NULL, err);
        json_decref(n);
        if (rc < 0)
            return rc;
    }
    audit(txn, "applied", ts, NULL, 0);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *what, double *ms, int n)
{
    qsort(ms, (size_t)n, sizeof(*ms), cmp_double);
    printf("%-34s n=%d  median %.1f ms  p90 %.1f ms  max %.1f ms\n", what, n, ms[n / 2],
           ms[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1], ms[n - 1]);
}

int main(int argc, char **argv)
{
    struct cfg c = {5000, 10080, 10, 360, 21, NULL};
    for (int i = 1; i + 1 < argc; i += 2) {
        int *slot = !strcmp(argv[i], "--nodes")     ? &c.nodes
                    : !strcmp(argv[i], "--minutes") ? &c.minutes
                    : !strcmp(argv[i], "--rate")    ? &c.rate
                    : !strcmp(argv[i], "--life")    ? &c.life
                    : !strcmp(argv[i], "--queries") ? &c.queries
                                                    : NULL;
        if (slot)
            *slot = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--keep"))
            c.keep = argv[i + 1];
        else {
            fprintf(stderr, "usage: bench_history [--nodes N] [--minutes M] [--rate R] [--life L] "
                            "[--queries Q] [--keep DIR]\n");
            return 2;
        }
    }
    char tmpl[] = "/tmp/bench-history-XXXXXX";
    const char *dir = c.keep ? c.keep : mkdtemp(tmpl);
    struct store_options so = {.dir = dir, .map_size = (size_t)1 << 30, .sync = STORE_SYNC_NONE};
    struct store *st = NULL;
    struct err err = ERR_INIT;
    if (store_open(&so, &st, &err) < 0)
        die("store_open", &err);
    struct minute w = {&c, 0, clock_now_ms() - (int64_t)c.minutes * 60000 - 60000};
    int64_t b0 = clock_mono_ms();
    if (store_write(st, write_nodes, &w, &err) < 0)
        die("nodes", &err);
    for (w.m = 0; w.m < c.minutes; w.m++)
        if (store_write(st, write_minute, &w, &err) < 0)
            die("minute", &err);
    store_sync(st, &err);
    struct store_stats ss;
    store_stats(st, &ss, &err);
    printf("week written: %d nodes, %ld pods over %d minutes (%d live), %" PRIu64
           " audit records, %.0f MiB store, %.1f s\n",
           c.nodes, (long)c.minutes * c.rate, c.minutes, c.rate * c.life, ss.audit_last_seq,
           (double)ss.file_bytes / (1 << 20), (double)(clock_mono_ms() - b0) / 1000.0);

    struct sched_options opts = {0};
    struct sched *s = NULL;
    if (sched_open(st, &opts, &s, &err) < 0)
        die("sched_open", &err);
    uint64_t last = ss.audit_last_seq;
    double *by_seq = xcalloc((size_t)c.queries, sizeof(double)),
           *by_at = xcalloc((size_t)c.queries, sizeof(double)),
           *why = xcalloc((size_t)c.queries, sizeof(double));
    size_t nodes_seen = 0, pods_seen = 0;
    for (int q = 0; q < c.queries; q++) {
        char seq[32], at[64], id[64];
        uint64_t n = 1 + (last - 1) * (uint64_t)q / (uint64_t)(c.queries > 1 ? c.queries - 1 : 1);
        snprintf(seq, sizeof(seq), "%" PRIu64, n);
        struct sched_at a = {.seq = seq, .now_ms = clock_now_ms()};
        json_t *doc = NULL;
        int64_t t = clock_mono_ns();
        if (sched_state_at(s, &a, &doc, &err) < 0)
            die("state?seq", &err);
        free(json_dumps(doc, JSON_COMPACT));
        by_seq[q] = (double)(clock_mono_ns() - t) / 1e6;
        nodes_seen += json_array_size(json_object_get(doc, "nodes"));
        pods_seen += json_array_size(json_object_get(doc, "pods"));
        json_decref(doc);
        clock_format_rfc3339_ms(w.t0 + 60000 + (int64_t)c.minutes * 60000 * q /
                                               (c.queries > 1 ? c.queries - 1 : 1) -
                                    (q == c.queries - 1 ? 60000 : 0),
                                at, sizeof(at));
        a = (struct sched_at){.at = at, .now_ms = clock_now_ms()};
        t = clock_mono_ns();
        if (sched_state_at(s, &a, &doc, &err) < 0)
            die("state?at", &err);
        free(json_dumps(doc, JSON_COMPACT));
        by_at[q] = (double)(clock_mono_ns() - t) / 1e6;
        json_decref(doc);
        long m = (long)((int64_t)c.minutes * q / (c.queries > 1 ? c.queries - 1 : 1));
        snprintf(id, sizeof(id), "week/job-%07ld", (m > 0 ? m - 1 : 0) * c.rate);
        t = clock_mono_ns();
        if (sched_why_at(s, id, &a, &doc, &err) < 0 && err.code != ERR_NOT_FOUND)
            die("why?at", &err);
        free(doc ? json_dumps(doc, JSON_COMPACT) : NULL);
        why[q] = (double)(clock_mono_ns() - t) / 1e6;
        json_decref(doc);
    }
    printf("answers held %.0f nodes and %.0f pods on average\n", (double)nodes_seen / c.queries,
           (double)pods_seen / c.queries);
    report("GET /api/v1/state?seq= (+ JSON)", by_seq, c.queries);
    report("GET /api/v1/state?at= (+ JSON)", by_at, c.queries);
    report("GET .../why?at= (+ JSON)", why, c.queries);
    free(by_seq);
    free(by_at);
    free(why);
    sched_close(s);
    store_close(st);
    if (!c.keep) {
        char *cmd = xasprintf("rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_history: could not remove %s\n", dir);
        free(cmd);
    }
    return 0;
}
