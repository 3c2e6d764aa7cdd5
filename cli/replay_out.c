/*
 * replay_out.c - what a replay run says (replay.h): per job, over time, by size class;
 * JSON, CSV and the tables.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "replay.h"

/* Size classes by pods per job: the mixed shape's one-node jobs and 32-node gangs fall in
 * the first and the last. */
#define NCLASS 4
static const char *const class_names[NCLASS] = {"1", "2-7", "8-31", "32+"};

static int size_class(int pods)
{
    return pods <= 1 ? 0 : pods < 8 ? 1 : pods < 32 ? 2 : 3;
}

static const char *state(const struct replay_outcome *o)
{
    if (o->preempted)
        return "preempted";
    if (o->killed)
        return "killed";
    if (o->start_ms < 0)
        return "waiting";
    return o->end_ms >= 0 ? "finished" : "running";
}

/* The job's wait: to its start, or (never started) to the end of the run, a lower bound. */
static int64_t wait_of(const struct replay_job *j, const struct replay_outcome *o, int64_t end)
{
    return (o->start_ms >= 0 ? o->start_ms : end) - j->arrival_ms;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Time-weighted mean utilisation of the samples with t < until. */
static double mean_util(const struct replay_run *r, int64_t until)
{
    double num = 0, den = 0;
    for (size_t i = 0; i + 1 < r->nsamples && r->samples[i].t_ms < until; i++) {
        const struct replay_sample *s = &r->samples[i];
        int64_t next = r->samples[i + 1].t_ms < until ? r->samples[i + 1].t_ms : until;
        double dt = (double)(next - s->t_ms);
        if (s->capacity > 0 && dt > 0) {
            num += dt * s->used / s->capacity;
            den += dt;
        }
    }
    return den > 0 ? num / den : 0;
}

json_t *replay_summary(const struct replay_trace *t, const struct replay_run *r, int64_t starve_ms)
{
    json_t *classes = json_object(), *starved = json_array();
    int64_t *w[NCLASS];
    size_t nw[NCLASS] = {0}, unstarted[NCLASS] = {0};
    long finished = 0, nstarved = 0, backfilled = 0;
    for (int c = 0; c < NCLASS; c++)
        w[c] = xcalloc(t->n + 1, sizeof(int64_t));
    for (size_t i = 0; i < t->n; i++) {
        const struct replay_job *j = &t->jobs[i];
        const struct replay_outcome *o = &r->out[i];
        int c = size_class(j->pods);
        int64_t wt = wait_of(j, o, r->end_ms);
        w[c][nw[c]++] = wt;
        unstarted[c] += o->start_ms < 0;
        finished += o->end_ms >= 0;
        backfilled += o->backfilled;
        if (o->start_ms < 0 || wt > starve_ms) {
            nstarved++;
            if (json_array_size(starved) < 100)
                json_array_append_new(starved,
                                      json_pack("{s:s,s:i,s:f,s:b}", "id", j->id, "pods", j->pods,
                                                "waitSeconds", (double)wt / 1000.0, "started",
                                                o->start_ms >= 0));
        }
    }
    for (int c = 0; c < NCLASS; c++) {
        if (!nw[c])
            continue;
        qsort(w[c], nw[c], sizeof(int64_t), cmp_i64);
        double sum = 0;
        for (size_t k = 0; k < nw[c]; k++)
            sum += (double)w[c][k];
        size_t p99 = (size_t)ceil(0.99 * (double)nw[c]);
        json_object_set_new(classes, class_names[c],
                            json_pack("{s:i,s:i,s:f,s:f,s:f,s:f}", "jobs", (int)nw[c], "unstarted",
                                      (int)unstarted[c], "meanWaitSeconds",
                                      sum / (double)nw[c] / 1000.0, "p50WaitSeconds",
                                      (double)w[c][(nw[c] - 1) / 2] / 1000.0, "p99WaitSeconds",
                                      (double)w[c][p99 ? p99 - 1 : 0] / 1000.0, "maxWaitSeconds",
                                      (double)w[c][nw[c] - 1] / 1000.0));
        free(w[c]);
        w[c] = NULL;
    }
    for (int c = 0; c < NCLASS; c++)
        free(w[c]);
    int64_t last = t->jobs[t->n - 1].arrival_ms;
    return json_pack(
        "{s:s,s:f,s:I,s:s,s:b,s:i,s:i,s:f,s:f,s:o,s:f,s:i,s:o,s:i,s:i,s:i,s:i,s:f,s:f}", "policy",
        r->label, "cycleIntervalSeconds", r->interval_s, "maxWaitSeconds",
        (json_int_t)(r->max_wait_ms / 1000), "queueing",
        r->strict ? "StrictFIFO" : "BestEffortFIFO", "reservationsOn",
        r->max_wait_ms > 0 || r->strict, "jobs", (int)t->n, "finished", (int)finished,
        "utilisationWhileArriving", mean_util(r, last), "utilisation", mean_util(r, r->end_ms),
        "waitBySize", classes, "starveBoundSeconds", (double)starve_ms / 1000.0, "starvedJobs",
        (int)nstarved, "starved", starved, "cycles", (int)r->cycles, "reservations",
        (int)r->reservations, "backfilledJobs", (int)backfilled, "killedByLimit", (int)r->deadlines,
        "virtualHours", (double)r->end_ms / 3600000.0, "wallSeconds", r->wall_s);
}

static FILE *open_out(const char *dir, const char *label, const char *what, struct err *err)
{
    char *path = xasprintf("%s/%s-%s.csv", dir, label, what);
    FILE *f = fopen(path, "w");
    if (!f)
        err_set(err, ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    free(path);
    return f;
}

static void secs(FILE *f, int64_t ms)
{
    if (ms < 0)
        fputs(",", f);
    else
        fprintf(f, ",%.3f", (double)ms / 1000.0);
}

int replay_write_csv(const char *dir, const struct replay_trace *t, const struct replay_run *r,
                     struct err *err)
{
    FILE *f = open_out(dir, r->label, "jobs", err);
    if (!f)
        return ERR_IO;
    fputs("id,queue,pods,size,arrival_s,start_s,end_s,wait_s,state,backfilled,reserved\n", f);
    for (size_t i = 0; i < t->n; i++) {
        const struct replay_job *j = &t->jobs[i];
        const struct replay_outcome *o = &r->out[i];
        fprintf(f, "%s,%s,%d,%s", j->id, j->queue ? j->queue : "default", j->pods,
                class_names[size_class(j->pods)]);
        secs(f, j->arrival_ms);
        secs(f, o->start_ms);
        secs(f, o->end_ms);
        secs(f, o->start_ms >= 0 ? o->start_ms - j->arrival_ms : -1);
        fprintf(f, ",%s,%d,%d\n", state(o), o->backfilled, o->reserved);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad)
        return err_set(err, ERR_IO, "cannot write the jobs CSV of '%s'", r->label);
    if (!(f = open_out(dir, r->label, "util", err)))
        return ERR_IO;
    fputs("t_s,used,capacity,utilisation,pending,running,reservations\n", f);
    for (size_t i = 0; i < r->nsamples; i++) {
        const struct replay_sample *s = &r->samples[i];
        fprintf(f, "%.3f,%g,%g,%.4f,%ld,%ld,%ld\n", (double)s->t_ms / 1000.0, s->used, s->capacity,
                s->capacity > 0 ? s->used / s->capacity : 0, s->pending, s->running,
                s->reservations);
    }
    bad = ferror(f);
    fclose(f);
    return bad ? err_set(err, ERR_IO, "cannot write the utilisation CSV of '%s'", r->label) : 0;
}

static void cell(char *buf, size_t n, json_t *v)
{
    if (json_is_integer(v))
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, n, "%.3f", json_real_value(v));
    else if (json_is_string(v))
        snprintf(buf, n, "%s", json_string_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, n, "%s", json_is_true(v) ? "yes" : "no");
    else
        snprintf(buf, n, "-");
}

static void line(const char *name, json_t *a, json_t *b)
{
    char x[64], y[64];
    cell(x, sizeof(x), a);
    cell(y, sizeof(y), b);
    if (b)
        printf("%-36s %18s %18s\n", name, x, y);
    else
        printf("%-36s %18s\n", name, x);
}

void replay_print(json_t *a, json_t *b)
{
    static const char *const keys[] = {"policy",
                                       "cycleIntervalSeconds",
                                       "maxWaitSeconds",
                                       "queueing",
                                       "jobs",
                                       "finished",
                                       "utilisationWhileArriving",
                                       "utilisation",
                                       "starvedJobs",
                                       "reservations",
                                       "backfilledJobs",
                                       "killedByLimit",
                                       "cycles",
                                       "virtualHours",
                                       "wallSeconds"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        line(keys[i], json_object_get(a, keys[i]), b ? json_object_get(b, keys[i]) : NULL);
    for (int c = 0; c < NCLASS; c++) {
        json_t *ca = json_object_get(json_object_get(a, "waitBySize"), class_names[c]);
        json_t *cb = b ? json_object_get(json_object_get(b, "waitBySize"), class_names[c]) : NULL;
        if (!ca && !cb)
            continue;
        static const char *const st[] = {"jobs", "unstarted", "meanWaitSeconds", "p99WaitSeconds",
                                         "maxWaitSeconds"};
        for (size_t k = 0; k < 5; k++) {
            char name[64];
            snprintf(name, sizeof(name), "pods %s: %s", class_names[c], st[k]);
            line(name, json_object_get(ca, st[k]), b ? json_object_get(cb, st[k]) : NULL);
        }
    }
}
