/*
 * metrics.c - Prometheus text exposition of the scheduler's counters.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* Upper bounds of the cycle duration histogram, seconds. */
static const double bounds[] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

void sched__metrics_cycle(struct sched *s, double seconds)
{
    s->met.cycles++;
    s->met.duration_sum += seconds;
    for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++)
        if (seconds <= bounds[i])
            s->met.hist[i]++;
}

char *sched_metrics(struct sched *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct store_stats stats = {0};
    struct err err = ERR_INIT;
    int have_stats = store_stats(s->st, &stats, &err) == 0;
    pthread_mutex_lock(&s->mu);
    const struct sched_metrics *m = &s->met;
    fprintf(f, "# HELP muster_cycle_duration_seconds Duration of scheduling cycles.\n"
               "# TYPE muster_cycle_duration_seconds histogram\n");
    for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++)
        fprintf(f, "muster_cycle_duration_seconds_bucket{le=\"%g\"} %llu\n", bounds[i],
                (unsigned long long)m->hist[i]);
    fprintf(f, "muster_cycle_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
            (unsigned long long)m->cycles);
    fprintf(f, "muster_cycle_duration_seconds_sum %.6f\n", m->duration_sum);
    fprintf(f, "muster_cycle_duration_seconds_count %llu\n", (unsigned long long)m->cycles);
    fprintf(f,
            "# HELP muster_cycle Number of the last scheduling cycle.\n# TYPE muster_cycle "
            "gauge\nmuster_cycle %llu\n",
            (unsigned long long)s->cycle);
    fprintf(f,
            "# HELP muster_pods_placed_total Pods placed by scheduling cycles.\n"
            "# TYPE muster_pods_placed_total counter\nmuster_pods_placed_total %llu\n",
            (unsigned long long)m->pods_placed);
    fprintf(f,
            "# HELP muster_statements_total Job statements by outcome.\n"
            "# TYPE muster_statements_total counter\n"
            "muster_statements_total{outcome=\"committed\"} %llu\n"
            "muster_statements_total{outcome=\"discarded\"} %llu\n",
            (unsigned long long)m->statements_committed,
            (unsigned long long)m->statements_discarded);
    uint64_t counts[SCHED_JOB_STATE_COUNT] = {0};
    for (size_t i = 0; i < s->v->njobs; i++)
        if (s->v->jobs[i].alive)
            counts[sched__job_state(s, &s->v->jobs[i])]++;
    /* retained victims whose job left the view are Preempted too, as the jobs API lists them */
    const struct sched_strmap *vm = &s->v->victims;
    for (size_t i = sched__strmap_next(vm, 0); i < vm->cap; i = sched__strmap_next(vm, i + 1))
        counts[SCHED_JOB_PREEMPTED] += sched__view_job(s->v, vm->keys[i]) < 0;
    pthread_mutex_unlock(&s->mu);
    fprintf(f, "# HELP muster_jobs Jobs by state.\n# TYPE muster_jobs gauge\n");
    for (int k = 0; k < SCHED_JOB_STATE_COUNT; k++)
        fprintf(f, "muster_jobs{state=\"%s\"} %llu\n", sched_job_state_name(k),
                (unsigned long long)counts[k]);
    if (have_stats) {
        fprintf(f,
                "# HELP muster_audit_sequence Sequence number of the last audit record.\n"
                "# TYPE muster_audit_sequence gauge\nmuster_audit_sequence %llu\n",
                (unsigned long long)stats.audit_last_seq);
        fprintf(f,
                "# HELP muster_store_bytes Store size.\n# TYPE muster_store_bytes gauge\n"
                "muster_store_bytes{kind=\"map\"} %zu\nmuster_store_bytes{kind=\"used\"} %zu\n"
                "muster_store_bytes{kind=\"file\"} %zu\n",
                stats.map_size, stats.used_bytes, stats.file_bytes);
    }
    fclose(f);
    return buf;
}
