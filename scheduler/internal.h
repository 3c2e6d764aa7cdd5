/*
 * internal.h - scheduler internals shared by the files of scheduler/.
 *
 * The cluster view (struct sched_view) mirrors what the store holds: nodes with
 * allocatable / requested vectors (resource names interned to small indexes),
 * pods with sparse request vectors, jobs (a PodGroup, or a lone pod), and the
 * topology object. Slots are reused after deletion; every lookup by name goes
 * through an open-addressing string map.
 *
 * Rules: the view is changed only by sched.c (apply/delete, after the commit),
 * by the cycle's statements (with an undo log, see cycle.c) and by a rebuild.
 * view.epoch grows whenever capacity may have been freed or node properties
 * changed, which invalidates the per-shape caches of the placement code.
 */
#ifndef MUSTER_SCHED_INTERNAL_H
#define MUSTER_SCHED_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "alloc.h"
#include "err.h"
#include "scheduler.h"
#include "why.h"

/* ---- string map ---- */

struct sched_strmap {
    char **keys;
    int *vals;
    size_t cap, used, count;
};
void sched__strmap_init(struct sched_strmap *m);
void sched__strmap_free(struct sched_strmap *m);
/* Value or -1 when absent. */
int sched__strmap_get(const struct sched_strmap *m, const char *key);
void sched__strmap_put(struct sched_strmap *m, const char *key, int val);
void sched__strmap_del(struct sched_strmap *m, const char *key);

/* ---- view ---- */

#define SV_RES_PODS 0           /* "pods" is always resource 0 */
#define SV_DEFAULT_MAX_PODS 110 /* a node without allocatable pods (Kubernetes default) */

struct sv_req {
    int res;
    int64_t v;
};

struct sv_node {
    char *name;
    struct model_node m;
    int alive;
    int64_t *alloc; /* [view.rescap] */
    int64_t *used;  /* requested by bound, non-terminal pods */
    int *nominated; /* pods nominated to this node */
    size_t nnom, capnom;
    int *cyc_pods; /* pods placed here by committed statements of the running cycle */
    size_t ncyc, capcyc;
};

struct sv_pod {
    char *key; /* "ns/name" */
    struct model_pod m;
    int alive;
    int job;       /* job index */
    int node;      /* node index when bound to a known node, else -1 */
    int nominated; /* node index or -1 */
    int counted;   /* its requests are in nodes[node].used */
    struct sv_req *req;
    int nreq;
    int shape;
};

struct sv_job {
    char *id; /* "ns/name" */
    int gang; /* a PodGroup job (named by label or by a PodGroup object) */
    int alive;
    int has_pg;
    struct model_podgroup pg;
    int *pods;
    size_t npods, cappods;
    /* scheduling memory (not durable except through the why document) */
    int result;      /* SV_RESULT_* of the last attempt */
    int last_code;   /* primary reason reported last (-1 none) */
    char *last_sig;  /* signature of the last stored why document */
    json_t *history; /* reason history, loaded lazily from the why document */
    int why_loaded;
    uint64_t cycle_seen; /* cycle in which the job was last handled */
    int starving;        /* preempted for and not bound yet (jobs.c, ledger.c) */
    char
        *last_discard; /* reason + message of the last "discarded" record, NULL after a placement */
};

enum { SV_RESULT_NONE, SV_RESULT_PLACED, SV_RESULT_FAILED };

struct sv_shape {
    struct sv_req *req;
    int nreq;
    struct model_kv *sel;
    size_t nsel;
    struct model_toleration *tol;
    size_t ntol;
    int32_t priority;
    /* placement caches, valid while epoch matches view.epoch */
    uint64_t cand_epoch;
    int *cand; /* statically feasible nodes still worth trying, name order */
    size_t ncand, capcand;
    uint64_t fail_epoch; /* the shape fits nowhere at this epoch */
    int last;            /* node chosen last at last_epoch (see fit.c) */
    size_t logpos;       /* view.binds position when last was chosen */
    uint64_t last_epoch;
    json_t *nf; /* cached node filter (why) for nf_epoch / nf_cycle */
    int nf_code;
    json_t *nf_ahead;
    uint64_t nf_epoch, nf_cycle;
};

