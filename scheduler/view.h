/*
 * view.h - the cluster view: what the scheduler decides on.
 *
 * The view (struct sched_view) mirrors what the store holds: nodes with
 * allocatable / requested vectors (resource names interned to small indexes),
 * pods with sparse request vectors, jobs (a PodGroup, or a lone pod), pod shapes
 * (the part of a pod that decides where it fits), the topology object and the
 * PriorityClasses (name -> value and preemption policy). Slots are
 * reused after deletion; every lookup by name goes through an open-addressing string
 * map (view_strmap.c).
 *
 * Files: view.c (nodes, jobs, resources, the topology object), view_pod.c (pods,
 * shapes, nominations, the bind/unbind primitives of statements), view_class.c (the
 * PriorityClasses and the priority of pods and jobs), view_load.c (rebuild from the
 * store, the deterministic dump).
 *
 * Rules: the view is changed only by sched_apply.c and sched_delete.c (after the commit),
 * by the cycle's statements (with an undo log, see cycle_stmt.c) and by a rebuild.
 * view.epoch grows whenever capacity may have been freed or node properties changed,
 * which invalidates the per-shape caches of the placement code (place.h).
 */
#ifndef MUSTER_SCHED_VIEW_H
#define MUSTER_SCHED_VIEW_H

#include <jansson.h>
#include <stdint.h>

#include "alloc.h"
#include "err.h"
#include "model.h"
#include "store.h"

/* ---- string map (view_strmap.c) ---- */
struct sched_strmap {
    char **keys;
    int *vals;
    uint32_t *hashes; /* each slot's key's hash */
    size_t cap, used, count;
};
void sched__strmap_init(struct sched_strmap *m);
void sched__strmap_free(struct sched_strmap *m);
/* Value or -1 when absent. */
int sched__strmap_get(const struct sched_strmap *m, const char *key);
void sched__strmap_put(struct sched_strmap *m, const char *key, int val);
void sched__strmap_del(struct sched_strmap *m, const char *key);
/* Makes room for n entries in all, so that putting them does not rehash. */
void sched__strmap_reserve(struct sched_strmap *m, size_t n);
/* The first occupied slot at or after i (m->cap when none): for (i = next(m, 0); i < m->cap;
 * i = next(m, i + 1)) visits keys[i] / vals[i] of every entry. */
size_t sched__strmap_next(const struct sched_strmap *m, size_t i);
/* "<a><sep><b>" into buf of n bytes, cut and terminated as snprintf would. */
void sched__str_join_to(char *buf, size_t n, const char *a, char sep, const char *b);
/* "<a><sep><b>", new. */
char *sched__str_join(const char *a, char sep, const char *b);

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
    char *key;    /* "ns/name" */
    uint32_t gen; /* slot generation: index entries (view_labels.c) of an older pod are stale */
    struct model_pod m;
    int alive;
    /* The priority and policy the scheduler uses (ordering, reservations, preemption as
     * preemptor and victim): the job's PodGroup class when it names one that exists,
     * else the pod's own spec.priority / spec.preemptionPolicy (sched__view_prio_sync). */
    int32_t prio;
    int never;
    int job;       /* job index */
    int node;      /* node index when bound to a known node, else -1 */
    int nominated; /* node index or -1 */
    int counted;   /* its requests are in nodes[node].used */
    struct sv_req *req;
    int nreq;
    int shape;
};

/* ---- waiting jobs (view_wait.c) ----
 *
 * A job whose attempt left it unplaced is parked: it is not attempted again until an event
 * of a kind it waits on happens, its own PodGroup or pods change, or its backoff runs out
 * (SV_WAIT_BACKOFF_MIN_MS doubling up to SV_WAIT_BACKOFF_MAX_MS; a gang with an open
 * timeout window also at the window's end). Each kind of event has a generation in the
 * view (the view's event clock when it last happened); a parked job records the clock when
 * it was parked, so "woken" is one comparison per kind it waits on. The table below is the
 * one list of kinds: the code, the name /why answers with, and what raises it. */
