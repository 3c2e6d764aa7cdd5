/*
 * preempt.c - GangPreempt-5k and Reclaim-5k: job-level preemption and reclaim decisions.
 *
 * GangPreempt-5k: 5,000 nodes (blocks of 32) are filled by 625 low-priority gangs of 8
 * whole-node pods; then 100 high-priority gangs of 32 with MustGather BlockLayer arrive and
 * one cycle preempts for each.
 * Reclaim-5k (--reclaim): the same cluster filled by 625 gangs of queue "lend", which has
 * lent the whole cluster; the 100 gangs of 32 arrive in queue "claim", of equal weight and
 * equal priority (0): each is deserved half the cluster, so claim reclaims whole gangs of
 * lend until it holds its half (78 gangs of 32; the other 22 wait for their share).
 *
 * Reports the decision latency per preemption (victim scan, dry run, minimal set: the
 * ledger's decisionMs) as median and p99, victims per preemption against the minimum
 * possible (32 whole nodes), gangs broken per preemption (and any gang broken by two), the
 * binds after the grace period and boundOnNominatedNodes: the fraction of preemptor pods
 * bound on the node they were nominated to (target 100%). With --reclaim also each queue's
 * allocation against its deserved share after the reclaims, terminating victims counted
 * as gone: lend must not be taken below its share.
 * --keep DIR keeps the store in DIR (a new directory) instead of a scratch one: musterd
 * --data-dir DIR opens it, and GET /api/v1/audit/replay runs its cycles again there
 * (bench/ab_decisions.sh: another build's scheduler decides them as this one did).
 *
 *     bench_preempt [--nodes N] [--reclaim] [--keep DIR]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "err.h"
#include "scheduler.h"
#include "store.h"
#include "workload.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double cycle_ms(struct sched *s, int64_t now, struct err *err, int *rc)
{
    json_t *sum = NULL;
    *rc = sched_cycle(s, now, &sum, err);
    double ms = json_real_value(json_object_get(sum, "durationMs"));
    json_decref(sum);
    return ms;
}

/* The preemption cycle's ledger: decisions, victims, gangs broken. */
static void report_decisions(json_t *ledger, int reclaim)
{
    size_t n = json_array_size(ledger), victims = 0, broken = 0, minimal = 0, kinds = 0;
    double *lat = calloc(n + 1, sizeof(double));
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(ledger, i), *cost = json_object_get(e, "cost");
        const char *kind = json_string_value(json_object_get(e, "kind"));
        lat[i] = json_real_value(json_object_get(e, "decisionMs"));
        size_t v = (size_t)json_integer_value(json_object_get(cost, "pods"));
        victims += v;
        minimal += v == 32;
        broken += (size_t)json_integer_value(json_object_get(cost, "gangsBroken"));
        kinds += kind && !strcmp(kind, reclaim ? "reclaim" : "preemption");
    }
    qsort(lat, n, sizeof(double), cmp_double);
    const char *what = reclaim ? "reclaim" : "preemption";
    printf("%-17s %zu (%zu of kind %s)\n", reclaim ? "reclaims" : "preemptions", n, kinds, what);
    if (n)
        printf("decision latency  median %.3f ms, p99 %.3f ms, max %.3f ms (target p99 <= 10 ms)\n",
               lat[n / 2], lat[(size_t)((double)(n - 1) * 0.99)], lat[n - 1]);
    printf("victims           %.1f per %s (minimum possible 32); %zu/%zu minimal; "
           "%.2f gangs broken per %s (minimum 4)\n",
           n ? (double)victims / (double)n : 0, what, minimal, n,
           n ? (double)broken / (double)n : 0, what);
    free(lat);
}

/* Reclaim: each queue's allocation, less its terminating victims, against its deserved
 * share, in whole-node pods (4 cpu). */
static int report_queues(struct sched *s, json_t *ledger, struct err *err)
{
    json_t *qs = NULL, *q, *e, *x;
    size_t i, k, m;
    if (sched_queues(s, &qs, err) < 0)
        return -1;
    json_array_foreach(qs, i, q)
    {
        const char *name = json_string_value(json_object_get(q, "name"));
        json_t *cpu = json_object_get(json_object_get(q, "resources"), "cpu");
        long gone = 0;
        json_array_foreach(ledger, k, e)
        {
            json_array_foreach(json_object_get(e, "victims"), m, x)
            {
                const char *vq = json_string_value(json_object_get(x, "queue"));
                gone += vq && !strcmp(vq, name);
            }
        }
        if (!cpu)
            continue;
        long alloc = (long)(json_integer_value(json_object_get(cpu, "allocated")) / 4000) - gone;
        long deserved = (long)(json_integer_value(json_object_get(cpu, "deserved")) / 4000);
        if (!gone)
            printf("queue %-11s holds %ld nodes, deserved %ld\n", name, alloc, deserved);
        else
            printf("queue %-11s holds %ld nodes once its %ld victims go, deserved %ld: %s\n", name,
                   alloc, gone, deserved,
                   alloc >= deserved ? "not below its share" : "BELOW ITS SHARE");
    }
    json_decref(qs);
    return 0;
}

/* After the grace period: preemptor gangs scheduled, pods on their nominated nodes, and
 * victim gangs hit by two preemptions. */
