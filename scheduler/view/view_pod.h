/*
 * view_pod.h - pods put into and deleted from the view by name (view_pod.c): a pod's slot,
 * its requests, job, priority and shape, its place in the label index, where it counts,
 * and the events its change raises.
 *
 * Calls: view_base.h, view_bind.h, view_class.h, view_labels.h, view_queue.h,
 * view_shape.h and view_wait.h.
 */
#ifndef MUSTER_SCHED_VIEW_POD_H
#define MUSTER_SCHED_VIEW_POD_H

#include "model.h"
#include "view_types.h"

/* What putting a pod looks up in the view's maps, made from the pod alone: so any thread
 * can make it beforehand (a restart's decoding threads, an apply's thread ahead) and the
 * one that puts the pods does not hash or join a name. */
struct sv_pod_keys {
    char *key;                     /* "ns/name", new: the pod's own once put */
    char *job;                     /* its job's key in the job map (sched__view_job_key), new */
    uint32_t key_h, job_h, node_h; /* their hashes; node_h its node's, 0 when it has none */
};
void sched__pod_keys(const struct model_pod *p, struct sv_pod_keys *k);
void sched__pod_keys_release(struct sv_pod_keys *k);

/* Takes ownership of the decoded pod (even on failure). Replaces the pod of that name. */
void sched__view_put_pod(struct sched_view *v, struct model_pod *p);
/* The same with p's keys made already (sched__pod_keys of p; taken too). */
void sched__view_put_pod_keyed(struct sched_view *v, struct model_pod *p, struct sv_pod_keys *k);
void sched__view_del_pod(struct sched_view *v, const char *key);
/* A hint before putting the pod of keys k (borrowed): fetches the slots of the view's maps
 * that putting it will look up (its name, its job, its node), so that a bulk load
 * (view_load.c, staged.c) overlaps their memory latency with the pods put before it.
 * Changes nothing. */
void sched__view_pod_ahead(const struct sched_view *v, const struct sv_pod_keys *k);

#endif
