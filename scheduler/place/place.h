/*
 * place.h - placement: does a pod shape fit a node, which node to choose, and the
 * placers that put an attempt's pending pods on nodes.
 *
 * Calling sequence: the attempt fills a struct place_req (its members and their gang
 * counts, its pending pods in placement order, the merged topology spec) and calls
 * sched__place (or sched__place_nominated) with a struct place_result it initialised;
 * the placer allocates each pod it places through the open statement (cyc.h,
 * sched__stmt_alloc) and reports everything else in the result: the pods placed per
 * member, the first pod of each member it could not place, the why's topology part and
 * the blockers it found. The request is never written; a dry run (preemption's re-plan)
 * uses a result of its own.
 *
 * Files: place.c (the choice of placer, binpack, nominated, results), place_fit.c (static
 * filters, free capacity with reservations, the score), place_heap.c (the binpack pick's
 * per-shape heap), place_rules.c (pod affinity, anti-affinity, topology spread), place_pick.c
 * (the best node for a pod: candidates, scan, heap), each with its own header,
 * place_gather.c (topology gather: the spec, offer slots, candidate domains), place_index.c
 * (the index of domains that hold a gang), place_nodeset.c (filling a candidate, node-set
 * tries, the why's topology part), place_req.c (the request and result, when the members'
 * gangs are met: minMember, Volcano's minTaskMember; place_req.h).
 *
 * Calls: view/ and reason/ only.
 */
#ifndef MUSTER_SCHED_PLACE_H
#define MUSTER_SCHED_PLACE_H

#include "cyc.h"
#include "place_fit.h"
#include "place_heap.h"
#include "place_pick.h"
#include "place_req.h"
#include "place_rules.h"
#include "reason.h"
#include "topo.h"
#include "view.h"

/* ---- topology gather (place_gather.c, place_nodeset.c) ---- */
/* Resolves a PodGroup's decoded network-topology-spec against the tree (t may be NULL).
 * Returns -1 when usable, else the why code (WHY_SPEC_INVALID, WHY_TOPOLOGY_MISSING)
 * with msg set. */
int sched__gather_spec(const struct sched_topo *t, const struct model_podgroup *pg,
                       struct gather_spec *out, char *msg, size_t n);
/* podCountMultiple per depth [0..t->nlayers] of pg's spec (new), 1 where the spec sets
 * none; pg may be NULL. The spec's layers must be known (sched__gather_spec said usable). */
int32_t *sched__gather_multiples(const struct sched_topo *t, const struct model_podgroup *pg);
/* The gather placer, used when some member has a gather strategy. */

/* ---- placers (place.c): what they are asked, what they return ---- */

/* Places rq's pods: gather when a member asks for a strategy and some member still needs
 * its gang (a satisfied gang places later pods one by one), else binpack (each pod, in
 * order, on the best node by score). Returns 0 or ERR_*; pods that do not fit stay
 * unplaced. */
int sched__place(struct sched_cyc *c, const struct place_req *rq, struct place_result *out,
                 struct err *err);
/* 1 when every pending pod of rq is nominated (a preemptor's). */
int sched__place_nominated_all(const struct sched_view *v, const struct place_req *rq);
/* Nominations are binding: each pod on its nominated node (static filters, free capacity
 * with the members' own nominations not reserved against them, pod rules). */
void sched__place_nominated(struct sched_cyc *c, const struct place_req *rq,
                            struct place_result *out);
/* The gather placer (place_nodeset.c). */
int sched__place_gather(struct sched_cyc *c, const struct place_req *rq, struct place_result *out,
                        struct err *err);

/* Gather state of one attempt (place_gather.c computes offers and candidates,
 * place_nodeset.c fills and tries them and writes the why part). */
struct gather_cand {
    int dom;  /* domain index, or -1 for a node */
    int node; /* node index when dom < 0 */
    int depth;
    long offer, poffer, gpoffer;
    double score;
    const char *name;
};

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
    int mult_broken; /* the current try left a domain with a count off its multiple */
    struct gather_cand *cands;
    size_t ncands;
    int indexed; /* the candidates came from the index (place_index.c) */
    char *done;  /* [a->npods] placed in the current try */
    size_t next, nplaced;
    int ruled;        /* the current sweep turned a pod away for its pod rules */
    int64_t *scratch; /* [v->nres] for heterogeneous offers */
};
/* Offer slots of a node, rounded down to NodeTopologyLayer's podCountMultiple. */
long sched__gather_node_offer(struct gather *g, int ni);
/* Offer slots of a domain (cached per shape, size and domain version); *hold: nodes in it
 * that hold the job alone. Rounded down to podCountMultiple at every depth. */
long sched__gather_dom_offer(struct gather *g, int di, long *hold);
/* The same without podCountMultiple and without the cache: what the domain's nodes offer,
 * so the why can tell when the multiple is what keeps a domain from holding the job. */
long sched__gather_dom_offer_raw(struct gather *g, int di);
/* How many of the job's pods a domain (or node) at depth with offer slots offer holds:
 * min(offer, job size) rounded down to the depth's podCountMultiple. It holds the job
 * when this reaches g->need. */
long sched__gather_holds(const struct gather *g, int depth, long offer);
/* Candidates an attempt tries at most (place_nodeset.c). */
#define SCHED_GATHER_TRIES 16
/* Fills g->cands with the first SCHED_GATHER_TRIES candidates in try order (DESIGN.md
 * section 3, steps 2-3; fewer when there are fewer) and g->ncands with how many there are
 * in all. */
void sched__gather_candidates(struct gather *g);
/* The try order of candidates (<0: a first): deeper, fewer offer slots, the parent's and
 * the grandparent's fewer, higher score, name. */
int sched__gather_cand_cmp(const struct gather_cand *a, const struct gather_cand *b);
/* The score of domain d for the gang's shape (its usage after one more pod, averaged over
 * the shape's resources): higher is tried first among equal offers. */
double sched__gather_dom_score(const struct gather *g, const struct tp_dom *d);
/* The candidates from the index of holding domains (place_index.c): fills g->cands and
 * g->ncands as sched__gather_candidates and returns 1, or returns 0 when the index does
 * not apply (hold: nodes that hold the gang alone; podCountMultiple; mixed shapes; a
 * nomination in the cluster). */
int sched__gather_indexed(struct gather *g, long hold);
/* A domain (or a child, or a node: ix) and its offer slots. */
struct gather_slot {
    int ix;
    long offer;
};
/* The order slots are filled and shown in (qsort, sched__kbest_offer): most offer slots
 * first, then lowest ix (the input is in name order). place_nodeset.c. */
int sched__gather_slot_cmp(const void *a, const void *b);
/* The why's layer statistics from the index, when the candidates came from it and at least
 * max domains of depth hold the gang: *ndoms domains at depth, *hold of them hold it, and
 * the max with the most offer slots in best[0..max), in sched__gather_slot_cmp's order.
 * Returns 1, or 0 when the caller must scan. */
int sched__gather_index_best(const struct gather *g, int depth, size_t max,
                             struct gather_slot *best, size_t *ndoms, size_t *hold);
/* Times the index was brought up to date without a rebuild (tests). */
uint64_t sched__gather_index_updates(const struct sched_topo *t);
/* The resource that limits how many of the job's pods domain di holds, or NULL. */
const char *sched__gather_limit(struct gather *g, int di);

#endif
