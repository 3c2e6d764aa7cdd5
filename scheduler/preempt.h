/*
 * preempt.h - shared by preempt.c (the victim search), preempt_why.c (verdicts for the
 * why document) and evict.c (executing a plan). Folder-internal; see internal.h for
 * sched__preempt, the entry point called by the attempt.
 *
 * A struct preempt lives for one sched__preempt call. pv[] are the potential victims,
 * pn[] the nodes holding them; pv[].removed marks the chosen victims once the search is
 * over (the view itself is back to its state before the search), plan[] the pod -> node
 * plan that fits once they are gone.
 */
#ifndef MUSTER_SCHED_PREEMPT_H
#define MUSTER_SCHED_PREEMPT_H

#include "internal.h"

struct pv {
    int pod, node;
    int rank;    /* priority rank among potential victims, 0 = lowest */
    int gang;    /* job index when evicting this pod alone breaks its gang, else -1 */
    int removed; /* out of the view during the search; afterwards: a chosen victim */
};

struct pnode {
    int node;
    int *v; /* indexes into pv */
    size_t nv;
    long *cost; /* [nranks] pods costed per rank (gang-aware) */
};

struct preempt {
    struct sched_cyc *c;
    const struct sched_preempt_job *pj;
    int32_t prio;
    int *shapes; /* distinct shapes of the job's pending pods */
    size_t nshapes;
    struct pv *pv;
    size_t npv, cappv;
    struct pnode *pn;
    size_t npn, cappn;
    int nranks;
    struct sched_op *plan;
    size_t nplan, capplan;
    int nobreak_plan; /* the dry run without gang-breaking victims was enough */
    int replans;
    double decision_ms;
};

/* Verdicts (new) for the why document's "preemption" object: {"attempted", "code",
 * "reason", ...}. ineligible returns NULL when the job may preempt, else sets *blocker
 * (PreemptionWaiting while victims of an earlier preemption still terminate). */
json_t *sched__preempt_ineligible(struct sched_cyc *c, const struct sched_preempt_job *pj,
                                  int *blocker);
json_t *sched__preempt_no_victims(struct preempt *pr);
json_t *sched__preempt_not_helpful(struct preempt *pr);
/* "4,800": n with thousands separators into buf. */
const char *sched__preempt_count(long n, char *buf, size_t len);

/* Executes the chosen plan (store + view): victims get DisruptionTarget and a
 * deletionTimestamp, the job's pods status.nominatedNodeName, lower-priority nominations
 * on those nodes are cleared; audit "preempted" / "nominated", a ledger entry. *verdict
 * new. Returns 0 or ERR_*. */
int sched__evict_execute(struct preempt *pr, json_t **verdict, struct err *err);

/* Ledger (ledger.c). entry borrowed; fills "id". */
int sched__ledger_add(struct sched_cyc *c, json_t *entry, struct err *err);

#endif
