/*
 * sched_pages.h - the cluster as the UI's pages and their API routes read it from the view:
 * the topology tree, the nodes' usage and map, and the time series. Part of the scheduler's
 * interface; scheduler.h includes it.
 */
#ifndef MUSTER_SCHED_PAGES_H
#define MUSTER_SCHED_PAGES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct err;
struct sched;

/* GET /api/v1/topology. A pod shape for largestGang: requests in model units (cpu in
 * thousandths, memory in bytes, gpu = nvidia.com/gpu), or like = a job id whose first
 * pending pod (else first pod) gives the shape; no shape leaves largestGang out. */
struct sched_topo_query {
    int64_t cpu, memory, gpu;
    const char *like;
    int jobs_capped; /* each domain's "jobs" lists at most jobs_max ids (0: every one) */
    size_t jobs_max;
};
/* The topology tree as documented in docs/api.md: {"topology", "layers", "shape", "root":
 * {"name", "layer", "capacity", "used", "free", "nodeNum", "jobs", "jobCount",
 * "largestGang", "children", "nodes"}}; "jobs" sorted, the first jobs_max of them when
 * q->jobs_capped, "jobCount" how many there are. Without a ClusterNetworkTopology 'default' the
 * root holds every node. *out new. ERR_NOT_FOUND when like names no job. */
int sched_topology(struct sched *s, const struct sched_topo_query *q, json_t **out,
                   struct err *err);

/* The usage of node name, from the view (the part of GET /api/v1/nodes/{name} that is not
 * the stored node, docs/api.md): {"allocatable": {res: quantity}, "requested": {...},
 * "free": {...}, "pods": [pod keys]}, quantities as model_quantity_format writes them.
 * allocatable is the node's status.allocatable as stored (no implied "pods"); requested
 * sums, per resource any of them requests (even at 0), the requests of the pods bound to
 * it that are not terminal, each of which requests one "pods"; free is allocatable minus
 * requested per allocatable resource, at least 0; pods lists every pod bound to it,
 * terminal ones too, by key. *out new. Returns 0 or ERR_NOT_FOUND. */
int sched_node_usage(struct sched *s, const char *name, json_t **out, struct err *err);
/* The same for every node, in one pass under one lock: *out (new) maps node name ->
 * usage. Returns 0. */
int sched_nodes_usage(struct sched *s, json_t **out, struct err *err);

/* Every live node in one compact document, by name (GET /api/v1/nodemap: the topology page's
 * cluster map): {"items": [{"name", "allocatable": {res: amount}, "used": {res: amount},
 * "unschedulable", "notReady", "taints": [{"key", "value", "effect"}], "pods": bound pods
 * that count (not terminal), "nominated": pending pods nominated to it}]}. Amounts are
 * numbers: cpu in cores (fractional when it is), every other resource in whole units;
 * "used" has a member for each allocatable resource. One pass under the lock, nothing read
 * from the store. *out new. Returns 0. */
int sched_node_map(struct sched *s, json_t **out, struct err *err);

/* The time series (docs/api.md "GET /api/v1/timeseries"). sched_sample makes one sample of
 * the cluster at now_ms under the lock (one pass over the view and the counters: cluster,
 * per top-level domain and per queue capacity and use, jobs by state, waits, and the
 * placements, preemptions, cycles and mean cycle time since the previous sample), then
 * stores it in a write transaction of its own and drops the samples older than
 * now_ms - retention_ms. Call it from a timer thread, never from inside a cycle. Returns 0
 * or ERR_STORE.
 * sched_timeseries reads the samples with from_ms <= t <= to_ms (to_ms 0: no end) from a
 * store snapshot, without the lock: *out (new) {"times": [ms...], "series": {name:
 * [value or null per time]}}, only the series whose names start with one of prefixes
 * (nprefixes 0: all). Returns 0 or ERR_STORE. */
int sched_sample(struct sched *s, int64_t now_ms, int64_t retention_ms, struct err *err);
int sched_timeseries(struct sched *s, int64_t from_ms, int64_t to_ms, const char *const *prefixes,
                     size_t nprefixes, json_t **out, struct err *err);

#endif
