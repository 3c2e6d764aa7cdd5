/*
 * bench_sched - scheduling throughput and cycle latency on a synthetic cluster.
 *
 *   bench_sched WORKLOAD [--nodes N] [--batch PODS] [--sync full|meta|none] [--keep DIR]
 *               [--rules] [--queues N] [--cluster NODES] [--idle N]
 *   bench_sched --reopen DIR [--rounds N]
 *
 * Applies the workload's nodes, then feeds its jobs to sched_apply in batches of about
 * --batch pods, running one scheduling cycle (one durable commit) after each batch, as pods
 * arriving at a live musterd would. Reports pods/s over cycle time (end to end, including
 * the commit), cycle latency median and p99, the cycles' CPU time, apply throughput, peak
 * RSS, store size, and the time to reopen the store with the view rebuilt. With --queues N the jobs
 * are spread over N queues of weights 1, 2, 3, 4, 1, ... (workload_add_queues), and the run ends
 * with more cycles, past the grace period, until the reclaims settle (not counted above), then each
 * queue's allocation against its deserved share, in jobs (report_queues). --cluster keeps
 * only that many of the workload's nodes: the same jobs contend for less room. --idle N runs
 * N more cycles after the last batch with nothing changed (with --cluster, the jobs that did
 * not fit wait) and reports their median against the first cycle, then one cycle past every
 * waiting job's backoff (all of them retried: what every cycle cost before jobs waited).
 * slurm-gangs and slurm-mixed (1,024 nodes unless --nodes) are applied whole, then released
 * (release.h): apply time, first cycle, cycles until nothing more fits, gang placement.
 * --reopen times only the restart of a store kept with --keep, --rounds times (default 3):
 * each round and the median, to profile or compare restarts without the workload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "scheduler.h"
#include "store.h"
#include "release.h"
#include "workload.h"

struct opts {
    const char *workload;
    size_t nodes;
    size_t batch;
    enum store_sync sync;
    const char *keep;
    int rules;
    size_t queues;
    size_t cluster;
    size_t idle;
    const char *reopen;
    size_t rounds;
};

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* This thread's CPU time: what a cycle cost without waiting for a core or the disk (the
 * project's machine is shared, so wall-clock figures swing with the other work on it). */
static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int apply_docs(struct sched *s, json_t *docs, struct err *err)
{
    return release_apply_docs(s, docs, err);
}

static int parse_args(int argc, char **argv, struct opts *o)
{
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
        else if (strcmp(argv[i], "--cluster") == 0 && i + 1 < argc)
            o->cluster = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--idle") == 0 && i + 1 < argc)
            o->idle = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--queues") == 0 && i + 1 < argc)
            o->queues = strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc)
            o->keep = argv[++i];
        else if (strcmp(argv[i], "--reopen") == 0 && i + 1 < argc)
            o->reopen = argv[++i];
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            o->rounds = strtoul(argv[++i], NULL, 10);
        else if (argv[i][0] != '-' && !o->workload)
            o->workload = argv[i];
        else
            return -1;
    }
    if (!o->nodes) /* the Slurm side-by-side is a cluster of 1,024 nodes */
        o->nodes = o->workload && !strncmp(o->workload, "slurm-", 6) ? 1024 : 5000;
    if (!o->rounds)
        o->rounds = 3;
    return o->workload || o->reopen ? 0 : -1;
}

static void report_cycles(int64_t *ns, size_t n, size_t placed, size_t pods, int64_t cpu)
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
    printf("per 1,000 pods  %.2f ms of cycle time\n", placed ? total / 1e3 / (double)placed : 0);
    printf("cycle cpu       %.1f ms total, %.2f ms per 1,000 pods, %.0f pods/s over CPU time\n",
           cpu / 1e6, placed ? cpu / 1e3 / (double)placed : 0, cpu ? placed / (cpu / 1e9) : 0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One timed cycle at now_ms; *ms its duration, *attempted the summary's "attempted" (-1 when
 * the scheduler does not report it). */
static int timed_cycle(struct sched *s, int64_t now_ms, double *ms, long *attempted,
                       struct err *err)
{
    json_t *sum = NULL;
    int64_t t0 = clock_mono_ns();
    int rc = sched_cycle(s, now_ms, &sum, err);
    *ms = (clock_mono_ns() - t0) / 1e6;
    json_t *a = json_object_get(sum, "attempted");
    *attempted = a ? (long)json_integer_value(a) : -1;
    json_decref(sum);
    return rc;
}

/* --idle: n cycles with nothing changed right after the last batch, their median against
 * the first cycle; then one cycle 61 s later, past every backoff (at most 60 s). */
