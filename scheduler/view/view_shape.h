/*
 * view_shape.h - pod shapes (view_shape.c): the part of a pod that decides where it fits on
 * its own (requests, node selector, tolerations, priority, node affinity), shared by the
 * pods that have it, with the placement caches kept per shape (struct sv_shape,
 * view_types.h).
 *
 * A shape lives as long as the view: pods come and go, their shapes stay (the caches are
 * valid by epoch). Calls only the string map.
 */
#ifndef MUSTER_SCHED_VIEW_SHAPE_H
#define MUSTER_SCHED_VIEW_SHAPE_H

#include "view_types.h"

/* The index of pod p's shape (from its prio, req and spec), made when no pod had it. */
int sched__view_shape_of(struct sched_view *v, struct sv_pod *p);
void sched__view_shapes_free(struct sched_view *v);

#endif
