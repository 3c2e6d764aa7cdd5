/*
 * replay.h - `muster replay` (docs/replay.md): the real scheduler in virtual time on a trace
 * of jobs. Internal to cli/.
 *
 * Files: replay_trace.c (the trace: CSV in, one job's manifest out), replay.c (the command
 * and the run: arrivals, cycles every cycle_interval, pods deleted when their runtime is
 * over, events read back from the audit log), replay_out.c (per job wait/start/end, the
 * utilisation over time, waits by size class, starved jobs; JSON, CSV and the tables).
 */
#ifndef MUSTER_CLI_REPLAY_H
#define MUSTER_CLI_REPLAY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* One trace row: a job. Times in ms from the start of the trace. */
struct replay_job {
    char *id;    /* job name (the pods are <id>-<i>, the PodGroup <id>) */
    char *queue; /* NULL: the default queue */
    int32_t priority;
    int pods, gang; /* pods; gang: minMember (0: lone pods when pods == 1, else all) */
    char *cpu, *memory;
    int64_t gpu;
    char *topology;                           /* MustGather layer, NULL none */
    int64_t arrival_ms, runtime_ms, limit_ms; /* limit 0: none */
    int line;                                 /* in the CSV */
};

struct replay_trace {
    struct replay_job *jobs; /* by arrival (stable) */
    size_t n;
    int64_t longest_limit_ms;
    int uses_gpu; /* some job asks for GPUs: utilisation is of nvidia.com/gpu, else cpu */
};

/* Reads a trace CSV (a header naming the columns, any order: id, arrival, queue, priority,
 * pods, gang, cpu, memory, gpu, topology, runtime, limit; arrival, pods, runtime required;
 * '#' lines and blank lines skipped). Returns 0 or ERR_INVALID naming file, line and
 * column ("jobs.csv line 12: column 'pods': must be a positive integer, got 'x'"), ERR_IO. */
int replay_trace_load(const char *path, struct replay_trace *t, struct err *err);
void replay_trace_free(struct replay_trace *t);
/* The documents of job j as a JSON array (new): its PodGroup when it is a gang, its pods
 * (namespace "replay"), each created at t0_ms + its arrival (creationTimestamp: the wait
 * and the queue order count from the arrival, not from the cycle that applied it) and with
 * activeDeadlineSeconds = the limit when it has one. */
json_t *replay_job_docs(const struct replay_job *j, int64_t t0_ms);
/* 1 when j is a gang (a PodGroup with its pods); else it is one lone pod named as the job
 * (its job id in the scheduler is the pod's key). */
int replay_job_is_gang(const struct replay_job *j);
/* The name of j's pod i: "<id>-<i>" in a gang, "<id>" alone. */
void replay_pod_name(const struct replay_job *j, int i, char *buf, size_t n);

/* What happened to a job in one run. Times in ms from the start of the trace; -1 never. */
struct replay_outcome {
    int64_t start_ms, end_ms;
    int killed;     /* ended by its limit (activeDeadlineSeconds) */
    int preempted;  /* a preemption victim */
    int backfilled; /* placed on nodes reserved for another job */
    int reserved;   /* held a reservation at some time */
    int running;    /* pods of it run now (start seen) */
};

/* One run of the trace under one policy. */
struct replay_run {
    const char *label; /* the policy's name (its file's basename), borrowed */
    double interval_s;
    int64_t max_wait_ms;
    int strict;
    struct replay_outcome *out; /* [trace.n] */
    /* utilisation samples, one per cycle run */
    struct replay_sample {
        int64_t t_ms;
        double used, capacity;
        long pending, running, reservations;
    } * samples;
    size_t nsamples, capsamples;
    long cycles, reservations, backfills, deadlines;
    double wall_s; /* seconds the run took */
    int64_t end_ms;
};

/* The run's summary (new): jobs, finished, mean utilisation (while jobs arrive, and
 * overall), waits by size class (mean, p99, max), starved jobs (waited past the bound
 * starve_ms or never started), counters. */
json_t *replay_summary(const struct replay_trace *t, const struct replay_run *r, int64_t starve_ms);
/* Writes DIR/<label>-jobs.csv and DIR/<label>-util.csv. Returns 0 or ERR_IO. */
int replay_write_csv(const char *dir, const struct replay_trace *t, const struct replay_run *r,
                     struct err *err);
/* Prints one run's summary, or two side by side (b may be NULL). */
void replay_print(json_t *a, json_t *b);

#endif