static int report_idle(struct sched *s, size_t n, double first_ms, struct err *err)
{
    double *ms = calloc(n + 1, sizeof(double)), late;
    long attempted = 0, late_attempted;
    int64_t now = clock_now_ms();
    for (size_t k = 0; k < n; k++)
        if (timed_cycle(s, now, &ms[k], &attempted, err) < 0) {
            free(ms);
            return -1;
        }
    if (timed_cycle(s, now + 61000, &late, &late_attempted, err) < 0) {
        free(ms);
        return -1;
    }
    qsort(ms, n, sizeof(double), cmp_double);
    double med = n ? ms[n / 2] : 0;
    printf("idle cycles     %zu with nothing changed: median %.3f ms (%.1f%% of the first cycle, "
           "%.2f ms), %ld jobs attempted in the last\n",
           n, med, first_ms > 0 ? 100 * med / first_ms : 0, first_ms, attempted);
    printf("backoff cycle   %.2f ms, %ld jobs attempted (61 s later: every waiting job retried)\n",
           late, late_attempted);
    free(ms);
    return 0;
}

/* |allocated - deserved| of queue q in its dominant resource (the one its share is taken
 * on: a resource nobody contends for is deserved as asked, pending jobs included), in jobs:
 * a queue's jobs are alike, so one job is its request over its job count. -1 when it has no
 * job. */
static double queue_deviation(json_t *q)
{
    json_t *jobs = json_object_get(q, "jobs");
    double n = (double)(json_integer_value(json_object_get(jobs, "pending")) +
                        json_integer_value(json_object_get(jobs, "running")));
    const char *dom = json_string_value(json_object_get(q, "dominantResource"));
    json_t *r = dom ? json_object_get(json_object_get(q, "resources"), dom) : NULL;
    if (n <= 0)
        return -1;
    double req = (double)json_integer_value(json_object_get(r, "request"));
    double d = (double)(json_integer_value(json_object_get(r, "allocated")) -
                        json_integer_value(json_object_get(r, "deserved")));
    return req > 0 ? (d < 0 ? -d : d) / (req / n) : 0;
}

/* Lets reclaims finish: up to 8 more cycles, each past the victims' 30 s grace period, until
 * one places nothing and reclaims nothing. Returns the cycles run, -1 on error. */
static int settle(struct sched *s, struct err *err)
{
    int64_t now = clock_now_ms();
    for (int i = 1; i <= 8; i++) {
        json_t *sum = NULL, *ledger = NULL;
        if (sched_preemptions(s, NULL, NULL, NULL, &ledger, err) < 0)
            return -1;
        size_t before = json_array_size(ledger);
        json_decref(ledger);
        if (sched_cycle(s, now += 31000, &sum, err) < 0 ||
            sched_preemptions(s, NULL, NULL, NULL, &ledger, err) < 0) {
            json_decref(sum);
            return -1;
        }
        int quiet = !json_integer_value(json_object_get(sum, "placed")) &&
                    json_array_size(ledger) == before;
        json_decref(sum);
        json_decref(ledger);
        if (quiet)
            return i;
    }
    return 8;
}

/* Each queue's allocation against the deserved share the last cycle computed, in jobs, once
 * the reclaims have settled (settle). */
static int report_queues(struct sched *s, struct err *err)
{
    json_t *all = NULL, *q, *ledger = NULL;
    size_t i, n = 0, placed_jobs = 0, reclaims = 0;
    int rounds = settle(s, err);
    if (rounds < 0 || sched_queues(s, &all, err) < 0 ||
        sched_preemptions(s, NULL, NULL, NULL, &ledger, err) < 0)
        return -1;
    json_array_foreach(ledger, i, q)
    {
        const char *kind = json_string_value(json_object_get(q, "kind"));
        reclaims += kind && !strcmp(kind, "reclaim");
    }
    json_decref(ledger);
    double *dev = calloc(json_array_size(all) + 1, sizeof(double));
    json_array_foreach(all, i, q)
    {
        double d = queue_deviation(q);
        placed_jobs +=
            (size_t)json_integer_value(json_object_get(json_object_get(q, "jobs"), "running"));
        if (d >= 0)
            dev[n++] = d;
    }
    qsort(dev, n, sizeof(double), cmp_double);
    printf("queues          %zu with jobs (weights 1..4), %zu jobs running, %zu reclaims, "
           "settled in %d cycles; |allocated - deserved| in jobs: max %.2f, median %.2f\n",
           n, placed_jobs, reclaims, rounds, n ? dev[n - 1] : 0, n ? dev[n / 2] : 0);
    free(dev);
    json_decref(all);
    return 0;
}

