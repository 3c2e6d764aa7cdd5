/*
 * view_part_types.h - the records each part of the view keeps inside struct sched_view
 * (view_types.h): the kinds of events and a job's waiting state (view_wait.c), the
 * queues (view_queue.c), the PriorityClasses (view_class.c), the PodDisruptionBudgets
 * (view_pdb.c), the pod label, term and node label index (view_labels.c) and the topology
 * tree (topo.c).
 *
 * Types only, no functions: every file of view/ may include it, and it calls nothing.
 * Each part's functions are declared in its own header.
 */
#ifndef MUSTER_SCHED_VIEW_PART_TYPES_H
#define MUSTER_SCHED_VIEW_PART_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "strmap.h"

/* ---- events and waiting jobs (view_wait.c, which tells how a job waits) ----
 *
 * Each kind of event has a generation in the view (the view's event clock when it last
 * happened); a parked job records the clock when it was parked, so "woken" is one
 * comparison per kind it waits on. The table below is the one list of kinds: the code, the
 * name /why answers with, and what raises it. */
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

struct sv_wait {
    int parked;
    int narrow;         /* capacity: only room on nodes its pending pods' shapes pass the
                           static filters of wakes it (a job without pod rules) */
    unsigned on;        /* 1u << SV_EV_* the job waits on */
    uint64_t since;     /* the view's event clock when it was parked */
    int64_t retry_ms;   /* retried at this time without an event */
    int64_t backoff_ms; /* the last backoff, 0 after a placement */
};

/* ---- queues, PriorityClasses, PodDisruptionBudgets ---- */

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

/* The stored PriorityClasses (a handful: a linear array), by name. The built-ins are
 * found through model_priorityclass_builtin when not stored. */
struct sv_classes {
    struct model_priorityclass *c;
    size_t n, cap;
};

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

/* ---- the topology tree (topo.c) ---- */

struct sched_gidx;

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
    /* grows on every usage change in the subtree, and when a reservation on a node below
     * comes or goes with its pod's binding (sched__topo_touch) */
    uint64_t ver;
    /* offer-slot cache of the gather placer (place_gather.c), valid for (shape, size, need, job,
     * ver, offer epoch, mgen); the job because its own nominations do not reserve against it
     * (only when c_nom: a node below had nominations; nominations come and go with the offer
     * epoch, sched__view_offer_epoch), mgen because podCountMultiple rounds it */
    int c_shape, c_size, c_need, c_job, c_nom;
    uint64_t c_ver, c_epoch, c_mgen;
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
    /* podCountMultiple per depth of the last gather (place_gather.c); mult_gen grows when
     * a gather's differ, and is part of the offer-slot cache key */
    int32_t *mult_last;
    uint64_t mult_gen;
    /* domains whose usage changed since the gather index last looked (place_index.c),
     * each once (is_dirty); NULL until the first change */
    int *dirty;
    char *is_dirty;
    size_t ndirty;
    /* the gather placer's index (place/place_index.c), NULL until asked; it lives and dies
     * with the tree, so place/ sets its destructor with it (the view calls nothing above) */
    struct sched_gidx *gidx;
    void (*gidx_free)(struct sched_gidx *x, size_t ndepths);
};

#endif