struct sv_free {
    int *ix; /* reusable slots */
    size_t n, cap;
};

struct sched_view {
    char **res; /* interned resource names */
    size_t nres, rescap;
    struct sched_strmap res_ix;

    struct sv_node *nodes;
    size_t nnodes, capnodes;
    struct sched_strmap node_ix;
    int *node_order; /* live node indexes sorted by name (rebuilt lazily) */
    size_t norder;
    int order_dirty;

    struct sv_pod *pods;
    size_t npods, cappods;
    struct sched_strmap pod_ix;
    size_t orphans; /* bound pods whose node is unknown */

    struct sv_job *jobs;
    size_t njobs, capjobs;
    struct sched_strmap job_ix; /* "g:ns/name" and "p:ns/name" */

    struct sv_shape *shapes;
    size_t nshapes, capshapes;
    struct sched_strmap shape_ix;

    int has_topology;
    struct model_topology topo;
    struct sched_topo *tp; /* domain tree with per-domain totals (topo.c), NULL or stale when */
    int tp_dirty;          /* tp_dirty: rebuilt lazily by sched__topo_get */

    struct sv_free fnodes, fpods, fjobs;
    int *binds; /* nodes that took a pod since log_epoch, in order */
    size_t nbinds, capbinds;
    uint64_t log_epoch;
    uint64_t epoch;
};

int sched__slot_pop(struct sv_free *f);
void sched__slot_push(struct sv_free *f, int i);

struct sched_view *sched__view_new(void);
void sched__view_free(struct sched_view *v);
/* Reads every object in one read transaction. */
int sched__view_load(struct sched_view *v, MDB_txn *txn, struct err *err);

/* Take ownership of the decoded struct (even on failure). Replace by name. */
void sched__view_put_node(struct sched_view *v, struct model_node *n);
void sched__view_del_node(struct sched_view *v, const char *name);
void sched__view_put_pod(struct sched_view *v, struct model_pod *p);
void sched__view_del_pod(struct sched_view *v, const char *key);
void sched__view_put_pg(struct sched_view *v, struct model_podgroup *g);
void sched__view_del_pg(struct sched_view *v, const char *key);
void sched__view_put_topo(struct sched_view *v, struct model_topology *t);
void sched__view_del_topo(struct sched_view *v);

int sched__view_node(const struct sched_view *v, const char *name);
int sched__view_pod(const struct sched_view *v, const char *key);
/* Get or create the job of this id; gang selects the PodGroup namespace of ids. */
int sched__view_job_get(struct sched_view *v, const char *id, int gang);
/* Frees the job slot when it has neither PodGroup nor pods. */
void sched__view_job_maybe_free(struct sched_view *v, int ji);
void sched__view_usage(struct sched_view *v, struct sv_pod *p, int sign);
int sched__view_res(struct sched_view *v, const char *name);
/* Job by id: the PodGroup job first, then the lone-pod job. -1 when unknown. */
int sched__view_job(const struct sched_view *v, const char *id);
int sched__view_gang_job(const struct sched_view *v, const char *id);
/* Live node indexes in name order (borrowed until the next node change). */
const int *sched__view_node_order(struct sched_view *v, size_t *n);

/* Statement primitives: account a pending pod on a node and back. */
void sched__view_bind(struct sched_view *v, int pod, int node);
void sched__view_unbind(struct sched_view *v, int pod);
/* Drops a pod's nomination (reservation) if any. */
void sched__view_nominate_clear(struct sched_view *v, int pod);
/* A new node adopts bound pods and nominations that named it before it existed. */
void sched__view_adopt(struct sched_view *v, int node);

/* Deterministic JSON of the whole view (for tests: rebuilt == live). New. */
json_t *sched__view_dump(struct sched_view *v);

int sched__pod_terminal(const struct sv_pod *p);
int sched__pod_pending(const struct sv_pod *p);
int32_t sched__job_priority(const struct sched_view *v, const struct sv_job *j);
int64_t sched__job_creation(const struct sched_view *v, const struct sv_job *j);
/* Needed pods of a job: minMember for a gang with a PodGroup, else 1. */
int sched__job_min(const struct sv_job *j);

/* ---- topology (topo.c, topo_status.c, topo_api.c) ---- */

