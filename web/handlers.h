/*
 * handlers.h - the handlers the route table (routes.c) names, one file per resource, and
 * what routes.c asks of them besides. A handler gets a struct req whose path parameters
 * ({ns}, {name}) are captured and decoded and whose query parameters are checked against
 * the route's list, after the caller's role was checked (auth.c). It must send exactly one
 * reply (http.h) and calls only the shared parts below it (http.h, access.h,
 * cached_reads.h, lists.h), never another handler's file:
 *
 *     json_t *pod = api__object_or_reply(r, MODEL_POD, key);
 *     if (!pod)
 *         return;
 *     api__reply_json(r, 200, pod);
 */
#ifndef MUSTER_WEB_HANDLERS_H
#define MUSTER_WEB_HANDLERS_H

#include <jansson.h>

#include "api_impl.h"

void api__healthz(struct req *r);
void api__readyz(struct req *r);
/* The election's state (new): api->leader's document, or {"role": "standalone",
 * "leader": null} without election. */
json_t *api__leader_state(struct api *api);
void api__metrics(struct req *r);
void api__sources(struct req *r);
void api__manifests_apply(struct req *r);
/* POST /api/v1/whatif (manifests.c: the same bodies, sched_whatif). */
void api__whatif(struct req *r);
/* POST /api/v1/pods/status: many pods' status subresource at once (sched_apply_status_by). */
void api__pods_status(struct req *r);
void api__nodes_list(struct req *r);
void api__node_get(struct req *r);
/* timeseries.c: GET /api/v1/timeseries and the Grafana JSON data source routes. */
void api__timeseries(struct req *r);
void api__grafana_test(struct req *r);
void api__grafana_search(struct req *r);
void api__grafana_query(struct req *r);
/* GET /api/v1/nodemap: every node in one compact answer (sched_node_map). */
void api__nodemap(struct req *r);
void api__node_delete(struct req *r);
void api__pods_list(struct req *r);
void api__pod_get(struct req *r);
void api__pod_delete(struct req *r);
void api__podgroups_list(struct req *r);
void api__podgroup_get(struct req *r);
void api__podgroup_delete(struct req *r);
void api__topologies_list(struct req *r);
void api__topology_get(struct req *r);
void api__topology_delete(struct req *r);
void api__topology_tree(struct req *r);
void api__priorityclasses_list(struct req *r);
void api__priorityclass_get(struct req *r);
void api__priorityclass_delete(struct req *r);
void api__queues_list(struct req *r);
void api__queue_get(struct req *r);
void api__queue_delete(struct req *r);
void api__pdbs_list(struct req *r);
void api__pdb_get(struct req *r);
void api__pdb_delete(struct req *r);
void api__audit_export(struct req *r);
/* 1 when r asks only for a short tail of the audit log (tail=N, N <= 100, nothing else):
 * one short read transaction, which the front end may run on its own thread. */
int api__audit_small(struct req *r);
/* GET /api/v1/audit/replay (audit.c): the replay check, sched_replay. */
void api__audit_replay(struct req *r);
void api__audit_verify(struct req *r);
void api__audit_prune(struct req *r);
void api__health(struct req *r);
void api__jobs_list(struct req *r);
void api__job_get(struct req *r);
void api__job_why(struct req *r);
/* state.c: GET /api/v1/state; the why of a job at ?at= or ?seq=: 1 when it answered r,
 * 0 when r asks about now (neither given). */
void api__state_get(struct req *r);
int api__why_at(struct req *r);
/* GET /api/v1/jobstates: {"kind": "JobStateList", "items": [{"name": "Pending"}, ...]}, every
 * state of SCHED_JOB_STATE_MAP in its order (the UI's filter and legend read it). */
void api__job_states(struct req *r);
void api__preemptions_list(struct req *r);
void api__reservations_list(struct req *r);
void api__preemption_get(struct req *r);
void api__cycles_run(struct req *r);
/* Serves GET requests outside /api/ from the UI directory; 404 JSON when absent. */
void api__static(struct req *r);

#endif
