/*
 * search.h - the types of one preemption search, shared by the files of preempt/: the
 * job asking (struct sched_preempt_job, the entry point's argument), the potential victims
 * (struct pv) and their nodes (struct pnode), the search itself (struct preempt) and what
 * it may reclaim (struct reclaim). Types only; preempt.h declares the functions.
 */
#ifndef MUSTER_SCHED_SEARCH_H
#define MUSTER_SCHED_SEARCH_H

#include "cyc.h"
#include "plan.h"

struct err;

struct sched_preempt_job {
    int job;         /* the job attempted (the preemptor) */
    const int *jobs; /* its GangGroup members */
    size_t njobs;
    const int *pods; /* pending pods in placement order */
    size_t npods;
    int trigger;            /* first pod that could not be placed, -1 when unknown */
    const char *must_layer; /* the narrowest MustGather layer of the job, or NULL */
    /* Re-plans the whole job on the view as it is with the cycle's placer; allocations go
     * into the open statement. Returns 1 when the job fits, 0 when not, or ERR_*. */
    int (*replan)(struct sched_cyc *c, void *ctx, struct err *err);
    void *ctx;
    /* The queue whose capability the job would pass, -1 when none: victims come only from
     * that queue's subtree, and a plan fits only when it leaves the queue within its
     * capability (every plan must keep the job's queues within theirs). */
    int cap_queue;
};

struct pv {
    int pod, node;
    int rank;    /* priority rank among potential victims, 0 = lowest */
    int gang;    /* job index when evicting this pod alone breaks its gang, else -1 */
    int removed; /* out of the view during the search; afterwards: a chosen victim */
    /* already terminating, evicted by an earlier preemption for nodes nobody else is
     * nominated to: its room is reused at no cost and it is not evicted again */
    int terminating;
    int viol; /* evicting its node's victims violates a budget through this one (preempt_pdb.c) */
};

struct pnode {
    int node;
    int *v; /* indexes into pv */
    size_t nv;
    long *cost;        /* [nranks] pods costed per rank (gang-aware) */
    long viol;         /* PodDisruptionBudget violations of evicting all of them: the cost's first
                          criterion (pickOneNodeForPreemption's) */
    int64_t top_start; /* the earliest start of its highest-priority victims (not yet started:
                          now): the later, the cheaper (the cost's last criterion but name) */
};

/* One preemption's reclaim (preempt_reclaim.c). qok: the queues whose jobs it may take;
 * top: the queue each shares with the preemptor's (-1 the root); budget: what each queue
 * holds above its deserved share (live, terminating pods gone); hot: the contended
 * resources; narrow: the narrow pool, NULL for the wide one. */
struct reclaim {
    char *qok;
    int *top;
    int64_t *budget; /* [nqueues * nres] */
    char *hot;       /* [nres] */
    char *narrow;    /* [njobs] */
};

struct preempt {
    struct sched_cyc *c;
    const struct sched_preempt_job *pj;
    int32_t prio;
    int *shapes; /* distinct shapes of the job's pending pods */
    size_t nshapes;
    struct pv *pv;
    size_t npv, cappv;
    size_t npotential; /* potential victims not terminating yet (the ledger's count) */
    struct pnode *pn;
    size_t npn, cappn;
    int nranks;
    struct sched_op *plan;
    size_t nplan, capplan;
    int nobreak_plan;   /* the dry run without gang-breaking victims was enough */
    int chosen_by;      /* enum preempt_criterion of the plan (preempt.c), -1 none */
    int queue;          /* the preemptor's queue (-1 none) */
    int64_t *asked;     /* [nres] what its pending pods request */
    int64_t *plan_need; /* [nres] what the plan's pods request, when plan_need_ok */
    int plan_need_ok;
    int capped;          /* a queue on the preemptor's chain has a capability */
    struct reclaim *rec; /* what it may reclaim from other queues, NULL: nothing */
    int replans;
    char *surplus;     /* [npods] a member a gang may lose above its minMember (preempt.c) */
    char *surplus_job; /* [njobs] its gang's members were looked at */
    char *gang_ok;     /* [njobs] its gang may be evicted whole: 0 not asked yet, 1 yes, 2 no */
    double decision_ms;
    struct preempt_pdb *pdb; /* budgets of this search (preempt_pdb.c), NULL when none exist */
};

#endif