struct tp_dom {
    char *name;
    int depth;  /* 0 = the cluster root, 1 = first layer of the spec, ... */
    int parent; /* -1 for the root */
    int *kids;  /* child domains, name order */
    size_t nkids, capkids;
    int *nodes; /* nodes directly in this domain (the lowest layer, or a missing deeper label) */
    size_t nnodes, capnodes;
    int nodenum;           /* nodes in the subtree */
    int64_t *alloc, *free; /* [tp.nres] sums over the subtree (free = alloc - used) */
    uint64_t ver;          /* grows on every usage change in the subtree */
    /* offer-slot cache of the gather placer (gather.c), valid for (shape, size, need, job,
     * ver, epoch); the job because its own nominations do not reserve against it */
    int c_shape, c_size, c_need, c_job;
    uint64_t c_ver, c_epoch;
    long c_offer, c_hold; /* offer slots; direct + nested nodes that hold the job alone */
};

struct sched_topo {
    char **layers; /* [0] "ClusterTopologyLayer", then the spec's layers root first */
    char ***keys;  /* label keys per layer */
    size_t *nkeys;
    size_t nlayers; /* including the root; NodeTopologyLayer is depth nlayers */
    struct tp_dom *doms;
    size_t ndoms, capdoms;
    int *node_dom; /* [view.nnodes] lowest domain holding each node, -1 when none */
    size_t nnode_dom;
    size_t nres;
};

/* The tree for the view's ClusterNetworkTopology 'default' (rebuilt when nodes or the
 * topology changed), or NULL when there is none. Borrowed until the next view change. */
struct sched_topo *sched__topo_get(struct sched_view *v);
void sched__topo_free(struct sched_topo *t);
/* Keeps per-domain totals in step with sched__view_usage (node ni, pod p, sign). */
void sched__topo_usage(struct sched_view *v, int ni, const struct sv_pod *p, int sign);
/* Depth of a layer name (case-insensitive; NodeTopologyLayer = nlayers), -1 unknown. */
int sched__topo_layer(const struct sched_topo *t, const char *name);
/* The spec's layer name of a depth ("NodeTopologyLayer" for nlayers). Borrowed. */
const char *sched__topo_layer_name(const struct sched_topo *t, int depth);
/* Writes status.detailStatus (Koordinator's shape) into the stored ClusterNetworkTopology
 * 'default' when it differs; called inside the write transaction that changed nodes or
 * the topology. */
int sched__topo_status_sync(MDB_txn *txn, struct err *err);
/* status.detailStatus for a topology and nodes (new array). */
json_t *sched__topo_detail(const struct model_topology *m, const struct model_node *nodes,
                           size_t n);

/* ---- fit (fit.c) ---- */

enum { SCHED_FIT_OK, SCHED_FIT_UNSCHEDULABLE, SCHED_FIT_SELECTOR, SCHED_FIT_TAINT };

/* SCHED_FIT_OK or the first static reason the shape cannot use the node. */
int sched__fit_static(const struct sv_node *n, const struct sv_shape *sh);
/* -1 when every request fits the free capacity, else the index (in sh->req) of the
 * first request that does not. self: the pod, whose own nomination is not a reservation. */
int sched__fit_res(const struct sched_view *v, const struct sv_node *n, const struct sv_shape *sh,
                   int self);
int64_t sched__free(const struct sched_view *v, const struct sv_node *n, int r, int32_t prio,
                    int self);
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
/* Node-filter histogram for pod pi (new): {"total","fit","reasons":[...],"summary"}.
 * *code: WHY_NO_NODES, WHY_NO_MATCHING_NODE, WHY_EXCEEDS_ALLOCATABLE, WHY_INSUFFICIENT,
 * or -1 when the pod fits somewhere. */
json_t *sched__node_filter(struct sched_view *v, int pi, int *code);

/* ---- scheduler ---- */

struct sched_metrics {
    uint64_t cycles;
    uint64_t pods_placed;
    uint64_t statements_committed, statements_discarded;
    uint64_t hist[12]; /* cycle duration buckets, see metrics.c */
    double duration_sum;
};

