/*
 * bench_sched - scheduling throughput and cycle latency on a synthetic cluster.
 *
 *   bench_sched WORKLOAD [--nodes N] [--batch PODS] [--sync full|meta|none] [--keep DIR]
 *               [--rules]
 *
 * Applies the workload's nodes, then feeds its jobs to sched_apply in batches of about
 * --batch pods, running one scheduling cycle (one durable commit) after each batch, as pods
 * arriving at a live musterd would. Reports pods/s over cycle time (end to end, including
 * the commit), cycle latency median and p99, apply throughput, peak RSS, store size, and the
 * time to reopen the store with the view rebuilt.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "scheduler.h"
#include "store.h"
#include "workload.h"

struct opts {
    const char *workload;
    size_t nodes;
    size_t batch;
    enum store_sync sync;
    const char *keep;
    int rules;
};

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int apply_docs(struct sched *s, json_t *docs, struct err *err)
{
    struct model_manifest m;
    json_t *results = NULL;
    int rc = workload_manifest(docs, &m, err);
    if (rc < 0)
        return rc;
    rc = sched_apply(s, &m, clock_now_ms(), &results, err);
    json_decref(results);
    model_manifest_free(&m);
    return rc;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    o->nodes = 5000;
    o->batch = 1000;
    o->sync = STORE_SYNC_FULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--nodes") == 0 && i + 1 < argc)
            o->nodes = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
            o->batch = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--sync") == 0 && i + 1 < argc) {
            if (store_sync_parse(argv[++i], &o->sync, NULL) < 0)
                return -1;
        } else if (strcmp(argv[i], "--rules") == 0)
            o->rules = 1;
        else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc)
            o->keep = argv[++i];
        else if (argv[i][0] != '-' && !o->workload)
            o->workload = argv[i];
        else
            return -1;
    }
    return o->workload ? 0 : -1;
}

static void report_cycles(int64_t *ns, size_t n, size_t placed, size_t pods)
{
    int64_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += ns[i];
    qsort(ns, n, sizeof(*ns), cmp_i64);
    printf("cycles          %zu (batch of jobs then one cycle)\n", n);
    printf("placed          %zu / %zu pods\n", placed, pods);
    printf("cycle time      %.1f ms total, median %.2f ms, p99 %.2f ms, max %.2f ms\n", total / 1e6,
           n ? ns[n / 2] / 1e6 : 0, n ? ns[(n * 99) / 100] / 1e6 : 0, n ? ns[n - 1] / 1e6 : 0);
    printf("throughput      %.0f pods/s (placed pods over cycle time, durable commits)\n",
           total ? placed / (total / 1e9) : 0);
}

int main(int argc, char **argv)
{
    struct opts o = {0};
    struct err err = ERR_INIT;
    struct workload w;
    struct store *st = NULL;
    struct sched *s = NULL;
    char dir[] = "/tmp/muster-bench-XXXXXX";
    int64_t *cycle_ns = NULL, t0, apply_ns = 0;
    size_t ncycles = 0, cap = 0, placed = 0, i = 0, njobs;

    if (parse_args(argc, argv, &o) < 0) {
        fprintf(stderr, "usage: bench_sched basic|gang|gang-topology|biggang [--nodes N] "
                        "[--batch PODS] [--sync full|meta|none] [--keep DIR] [--rules]\n");
        return 2;
    }
    if (workload_make(o.workload, o.nodes, &w, &err) < 0 || !mkdtemp(dir))
        goto fail;
    if (o.rules)
        workload_add_rules(&w);
    struct store_options so = {.dir = o.keep ? o.keep : dir, .sync = o.sync};
    if (store_open(&so, &st, &err) < 0 || sched_open(st, NULL, &s, &err) < 0)
        goto fail;
    t0 = clock_mono_ns();
    if (apply_docs(s, w.infra, &err) < 0)
        goto fail;
    printf("workload        %s%s: %zu nodes, %zu jobs, %zu pods, sync %s\n", o.workload,
           o.rules ? " with rules" : "", o.nodes, json_array_size(w.jobs), w.pods,
           store_sync_name(o.sync));
    printf("apply nodes     %.1f ms\n", (clock_mono_ns() - t0) / 1e6);

    njobs = json_array_size(w.jobs);
    while (i < njobs) {
        json_t *batch = json_array(), *summary = NULL;
        size_t pods = 0;
        for (; i < njobs && pods < o.batch; i++) {
            json_t *docs = json_array_get(w.jobs, i);
            json_array_extend(batch, docs);
            pods += json_array_size(docs);
        }
        t0 = clock_mono_ns();
        int rc = apply_docs(s, batch, &err);
        apply_ns += clock_mono_ns() - t0;
        json_decref(batch);
        if (rc < 0)
            goto fail;
        t0 = clock_mono_ns();
        if (sched_cycle(s, clock_now_ms(), &summary, &err) < 0)
            goto fail;
        XGROW(cycle_ns, ncycles + 1, cap);
        cycle_ns[ncycles++] = clock_mono_ns() - t0;
        placed += (size_t)json_integer_value(json_object_get(summary, "placed"));
        json_decref(summary);
    }
    printf("apply jobs      %.1f ms (%.0f pods/s through sched_apply)\n", apply_ns / 1e6,
           apply_ns ? w.pods / (apply_ns / 1e9) : 0);
    report_cycles(cycle_ns, ncycles, placed, w.pods);
    printf("peak RSS        %.1f MiB\n", workload_peak_rss_kib() / 1024.0);

    struct store_stats stats;
    if (store_stats(st, &stats, &err) == 0)
        printf("store           %.1f MiB on disk, %.1f MiB used, audit seq %llu\n",
               stats.file_bytes / 1048576.0, stats.used_bytes / 1048576.0,
               (unsigned long long)stats.audit_last_seq);
    sched_close(s);
    s = NULL;
    store_close(st);
    st = NULL;
    t0 = clock_mono_ns();
    if (store_open(&so, &st, &err) < 0 || sched_open(st, NULL, &s, &err) < 0)
        goto fail;
    printf("restart         %.1f ms (store reopened, view rebuilt)\n",
           (clock_mono_ns() - t0) / 1e6);
    sched_close(s);
    store_close(st);
    workload_release(&w);
    free(cycle_ns);
    if (!o.keep) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        if (system(cmd) != 0)
            return 1;
    }
    return 0;
fail:
    fprintf(stderr, "bench_sched: %s\n", err.msg);
    sched_close(s);
    store_close(st);
    return 1;
}
