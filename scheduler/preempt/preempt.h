/*
 * preempt.h - job-level preemption (DESIGN.md section 3): the entry point called by a
 * failed attempt, and what its files share.
 *
 * Files: search.h (the search's types), preempt_cache.c (what preemption remembers within
 * a cycle: the lowest file), preempt_victims.c (potential victims, node costs, elastic and
 * whole gangs), preempt.c (eligibility, dry runs, the minimal victim set), preempt_memo.c (failed
 * searches), preempt_reclaim.c (reclaim), preempt_pdb.c (PodDisruptionBudgets: which victims
 * violate one, the first criterion of a node's cost), preempt_why.c (verdicts for the why
 * document), preempt_evict.c (executing a plan: the store and the view; the plan's records are
 * record/ledger_plan.c's).
 *
 * A struct preempt lives for one sched__preempt call. pv[] are the potential victims,
 * pn[] the nodes holding them; pv[].removed marks the chosen victims once the search is
 * over (the view itself is back to its state before the search), plan[] the pod -> node
 * plan that fits once they are gone.
 */
#ifndef MUSTER_SCHED_PREEMPT_H
#define MUSTER_SCHED_PREEMPT_H

#include "cyc.h"
#include "preempt_cache.h"
#include "reason.h"
#include "search.h"
#include "view.h"

/* ---- the entry points ---- */

/* Job-level preemption for a job whose attempt failed (called with an empty statement).
 * On success victims are marked, the job's pods nominated, a ledger entry written.
 * *out: the verdict for the why document (why.h; release it). Returns 0 or ERR_* (the
 * cycle is then aborted). */
int sched__preempt(struct sched_cyc *c, const struct sched_preempt_job *pj,
                   struct sched_preempt_verdict *out, struct err *err);
/* Pods still terminating (victims) on the nodes pods[0..npods) are nominated to
 * (preempt_why.c). */
long sched__preempt_terminating(const struct sched_view *v, const int *pods, size_t npods);
/* 1 when a pod of the open statement was nominated (a preemptor may be binding). */
int sched__preempt_nominated_ops(struct sched_cyc *c);

/* Nominates pod to node (-1 clears) in the store and the view (preempt_evict.c). */
int sched__pod_nominate(struct sched_cyc *c, int pod, int node, struct err *err);

/* ---- shared by the files of preemption (their types: search.h) ---- */

/* Which of two pods is more important (kube-scheduler's MoreImportantPod): the higher
 * priority, then the earlier start (status.startTime; a pod not started yet starts now),
 * then the key: <0 when a is, >0 when b is (preempt_pdb.c). pod_start: that start. */
int sched__more_important(const struct preempt *pr, const struct sv_pod *a, const struct sv_pod *b);
int64_t sched__pod_start(const struct preempt *pr, const struct sv_pod *p);

/* PodDisruptionBudgets (preempt_pdb.c). begin sets pr->pdb (NULL when the view has no
 * budget: then node_cost sets 0 and violations sets none); end frees it. node_cost sets
 * pn->viol and the viol of each of its victims, counting a gang-breaking victim's whole
 * gang; call it before any victim leaves the view. violations: the plan's victims'
 * violations (kube-scheduler's NumPDBViolations) into p->pdb_violations, the budgets they
 * violate (sorted keys "ns/name") into p->pdbs, and each violating victim's budget; call it
 * while the chosen victims are marked and back in the view. */
void sched__pdb_begin(struct preempt *pr);
void sched__pdb_end(struct preempt *pr);
void sched__pdb_node_cost(struct preempt *pr, struct pnode *pn);
struct preempt_plan;
void sched__pdb_violations(struct preempt *pr, struct preempt_plan *p);

/* Verdicts for the why document (preempt_why.c). ineligible returns 0 when the job may
 * preempt, else 1 with *out filled (PreemptionWaiting, a blocker, while victims of an
 * earlier preemption still terminate). */
int sched__preempt_ineligible(struct sched_cyc *c, const struct sched_preempt_job *pj,
                              struct sched_preempt_verdict *out);
void sched__preempt_no_victims(struct preempt *pr, struct sched_preempt_verdict *out);
void sched__preempt_not_helpful(struct preempt *pr, struct sched_preempt_verdict *out);

/* Sets pr->rec for pr->queue asking pr->asked (the wide pool, or with narrow the narrow
 * one, queue_reclaim.c's opening comment); returns 1, or 0 with pr->rec NULL when no
 * queue may be reclaimed from. may_take: job (of another queue) is in the pool. end frees
 * pr->rec. */
int sched__reclaim_begin(struct preempt *pr, int narrow);
int sched__reclaim_may_take(const struct preempt *pr, int job);
/* 1 when reclaim may take part of job (of another queue) that holds hold ([v->nres]): the
 * wide pool only (preempt.c's surplus gang members). */
int sched__reclaim_may_take_part(const struct preempt *pr, int job, const int64_t *hold);
void sched__reclaim_end(struct preempt *pr);

/* The potential victims of pr (pr->pv, pr->pn, ranks and node costs; preempt_victims.c),
 * and, once the search chose, the rest of every gang the choice leaves below minMember. */
void sched__collect_victims(struct preempt *pr);
void sched__complete_gangs(struct preempt *pr);
/* 1 when pod p may be a victim of pr: not of the preemptor; of its queue (or of no queue)
 * and lower priority; or of another queue's job reclaim may take (queue_reclaim.c). */
int sched__preempt_victim_ok(const struct preempt *pr, const struct sv_pod *p);
/* Failed preemptions remembered within a cycle (preempt_memo.c): find fills *out (release
 * it) with the verdict of a failure recorded, in this plan epoch, for a job no easier
 * than pr's and returns 1, else 0; put records pr's failure (out borrowed). */
int sched__memo_find(const struct preempt *pr, struct sched_preempt_verdict *out);
void sched__memo_put(const struct preempt *pr, const struct sched_preempt_verdict *out);

/* 1 when the chosen victims of other queues leave each of those queues (and its ancestors
 * below the one it shares with the preemptor's) at or above its deserved share in every
 * resource they free (queue_reclaim.c). */
int sched__reclaim_within(const struct preempt *pr);
/* The plan's reclaim part (preempt_reclaim.c): p->reclaim when a victim is of another
 * queue, and then the shares before and after of the preemptor's queue and of the victims'
 * queues. Called before the victims are marked. */
void sched__reclaim_plan(struct preempt *pr, struct preempt_plan *p);

/* Executes the chosen plan (store + view): victims get DisruptionTarget and a
 * deletionTimestamp, the job's pods status.nominatedNodeName, lower-priority nominations
 * on those nodes are cleared; the typed plan (record/plan.h) goes to record/ for the
 * ledger entry, the audit records and *out (Preempting). Returns 0 or ERR_*. */
int sched__evict_execute(struct preempt *pr, struct sched_preempt_verdict *out, struct err *err);

/* After jobs (an attempt's members) were placed without preempting: a lower-priority
 * preemptor's nominated pod on a node they took that no longer fits there loses its plan,
 * as when a preemptor takes it (its job's nominations cleared, cleared_by = jobs[0], the
 * ledger's nominationsCleared with byLedger 0, an audit "nominated" record listing what was
 * cleared: record/plan.h's sched__record_displaced). pods: the attempt's pods. cl: what was
 * cleared (zeroed by the caller, released with sched__cleared_release). Returns 0 or
 * ERR_*. */
struct preempt_cleared;
int sched__preempt_displaced(struct sched_cyc *c, const int *jobs, size_t njobs, const int *pods,
                             size_t npods, struct preempt_cleared *cl, struct err *err);

#endif