#define SV_EVENT_MAP(X)                                                                            \
    X(CAPACITY, "capacity",                                                                        \
      "capacity freed or added: a bound or nominated pod deleted, finished or moved, a node "      \
      "added, changed (labels, taints, cordon) or deleted, a nomination dropped")                  \
    X(PLACED, "placement",                                                                         \
      "a pod placed or relabelled: for jobs with pod affinity, anti-affinity or topology "         \
      "spread")                                                                                    \
    X(QUEUE, "queue",                                                                              \
      "a Queue changed, or (with several queues) another job placed or a pending pod "             \
      "deleted, which moves the queues' usage and shares")                                         \
    X(TOPOLOGY, "topology", "the ClusterNetworkTopology changed")                                  \
    X(PRIORITY, "priorityClass", "a PriorityClass changed")                                        \
    X(PDB, "podDisruptionBudget",                                                                  \
      "a PodDisruptionBudget changed: for a job that tried preemption")                            \
    X(GROUP, "podGroup", "a PodGroup created or deleted: for a job in a GangGroup")

enum sv_event {
#define SV_EV_ENUM(id, name, doc) SV_EV_##id,
    SV_EVENT_MAP(SV_EV_ENUM)
#undef SV_EV_ENUM
        SV_EV_COUNT
};

#define SV_WAIT_BACKOFF_MIN_MS 1000
#define SV_WAIT_BACKOFF_MAX_MS 60000

struct sv_wait {
    int parked;
    int narrow;         /* capacity: only room on nodes its pending pods' shapes pass the
                           static filters of wakes it (a job without pod rules) */
    unsigned on;        /* 1u << SV_EV_* the job waits on */
    uint64_t since;     /* the view's event clock when it was parked */
    int64_t retry_ms;   /* retried at this time without an event */
    int64_t backoff_ms; /* the last backoff, 0 after a placement */
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
    char *why_class; /* the class document its stored why record names (why_class.c), or NULL */
    json_t *history; /* reason history, loaded lazily from the why document */
    int why_loaded;
    uint64_t cycle_seen; /* cycle in which the job was last handled */
    int starving;        /* preempted for and not bound yet (jobs.c, preempt_ledger.c) */
    /* the higher-priority preemptor that cleared this job's nominations, until the job binds
     * or preempts again (preempt_evict.c; the ledger keeps it durably) */
    char *cleared_by;
    char
        *last_discard; /* reason + message of the last "discarded" record, NULL after a placement */
    json_t *plan_topology; /* the why's topology part of the attempt that preempted, kept
                              while the job waits for its victims (why_record.c) */
    /* the gang's first unsatisfied attempt of its current timeout window, 0 none; durable in
     * the why document ("gangTimeout"), loaded with it (cycle_timeout.c) */
    int64_t unsat_since;
    int queue; /* index into view.queues of sched__job_queue_name, -1 when it does not exist
                  (view_queue.c keeps it and the queues' allocation in step) */
    struct sv_wait wait; /* view_wait.c */
};

enum { SV_RESULT_NONE, SV_RESULT_PLACED, SV_RESULT_FAILED, SV_RESULT_TIMED_OUT };

struct sv_shape {
    struct sv_req *req;
    int nreq;
    struct model_kv *sel;
    size_t nsel;
    struct model_toleration *tol;
    size_t ntol;
    int32_t priority;
    struct model_affinity *aff; /* a reference: the node terms (equal for every pod of the
                                   shape, since node_key is part of the shape key) */
    int soft; /* preferences (preferred node affinity, PreferNoSchedule taints) differ
                 between the candidates: the pick scans and normalizes (place_fit.c) */
    /* placement caches, valid while epoch matches view.epoch */
    uint64_t cand_epoch;
    int *cand; /* statically feasible nodes still worth trying, name order */
    size_t ncand, capcand;
    uint64_t fail_epoch; /* the shape fits nowhere at this epoch */
    /* the binpack pick's heap of candidates (place_heap.c), valid at heap_epoch, with
     * view.binds read up to heap_logpos */
    struct sv_hent {
        double score;
        int rank; /* view.node_rank */
        int node;
    } * heap;
    size_t nheap, capheap;
    uint64_t heap_epoch;
    size_t heap_logpos;
    json_t *nf; /* cached node filter (why) for nf_epoch / nf_cycle */
    int nf_code;
    json_t *nf_ahead;
    uint64_t nf_epoch, nf_cycle;
    uint64_t freed_at; /* the event clock when room was last freed on a node that passes the
                          shape's static filters (sched__wait_sync) */
};

