/*
 * preempt_cache.h - what preemption remembers within one cycle (c->pre): failed searches
 * (struct sched_memo, preempt_memo.c uses them), reclaim's view of the queues (struct
 * sched_qcache, preempt_reclaim.c's) and the bound pods by node. Their storage and its
 * lifecycle are preempt_cache.c's, the lowest file of preempt/: it calls nothing above it.
 */
#ifndef MUSTER_SCHED_PREEMPT_CACHE_H
#define MUSTER_SCHED_PREEMPT_CACHE_H

#include "cyc.h"
#include "reason.h"

/* A failed search remembered (preempt_memo.c). */
struct sched_memo {
    int queue, cap_queue, shape;
    int32_t prio;
    size_t npods;
    int64_t *asked;   /* [nres] */
    uint64_t epoch;   /* c->plan_epoch when recorded */
    uint64_t pdb_gen; /* v->pdbs.gen when recorded */
    struct sched_preempt_verdict verdict;
};

/* The queues as reclaim sees them in this cycle (preempt_reclaim.c). */
struct sched_qcache {
    size_t nq, nj, nr;
    int64_t *term;    /* [nq * nr] */
    int64_t *hold;    /* [nj * nr] */
    int *off, *order; /* CSR by queue, built lazily */
};

/* What preemption remembers within one cycle (c->pre, created on first use, freed with
 * sched__preempt_cache_free by the cycle): failed searches (preempt_memo.c), reclaim's
 * view of the queues (preempt_reclaim.c), and the bound pods by node as of the first
 * search (CSR: node n's pods are by_node[by_node_off[n] .. by_node_off[n + 1]]). Pods
 * placed later in the cycle are not in it and need not be: jobs run in priority order, so
 * they are never of lower priority than a later preemptor and never its victims. */
struct sched_preempt_cache {
    struct sched_memo *memo;
    size_t nmemo, capmemo;
    struct sched_qcache *qcache;
    int *by_node_off, *by_node;
};
/* c->pre, created when NULL. */
struct sched_preempt_cache *sched__pre_w(struct sched_cyc *c);
void sched__preempt_cache_free(struct sched_cyc *c);
/* c->pre with its bound-pods-by-node index built. */
const struct sched_preempt_cache *sched__pre_by_node(struct sched_cyc *c);

#endif
