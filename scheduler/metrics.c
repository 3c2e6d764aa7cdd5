/*
 * metrics.c - Prometheus text exposition of the scheduler's counters, job states and
 * queues.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* A label value as the exposition format wants it: backslash, quote and newline escaped. */
static void put_label(FILE *f, const char *v)
{
    for (; v && *v; v++) {
        if (*v == '\\' || *v == '"')
            fputc('\\', f);
        if (*v == '\n')
            fputs("\\n", f);
        else
            fputc(*v, f);
    }
}

/* A quantity in the unit a metric reports: cpu in cores (the model keeps thousandths),
 * everything else in whole units. */
static void put_value(FILE *f, const char *res, json_t *v)
{
    json_int_t x = json_integer_value(v);
    json_int_t a = x < 0 ? -x : x; /* "-1.500", not "-1.-500" */
    if (model_resource_is_milli(res))
        fprintf(f, "%s%" JSON_INTEGER_FORMAT ".%03d\n", x < 0 ? "-" : "", a / 1000,
                (int)(a % 1000));
    else
        fprintf(f, "%" JSON_INTEGER_FORMAT "\n", x);
}

/* One gauge over every queue and resource: the member `what` of each resources entry;
 * entries where it is null (an unlimited capability) are left out. */
static void print_queue_gauge(FILE *f, json_t *queues, const char *what, const char *help)
{
    size_t i;
    json_t *q;
    fprintf(f, "# HELP muster_queue_%s %s\n# TYPE muster_queue_%s gauge\n", what, help, what);
    json_array_foreach(queues, i, q)
    {
        const char *res;
        json_t *r;
        json_object_foreach(json_object_get(q, "resources"), res, r)
        {
            json_t *v = json_object_get(r, what);
            if (!json_is_integer(v))
                continue;
            fprintf(f, "muster_queue_%s{queue=\"", what);
            put_label(f, json_string_value(json_object_get(q, "name")));
            fputs("\",resource=\"", f);
            put_label(f, res);
            fputs("\"} ", f);
            put_value(f, res, v);
        }
    }
}

/* The queues of sched__queues_json (borrowed): allocation, deserved share, capability,
 * share and jobs per queue (docs/api.md, /metrics). */
static void print_queues(FILE *f, json_t *queues)
{
    size_t i;
    json_t *q;
    print_queue_gauge(f, queues, "allocated",
                      "Resources allocated to the jobs of a queue (cpu in cores).");
    print_queue_gauge(f, queues, "deserved",
                      "A queue's deserved share of a resource as the last cycle computed it "
                      "(cpu in cores).");
    print_queue_gauge(f, queues, "capability",
                      "A queue's capability (its ceiling), for the resources it limits (cpu in "
                      "cores).");
    fprintf(f, "# HELP muster_queue_share A queue's share: allocated / deserved of its dominant "
               "resource.\n# TYPE muster_queue_share gauge\n");
    json_array_foreach(queues, i, q)
    {
        fputs("muster_queue_share{queue=\"", f);
        put_label(f, json_string_value(json_object_get(q, "name")));
        fprintf(f, "\"} %.6g\n", json_number_value(json_object_get(q, "share")));
    }
    fprintf(f, "# HELP muster_queue_jobs Jobs of a queue by state.\n"
               "# TYPE muster_queue_jobs gauge\n");
    static const char *const states[] = {"pending", "running"};
    for (size_t k = 0; k < 2; k++)
        json_array_foreach(queues, i, q)
        {
            fputs("muster_queue_jobs{queue=\"", f);
            put_label(f, json_string_value(json_object_get(q, "name")));
            fprintf(f, "\",state=\"%s\"} %" JSON_INTEGER_FORMAT "\n", states[k],
                    json_integer_value(json_object_get(json_object_get(q, "jobs"), states[k])));
        }
}

static const char *const apply_phase_names[SCHED_APPLY_PHASES] = {
    "body", "parse", "validate", "lock", "write", "commit", "view", "reply"};

static void apply_metrics(FILE *f, const struct sched_metrics *m)
{
    fprintf(f,
            "# HELP muster_applies_total Applies committed: the API's manifests and pod status "
            "updates, and the Kubernetes mirror's events.\n"
            "# TYPE muster_applies_total counter\nmuster_applies_total %llu\n"
            "# HELP muster_apply_seconds_total Time applies spent in each part: reading the "
            "request's body, parsing, validating, waiting for the scheduler's lock, the "
            "transaction's writes, its commit, the view taking the change (what remained of it "
            "after the commit, beside which a big apply's runs), the reply (body, "
            "parse, validate and reply: the API's applies only).\n"
            "# TYPE muster_apply_seconds_total counter\n",
            (unsigned long long)m->applies);
    for (int p = 0; p < SCHED_APPLY_PHASES; p++)
        fprintf(f, "muster_apply_seconds_total{phase=\"%s\"} %.6f\n", apply_phase_names[p],
                (double)atomic_load_explicit(&m->apply_ns[p], memory_order_relaxed) / 1e9);
}

