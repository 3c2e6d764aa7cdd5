/*
 * place_gather.h - topology gather's state and offer slots: the PodGroup's spec resolved
 * against the tree, the state of one gather attempt (struct gather), and how many of the
 * job's pods a node or a domain offers and holds (place_gather.c). The candidates
 * (place_cands.h), the index (place_index.h) and the fill (place_nodeset.h) are built on
 * these.
 *
 * Ownership: sched__place_gather (place_nodeset.c) sets up a struct gather on its stack
 * for one attempt and frees what it allocated (mult, cands, done, scratch); offers are
 * cached in the tree's domains (struct tp_dom, view/topo.h) across attempts.
 *
 * Calls: place_fit.h (static filters, free capacity, fit count), place_req.h (the
 * request, the result, the spec's type) and view/.
 */
#ifndef MUSTER_SCHED_PLACE_GATHER_H
#define MUSTER_SCHED_PLACE_GATHER_H

#include "cyc.h"
#include "place_req.h"
#include "topo.h"
#include "view.h"

/* Resolves a PodGroup's decoded network-topology-spec against the tree (t may be NULL).
 * Returns -1 when usable, else the why code (WHY_SPEC_INVALID, WHY_TOPOLOGY_MISSING)
 * with msg set. */
int sched__gather_spec(const struct sched_topo *t, const struct model_podgroup *pg,
                       struct gather_spec *out, char *msg, size_t n);
/* podCountMultiple per depth [0..t->nlayers] of pg's spec (new), 1 where the spec sets
 * none; pg may be NULL. The spec's layers must be known (sched__gather_spec said usable). */
int32_t *sched__gather_multiples(const struct sched_topo *t, const struct model_podgroup *pg);

/* Candidates an attempt tries at most (place_nodeset.c). */
#define SCHED_GATHER_TRIES 16

/* A candidate: a domain or a single node, with its keys in the try order. */
struct gather_cand {
    int dom;  /* domain index, or -1 for a node */
    int node; /* node index when dom < 0 */
    int depth;
    long offer, poffer, gpoffer;
    double score;
    const char *name;
};

/* Gather state of one attempt (place_gather.c computes offers, place_cands.c and
 * place_index.c the candidates, place_nodeset.c fills and tries them and writes the why
 * part). */
struct gather {
    struct sched_cyc *c;
    struct sched_view *v;
    struct sched_topo *t;
    const struct place_req *a;
    struct place_result *res;
    const struct gather_spec *spec; /* the attempt's */
    int shape;                      /* the common shape of the pods, -1 when they differ */
    int size;                       /* pending pods of the job */
    int need; /* pods the members still need (holding the job means offering this many) */
    int lo;   /* shallowest candidate depth */
    /* podCountMultiple per depth [0..t->nlayers] (1: none), from the spec's PodGroup; a
     * domain's offer slots are its children's rounded down to its multiple, and a fill
     * gives each domain a multiple of it */
    int32_t *mult;
    int has_mult;
    int mult_broken;           /* the current try left a domain with a count off its multiple */
    struct gather_cand *cands; /* [SCHED_GATHER_TRIES] the first candidates in try order */
    size_t ncands;             /* candidates in all */
    int indexed;               /* the candidates came from the index (place_index.c) */
    char *done;                /* [a->npods] placed in the current try */
    size_t next, nplaced;
    int ruled;        /* the current sweep turned a pod away for its pod rules */
    int64_t *scratch; /* [v->nres] for heterogeneous offers */
};

/* Offer slots of a node, rounded down to NodeTopologyLayer's podCountMultiple. */
long sched__gather_node_offer(struct gather *g, int ni);
/* Offer slots of a domain (cached per shape, size and domain version); *hold: nodes in it
 * that hold the job alone. Rounded down to podCountMultiple at every depth. */
long sched__gather_dom_offer(struct gather *g, int di, long *hold);
/* sched__gather_dom_offer without *hold, and 0 for di < 0: a parent's or grandparent's
 * offer slots in the try order, where there may be none. */
long sched__gather_offer_of(struct gather *g, int di);
/* The same without podCountMultiple and without the cache: what the domain's nodes offer,
 * so the why can tell when the multiple is what keeps a domain from holding the job. */
long sched__gather_dom_offer_raw(struct gather *g, int di);
/* How many of the job's pods a domain (or node) at depth with offer slots offer holds:
 * min(offer, job size) rounded down to the depth's podCountMultiple. It holds the job
 * when this reaches g->need. */
long sched__gather_holds(const struct gather *g, int depth, long offer);
/* The score of domain d for the gang's shape (its usage after one more pod, averaged over
 * the shape's resources): higher is tried first among equal offers. */
double sched__gather_dom_score(const struct gather *g, const struct tp_dom *d);
/* The resource that limits how many of the job's pods domain di holds, or NULL. */
const char *sched__gather_limit(struct gather *g, int di);

/* A domain (or a child, or a node: ix) and its offer slots. */
struct gather_slot {
    int ix;
    long offer;
};
/* The order slots are filled and shown in (qsort, sched__kbest_offer): most offer slots
 * first, then lowest ix (the input is in name order). */
int sched__gather_slot_cmp(const void *a, const void *b);

#endif
