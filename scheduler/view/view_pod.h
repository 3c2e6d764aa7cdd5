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

/* Takes ownership of the decoded pod (even on failure). Replaces the pod of that name. */
void sched__view_put_pod(struct sched_view *v, struct model_pod *p);
void sched__view_del_pod(struct sched_view *v, const char *key);
/* A hint before sched__view_put_pod(v, p) (p borrowed): fetches the slots of the view's
 * maps that putting p will look up (its name, its job, its node), so that a bulk load
 * (view_load.c) overlaps their memory latency with the pods put before it. Changes
 * nothing. */
void sched__view_pod_ahead(const struct sched_view *v, const struct model_pod *p);

#endif
