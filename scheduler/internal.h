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
};

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

struct sched_attempt;
/* Placement of an attempt's pending pods; replaceable per job (topology gather comes
 * as another placer). Returns 0 or ERR_*; pods that do not fit stay unplaced. */
typedef int (*sched__placer)(struct sched_cyc *c, struct sched_attempt *a, struct err *err);
sched__placer sched__placer_for(struct sched_cyc *c, struct sched_attempt *a);

struct sched_why_input {
    const char *state;
    json_t *blockers;  /* array of {"class","code","message",...} (borrowed) */
    int primary;       /* why code or -1 when nothing blocks */
    json_t *gang;      /* borrowed, may be NULL */
    json_t *nf;        /* node filter, borrowed, may be NULL */
    json_t *ahead;     /* borrowed, may be NULL */
    json_t *placement; /* pod -> node of this cycle, borrowed, may be NULL */
};
/* Stores the job's why document when it changed; writes "unschedulable" on a change
 * of reason. */
int sched__why_record(struct sched_cyc *c, int job, const struct sched_why_input *in,
                      struct err *err);
/* Jobs placed earlier in this cycle on nodes where pod pi would otherwise fit. New. */
json_t *sched__ahead(struct sched_cyc *c, int pi);

/* Rebuilds s->v from the store (replacing the old view). */
int sched__rebuild(struct sched *s, struct err *err);
/* The job state name ("Pending", ...). */
const char *sched__job_state(struct sched *s, const struct sv_job *j);
/* Job JSON as documented in scheduler.h (sched_job). New. */
json_t *sched__job_json(struct sched *s, const struct sv_job *j);

#endif
