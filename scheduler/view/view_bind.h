/*
 * view_bind.h - a pod's node in the view outside an apply (view_bind.c): the usage of a
 * counted pod, the statements' bind and unbind, the cycle's own edits of a live pod,
 * nominations, and the adoption of orphans by a new node.
 *
 * Every change of where a pod counts goes through sched__view_usage, which moves the node's
 * used vector, the queues' allocation (view_queue.h) and the topology domains' totals
 * (topo.h) together.
 *
 * Calls: view_queue.h, view_wait.h and topo.h.
 */
#ifndef MUSTER_SCHED_VIEW_BIND_H
#define MUSTER_SCHED_VIEW_BIND_H

#include <stdint.h>

#include "view_types.h"

/* Adds (sign 1) or removes (-1) pod p's requests on its node p->node, its queue and the
 * topology domains above the node; a growth is logged for the picks (view.binds). */
void sched__view_usage(struct sched_view *v, struct sv_pod *p, int sign);
/* Bumps view.epoch for a release of pods' usage that the topology domains above their nodes
 * have recorded (sched__view_usage, sched__topo_touch: their versions and dirty log), and
 * nothing else: an unbind, a preemption's victim out of its node's usage or back, a
 * nominated pod bound elsewhere (its reservation gone from the nominated node). The
 * placers' per-shape caches, which need usage only to grow within an epoch, are gone; the
 * gather's offer caches and index read the domains' versions instead (place_gather.c,
 * place_index.c). */
void sched__view_epoch_usage(struct sched_view *v);
/* What the gather's offer caches and index are keyed by: view.epoch without the bumps of
 * sched__view_epoch_usage. It grows with every other change of what a node offers (its
 * properties, nominations, reservations, priority classes, a pod put or deleted). */
static inline uint64_t sched__view_offer_epoch(const struct sched_view *v)
{
    return v->epoch - v->usage_bumps;
}
/* Statement primitives: account a pending pod on a node and back. */
void sched__view_bind(struct sched_view *v, int pod, int node);
void sched__view_unbind(struct sched_view *v, int pod);
/* A live pod's fields the cycle itself changes, the view's counts kept in step:
 * terminating sets m.deletion_ms to ms (> 0), counting the pod in ndeleting unless it
 * already was; phase replaces m.phase (copied, NULL for none), and a bound pod that becomes
 * terminal stops counting on its node and queue (or counts again), as a put would have it. */
void sched__view_pod_terminating(struct sched_view *v, int pod, int64_t ms);
void sched__view_pod_phase(struct sched_view *v, int pod, const char *phase);
/* Adds pod to node's reservations (the pod had no nomination; m.nominated_node is the
 * caller's). */
void sched__view_nominate_add(struct sched_view *v, int pod, int node);
/* Drops a pod's nomination (reservation) if any. */
void sched__view_nominate_clear(struct sched_view *v, int pod);
/* Nominates pod to node (-1 clears): the node's reservations and the pod's
 * status.nominatedNodeName as the view holds it. */
void sched__view_set_nominated(struct sched_view *v, int pod, int node);
/* A new node adopts bound pods and nominations that named it before it existed. */
void sched__view_adopt(struct sched_view *v, int node);

#endif
