/*
 * preempt.c - GangPreempt-5k: job-level preemption decision latency.
 *
 * 5,000 nodes (blocks of 32) are filled by 625 low-priority gangs of 8 whole-node pods;
 * then 100 high-priority gangs of 32 with MustGather BlockLayer arrive and one cycle
 * preempts for each. Reports the decision latency per preemption (victim scan, dry run,
 * minimal set: the ledger's decisionMs) as median and p99, victims per preemption against
 * the minimum possible (32 whole nodes), gangs broken per preemption (and any gang broken
 * by two), the binds after the grace period and boundOnNominatedNodes: the fraction of
 * preemptor pods bound on the node they were nominated to (target 100%).
 *
 *     bench_preempt [--nodes N]
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

static int apply_range(struct sched *s, json_t *jobs, size_t from, size_t to, int64_t now,
                       struct err *err)
{
    json_t *docs = json_array();
    for (size_t g = from; g < to; g++)
        json_array_extend(docs, json_array_get(jobs, g));
    struct model_manifest m;
    json_t *results = NULL;
    int rc = workload_manifest(docs, &m, err);
    if (rc == 0)
        rc = sched_apply(s, &m, now, &results, err);
    json_decref(results);
    model_manifest_free(&m);
    json_decref(docs);
    return rc;
}

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

int main(int argc, char **argv)
{
    struct err err = ERR_INIT;
    struct workload w;
    struct store *st = NULL;
    struct sched *s = NULL;
    json_t *ledger = NULL;
    size_t nodes = 5000;
    char dir[] = "/tmp/muster-bench-XXXXXX";
    int rc = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            nodes = strtoul(argv[++i], NULL, 10);
    if (workload_make("gang-preempt", nodes, &w, &err) < 0 || !mkdtemp(dir))
        goto fail;
    struct store_options so = {.dir = dir, .sync = STORE_SYNC_NONE};
    if (store_open(&so, &st, &err) < 0 || sched_open(st, NULL, &s, &err) < 0)
        goto fail;
    size_t njobs = json_array_size(w.jobs), low = njobs - 100;
    int64_t now = clock_now_ms();
    json_t *infra = json_array();
    json_array_append(infra, w.infra);
    rc = apply_range(s, infra, 0, 1, now, &err);
    json_decref(infra);
    if (rc < 0 || apply_range(s, w.jobs, 0, low, now, &err) < 0)
        goto fail;
    double fill = cycle_ms(s, now += 1000, &err, &rc);
    if (rc < 0 || apply_range(s, w.jobs, low, njobs, now, &err) < 0)
        goto fail;
    double pre = cycle_ms(s, now += 1000, &err, &rc);
    if (rc < 0 || sched_preemptions(s, NULL, NULL, NULL, &ledger, &err) < 0)
        goto fail;
    size_t n = json_array_size(ledger), victims = 0, broken = 0, minimal = 0;
    double *lat = calloc(n + 1, sizeof(double));
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(ledger, i), *cost = json_object_get(e, "cost");
        lat[i] = json_real_value(json_object_get(e, "decisionMs"));
        size_t v = (size_t)json_integer_value(json_object_get(cost, "pods"));
        victims += v;
        minimal += v == 32;
        broken += (size_t)json_integer_value(json_object_get(cost, "gangsBroken"));
    }
    qsort(lat, n, sizeof(double), cmp_double);
    double bind = cycle_ms(s, now += 31000, &err, &rc); /* past the 30 s grace period */
    json_t *jobs = NULL;
    size_t scheduled = 0;
    if (rc == 0 && sched_jobs(s, NULL, &jobs, &err) == 0)
        for (size_t i = 0; i < json_array_size(jobs); i++) {
            json_t *j = json_array_get(jobs, i);
            const char *state = json_string_value(json_object_get(j, "state"));
            if (strncmp(json_string_value(json_object_get(j, "id")), "bench/hi-", 9))
                continue;
            if (!strcmp(state, "Scheduled") || !strcmp(state, "Running"))
                scheduled++;
            else
                printf("not scheduled     %s: %s\n", json_string_value(json_object_get(j, "id")),
                       state);
        }
    json_decref(jobs);
    /* Nominations are binding: each preemptor pod bound on the node it was nominated to. */
    size_t on_nom = 0, nom_pods = 0, twice = 0;
    json_decref(ledger);
    ledger = NULL;
    if (rc < 0 || sched_preemptions(s, NULL, NULL, NULL, &ledger, &err) < 0)
        goto fail;
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
    json_decref(victim_jobs);
    printf(
        "workload          GangPreempt-%zuk: %zu nodes, %zu low gangs of 8, 100 high gangs of 32 "
        "(MustGather BlockLayer)\n",
        nodes / 1000, nodes, low);
    printf("fill cycle        %.1f ms\n", fill);
    printf("preempt cycle     %.1f ms, %zu preemptions\n", pre, n);
    if (n)
        printf("decision latency  median %.3f ms, p99 %.3f ms, max %.3f ms (target p99 <= 10 ms)\n",
               lat[n / 2], lat[(size_t)((double)(n - 1) * 0.99)], lat[n - 1]);
    printf("victims           %.1f per preemption (minimum possible 32); %zu/%zu minimal; "
           "%.2f gangs broken per preemption (minimum 4)\n",
           n ? (double)victims / (double)n : 0, minimal, n, n ? (double)broken / (double)n : 0);
    printf("bind cycle        %.1f ms, %zu/100 high gangs scheduled after the grace period\n", bind,
           scheduled);
    printf("boundOnNominatedNodes %.1f%% (%zu/%zu preemptor pods on their nominated node; target "
           "100%%); victim gangs broken by two preemptions: %zu\n",
           nom_pods ? 100.0 * (double)on_nom / (double)nom_pods : 0, on_nom, nom_pods, twice);
    free(lat);
    goto out;
fail:
    fprintf(stderr, "bench_preempt: %s\n", err.msg);
    rc = 1;
out:
    json_decref(ledger);
    sched_close(s);
    store_close(st);
    workload_release(&w);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc ? 1 : 0;
}