static int report_binds(struct sched *s, const char *prefix, double bind, struct err *err)
{
    json_t *jobs = NULL, *ledger = NULL;
    size_t scheduled = 0, waiting = 0;
    if (sched_jobs(s, NULL, &jobs, err) < 0 ||
        sched_preemptions(s, NULL, NULL, NULL, &ledger, err) < 0) {
        json_decref(jobs);
        return -1;
    }
    for (size_t i = 0; i < json_array_size(jobs); i++) {
        json_t *j = json_array_get(jobs, i);
        const char *state = json_string_value(json_object_get(j, "state"));
        if (strncmp(json_string_value(json_object_get(j, "id")), prefix, strlen(prefix)))
            continue;
        if (!strcmp(state, "Scheduled") || !strcmp(state, "Running"))
            scheduled++;
        else
            waiting++;
    }
    size_t on_nom = 0, nom_pods = 0, twice = 0;
    json_t *victim_jobs = json_object();
    for (size_t i = 0; i < json_array_size(ledger); i++) {
        json_t *e = json_array_get(ledger, i), *x, *seen = json_object();
        nom_pods += json_object_size(json_object_get(e, "nominations"));
        on_nom += (size_t)json_integer_value(json_object_get(e, "podsOnNominatedNodes"));
        size_t k;
        json_array_foreach(json_object_get(e, "victims"), k, x)
            json_object_set(seen, json_string_value(json_object_get(x, "job")), json_true());
        const char *vj;
        json_t *t;
        json_object_foreach(seen, vj, t)
        {
            twice += json_object_get(victim_jobs, vj) != NULL;
            json_object_set(victim_jobs, vj, t);
        }
        json_decref(seen);
    }
    printf("bind cycle        %.1f ms, %zu/100 gangs scheduled after the grace period, %zu "
           "waiting\n",
           bind, scheduled, waiting);
    printf("boundOnNominatedNodes %.1f%% (%zu/%zu preemptor pods on their nominated node; target "
           "100%%); victim gangs broken by two preemptions: %zu\n",
           nom_pods ? 100.0 * (double)on_nom / (double)nom_pods : 0, on_nom, nom_pods, twice);
    json_decref(victim_jobs);
    json_decref(jobs);
    json_decref(ledger);
    return 0;
}

int main(int argc, char **argv)
{
    struct err err = ERR_INIT;
    struct workload w;
    struct store *st = NULL;
    struct sched *s = NULL;
    json_t *ledger = NULL;
    size_t nodes = 5000;
    int reclaim = 0, rc = 0;
    char tmp[] = "/tmp/muster-bench-XXXXXX";
    const char *keep = NULL;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            nodes = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--reclaim"))
            reclaim = 1;
        else if (!strcmp(argv[i], "--keep") && i + 1 < argc)
            keep = argv[++i];
    const char *dir = keep ? keep : mkdtemp(tmp);
    if (workload_make(reclaim ? "reclaim" : "gang-preempt", nodes, &w, &err) < 0 || !dir)
        goto fail;
    struct store_options so = {.dir = dir, .sync = STORE_SYNC_NONE};
    if (store_open(&so, &st, &err) < 0 || sched_open(st, NULL, &s, &err) < 0)
        goto fail;
    size_t njobs = json_array_size(w.jobs), low = njobs - 100;
    int64_t now = clock_now_ms();
    json_t *infra = json_array();
    json_array_append(infra, w.infra);
    rc = workload_apply(s, infra, 0, 1, now, &err);
    json_decref(infra);
    if (rc < 0 || workload_apply(s, w.jobs, 0, low, now, &err) < 0)
        goto fail;
    double fill = cycle_ms(s, now += 1000, &err, &rc);
    if (rc < 0 || workload_apply(s, w.jobs, low, njobs, now, &err) < 0)
        goto fail;
    double pre = cycle_ms(s, now += 1000, &err, &rc);
    if (rc < 0 || sched_preemptions(s, NULL, NULL, NULL, &ledger, &err) < 0)
        goto fail;
    if (reclaim)
        printf("workload          Reclaim-%zuk: %zu nodes, queue lend's %zu gangs of 8 fill them; "
               "100 gangs of 32 (MustGather BlockLayer) in queue claim, equal weight\n",
               nodes / 1000, nodes, low);
    else
        printf("workload          GangPreempt-%zuk: %zu nodes, %zu low gangs of 8, 100 high gangs "
               "of 32 (MustGather BlockLayer)\n",
               nodes / 1000, nodes, low);
    printf("fill cycle        %.1f ms\n", fill);
    printf("preempt cycle     %.1f ms\n", pre);
    report_decisions(ledger, reclaim);
    if (reclaim && report_queues(s, ledger, &err) < 0)
        goto fail;
    double bind = cycle_ms(s, now += 31000, &err, &rc); /* past the 30 s grace period */
    if (rc < 0 || report_binds(s, reclaim ? "bench/claim-" : "bench/hi-", bind, &err) < 0)
        goto fail;
    goto out;
fail:
    fprintf(stderr, "bench_preempt: %s\n", err.msg);
    rc = 1;
out:
    json_decref(ledger);
    sched_close(s);
    store_close(st);
    workload_release(&w);
    if (!keep && dir) {
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        if (system(cmd) != 0)
            rc = rc ? rc : 1;
    }
    return rc ? 1 : 0;
}
