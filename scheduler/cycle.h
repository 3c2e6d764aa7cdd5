/*
 * cycle.h - one scheduling cycle: one LMDB write transaction, one durable commit.
 *
 * Files: cycle.c (job order, the cycle), cycle_stmt.c (statements: allocate on the view
 * with an undo log, commit into the transaction, discard in reverse), cycle_attempt.c
 * (one job attempt: gang rules, the placer, preemption on failure, the outcome),
 * cycle_housekeeping.c (mark_running, terminated pods at the start of a cycle),
 * cycle_timeout.c (the gang timeout).
 */
#ifndef MUSTER_SCHED_CYCLE_H
#define MUSTER_SCHED_CYCLE_H

#include "core.h"
#include "place.h"
#include "view.h"
#include "why.h"

struct sched_op {
    int pod, node; /* allocate pod -> node */
};

struct sched_cyc {
    struct sched *s;
    struct sched_view *v;
    MDB_txn *txn;
    int64_t now_ms;
    uint64_t cycle;
    struct sched_op *ops; /* the open statement's undo log */
    size_t nops, capops;
    int *touched; /* nodes with cyc_pods this cycle */
    size_t ntouched, captouched;
    long placed, jobs_placed, discarded, unschedulable;
    long attempted; /* attempts (sched__attempt calls) */
    long waiting;   /* parked jobs left out (view_wait.c) */
    long changes;   /* what the housekeeping changed in the store (pods, victim records) */
    /* Bound pods by node as of the first preemption attempt of the cycle (CSR: node n's
     * pods are by_node[by_node_off[n] .. by_node_off[n + 1]]), built lazily. Pods placed
     * later in the cycle are not in it and need not be: jobs run in priority order, so
     * they are never of lower priority than a later preemptor and never its victims. */
    int *by_node_off, *by_node;
    /* The allocatable of every schedulable node summed per resource ([v->nres], NULL until
     * the first attempt asks: cycle_attempt.c's ExceedsClusterCapacity), and the counts of
     * live and of cordoned nodes. Nodes do not change within a cycle. */
    int64_t *cluster_alloc;
    long cluster_nodes, cluster_cordoned;
    struct sched_qcache *qcache; /* reclaim's view of the cycle (queue_reclaim.c), NULL
                                    until the first preemption with queues asks */
    uint64_t plan_epoch;         /* grows with every committed statement and executed preemption */
    struct sched_memo *memo;     /* failed preemptions of this epoch (preempt_memo.c) */
    size_t nmemo, capmemo;
    /* The why documents' queue part of queue why_queue_q at plan_epoch why_queue_epoch
     * (why_record.c): allocations move only when plan_epoch does, so the hundreds of jobs
     * that fail in a row share one. NULL until asked; freed with the cycle. */
    json_t *why_queue;
    int why_queue_q;
    uint64_t why_queue_epoch;
    json_t *why_ahead; /* the last "ahead" part written and its text (why_record.c) */
    char *why_ahead_text;
    json_t *why_nf; /* the last node-filter part written and its text (why_record.c) */
    char *why_nf_text;
    json_t *why_queue_src; /* the queue part why_queue_text is the text of (borrowed) */
    char *why_queue_text;
    struct sched_why_classes *why_classes; /* this cycle's shared documents (why_class.c) */
    char ts[64];                           /* sched__cyc_ts, "" until asked */
};
/* Frees the cycle's remembered preemption failures (preempt_memo.c). */
void sched__memo_free(struct sched_cyc *c);
/* Frees the cycle's reclaim cache (queue_reclaim.c); NULL-safe. */
void sched__qcache_free(struct sched_qcache *k);

/* The allocatable of every schedulable node summed per resource ([v->rescap]), kept by
 * the scheduler from one cycle to the next (s->cl_*) and summed again only when the view's
 * epoch or resource count moved since (the epoch grows with changes to the view). */
const int64_t *sched__cyc_cluster(struct sched_cyc *c);
/* The cycle's time (now_ms) in RFC 3339, formatted once per cycle. Borrowed, valid for the
 * cycle. */
const char *sched__cyc_ts(struct sched_cyc *c);
/* 1 when a cycle has something to do for job j: a pending pod, or members missing (and it
 * is not a preemption victim). A job without work leaves the view's todo (view.h). */