struct sched {
    struct store *st;
    struct sched_options opts;
    pthread_mutex_t mu;
    struct sched_view *v;
    uint64_t cycle; /* last cycle number */
    struct sched_metrics met;
};

/* The job an object belongs to ("ns/group" or "ns/pod"); NULL for nodes. New. */
char *sched__object_job(enum model_kind kind, json_t *obj);
/* Appends an audit record {"kind": what, "object": {kind, name}, "job", "cycle"} plus
 * the members of extra (borrowed; may be NULL). obj (borrowed) names the job. */
int sched__audit_object(MDB_txn *txn, struct sched *s, const char *what, enum model_kind kind,
                        const char *key, json_t *obj, json_t *extra, struct err *err);
void sched__metrics_cycle(struct sched *s, double seconds);
/* ---- the cycle (cycle.c, attempt.c, cyclewhy.c) ---- */

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
    /* Bound pods by node as of the first preemption attempt of the cycle (CSR: node n's
     * pods are by_node[by_node_off[n] .. by_node_off[n + 1]]), built lazily. Pods placed
     * later in the cycle are not in it and need not be: jobs run in priority order, so
     * they are never of lower priority than a later preemptor and never its victims. */
    int *by_node_off, *by_node;
};

/* The cycle's bound-pods-by-node index (see struct sched_cyc), built on first use. */
void sched__cyc_pods_by_node(struct sched_cyc *c);

/* Statement: allocate (view now, store at commit), commit, discard (undo in reverse,
 * audit "discarded" when the statement had operations). */
void sched__stmt_alloc(struct sched_cyc *c, int pod, int node);
int sched__stmt_commit(struct sched_cyc *c, json_t **placement, struct err *err);
int sched__stmt_discard(struct sched_cyc *c, const char *job, int code, const char *msg,
                        struct err *err);

/* mark_running and removal of terminated pods, at the start of a cycle. */
int sched__housekeeping(struct sched_cyc *c, struct err *err);
/* Attempts the job (with its GangGroup) as one statement. */
int sched__attempt(struct sched_cyc *c, int job, struct err *err);

/* One job attempt (attempt.c); the placer fills placed / fail_pod. */
struct sched_attempt {
    int jobs[64]; /* members: the job, or every PodGroup of its GangGroup */
    size_t njobs;
    int *pods; /* pending pods in placement order */
    size_t npods;
    int bound[64], pending[64], placed[64], fail_pod[64], satisfied[64];
    json_t *blockers;
    json_t *topology;   /* the why document's topology part (new), NULL without gather */
    json_t *preemption; /* the why document's preemption part (new), NULL when not tried */
};
int sched__attempt_member(const struct sched_attempt *a, int job);
void sched__attempt_blocker(struct sched_attempt *a, int code, json_t *extra, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Placement of an attempt's pending pods; replaceable per job (topology gather comes
 * as another placer). Returns 0 or ERR_*; pods that do not fit stay unplaced. */
typedef int (*sched__placer)(struct sched_cyc *c, struct sched_attempt *a, struct err *err);
sched__placer sched__placer_for(struct sched_cyc *c, struct sched_attempt *a);
/* Undoes the open statement's operations without an audit record (a node-set try). */
void sched__stmt_undo(struct sched_cyc *c);

/* ---- topology gather (gather.c, nodeset.c) ---- */

struct gather_spec {
    int must;       /* depth of the narrowest MustGather layer, -1 none */
    int prefer;     /* depth of the narrowest PreferGather layer, -1 none */
    int any;        /* the spec names at least one strategy */
    char layer[64]; /* the layer named in the why (MustGather first) */
};
/* Parses a network-topology-spec annotation against the tree (t may be NULL). Returns -1
 * when usable, else the why code (WHY_SPEC_INVALID, WHY_TOPOLOGY_MISSING) with msg set. */
int sched__gather_spec(const struct sched_topo *t, const char *raw, struct gather_spec *out,
                       char *msg, size_t n);
/* The gather placer, used when some member has a gather strategy. */
int sched__place_gather(struct sched_cyc *c, struct sched_attempt *a, struct err *err);

