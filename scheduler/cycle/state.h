/*
 * state.h - what the cycle's files share, as types only: the scheduler (struct sched, the
 * object the entry points of scheduler.h hang everything off) and one job attempt's state
 * (struct sched_attempt). No functions: cycle.h declares those.
 */
#ifndef MUSTER_SCHED_STATE_H
#define MUSTER_SCHED_STATE_H

#include <pthread.h>
#include <stdatomic.h>

#include "cyc.h"
#include "place.h"
#include "plan.h"
#include "reason.h"

/* Upper bounds of the cycle duration histogram's buckets, seconds (cycle.c). */
#define SCHED_HIST_N 12
extern const double sched__hist_bounds[SCHED_HIST_N];

struct sched_metrics {
    uint64_t cycles;      /* cycles that wrote (numbered) */
    uint64_t idle_cycles; /* cycles with nothing to do (not numbered, nothing written) */
    uint64_t pods_placed;
    uint64_t statements_committed, statements_discarded;
    uint64_t reservations;       /* reservations made or moved ("reserved" records) */
    uint64_t backfills;          /* jobs placed on nodes reserved for another job */
    uint64_t deadlines;          /* pods ended by spec.activeDeadlineSeconds */
    uint64_t hist[SCHED_HIST_N]; /* cycle duration buckets (sched__hist_bounds) */
    double duration_sum;
    uint64_t preemptions;    /* preemption ledger entries written */
    uint64_t why_reused;     /* failing jobs' why texts taken from the last one's (why_memo.c) */
    uint64_t apply_prepared; /* objects applies created as prepared on two threads (apply.h) */
    uint64_t applies;        /* applies committed (sched_apply_lines) */
    /* the applies' parts, summed (sched_apply_timed: some are timed off the lock) */
    _Atomic uint64_t apply_ns[SCHED_APPLY_PHASES];
};

/* The counters as the last time series sample saw them (timeseries.c). */
struct sched_ts_prev {
    uint64_t cycles, pods_placed, preemptions;
    double duration_sum;
};

/* The scheduler: the object the entry points (scheduler.h) hang everything off. Entry
 * points take mu; everything below runs under it. */
struct sched {
    struct store *st;
    struct sched_options opts;
    pthread_mutex_t mu;
    struct sched_view *v;
    struct sched_why_memory *why_mem; /* record/'s memory of v's jobs (why.h), reset with v */
    uint64_t cycle;                   /* last cycle number */
    /* the housekeeping looks for expired victim records once now reaches this (0 after a
     * rebuild: look; record/ledger.c keeps it at the earliest retainedUntil) */
    int64_t retain_scan_ms;
    struct sched_metrics met;
    struct sched_ts_prev ts_prev;
    /* the schedulable nodes' allocatable summed per resource, and the node counts, as of view
     * epoch cl_epoch with cl_nres resources (cycle.c: nodes change only with the epoch);
     * cl_epoch 0 after a rebuild */
    int64_t *cl_alloc;
    size_t cl_nres;
    uint64_t cl_epoch;
    long cl_nodes, cl_cordoned;
};

/* One job attempt (cycle_attempt.c): what it asks the placer (rq: its members and their
 * gang counts, its pending pods, the merged topology spec), what the placement that counts
 * returned (res; a preemption dry run's are its own), and what it found on the way. */
struct sched_attempt {
    struct place_req rq;
    struct place_result res;
    struct sched_blockers blockers;
    struct sched_preempt_verdict preempt; /* code -1 when preemption was not tried */
    char moot[256]; /* why preemption cannot help (cycle_attempt.c), "" when it may */
    /* lower preemptors whose nominated room the placed job took (their nominations
     * cleared, sched__preempt_displaced) */
    struct preempt_cleared displaced;
};

#endif
