/*
 * cycle.h - the scheduler's state (struct sched) and one scheduling cycle: one LMDB write
 * transaction, one durable commit.
 *
 * Files: cycle.c (job order, the cycle, the rebuild), cycle_stmt.c (statements: commit
 * into the transaction, discard in reverse; view/cyc.c allocates and undoes),
 * cycle_attempt.c (one job attempt: gang rules, the placer, preemption on failure, the
 * outcome), cycle_queue.c (an attempt's queue rules), cycle_housekeeping.c (mark_running,
 * terminated pods at the start of a cycle), cycle_timeout.c (the gang timeout).
 *
 * Calls: preempt/, record/, place/, queue/, view/, reason/ (everything below it). The
 * entry points of scheduler.h (the folder above) call it.
 */
#ifndef MUSTER_SCHED_CYCLE_H
#define MUSTER_SCHED_CYCLE_H

#include <pthread.h>

#include "cyc.h"
#include "place.h"
#include "plan.h"
#include "preempt.h"
#include "view.h"
#include "why.h"

/* Upper bounds of the cycle duration histogram's buckets, seconds (cycle.c). */
#define SCHED_HIST_N 12
extern const double sched__hist_bounds[SCHED_HIST_N];

struct sched_metrics {
    uint64_t cycles;      /* cycles that wrote (numbered) */
    uint64_t idle_cycles; /* cycles with nothing to do (not numbered, nothing written) */
    uint64_t pods_placed;
    uint64_t statements_committed, statements_discarded;
    uint64_t hist[SCHED_HIST_N]; /* cycle duration buckets (sched__hist_bounds) */
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
    /* the schedulable nodes' allocatable summed per resource, and the node counts, as of view
     * epoch cl_epoch with cl_nres resources (cycle.c: nodes change only with the epoch);
     * cl_epoch 0 after a rebuild */
    int64_t *cl_alloc;
    size_t cl_nres;
    uint64_t cl_epoch;
    long cl_nodes, cl_cordoned;
};

/* Rebuilds s->v from the store (replacing the old view). */
int sched__rebuild(struct sched *s, struct err *err);

/* The allocatable of every schedulable node summed per resource ([v->rescap]), kept by
 * the scheduler from one cycle to the next (s->cl_*) and summed again only when the view's
 * epoch or resource count moved since (the epoch grows with changes to the view). */
const int64_t *sched__cyc_cluster(struct sched_cyc *c);
/* 1 when a cycle has something to do for job j: a pending pod, or members missing (and it
 * is not a preemption victim). A job without work leaves the view's todo (view.h). */
int sched__job_has_work(const struct sched_view *v, const struct sv_job *j);

/* Statement: commit (the bindings and "placed" records into the cycle's transaction),
 * discard (undo in reverse, audit "discarded" when the statement had operations). */
int sched__stmt_commit(struct sched_cyc *c, json_t **placement, struct err *err);
int sched__stmt_discard(struct sched_cyc *c, const char *job, int code, const char *msg,
                        struct err *err);

/* mark_running and removal of terminated pods, at the start of a cycle. */
int sched__housekeeping(struct sched_cyc *c, struct err *err);
/* Attempts the job (with its GangGroup) as one statement. */
int sched__attempt(struct sched_cyc *c, int job, struct err *err);

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

/* The gang timeout (cycle_timeout.c), after an attempt that placed the job (ok) or failed
 * with its gangs unsatisfied: a success closes every member's window; a failure opens the
 * windows not open yet, and when a member's window is older than its timeout the attempt
 * times out: every member's window closes (the next attempt starts a new one, as
 * Koordinator retries a rejected gang), its pods' nominations are dropped, audit
 * "gang-timed-out", and the GangTimedOut blocker is added. *timed_out 1 then. Returns 0 or
 * ERR_*. */
int sched__timeout(struct sched_cyc *c, struct sched_attempt *a, int ok, int *timed_out,
                   struct err *err);

/* The queue rules of an attempt (cycle_queue.c). queue_checks: QueueNotFound and
 * QueueNotLeaf for each member. capability: QueueOverCapability for each member whose
 * least pods (cycle_queue.c's member_least: the pods it needs, or all of them when it
 * gathers) would take its queue or an ancestor over its realcap (after collect_pods);
 * returns the first such queue, -1 when none (the attempt then only tries preemption inside
 * that queue's subtree). queue_share: after a failed attempt whose preemption did
 * not help, WaitingForQueueShare when job's queue would pass its deserved share in a
 * resource its pods ask for while another queue holds more than its own. */
void sched__attempt_queue_checks(struct sched_cyc *c, struct sched_attempt *a);
int sched__attempt_capability(struct sched_cyc *c, struct sched_attempt *a);
void sched__attempt_queue_share(struct sched_cyc *c, struct sched_attempt *a, int job);
/* After the placer: while a member's queue (or an ancestor) is over its capability, the
 * statement's last allocations go back, as long as each member keeps the pods it needs
 * (an elastic gang runs with fewer pods than it has). Attempts that gather are left alone:
 * their capability check counted every pod. */
void sched__attempt_trim_to_cap(struct sched_cyc *c, struct sched_attempt *a);

#endif
