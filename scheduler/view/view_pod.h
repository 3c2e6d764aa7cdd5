/*
 * view_pod.h - what changes a pod in the view outside an apply: the statements' bind and
 * unbind (view_pod.c), the cycle's own edits of a live pod, nominations. Part of the view
 * (view.h includes it).
 */
#ifndef MUSTER_SCHED_VIEW_POD_H
#define MUSTER_SCHED_VIEW_POD_H

#include <jansson.h>
#include <stdint.h>

#include "model.h"
#include "scheduler.h"

struct sched_view;
struct sv_job;

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

#endif
