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

#endif