/* ---- pod label and term index (view_labels.c) ----
 *
 * The pod rules (place_rules.c) ask "which placed pods carry these labels" and "which
 * placed pods have a term that may select this pod". Both are answered from lists
 * keyed by one "key=value" pair: a pod is listed under each of its labels, and each of
 * its inter-pod terms under one pair its selector requires (terms without such a pair
 * are listed under "" and always checked). Entries are removed lazily: an entry whose
 * pod slot died or was reused (gen) is dropped when a walk meets it. */
struct sv_ref {
    int pod;
    uint32_t gen;
    int term; /* SV_TERM_* << 16 | index, for term lists */
};
struct sv_reflist {
    struct sv_ref *r;
    size_t n, cap;
};
enum { SV_TERM_AFF_REQ, SV_TERM_ANTI_REQ, SV_TERM_AFF_PREF, SV_TERM_ANTI_PREF };

/* Live nodes carrying one label pair (or, for a key list, the key with any value). */
struct sv_nodes {
    int *ix;
    size_t n, cap;
    char *pair; /* pair lists: "key\x1fvalue" */
    int *vals;  /* key lists: the key's pair lists (indexes into view.nls) */
    size_t nvals, capvals;
};

/* A queue (view_queue.c): the stored Queue or the built-in default. Vectors are
 * [view.rescap] like a node's; every resource a queue names is interned when it is put. */
struct sv_queue {
    struct model_queue m; /* m.name is the key */
    int alive;
    int stored; /* 0: the built-in default (MODEL_QUEUE_DEFAULT) */
    int parent; /* index, -1 for a top-level queue (spec.parent absent, "root", unknown, or
                   on a cycle: a mirrored tree cannot be refused) */
    int depth;  /* 0 for a top-level queue */
    int nchildren;
    int64_t *cap;   /* capability, -1 where not limited */
    int64_t *guar;  /* guarantee */
    int64_t *alloc; /* requests of the counted pods (sched__view_usage) of its jobs and of
                       its descendants' jobs */
    int64_t *pend;  /* requests of the pending pods (sched__queue_pend) of its jobs and of
                       its descendants' jobs, kept exact like alloc */
    /* the last cycle's fair share (queue_share.c) */
    int64_t *request;  /* alloc + pending requests, descendants included */
    int64_t *deserved; /* water-filled share of its parent's deserved (the cluster's) */
    int64_t *realcap;  /* the capability in effect: cap, the parent's, and what the other
                          queues' guarantees leave; -1 where not limited */
    int rank;          /* place in the cycle's queue order, 1 first, 0 none */
};

struct sv_free {
    int *ix; /* reusable slots */
    size_t n, cap;
};

/* The stored PriorityClasses (a handful: a linear array), by name. The built-ins are
 * found through model_priorityclass_builtin when not stored. */
struct sv_classes {
    struct model_priorityclass *c;
    size_t n, cap;
};

/* The class of this name: stored, else built-in, else NULL. Borrowed, valid until the
 * classes change. */
const struct model_priorityclass *sched__class_find(const struct sv_classes *cs, const char *name);
/* The globalDefault class (the lowest value when several are, as Kubernetes picks), or
 * NULL. Borrowed, as for sched__class_find. */
const struct model_priorityclass *sched__class_default(const struct sv_classes *cs);
/* Replace by name; takes ownership of pc (even on failure). */
void sched__class_put(struct sv_classes *cs, struct model_priorityclass *pc);
void sched__class_del(struct sv_classes *cs, const char *name);
/* A deep copy into out (empty before), for an apply that stages classes. */
void sched__classes_copy(struct sv_classes *out, const struct sv_classes *cs);
void sched__classes_free(struct sv_classes *cs);

/* PodDisruptionBudgets (view_pdb.c): slots by key "ns/name", and the live slots of each
 * namespace, so a victim's budgets are found without looking at other namespaces and a
 * cluster without budgets costs nothing. */
struct sv_pdb {
    char *key; /* "ns/name" */
    struct model_pdb m;
    int alive;
};
struct sv_pdbs {
    struct sv_pdb *b;
    size_t n, cap;
    struct sched_strmap ix;    /* key -> slot */
    struct sched_strmap ns_ix; /* namespace -> index into lists */
    struct sv_pdblist {
        int *slot;
        size_t n, cap;
    } * lists;
    size_t nlists, caplists;
    size_t live;
    uint64_t gen; /* grows with every change (preempt_memo.c keys on it) */
};

