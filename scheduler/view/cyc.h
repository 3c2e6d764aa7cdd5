/*
 * cyc.h - a scheduling cycle as the parts below cycle/ see it: the view it decides on,
 * its write transaction and time, the open statement's undo log, and the per-cycle
 * memory each part owns (the why writer's, record/why.h; preemption's, preempt/preempt.h),
 * held by pointer and freed by its owner.
 *
 * Calling sequence (cycle/cycle.c): the cycle fills a struct sched_cyc, attempts jobs
 * (each attempt a statement: sched__stmt_alloc puts a pod on a node in the view and
 * remembers it; the cycle commits the statement into txn or discards it; a placer's
 * node-set try is undone with sched__stmt_undo), then frees each part's memory.
 *
 * Owns: view/cyc.c. Everything here runs under the scheduler's lock; txn belongs to the
 * cycle (nothing below it begins, commits or aborts it).
 */
#ifndef MUSTER_SCHED_CYC_H
#define MUSTER_SCHED_CYC_H

#include "scheduler.h"
#include "view.h"

struct sched;
struct sched_why_writer;
struct sched_why_memory;
struct sched_preempt_cache;

struct sched_op {
    int pod, node; /* allocate pod -> node */
};

/* What the last committed statement placed for one job: its pods and their nodes, in
 * placement order (a slice of sched_cyc.grouped; cycle/cycle_stmt.c). */
struct sched_placement {
    int job;
    const struct sched_op *ops;
    size_t n;
};

struct sched_cyc {
    struct sched *s; /* the scheduler: cycle/ and above only */
    const struct sched_options *opts;
    int64_t *retain_scan_ms; /* the scheduler's: the ledger moves it (record/ledger.c) */
    struct sched_view *v;
    MDB_txn *txn;
    int64_t now_ms;
    uint64_t cycle;
    struct sched_op *ops; /* the open statement's undo log */
    size_t nops, capops;
    /* the last committed statement's operations grouped by job (first placed first, each
     * job's in placement order), and each job's slice of them */
    struct sched_op *grouped;
    size_t ngrouped, capgrouped;
    struct sched_placement *placed_jobs;
    size_t nplaced_jobs, capplaced_jobs;
    int *touched; /* nodes with cyc_pods this cycle */
    size_t ntouched, captouched;
    long placed, jobs_placed, discarded, unschedulable;
    long attempted;   /* attempts (sched__attempt calls) */
    long waiting;     /* parked jobs left out (view_wait.c) */
    long changes;     /* what the housekeeping changed in the store (pods, victim records) */
    long preemptions; /* preemption ledger entries written (counted once the cycle commits) */
    /* The allocatable of every schedulable node summed per resource ([v->nres], NULL until
     * the first attempt asks: cycle_attempt.c's ExceedsClusterCapacity), and the counts of
     * live and of cordoned nodes. Nodes do not change within a cycle. */
    int64_t *cluster_alloc;
    long cluster_nodes, cluster_cordoned;
    uint64_t plan_epoch;          /* grows with every committed statement and executed preemption */
    struct sched_why_writer *why; /* record/'s memory of the cycle, NULL until asked */
    struct sched_why_memory *why_mem; /* record/'s memory of jobs across cycles (the
                                         scheduler's, beside the view) */
    struct sched_preempt_cache *pre;  /* preempt/'s memory of the cycle, NULL until asked */
    char ts[64];                      /* sched__cyc_ts, "" until asked */
    /* reservations (cycle/cycle_reserve.c): the queues whose head was attempted this cycle
     * ([nq_seen], by queue slot), and the backfill of the statement being committed
     * ({"reservations": [...]}, NULL when it took no reserved node; the "placed" record and
     * the why say it) */
    unsigned char *q_seen;
    size_t nq_seen;
    json_t *backfill;
};

/* The cycle's time (now_ms) in RFC 3339, formatted once per cycle. Borrowed, valid for the
 * cycle. */
const char *sched__cyc_ts(struct sched_cyc *c);
/* Allocates pod -> node in the view and appends it to the open statement's undo log. */
void sched__stmt_alloc(struct sched_cyc *c, int pod, int node);
/* Undoes the open statement's operations in reverse, without a record (a node-set try, a
 * dry run, a discard). */
void sched__stmt_undo(struct sched_cyc *c);

#endif