/* Gather state of one attempt (gather.c computes offers and candidates, nodeset.c
 * fills and tries them and writes the why part). */
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
    struct sched_attempt *a;
    struct gather_spec spec;
    int shape; /* the common shape of the pods, -1 when they differ */
    int size;  /* pending pods of the job */
    int need;  /* pods the members still need (holding the job means offering this many) */
    int lo;    /* shallowest candidate depth */
    struct gather_cand *cands;
    size_t ncands;
    char *done; /* [a->npods] placed in the current try */
    size_t next, nplaced;
    int64_t *scratch; /* [v->nres] for heterogeneous offers */
};
long sched__gather_node_offer(struct gather *g, int ni);
/* Offer slots of a domain (cached per shape, size and domain version); *hold: nodes in it
 * that hold the job alone. */
long sched__gather_dom_offer(struct gather *g, int di, long *hold);
/* Fills g->cands in try order (DESIGN.md section 3, steps 2-3). */
void sched__gather_candidates(struct gather *g);
/* The resource that limits how many of the job's pods domain di holds, or NULL. */
const char *sched__gather_limit(struct gather *g, int di);

struct sched_why_input {
    const char *state;
    json_t *blockers;   /* array of {"class","code","message",...} (borrowed) */
    int primary;        /* why code or -1 when nothing blocks */
    json_t *gang;       /* borrowed, may be NULL */
    json_t *nf;         /* node filter, borrowed, may be NULL */
    json_t *ahead;      /* borrowed, may be NULL */
    json_t *placement;  /* pod -> node of this cycle, borrowed, may be NULL */
    json_t *topology;   /* topology part, borrowed, may be NULL */
    json_t *preemption; /* preemption verdict, borrowed, may be NULL */
};
/* Stores the job's why document when it changed; writes "unschedulable" on a change
 * of reason. */
int sched__why_record(struct sched_cyc *c, int job, const struct sched_why_input *in,
                      struct err *err);
/* Jobs placed earlier in this cycle on nodes where pod pi would otherwise fit. New. */
json_t *sched__ahead(struct sched_cyc *c, int pi);

/* ---- job-level preemption (preempt.c, evict.c, ledger.c; DESIGN.md section 3) ---- */

struct sched_preempt_job {
    int job;         /* the job attempted (the preemptor) */
    const int *jobs; /* its GangGroup members */
    size_t njobs;
    const int *pods; /* pending pods in placement order */
    size_t npods;
    int trigger; /* first pod that could not be placed, -1 when unknown */
    /* Re-plans the whole job on the view as it is with the cycle's placer; allocations go
     * into the open statement. Returns 1 when the job fits, 0 when not, or ERR_*. */
    int (*replan)(struct sched_cyc *c, void *ctx, struct err *err);
    void *ctx;
};
/* Job-level preemption for a job whose attempt failed (called with an empty statement).
 * On success victims are marked, the job's pods nominated, a ledger entry written.
 * *verdict (new): the why document's "preemption" object. *blocker: a WHY_* code to add
 * to the job's blockers, or -1. Returns 0 or ERR_* (the cycle is then aborted). */
int sched__preempt(struct sched_cyc *c, const struct sched_preempt_job *pj, json_t **verdict,
                   int *blocker, struct err *err);
/* 1 when a pod of the open statement was nominated (a preemptor may be binding). */
int sched__preempt_nominated_ops(struct sched_cyc *c);
/* After a commit that placed job (borrowed map pod -> node): completes its open ledger
 * entry (bound, boundAt, latencyMs). */
int sched__ledger_bound(struct sched_cyc *c, int job, json_t *map, struct err *err);
/* Housekeeping removed pod key (old: its stored object): "evicted" record if it was a
 * victim. */
/* The ledger's victim -> preemptor record of a job (new) or NULL; own read txn. */
json_t *sched__ledger_preempted_by(struct sched *s, const char *job);
int sched__evict_removed(struct sched_cyc *c, const char *key, json_t *old, struct err *err);

/* Rebuilds s->v from the store (replacing the old view). */
int sched__rebuild(struct sched *s, struct err *err);
/* The job state name ("Pending", ...). */
const char *sched__job_state(struct sched *s, const struct sv_job *j);
/* Job JSON as documented in scheduler.h (sched_job). New. */
json_t *sched__job_json(struct sched *s, const struct sv_job *j);

#endif
