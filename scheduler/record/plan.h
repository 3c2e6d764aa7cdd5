/*
 * plan.h - a preemption as a typed decision: what the search chose (victims, cost, budgets
 * violated, queues' shares) and what executing it did (nominations, the lower nominations
 * it cleared). preempt/ fills a struct preempt_plan; record/ (ledger_plan.c) turns it into
 * the ledger entry, the victims' records and why documents, the audit records write-back
 * reads (outbox.h) and the preemptor's verdict, once, here.
 *
 * Calling sequence (preempt/preempt_evict.c):
 *     struct preempt_plan p;
 *     sched__plan_init(&p, job, trigger, prio);
 *     ... the search fills victims, awaited, broken, budgets, queues (before the victims
 *         are marked: shares are "before");
 *     ... executing fills each victim's ran_s, noms, nodes and cleared;
 *     rc = sched__record_preemption(c, &p, &verdict, err);
 *     sched__plan_release(&p);
 *
 * Indexes are the cycle's view's (pods, nodes, jobs, queues); strings are borrowed from the
 * view. A plan lives within one cycle, under the scheduler's lock.
 */
#ifndef MUSTER_SCHED_PLAN_H
#define MUSTER_SCHED_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "cyc.h"
#include "reason.h"

struct err;
struct sched_ledger_seen;

/* What decided the plan's nodes against the cheapest node it left alone: one of
 * pickOneNodeForPreemption's criteria, in their order, or the placement itself. */
enum preempt_criterion {
    PREEMPT_BY_PDB,       /* fewest PodDisruptionBudget violations */
    PREEMPT_BY_PRIORITY,  /* the victims' priorities: fewest of the highest */
    PREEMPT_BY_START,     /* latest start time of the highest-priority victims */
    PREEMPT_BY_NAME,      /* node name */
    PREEMPT_BY_PLACEMENT, /* the job fits only there (topology, pod rules): a dearer node */
    PREEMPT_BY_ONLY,      /* no other node had victims to offer */
};

struct preempt_victim {
    int pod, node;
    int queue;       /* the victim job's queue, -1 none */
    const char *pdb; /* the PodDisruptionBudget its eviction violates ("ns/name"), or NULL */
    double ran_s;    /* seconds it ran when evicted (0 unknown): its resource-seconds */
};

/* Lower-priority preemptors whose nominations a preemption or a placement voided: their
 * pods (nominations cleared, in order) and their jobs (first cleared first). */
struct preempt_cleared {
    int *pods;
    size_t npods, cappods;
    int *jobs;
    size_t njobs, capjobs;
};

struct preempt_share {
    int queue;
    double before, after; /* the queue's share before and after the victims go */
};

struct preempt_plan {
    int job;     /* the preemptor */
    int trigger; /* its pod that could not be placed */
    int32_t prio;
    struct preempt_victim *victims; /* evicted, in pod key order */
    size_t nvictims;
    int *awaited; /* pods of earlier preemptions, still terminating, whose room it reuses */
    size_t nawaited;
    int *broken; /* gangs (jobs) evicting the victims leaves below minMember */
    size_t nbroken;
    long pdb_violations;
    const char **pdbs; /* the budgets violated, sorted */
    size_t npdbs;
    size_t npotential; /* potential victims not terminating yet */
    int nobreak;       /* the dry run without gang-breaking victims was enough */
    int chosen_by;     /* enum preempt_criterion, -1 when nothing is evicted */
    double decision_ms;
    /* reclaim: a victim is of another queue than the preemptor's */
    int reclaim;
    struct preempt_share queue;          /* the preemptor's queue (reclaim only) */
    struct preempt_share *victim_queues; /* the victims' other queues, in queue order */
    size_t nvictim_queues;
    /* executed */
    struct sched_op *noms; /* the preemptor's pods -> nominated nodes, in plan order */
    size_t nnoms;
    int *nodes; /* the distinct nominated nodes, first nominated first */
    size_t nnodes;
    struct preempt_cleared cleared;
};

void sched__plan_init(struct preempt_plan *p, int job, int trigger, int32_t prio);
void sched__plan_release(struct preempt_plan *p);
/* Adds pod pi's nomination being cleared, and its job once. */
void sched__cleared_add(struct preempt_cleared *cl, int pi, int job);
void sched__cleared_release(struct preempt_cleared *cl);

/* The records of an executed plan: the ledger entry (its id into the verdict), the victims'
 * records and why documents, "nominationsCleared" on the cleared preemptors' entries, one
 * "preempted" audit record per victim job and one "nominated" record; *out becomes the
 * preemptor's verdict (Preempting, or Reclaiming). Returns 0 or ERR_*. */
int sched__record_preemption(struct sched_cyc *c, const struct preempt_plan *p,
                             struct sched_preempt_verdict *out, struct err *err);
/* The records of a placement of job `by` that voided lower preemptors' nominations (cl):
 * their ledger entries' "nominationsCleared" (byLedger 0) and a "nominated" audit record
 * listing what was cleared. Returns 0 or ERR_*. */
int sched__record_displaced(struct sched_cyc *c, int by, const struct preempt_cleared *cl,
                            struct err *err);
/* The why document's preemption part of a placed job that voided the nominations of cl's
 * jobs ("not needed ..., whose nominations were cleared"), new; NULL when cl has none. */
json_t *sched__displaced_json(const struct sched_view *v, const struct preempt_cleared *cl);
/* Housekeeping removed pod key (old: its stored object): an "evicted" audit record when it
 * was a victim in the ledger; seen as sched__ledger_victim_take's. Returns 0 or ERR_*. */
int sched__record_evicted(struct sched_cyc *c, const char *key, json_t *old,
                          struct sched_ledger_seen *seen, struct err *err);

#endif
