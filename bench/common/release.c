#include "release.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "scheduler.h"
#include "store.h"

int release_apply_docs(struct sched *s, json_t *docs, struct err *err)
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

/* Each placed gang's leaves, from the store: gang name -> {leaf index: pods}. */
struct quality {
    json_t *gangs;
    size_t singles;
};

static int quality_pod(void *ctx, const char *key, json_t *pod)
{
    struct quality *q = ctx;
    const char *node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    const char *group = model_pod_group_name(pod);
    char leaf[32];
    (void)key;
    if (!node || strncmp(node, "node-", 5) != 0)
        return 0;
    if (!group) {
        q->singles++;
        return 0;
    }
    json_t *g = json_object_get(q->gangs, group);
    if (!g)
        json_object_set_new(q->gangs, group, g = json_object());
    snprintf(leaf, sizeof(leaf), "%ld", strtol(node + 5, NULL, 10) / WORKLOAD_SLURM_LEAF);
    json_t *n = json_object_get(g, leaf);
    json_object_set_new(g, leaf, json_integer(n ? json_integer_value(n) + 1 : 1));
    return 0;
}

static int report_quality(struct store *st, struct err *err)
{
    struct quality q = {json_object(), 0};
    size_t span[4] = {0}, best = 0, used = 0, pods = 0;
    MDB_txn *txn = NULL;
    const char *name;
    json_t *g;
    int rc = store_txn_begin(st, STORE_READ, &txn, err);
    if (rc == 0)
        rc = store_each(txn, MODEL_POD, NULL, quality_pod, &q, err);
    store_txn_abort(&txn);
    json_object_foreach(q.gangs, name, g)
    {
        const char *k;
        json_t *n;
        size_t size = 0, leaves = json_object_size(g);
        json_object_foreach(g, k, n) size += (size_t)json_integer_value(n);
        span[leaves < 3 ? leaves : 3]++;
        used += leaves;
        best += (size + WORKLOAD_SLURM_LEAF - 1) / WORKLOAD_SLURM_LEAF;
        pods += size;
    }
    printf("placed          %zu single-pod jobs, %zu gangs (%zu pods)\n", q.singles,
           json_object_size(q.gangs), pods);
    printf("gang quality    %zu in one leaf, %zu in two, %zu in more (fewest possible: %zu "
           "leaves in all, each gang in ceil(size / %d); used %zu)\n",
           span[1], span[2], span[3], best, WORKLOAD_SLURM_LEAF, used);
    json_decref(q.gangs);
    return rc;
}

/* This thread's CPU time in ns: on a shared machine, steadier than the wall clock. */
static int64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int release_run(struct sched *s, struct store *st, struct workload *w, size_t batch,
                struct err *err)
{
    size_t njobs = json_array_size(w->jobs), i = 0, placed = 0;
    int64_t t0 = clock_mono_ns();
    while (i < njobs) {
        json_t *docs = json_array();
        for (size_t pods = 0; i < njobs && pods < batch; i++) {
            json_array_extend(docs, json_array_get(w->jobs, i));
            pods += json_array_size(json_array_get(w->jobs, i));
        }
        int rc = release_apply_docs(s, docs, err);
        json_decref(docs);
        if (rc < 0)
            return rc;
    }
    double apply_ms = (clock_mono_ns() - t0) / 1e6, first_ms = 0, total_ms = 0;
    printf("apply jobs      %.1f ms (%zu jobs, %zu pods, no cycle)\n", apply_ms, njobs, w->pods);
    int n = 0;
    for (; n < 100; n++) {
        json_t *sum = NULL;
        t0 = clock_mono_ns();
        int64_t c0 = cpu_ns();
        if (sched_cycle(s, clock_now_ms(), &sum, err) < 0)
            return -1;
        double ms = (clock_mono_ns() - t0) / 1e6, cpu_ms = (cpu_ns() - c0) / 1e6;
        size_t p = (size_t)json_integer_value(json_object_get(sum, "placed"));
        json_decref(sum);
        total_ms += ms;
        if (n == 0) {
            first_ms = ms;
            printf("first cycle     %.2f ms (CPU %.2f ms), %zu pods placed\n", ms, cpu_ms, p);
        }
        placed += p;
        if (!p)
            break;
    }
    printf("release         %d cycles until one placed nothing: %.2f ms in all, %zu pods placed; "
           "apply + first cycle %.1f ms\n",
           n + 1, total_ms, placed, apply_ms + first_ms);
    return report_quality(st, err);
}
