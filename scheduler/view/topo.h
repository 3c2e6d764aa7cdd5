/*
 * topo.h - the topology tree: layers of the ClusterNetworkTopology 'default', domains
 * from node labels, per-domain totals kept in step with the view's usage.
 *
 * Files: topo.c (the tree, incremental totals), topo_status.c (Koordinator's
 * status.detailStatus, written in the transaction that changed nodes or the topology),
 * topo_api.c (GET /api/v1/topology). The tree is owned by the view and rebuilt lazily.
 */
#ifndef MUSTER_SCHED_TOPO_H
#define MUSTER_SCHED_TOPO_H

#include "view.h"

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
    uint64_t ver;          /* grows on every usage change in the subtree */
    /* offer-slot cache of the gather placer (place_gather.c), valid for (shape, size, need, job,
     * ver, epoch, mgen); the job because its own nominations do not reserve against it (only
     * when c_nom: a node below had nominations; nominations change only with the epoch),
     * mgen because podCountMultiple rounds it */
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

#endif
