/*
 * cycle.h - the scheduler's state (struct sched) and one scheduling cycle: one LMDB write
 * transaction, one durable commit.
 *
 * Files: state.h (struct sched, an attempt's state: types only), cycle.c (job order, the
 * cycle, the rebuild, the long lock), cycle_cluster.c (the cluster's capacity), cycle_stmt.c
 * (statements: commit into the transaction, discard in reverse; view/cyc.c allocates and undoes),
 * cycle_attempt.c (one job attempt: gang rules, the placer, preemption on failure, the
 * outcome), cycle_queue.c (an attempt's queue rules), cycle_housekeeping.c (mark_running,
 * terminated pods at the start of a cycle), cycle_timeout.c (the gang timeout).
 *
 * Calls: preempt/, record/, place/, queue/, view/, reason/ (everything below it). The
 * entry points of scheduler.h (the folder above) call it.
 */
#ifndef MUSTER_SCHED_CYCLE_H
#define MUSTER_SCHED_CYCLE_H

#include "cyc.h"
#include "state.h"
#include "place.h"
#include "plan.h"
#include "preempt.h"
#include "view.h"
#include "why.h"

/* Takes and gives back s->mu for an entry point that holds it long (an apply, a cycle): a
 * background thread (the one an apply or a cycle asked for through the API runs on) runs at
 * the process's priority meanwhile (thread_boost), else on a machine busy with other work a
 * cycle or a read would wait for a lock held by a thread at a tenth of everything else's
 * weight. Reads, short, take s->mu as it is: the read cache's remaker keeps its lower
 * priority, which is what keeps it from delaying the answers (bench/README.md, "Session
 * 23"). */
void sched__lock_long(struct sched *s);
void sched__unlock_long(struct sched *s);

/* Rebuilds s->v from the store (replacing the old view). */
int sched__rebuild(struct sched *s, struct err *err);

/* The allocatable of every schedulable node summed per resource ([v->rescap]), kept by
 * the scheduler from one cycle to the next (s->cl_*) and summed again only when the view's
 * epoch or resource count moved since (the epoch grows with changes to the view)
 * (cycle_cluster.c). */
const int64_t *sched__cyc_cluster(struct sched_cyc *c);
/* 1 when a cycle has something to do for job j: a pending pod, or members missing (and it
 * is not a preemption victim). A job without work leaves the view's todo (view.h). */
int sched__job_has_work(const struct sched_view *v, const struct sv_job *j);

/* Statement: commit (the bindings and "placed" records into the cycle's transaction),
 * discard (undo in reverse, audit "discarded" when the statement had operations).
 * placement: what the last committed statement placed for job (NULL: nothing). */
int sched__stmt_commit(struct sched_cyc *c, struct err *err);
const struct sched_placement *sched__stmt_placement(const struct sched_cyc *c, int job);
int sched__stmt_discard(struct sched_cyc *c, const char *job, int code, const char *msg,
                        struct err *err);

/* mark_running and removal of terminated pods, at the start of a cycle. */
int sched__housekeeping(struct sched_cyc *c, struct err *err);
/* Attempts the job (with its GangGroup) as one statement. */
int sched__attempt(struct sched_cyc *c, int job, struct err *err);

/* The gang timeout (cycle_timeout.c), after an attempt that placed the job (ok) or failed
 * with its gangs unsatisfied: a success closes every member's window; a failure opens the
 * windows not open yet, and when a member's window is older than its timeout the attempt
 * times out: every member's window closes (the next attempt starts a new one, as
 * Koordinator retries a rejected gang), its pods' nominations are dropped, audit
 * "gang-timed-out", and the GangTimedOut blocker is added. *timed_out 1 then. Returns 0 or
 * ERR_*. */
int sched__timeout(struct sched_cyc *c, struct sched_attempt *a, int ok, int *timed_out,
                   struct err *err);

/* What the attempt's members ask for against what the cluster could ever hold, before any
 * placement (cycle_demand.c): ExceedsClusterCapacity when their bound pods, the pending pods
 * their gangs still need and their PodGroups' spec.minResources ask for more than every
 * schedulable node has together; under MustGather, ExceedsDomainCapacity when
 * spec.minResources asks for more than the layer's largest domain has. */
void sched__attempt_demand_checks(struct sched_cyc *c, struct sched_attempt *a);

/* Reservations in the cycle (cycle_reserve.c; reserve.h has the rules). begin: at the
 * start of a cycle, a reservation whose job is gone or has no pending pod left ends
 * ("unreserved"). gate_on: before the attempt's placement (and its preemption dry runs),
 * the reservations the attempt may not use are marked (view_resv.h); gate_off after it.
 * after: the attempt's outcome (ok: placed): a placed job's reservation ends; a failed job
 * that starves (it holds a reservation, waited past its threshold, or heads a StrictFIFO
 * queue) gets its reservation decided again, stored and audited when it changed, and the
 * Reserved blocker; a failed job the gate kept off reserved nodes gets ReservedForStarving.
 * backfill: before a placed attempt's commit, c->backfill says which reservations' nodes
 * it took (NULL when none). Each returns 0 or ERR_*. */
int sched__reserve_begin(struct sched_cyc *c, struct err *err);
void sched__reserve_gate_on(struct sched_cyc *c, const struct sched_attempt *a);
void sched__reserve_gate_off(struct sched_cyc *c);
int sched__reserve_after(struct sched_cyc *c, struct sched_attempt *a, int ok, struct err *err);
void sched__reserve_backfill(struct sched_cyc *c, const struct sched_attempt *a);
/* The attempt's end if it started now: now + the largest limit of its members, INT64_MAX
 * when none has one. */
int64_t sched__attempt_end_ms(const struct sched_cyc *c, const struct sched_attempt *a);

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
/* After trim_to_cap: pods beyond a gang's minimum (every pod of a satisfied gang, none of
 * a lone pod's job) go back, last placed first, while their queue is above its deserved
 * share in a resource they ask for and another leaf queue with pending pods asking for it
 * is owed at least what the pod asks (Volcano's proportion plugin: a queue allocates
 * within its deserved share); WaitingForQueueShare says so. Attempts that gather are left alone. */
void sched__attempt_trim_to_share(struct sched_cyc *c, struct sched_attempt *a);

#endif
