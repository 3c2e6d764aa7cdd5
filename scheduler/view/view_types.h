/*
 * view_types.h - the cluster view's data: struct sched_view and the objects it holds
 * (nodes, pods, jobs, pod shapes), with the records of its parts (view_part_types.h).
 * What the fields mean and who keeps them in step is said beside each; the functions
 * that change them are in the parts' headers (view.h lists the parts).
 *
 * Types only, no functions: every file of view/ may include it, and it calls nothing.
 */
#ifndef MUSTER_SCHED_VIEW_TYPES_H
#define MUSTER_SCHED_VIEW_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "strmap.h"
#include "view_part_types.h"

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
    int resv; /* 1 + the index into view.resv of the reservation holding it, 0 none */
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

struct sv_job {
    char *key; /* "g:<id>" or "p:<id>": the job map's key, borrowed by it */
    char *id;  /* "ns/name", within key (freed with it) */
    int gang;  /* a PodGroup job (named by label or by a PodGroup object) */
    int alive;
    int has_pg;
    struct model_podgroup pg;
    int *pods;
    size_t npods, cappods;
    /* a number no other job of this view had: what others keep of the job beside the view
     * (record/'s why memory) is the job's while its serial matches */
    uint64_t serial;
    /* scheduling memory, given back from the why document and the ledger when the view is
     * rebuilt (cycle/cycle.c restore_attempts) */
    int result;          /* SV_RESULT_* of the last attempt */
    uint64_t cycle_seen; /* cycle in which the job was last handled */
    int starving;        /* preempted for and not bound yet (jobs.c, record/ledger.c) */
    /* the higher-priority preemptor that cleared this job's nominations, until the job binds
     * or preempts again (preempt/preempt_evict.c; the ledger keeps it durably) */
    char *cleared_by;
    /* the gang's first unsatisfied attempt of its current timeout window, 0 none; durable in
     * the why document ("gangTimeout"), loaded with it (cycle_timeout.c) */
    int64_t unsat_since;
    int held;  /* its only pod is being replaced (view_pod.c): the job stays, with its memory */
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
                 between the candidates: the pick scans and normalizes (place_pick.c) */
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
    uint64_t freed_at; /* the event clock when room was last freed on a node that passes the
                          shape's static filters (sched__wait_sync) */
};

/* A starving job's reservation (view_resv.c; reserve/ decides them, record/ stores them in
 * STORE_DB_RESERVATIONS, view_load reads them back). One reservation per node. */
struct sv_resv {
    char *job;        /* the job's id; NULL for a free slot */
    int32_t prio;     /* the job's priority when reserved */
    int64_t start_ms; /* expected start; INT64_MAX when some node waits for a job without a
                         limit (unknown) */
    int64_t since_ms; /* when the job first got a reservation */
    int *nodes;       /* node indexes, name order */
    size_t nnodes;
    char **waits; /* ids of the running jobs it waits for */
    size_t nwaits;
    int strict; /* made because the job heads a StrictFIFO queue, else for max-wait */
    /* the attempt's gate (view_resv.c sched__view_resv_gate): 1 while the job being
     * attempted may not use this reservation's nodes; place_fit.c reads it */
    int blocks;
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
     * record/ledger.c): job id -> index into victim_prio, the job's priority when it was
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
    struct sched_scan *scan; /* scratch of the scanning pick (place_pick.c), [capscan] */
    size_t capscan;
    int *binds; /* nodes whose usage grew since log_epoch, in order (sched__view_usage) */
    size_t nbinds, capbinds;
    uint64_t log_epoch;
    uint64_t epoch;
    /* epoch's bumps for a pod's usage alone (sched__view_epoch_usage): the gather's offer
     * caches read those from the topology's versions and skip them (sched__view_offer_epoch) */
    uint64_t usage_bumps;
    uint64_t job_serial; /* the last sv_job.serial given */
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
    /* when the housekeeping next looks for pods past spec.activeDeadlineSeconds
     * (cycle_housekeeping.c): 0 look at the next cycle (a pod with a deadline was put),
     * INT64_MAX none runs; a binding lowers it to the pod's deadline */
    int64_t deadline_next_ms;
    struct sv_resv *resv; /* reservations (view_resv.c), slots of released ones reused */
    size_t nresv, capresv;
    size_t nresv_live;
    uint64_t ev_clock;            /* grows with every event (view_wait.c) */
    uint64_t ev_gen[SV_EV_COUNT]; /* ev_clock when each kind last happened */
};

#endif