/* --reopen: the restart of a kept store, rounds times; each round and the median. */
static int reopen_rounds(const struct opts *o, struct err *err)
{
    struct store_options so = {.dir = o->reopen, .sync = o->sync};
    double *ms = calloc(o->rounds, sizeof(double));
    for (size_t k = 0; k < o->rounds; k++) {
        struct store *st = NULL;
        struct sched *s = NULL;
        int64_t t0 = clock_mono_ns(), c0 = cpu_ns();
        if (store_open(&so, &st, err) < 0 || sched_open(st, NULL, &s, err) < 0) {
            store_close(st);
            free(ms);
            return -1;
        }
        ms[k] = (clock_mono_ns() - t0) / 1e6;
        double cpu = (cpu_ns() - c0) / 1e6;
        sched_close(s);
        store_close(st);
        printf("restart         %.1f ms, %.1f ms CPU (round %zu)\n", ms[k], cpu, k + 1);
    }
    qsort(ms, o->rounds, sizeof(double), cmp_double);
    printf("restart median  %.1f ms over %zu rounds; peak RSS %.1f MiB\n", ms[o->rounds / 2],
           o->rounds, workload_peak_rss_kib() / 1024.0);
    free(ms);
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {0};
    struct err err = ERR_INIT;
    struct workload w;
    struct store *st = NULL;
    struct sched *s = NULL;
    char dir[] = "/tmp/muster-bench-XXXXXX";
    int64_t *cycle_ns = NULL, t0, apply_ns = 0, cycle_cpu = 0, c0;
    size_t ncycles = 0, cap = 0, placed = 0, i = 0, njobs;
    double first_ms = 0;

    if (parse_args(argc, argv, &o) < 0) {
        fprintf(stderr, "usage: bench_sched "
                        "basic|gang|gang-topology|biggang|slurm-gangs|slurm-mixed [--nodes N] "
                        "[--batch PODS] [--sync full|meta|none] [--keep DIR] [--rules] "
                        "[--queues N] [--cluster NODES] [--idle N]\n"
                        "       bench_sched --reopen DIR [--rounds N]\n");
        return 2;
    }
    if (o.reopen) {
        if (reopen_rounds(&o, &err) == 0)
            return 0;
        fprintf(stderr, "bench_sched: %s\n", err.msg);
        return 1;
    }
    if (workload_make(o.workload, o.nodes, &w, &err) < 0 || !mkdtemp(dir))
        goto fail;
    if (o.rules)
        workload_add_rules(&w);
    if (o.queues)
        workload_add_queues(&w, o.queues);
    if (o.cluster)
        workload_trim_nodes(&w, o.cluster);
    struct store_options so = {.dir = o.keep ? o.keep : dir, .sync = o.sync};
    if (store_open(&so, &st, &err) < 0 || sched_open(st, NULL, &s, &err) < 0)
        goto fail;
    t0 = clock_mono_ns();
    if (apply_docs(s, w.infra, &err) < 0)
        goto fail;
    printf("workload        %s%s: %zu nodes, %zu jobs, %zu pods, %zu queues, sync %s\n", o.workload,
           o.rules ? " with rules" : "", o.cluster ? o.cluster : o.nodes, json_array_size(w.jobs),
           w.pods, o.queues, store_sync_name(o.sync));
    printf("apply nodes     %.1f ms\n", (clock_mono_ns() - t0) / 1e6);

    njobs = json_array_size(w.jobs);
    if (!strncmp(o.workload, "slurm-", 6)) { /* applied first, then released */
        if (release_run(s, st, &w, o.batch, &err) < 0)
            goto fail;
        i = njobs;
    }
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
        c0 = cpu_ns();
        if (sched_cycle(s, clock_now_ms(), &summary, &err) < 0)
            goto fail;
        cycle_cpu += cpu_ns() - c0;
        XGROW(cycle_ns, ncycles + 1, cap);
        cycle_ns[ncycles++] = clock_mono_ns() - t0;
        if (ncycles == 1)
            first_ms = cycle_ns[0] / 1e6;
        placed += (size_t)json_integer_value(json_object_get(summary, "placed"));
        json_decref(summary);
    }
    if (ncycles) {
        printf("apply jobs      %.1f ms (%.0f pods/s through sched_apply)\n", apply_ns / 1e6,
               apply_ns ? w.pods / (apply_ns / 1e9) : 0);
        report_cycles(cycle_ns, ncycles, placed, w.pods, cycle_cpu);
    }
    if (o.idle && report_idle(s, o.idle, first_ms, &err) < 0)
        goto fail;
    if (o.queues && report_queues(s, &err) < 0)
        goto fail;
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
    c0 = cpu_ns();
    if (store_open(&so, &st, &err) < 0 || sched_open(st, NULL, &s, &err) < 0)
        goto fail;
    printf("restart         %.1f ms (store reopened, view rebuilt), %.1f ms CPU\n",
           (clock_mono_ns() - t0) / 1e6, (cpu_ns() - c0) / 1e6);
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