int sched__job_has_work(const struct sched_view *v, const struct sv_job *j);
/* The cycle's bound-pods-by-node index (see struct sched_cyc), built on first use. */
void sched__cyc_pods_by_node(struct sched_cyc *c);

/* Statement: allocate (view now, store at commit), commit, discard (undo in reverse,
 * audit "discarded" when the statement had operations). */
void sched__stmt_alloc(struct sched_cyc *c, int pod, int node);
int sched__stmt_commit(struct sched_cyc *c, json_t **placement, struct err *err);
int sched__stmt_discard(struct sched_cyc *c, const char *job, int code, const char *msg,
                        struct err *err);

/* Nominates pod to node (-1 clears) in the store and the view (preempt_evict.c). */
int sched__pod_nominate(struct sched_cyc *c, int pod, int node, struct err *err);

/* mark_running and removal of terminated pods, at the start of a cycle. */
int sched__housekeeping(struct sched_cyc *c, struct err *err);
/* Attempts the job (with its GangGroup) as one statement. */
int sched__attempt(struct sched_cyc *c, int job, struct err *err);

/* One member of an attempt: the job, or one PodGroup of its GangGroup. */
struct sched_member {
    int bound;     /* pods bound before the attempt (Failed and Succeeded ones not counted) */
    int base;      /* of those, the ones that count toward minMember: bound, or 0 under the
                      only-waiting match policy; the gang needs base + placed >= minMember */
    int pending;   /* pending pods */
    int placed;    /* placed by the placer in this attempt (it fills this) */
    int fail_pod;  /* first pod the placer could not place, -1 (it fills this) */
    int satisfied; /* a gang satisfied before: its later pods are placed one by one */
};

/* One job attempt (cycle_attempt.c). Members are in id order; jobs[i] is the job of
 * m[i], kept as an int array because fit and gather take the member jobs in that form. A
 * GangGroup may have any number of members. */
struct sched_attempt {
    int *jobs;
    struct sched_member *m;
    size_t njobs;
    int *pods; /* pending pods in placement order */
    size_t npods;
    int has_spec;            /* some member has a usable network-topology-spec */
    struct gather_spec spec; /* the members' specs merged: the narrowest layers */
    struct sched_blockers blockers;
    json_t *topology; /* the why document's topology part (new), NULL without gather */
    struct sched_preempt_verdict preempt; /* code -1 when preemption was not tried */
    char moot[256];    /* why preemption cannot help (cycle_attempt.c), "" when it may */
    json_t *displaced; /* jobs whose nominated room the placed job took (their nominations
                          cleared, sched__preempt_displaced), NULL when none */
};
/* The member index of job in the attempt, -1 when it is not a member. */
int sched__attempt_member(const struct sched_attempt *a, int job);
/* 1 when every member that still needs its gang has minMember pods bound + placed. */
int sched__attempt_members_met(const struct sched_view *v, const struct sched_attempt *a);

/* The gang timeout (cycle_timeout.c), after an attempt that placed the job (ok) or failed
 * with its gangs unsatisfied: a success closes every member's window; a failure opens the
 * windows not open yet, and when a member's window is older than its timeout the attempt
 * times out: every member's window closes (the next attempt starts a new one, as
 * Koordinator retries a rejected gang), its pods' nominations are dropped, audit
 * "gang-timed-out", and the GangTimedOut blocker is added. *timed_out 1 then. Returns 0 or
 * ERR_*. */
int sched__timeout(struct sched_cyc *c, struct sched_attempt *a, int ok, int *timed_out,
                   struct err *err);

/* Volcano's minTaskMember (cycle_tasks.c): 1 when some task of job j's PodGroup has fewer
 * pods than its minimum: placed ones (bound or placed by the open statement), or with
 * pending != 0 every alive one (bound, placed or pending); msg (may be NULL) says which. */
int sched__job_tasks_short(const struct sched_view *v, const struct sv_job *j, int pending,
                           char *msg, size_t n);

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

/* The placer for an attempt (place.h): gather when a member asks for a strategy. */
sched__placer sched__placer_for(struct sched_cyc *c, struct sched_attempt *a);
/* Undoes the open statement's operations without an audit record (a node-set try). */
void sched__stmt_undo(struct sched_cyc *c);

#endif
