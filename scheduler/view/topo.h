/*
 * topo.h - the topology tree: layers of the ClusterNetworkTopology 'default', domains
 * from node labels, per-domain totals kept in step with the view's usage.
 *
 * Files: topo.c (the tree, incremental totals), topo_status.c (Koordinator's
 * status.detailStatus, written in the transaction that changed nodes or the topology),
 * topo_api.c (GET /api/v1/topology). The tree is owned by the view and rebuilt lazily;
 * its records (struct sched_topo, tp_dom) are in view_part_types.h.
 *
 * Calls: view_base.h (nodes in name order); topo_status.c reads the store.
 */
#ifndef MUSTER_SCHED_TOPO_H
#define MUSTER_SCHED_TOPO_H

#include <jansson.h>

#include "err.h"
#include "model.h"
#include "store.h"
#include "view_types.h"

/* The tree for the view's ClusterNetworkTopology 'default' (rebuilt when nodes or the
 * topology changed), or NULL when there is none. Borrowed until the next view change. */
struct sched_topo *sched__topo_get(struct sched_view *v);
void sched__topo_free(struct sched_topo *t);
/* Keeps per-domain totals in step with sched__view_usage (node ni, pod p, sign). */
void sched__topo_usage(struct sched_view *v, int ni, const struct sv_pod *p, int sign);
/* What node ni offers changed without its usage (a reservation on it came or went): the
 * versions of the domains above it grow, as a usage change makes them, so the gather's
 * caches of those domains are made again. */
void sched__topo_touch(struct sched_view *v, int ni);
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
