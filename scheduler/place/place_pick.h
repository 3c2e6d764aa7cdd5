/*
 * place_pick.h - which node a pod goes to: the best node by score among those that fit,
 * the binpack placer's and preemption's one pick (place_pick.c). Keeps each shape's
 * candidate list (sv_shape.cand) for a view epoch.
 *
 * Calls: place_fit.h (fit, preferences, score), place_heap.h (the fast path),
 * place_rules.h (pod affinity, anti-affinity, topology spread) and view/.
 */
#ifndef MUSTER_SCHED_PLACE_PICK_H
#define MUSTER_SCHED_PLACE_PICK_H

#include "view.h"

/* The best node for pod pi now, or -1. Rebuilds the shape's candidates when the view's
 * epoch moved; prepares the pod's rules (one prepared sched_rules per view at a time: the
 * caller holds none). */
int sched__pick_node(struct sched_view *v, int pi);
/* The same among the nodes ni with allowed[ni] set ([v->nnodes]; NULL: every node), always
 * by the scan (the shape's heap knows no node set). */
int sched__pick_node_in(struct sched_view *v, int pi, const char *allowed);

#endif
