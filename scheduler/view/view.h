/*
 * view.h - the cluster view: what the scheduler decides on.
 *
 * The view (struct sched_view) mirrors what the store holds: nodes with
 * allocatable / requested vectors (resource names interned to small indexes),
 * pods with sparse request vectors, jobs (a PodGroup, or a lone pod), pod shapes
 * (the part of a pod that decides where it fits), the topology object and the
 * PriorityClasses (name -> value and preemption policy). Slots are
 * reused after deletion; every lookup by name goes through an open-addressing string
 * map (view_strmap.c).
 *
 * Files: view.c (nodes, jobs, resources, the topology object), view_pod.c (pods,
 * shapes, nominations, the bind/unbind primitives of statements), view_class.c (the
 * PriorityClasses and the priority of pods and jobs), view_load.c (rebuild from the
 * store, the deterministic dump), view_state.c (job states), cyc.c (the cycle's undo log,
 * cyc.h). The parts have headers of their own, which this one includes: strmap.h,
 * view_labels.h, view_queue.h (queues, classes, budgets), view_wait.h; topo.h is the
 * topology tree.
 *
 * Calls: store/, model/, base/ and reason/ only: nothing above it (the topology tree's
 * gather index is place/'s, and place/ hands the tree its destructor).
 *
 * Rules: the view is changed only by sched_apply.c and sched_delete.c (after the commit),
 * by the cycle's statements (with an undo log, see cyc.h) and by a rebuild.
 * view.epoch grows whenever capacity may have been freed or node properties changed,
 * which invalidates the per-shape caches of the placement code (place.h).
 */
#ifndef MUSTER_SCHED_VIEW_H
#define MUSTER_SCHED_VIEW_H

#include <jansson.h>
#include <stdint.h>

#include "alloc.h"
#include "err.h"
#include "model.h"
#include "scheduler.h"
#include "store.h"
#include "strmap.h"
#include "view_bind.h"
#include "view_class.h"
#include "view_labels.h"
#include "view_pdb.h"
#include "view_pod.h"
#include "view_queue.h"
#include "view_shape.h"
#include "view_state.h"
#include "view_base.h"
#include "view_types.h"
#include "view_wait.h"

/* ---- view ---- */

struct sched_view *sched__view_new(void);
void sched__view_free(struct sched_view *v);
/* Reads every object in one read transaction. */
int sched__view_load(struct sched_view *v, MDB_txn *txn, struct err *err);

/* Take ownership of the decoded struct (even on failure). Replace by name. */
void sched__view_put_node(struct sched_view *v, struct model_node *n);
void sched__view_del_node(struct sched_view *v, const char *name);
void sched__view_put_pg(struct sched_view *v, struct model_podgroup *g);
void sched__view_del_pg(struct sched_view *v, const char *key);
void sched__view_put_topo(struct sched_view *v, struct model_topology *t);
void sched__view_del_topo(struct sched_view *v);

/* Deterministic JSON of the whole view (for tests: rebuilt == live). New. */
json_t *sched__view_dump(struct sched_view *v);
#endif
