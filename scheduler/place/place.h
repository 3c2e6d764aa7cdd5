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
 * filters, free capacity with reservations, the score, the best-node pick), place_heap.c (the
 * binpack pick's per-shape heap), place_rules.c (pod affinity, anti-affinity, topology spread),
 * place_gather.c (topology gather: the spec, offer slots, candidate domains), place_index.c
 * (the index of domains that hold a gang), place_nodeset.c (filling a candidate, node-set
 * tries, the why's topology part), place_tasks.c (Volcano's minTaskMember).
 *
 * Calls: view/ and reason/ only.
 */
#ifndef MUSTER_SCHED_PLACE_H
#define MUSTER_SCHED_PLACE_H

#include "cyc.h"
#include "reason.h"
#include "topo.h"
#include "view.h"

/* ---- fit (place_fit.c) ---- */
enum {
    SCHED_FIT_OK,
    SCHED_FIT_UNSCHEDULABLE,
    SCHED_FIT_SELECTOR,
    SCHED_FIT_AFFINITY, /* required node affinity */
    SCHED_FIT_TAINT,    /* an untolerated NoSchedule or NoExecute taint */
    /* the pod rules (place_rules.c) */
    SCHED_FIT_POD_AFFINITY,
    SCHED_FIT_POD_ANTI_AFFINITY,
    SCHED_FIT_SPREAD,
};

/* SCHED_FIT_OK or the first static reason the shape cannot use the node. */
int sched__fit_static(const struct sv_node *n, const struct sv_shape *sh);
/* 1 when the node matches the shape's nodeSelector and required node affinity. */
int sched__fit_node_affinity(const struct sv_node *n, const struct sv_shape *sh);
/* 1 when the shape tolerates every NoSchedule and NoExecute taint of the node. */
int sched__fit_taints(const struct sv_node *n, const struct sv_shape *sh);
/* The node's first NoSchedule or NoExecute taint the shape does not tolerate, or NULL. */
const struct model_taint *sched__fit_untolerated(const struct sv_node *n,
                                                 const struct sv_shape *sh);
/* -1 when every request fits the free capacity, else the index (in sh->req) of the
 * first request that does not. self: the pod, whose own nomination is not a reservation. */
int sched__fit_res(const struct sched_view *v, const struct sv_node *n, const struct sv_shape *sh,
                   int self);
int64_t sched__free(const struct sched_view *v, const struct sv_node *n, int r, int32_t prio,
                    int self);
/* The job of the first pod nominated to n whose reservation counts against pod self of
 * priority prio (the rule of sched__free), or -1: the why names whom capacity is held for. */
int sched__reserver(const struct sched_view *v, const struct sv_node *n, int32_t prio, int self);
/* Free amount of resource r on n for a pod of priority prio belonging to one of jobs: the
 * jobs' own nominations do not reserve against them. sched__free is this for self's job. */
int64_t sched__free_for(const struct sched_view *v, const struct sv_node *n, int r, int32_t prio,
                        const int *jobs, size_t njobs);
/* How many pods requesting req[0..nreq) fit on n one after another, at most cap, with
 * free capacity counted by sched__free_for (static filters are the caller's): the one
 * count behind the gather placer's offer slots and the topology API's largestGang. */
long sched__fit_count(const struct sched_view *v, const struct sv_node *n, const struct sv_req *req,
                      int nreq, int32_t prio, const int *jobs, size_t njobs, long cap);
/* Node score for placing the shape (higher is better): the binpack score, mean over
 * requested resources of used/allocatable after placement. Replaceable. */
double sched__score(const struct sched_view *v, const struct sv_node *n, const struct sv_shape *sh);
/* The best node for pod pi now, or -1. */
int sched__pick_node(struct sched_view *v, int pi);
/* The binpack pick (place_heap.c) of pod pi of shape sh, whose candidates are current and
 * do not differ in preferences: the candidate with the highest sched__score that fits,
 * the first name on ties, as a scan of sh->cand would choose; -1 (and sh->fail_epoch set)
 * when none fits. */
int sched__pick_heap(struct sched_view *v, struct sv_shape *sh, int pi);

/* ---- pod rules (place_rules.c) ---- */

struct sched_rules_spread {
    const struct model_spread *c;
    struct sched_strmap dom; /* "key\x1fvalue" -> matching pods, for every counted domain */
    size_t ndom;
    int64_t min;   /* the global minimum (0 below minDomains) */
    int self;      /* the pod matches its own selector */
    double weight; /* scoring: log(domains + 2) */
};

/* What one pod's rules need, counted for one pick ("key\x1fvalue" = a topology pair). */
struct sched_rules {
    const struct sv_pod *p;
    int active; /* some rule applies: the pick must filter and score per node */
    /* [naff] per required affinity term: the term's pairs -> placed pods matching every
     * required affinity term (the pod's terms, each counted under its own topologyKey) */
    struct sched_strmap *aff;
    size_t naff, aff_n;
    int self_all;               /* the pod matches all its required affinity terms */
    struct sched_strmap forbid; /* pair -> a placed pod that keeps the pod out (anti-affinity) */
    struct sched_strmap score;  /* pair -> inter-pod preference (biased, see place_rules.c) */
    int has_score;
    struct sched_rules_spread *sp;
    size_t nsp;
    /* per node (view.nnodes when prepared), in view memory: the verdict and the raw scores */
    struct sched_view *v; /* set when the arrays are in use */
    size_t nn;
    signed char *fail;    /* SCHED_FIT_OK or the rule the node breaks */
    int *by;              /* see sched__rules_filter */
    long *ipa, *sps;      /* InterPodAffinity and PodTopologySpread raw scores */
    unsigned char *sp_ok; /* the node carries every ScheduleAnyway key */
};

/* Counts what pod pi's rules and placed pods' terms need; returns r->active. Release
 * with sched__rules_release whatever it returns, before preparing another (one at a time
 * per view: the per-node arrays live in the view). */
int sched__rules_prepare(struct sched_view *v, int pi, struct sched_rules *r);
void sched__rules_release(struct sched_rules *r);
/* SCHED_FIT_OK or the first rule node n breaks; *by: the placed pod that keeps the pod
 * out (anti-affinity) or the index of the spread constraint that fails, else -1. */
int sched__rules_filter(const struct sched_rules *r, int ni, int *by);
/* InterPodAffinity's raw score of n (before normalization). */
long sched__rules_affinity_score(const struct sched_rules *r, int ni);
/* PodTopologySpread's raw score of n for the ScheduleAnyway constraints; returns 0 when
 * the node is ignored (lacks a key) or there are none. */
int sched__rules_spread_score(const struct sched_rules *r, int ni, long *raw);

/* ---- topology gather (place_gather.c, place_nodeset.c) ---- */
struct gather_spec {
    int must;       /* depth of the narrowest MustGather layer, -1 none */
    int prefer;     /* depth of the narrowest PreferGather layer, -1 none */
    char layer[64]; /* the layer named in the why (MustGather first) */
    int job;        /* the view's job whose PodGroup gave the spec (its podCountMultiple
                       entries apply), -1 none; set by the caller of sched__gather_spec */
};
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

/* One member of an attempt: the job, or one PodGroup of its GangGroup. */
struct place_member {
    int bound;     /* pods bound before the attempt (Failed and Succeeded ones not counted) */
    int base;      /* of those, the ones that count toward minMember: bound, or 0 under the
                      only-waiting match policy; the gang needs base + placed >= minMember */
    int pending;   /* pending pods */
    int satisfied; /* a gang satisfied before: its later pods are placed one by one */
};

/* What a placer is asked. Members are in id order; jobs[i] is the job of m[i], kept as an
 * int array because fit takes the member jobs in that form. */
struct place_req {
    int *jobs;
    struct place_member *m;
    size_t njobs;
    int *pods; /* pending pods in placement order */
    size_t npods;
    int has_spec;            /* some member has a usable network-topology-spec */
    struct gather_spec spec; /* the members' specs merged: the narrowest layers */
};

/* What a placer returns. */
struct place_result {
    int *placed;                    /* [njobs] pods placed per member */
    int *fail_pod;                  /* [njobs] first pod of the member not placed, -1 */
    json_t *topology;               /* the why's topology part (new), NULL without gather */
    struct sched_blockers blockers; /* what the placer found in the way */
};
/* An empty result for njobs members; release frees what it holds (not the struct). */
void sched__place_result_init(struct place_result *r, size_t njobs);
void sched__place_result_release(struct place_result *r);

/* The member index of job in rq, -1 when it is not a member. */
int sched__place_member(const struct place_req *rq, int job);
/* 1 when every member that still needs its gang has minMember pods bound + placed (res). */
int sched__place_members_met(const struct sched_view *v, const struct place_req *rq,
                             const struct place_result *res);
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

/* Volcano's minTaskMember (place_tasks.c): 1 when some task of job j's PodGroup has fewer
 * pods than its minimum: placed ones (bound or placed by the open statement), or with
 * pending != 0 every alive one (bound, placed or pending); msg (may be NULL) says which. */
int sched__job_tasks_short(const struct sched_view *v, const struct sv_job *j, int pending,
                           char *msg, size_t n);

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