/* The scheduler's counters (under s->mu). */
static void print_counters(FILE *f, const struct sched *s)
{
    const struct sched_metrics *m = &s->met;
    fprintf(f, "# HELP muster_cycle_duration_seconds Duration of scheduling cycles.\n"
               "# TYPE muster_cycle_duration_seconds histogram\n");
    for (size_t i = 0; i < SCHED_HIST_N; i++)
        fprintf(f, "muster_cycle_duration_seconds_bucket{le=\"%g\"} %llu\n", sched__hist_bounds[i],
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
            "# HELP muster_cycles_idle_total Cycles that had nothing to do (no job due, no "
            "housekeeping) and wrote nothing.\n# TYPE muster_cycles_idle_total counter\n"
            "muster_cycles_idle_total %llu\n",
            (unsigned long long)m->idle_cycles);
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
    fprintf(f,
            "# HELP muster_why_reused_total Failing jobs whose why texts were the job's that "
            "failed before them but for the name (nothing re-serialised).\n"
            "# TYPE muster_why_reused_total counter\nmuster_why_reused_total %llu\n",
            (unsigned long long)m->why_reused);
    fprintf(f,
            "# HELP muster_apply_prepared_total Objects applies created from what they prepared "
            "before their transaction, on two threads (big manifests).\n"
            "# TYPE muster_apply_prepared_total counter\nmuster_apply_prepared_total %llu\n",
            (unsigned long long)m->apply_prepared);
    apply_metrics(f, m);
    fprintf(f,
            "# HELP muster_reservations_total Reservations made or moved for starving jobs.\n"
            "# TYPE muster_reservations_total counter\nmuster_reservations_total %llu\n"
            "# HELP muster_reservations Reservations held now.\n"
            "# TYPE muster_reservations gauge\nmuster_reservations %zu\n"
            "# HELP muster_backfills_total Jobs placed on nodes reserved for another job (their "
            "limit ends before its expected start).\n"
            "# TYPE muster_backfills_total counter\nmuster_backfills_total %llu\n"
            "# HELP muster_deadline_exceeded_total Pods ended by spec.activeDeadlineSeconds "
            "(standalone).\n"
            "# TYPE muster_deadline_exceeded_total counter\nmuster_deadline_exceeded_total %llu\n",
            (unsigned long long)m->reservations, s->v->nresv_live, (unsigned long long)m->backfills,
            (unsigned long long)m->deadlines);
}

/* Live jobs by state into counts (zeroed), retained victims whose job left the view counted
 * as Preempted, as the jobs API lists them (under s->mu). */
static void count_states(const struct sched *s, uint64_t counts[SCHED_JOB_STATE_COUNT])
{
    for (size_t i = 0; i < s->v->njobs; i++)
        if (s->v->jobs[i].alive)
            counts[sched__job_state(s->v, &s->v->jobs[i])]++;
    const struct sched_strmap *vm = &s->v->victims;
    for (size_t i = sched__strmap_next(vm, 0); i < vm->cap; i = sched__strmap_next(vm, i + 1))
        counts[SCHED_JOB_PREEMPTED] += sched__view_job(s->v, vm->keys[i]) < 0;
}

/* The store's gauges. */
static void print_store(FILE *f, const struct store_stats *stats)
{
    fprintf(f,
            "# HELP muster_audit_sequence Sequence number of the last audit record.\n"
            "# TYPE muster_audit_sequence gauge\nmuster_audit_sequence %llu\n",
            (unsigned long long)stats->audit_last_seq);
    fprintf(f,
            "# HELP muster_store_bytes Store size.\n# TYPE muster_store_bytes gauge\n"
            "muster_store_bytes{kind=\"map\"} %zu\nmuster_store_bytes{kind=\"used\"} %zu\n"
            "muster_store_bytes{kind=\"file\"} %zu\n",
            stats->map_size, stats->used_bytes, stats->file_bytes);
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
    print_counters(f, s);
    uint64_t counts[SCHED_JOB_STATE_COUNT] = {0};
    count_states(s, counts);
    /* under s->mu: sched_queues would take it again */
    json_t *queues = sched__queues_json(s);
    pthread_mutex_unlock(&s->mu);
    fprintf(f, "# HELP muster_jobs Jobs by state.\n# TYPE muster_jobs gauge\n");
    for (int k = 0; k < SCHED_JOB_STATE_COUNT; k++)
        fprintf(f, "muster_jobs{state=\"%s\"} %llu\n", sched_job_state_name(k),
                (unsigned long long)counts[k]);
    print_queues(f, queues);
    json_decref(queues);
    if (have_stats)
        print_store(f, &stats);
    fclose(f);
    return buf;
}