struct sched_view {
    char **res; /* interned resource names */
    size_t nres, rescap;
    struct sched_strmap res_ix;

    struct sv_node *nodes;
    size_t nnodes, capnodes;
    struct sched_strmap node_ix;
    int *node_order; /* live node indexes sorted by name (rebuilt lazily) */
    int *node_rank;  /* [nnodes]: a live node's position in node_order, rebuilt with it */
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

    struct sched_strmap lab_ix, term_ix; /* "key=value" -> index into lists */
    struct sv_reflist *lists;
    size_t nlists, caplists;
    size_t nterm_pods; /* live pods with inter-pod terms */
    size_t ndeleting;  /* live pods with m.deletion_ms set: the housekeeping's pod scan
                          (cycle_housekeeping.c) runs only while there are some */
    uint32_t gen;
    /* node label index (view_labels.c), rebuilt lazily when nl_dirty */
    struct sched_strmap nl_ix, nk_ix; /* "key\x1fvalue" -> nls, "key" -> nks */
    struct sv_nodes *nls, *nks;
    size_t nnls, capnls, nnks, capnks;
    int nl_dirty;
    struct sv_classes classes;
    /* Preemption victims whose record the ledger keeps (its "v:<job>" records,
     * preempt_ledger.c): job id -> index into victim_prio, the job's priority when it was
     * preempted. Loaded with the view; changed by the cycle (a preemption, an expiry). */
    struct sched_strmap victims;
    int32_t *victim_prio;
    size_t nvictim_prio, capvictim_prio;

    struct sv_queue *queues; /* [0] is "default", stored or built-in; slots of deleted
                                queues are reused */
    size_t nqueues, capqueues;
    struct sched_strmap queue_ix;
    uint64_t share_cycle; /* the cycle the shares were computed in, 0 never */
    struct sv_pdbs pdbs;

    struct sv_free fnodes, fpods, fjobs;
    void *rules_mem; /* per-node arrays of the one prepared sched_rules (place_rules.c) */
    size_t rules_cap;
    int rules_busy;
    struct sched_scan *scan; /* scratch of the scanning pick (place_fit.c), [capscan] */
    size_t capscan;
    int *binds; /* nodes whose usage grew since log_epoch, in order (sched__view_usage) */
    size_t nbinds, capbinds;
    uint64_t log_epoch;
    uint64_t epoch;
    struct sv_freed {
        uint64_t at; /* event clock */
        int node;
    } * freed; /* room freed on a node since the last sched__wait_sync */
    size_t nfreed, capfreed;
    uint64_t freed_any; /* ev_clock of the last of them */
    /* The jobs a cycle looks at (view_wait.c, cycle.c pending_jobs): every job that may have
     * pending pods or miss members. A cycle drops a job that has neither; any change that
     * could give it either puts it back (sched__view_todo). in_todo is by job slot. */
    int *todo;
    size_t ntodo, captodo;
    unsigned char *in_todo;
    size_t capin_todo;
    uint64_t ev_clock;            /* grows with every event (view_wait.c) */
    uint64_t ev_gen[SV_EV_COUNT]; /* ev_clock when each kind last happened */
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
/* A PriorityClass changed: the pods of every job whose PodGroup names it take its value. */
void sched__view_put_class(struct sched_view *v, struct model_priorityclass *pc);
void sched__view_del_class(struct sched_view *v, const char *name);
/* Recomputes prio and never (and the shape) of the pods of job ji. */
void sched__view_prio_sync(struct sched_view *v, int ji);

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
/* Live node indexes in name order (borrowed until the next node change); v->node_rank is
 * valid with it. */
const int *sched__view_node_order(struct sched_view *v, size_t *n);

/* Statement primitives: account a pending pod on a node and back. */
void sched__view_bind(struct sched_view *v, int pod, int node);
void sched__view_unbind(struct sched_view *v, int pod);
/* A live pod's fields the cycle itself changes, the view's counts kept in step:
 * terminating sets m.deletion_ms to ms (> 0), counting the pod in ndeleting unless it
 * already was; phase replaces m.phase (copied, NULL for none), and a bound pod that becomes
 * terminal stops counting on its node and queue (or counts again), as a put would have it. */
void sched__view_pod_terminating(struct sched_view *v, int pod, int64_t ms);
void sched__view_pod_phase(struct sched_view *v, int pod, const char *phase);
/* Drops a pod's nomination (reservation) if any. */
void sched__view_nominate_clear(struct sched_view *v, int pod);
/* Nominates pod to node (-1 clears): the node's reservations and the pod's
 * status.nominatedNodeName as the view holds it. */
void sched__view_set_nominated(struct sched_view *v, int pod, int node);
/* A new node adopts bound pods and nominations that named it before it existed. */
void sched__view_adopt(struct sched_view *v, int node);

/* 1 when the pod has inter-pod (anti-)affinity terms. */
int sched__pod_has_terms(const struct sv_pod *p);
/* Index maintenance, called by put/del of pods. */
void sched__view_index_pod(struct sched_view *v, int pi);
/* Calls fn for every placed pod (counted: bound or placed in the running cycle, not
 * terminal) whose labels match sel; the caller checks namespaces. Stops when fn returns
 * non-zero, and returns that. */
typedef int (*sv_pod_fn)(struct sched_view *v, int pi, void *ctx);
int sched__view_pods_matching(struct sched_view *v, const struct model_selector *sel, sv_pod_fn fn,
                              void *ctx);
/* Calls fn(v, pod, term, ctx) for every inter-pod term of a placed pod whose selector may
 * match labels (the caller matches it fully). */
typedef int (*sv_term_fn)(struct sched_view *v, int pi, int term, void *ctx);
int sched__view_terms_for(struct sched_view *v, const struct model_kv *labels, size_t n,
                          sv_term_fn fn, void *ctx);
/* The live nodes labelled key=value, or carrying key (value NULL); NULL when none.
 * Borrowed until the next node change. */
const struct sv_nodes *sched__view_nodes_labelled(struct sched_view *v, const char *key,
                                                  const char *value);
/* The same for a pair written "key\x1fvalue". */
const struct sv_nodes *sched__view_nodes_pair(struct sched_view *v, const char *pair);
void sched__view_node_labels_free(struct sched_view *v);
/* The term of pod pi named by an sv_ref.term. */
const struct model_pod_term *sched__view_term(const struct sched_view *v, int pi, int term);

/* Deterministic JSON of the whole view (for tests: rebuilt == live). New. */
json_t *sched__view_dump(struct sched_view *v);

int sched__pod_pending(const struct sv_pod *p);
/* The job's priority: its PodGroup's class value when the PodGroup names an existing
 * class, else the highest priority of its pods; without pods, the priority it had when
 * it was preempted (a retained victim), else 0. */
int32_t sched__job_priority(const struct sched_view *v, const struct sv_job *j);
/* The class a job's PodGroup names (the job's priority), NULL when it names none or the
 * class does not exist (sched__job_class_missing says which). Borrowed. */
const struct model_priorityclass *sched__job_class(const struct sched_view *v,
                                                   const struct sv_job *j);
/* Preemption victims (view_class.c): a job the ledger keeps a record of, with the
 * priority it had when it was preempted (put replaces it). victim returns 1 and *prio
 * for such a job, else 0. */
void sched__view_victim_put(struct sched_view *v, const char *id, int32_t prio);
void sched__view_victim_del(struct sched_view *v, const char *id);
int sched__view_victim(const struct sched_view *v, const char *id, int32_t *prio);
/* 1 when the job's PodGroup names a class that does not exist. */
int sched__job_class_missing(const struct sched_view *v, const struct sv_job *j);
int64_t sched__job_creation(const struct sched_view *v, const struct sv_job *j);
/* ---- queues (view_queue.c) ---- */
/* Replace by name (takes ownership of q, even on failure); del restores the built-in for
 * MODEL_QUEUE_DEFAULT. Both re-resolve the tree, every job's queue and the allocation. */
void sched__view_put_queue(struct sched_view *v, struct model_queue *q);
void sched__view_del_queue(struct sched_view *v, const char *name);
/* Queue index by name, -1 when unknown. */
int sched__view_queue(const struct sched_view *v, const char *name);
/* Re-resolves job ji's queue after its PodGroup or pods changed, moving the allocation
 * of its counted pods. */
void sched__view_job_requeue(struct sched_view *v, int ji);
/* Adds (sign 1) or removes (-1) pod p's requests to its job's queue and its ancestors
 * (sched__view_usage calls it). */
void sched__queue_usage(struct sched_view *v, const struct sv_pod *p, int sign);
/* The one rule of the queues' pending sums: a live pod that is not counted and is pending
 * (sched__pod_pending) adds its requests to its job's queue's pend and every ancestor's.
 * pend(-1) takes a pod's part off and pend(1) puts it back; every change of a pod's
 * alive, counted, node_name, deletion_ms, phase or requests (and of its job's queue, which
 * sched__view_job_requeue moves) is made between the two, so each sum stays exact.
 * Queues added, removed or re-parented recount every sum (as alloc). */
int sched__queue_pends(const struct sv_pod *p);
void sched__queue_pend(struct sched_view *v, const struct sv_pod *p, int sign);
/* The queues' vectors grown to rescap (sched__view_res). */
void sched__view_queues_grow(struct sched_view *v, size_t oldcap, size_t newcap);
void sched__view_queues_free(struct sched_view *v);
/* The built-in default queue, at view creation. */
void sched__view_queues_init(struct sched_view *v);
/* ---- PodDisruptionBudgets (view_pdb.c) ---- */
/* Replace by key (takes ownership of b, even on failure); del by key "ns/name". */
void sched__view_put_pdb(struct sched_view *v, struct model_pdb *b);
void sched__view_del_pdb(struct sched_view *v, const char *key);
/* The live budget slots of namespace ns (borrowed until the next budget change), NULL with
 * *n = 0 when it has none. */
const int *sched__view_pdbs_in(const struct sched_view *v, const char *ns, size_t *n);
void sched__view_pdbs_free(struct sched_view *v);
/* The name of the queue a job asks for: its PodGroup's spec.queue, else the queue-name
 * annotation of its first pod that has one, else MODEL_QUEUE_DEFAULT. Borrowed, valid
 * until the job's PodGroup or pods change. */
const char *sched__job_queue_name(const struct sched_view *v, const struct sv_job *j);
/* ---- waiting jobs (view_wait.c) ---- */
/* An event of kind e happened: every job parked on e is due at the next cycle. */
void sched__wait_event(struct sched_view *v, enum sv_event e);
/* Room was freed or added on node ni (a pod gone, a nomination dropped, the node put): the
 * jobs parked on capacity whose pending pods' shapes pass ni's static filters are due (every
 * capacity waiter when ni < 0: a node that is unknown or gone). Logged; the cycle maps the
 * log onto shapes (sched__wait_sync) before it looks for due jobs. */
void sched__wait_freed(struct sched_view *v, int ni);
/* Marks each shape that passes the static filters of a node in the log (fit, place.h) with
 * the clock of that entry, and empties the log. */
typedef int (*sv_static_fit)(const struct sv_node *n, const struct sv_shape *sh);
void sched__wait_sync(struct sched_view *v, sv_static_fit fit);
/* Job ji's own PodGroup or pods changed: it is due at the next cycle (its backoff stays),
 * and in the cycle's todo. */
void sched__wait_wake(struct sched_view *v, int ji);
/* Puts job ji into the jobs the next cycle looks at (v->todo), once: its pods or
 * nominations changed, a pod of it was unbound, its victim record came or went. */
void sched__view_todo(struct sched_view *v, int ji);
/* 1 when job j is to be attempted at now_ms: not parked, woken, or its retry time came. */
int sched__wait_due(const struct sched_view *v, const struct sv_job *j, int64_t now_ms);
/* Parks job ji after an attempt that left it unplaced at now_ms, waiting on the kinds in
 * on (sched__wait_kinds) and backing off (doubled from the last backoff). */
void sched__wait_park(struct sched_view *v, int ji, unsigned on, int64_t now_ms);
/* Job ji was placed whole: not parked, backoff reset. */
void sched__wait_clear(struct sched_view *v, int ji);
/* The kinds job ji waits on: capacity, queue, topology and priority always; placement
 * when a pod of it has affinity or spread rules; podGroup when it is in a GangGroup;
 * podDisruptionBudget when preempted says its attempt tried preemption. */
unsigned sched__wait_kinds(const struct sched_view *v, int ji, int preempted);
/* {"retriedOn": [kind names..., "job"], "nextRetry": RFC 3339, "backoffSeconds"} of a
 * parked job that no event woke yet (new; a nextRetry in the past means the next cycle);
 * NULL otherwise. */
json_t *sched__wait_json(const struct sched_view *v, const struct sv_job *j);

/* Needed pods of a job: minMember for a gang with a PodGroup, else 1. */
int sched__job_min(const struct sv_job *j);

#endif
