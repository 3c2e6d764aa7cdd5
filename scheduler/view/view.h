/*
 * view.h - the cluster view: what the scheduler decides on. The one header of view/ for the
 * parts above it (queue/, place/, record/, preempt/, cycle/, the entry points): it includes
 * every part's header but topo.h and cyc.h. Inside view/ each file includes only the
 * headers of the parts below it.
 *
 * The view (struct sched_view, view_types.h) mirrors what the store holds: nodes with
 * allocatable / requested vectors (resource names interned to small indexes),
 * pods with sparse request vectors, jobs (a PodGroup, or a lone pod), pod shapes
 * (the part of a pod that decides where it fits), the topology object and the
 * PriorityClasses (name -> value and preemption policy). Slots are
 * reused after deletion; every lookup by name goes through an open-addressing string
 * map (view_strmap.c).
 *
 * Files, each with its header, lowest first; each calls only files listed before it (in
 * brackets: the ones it calls):
 *   view_strmap   the string map and the key joins (strmap.h)
 *   view_part_types.h, view_types.h   the data, types only (no functions, no .c)
 *   view_base     slots, resources, nodes in name order, pods and jobs by name (strmap)
 *   view_shape    pod shapes (strmap)
 *   view_labels   the pod label, term and node label index (strmap)
 *   view_wait     events, waiting jobs, the todo (base)
 *   topo          the topology tree and its totals; topo_status.c, its detailStatus (base)
 *   view_queue    the queues: the tree, each job's queue, the sums (wait, base)
 *   view_pdb      the PodDisruptionBudgets (wait)
 *   view_class    the PriorityClasses, the priority of pods and jobs, the victims (wait,
 *                 shape, base)
 *   view_state    job states (class, base)
 *   view_resv     reservations, the attempt's gate over them, jobs' time limits (base)
 *   view_bind     a pod's usage, bind and unbind, nominations, adoption (queue, topo, wait)
 *   view_pod      pods put and deleted (bind, class, queue, labels, shape, wait, base)
 *   view          creation and release; nodes, PodGroups and the topology object put and
 *                 deleted (bind, class, queue, pdb, labels, shape, topo, wait, base)
 *   view_load     the rebuild from the store, the dump (view, pod, class, queue, pdb, base)
 *   cyc           the cycle's time and undo log, cyc.h (bind)
 *
 * Calls: store/, model/, base/ and reason/ only: nothing above it (the topology tree's
 * gather index is place/'s, and place/ hands the tree its destructor).
 *
 * Rules: the view is changed only by sched_apply.c and sched_delete.c (once the transaction's
 * pass is over: after the commit, a big apply's beside it, rebuilt when it fails),
 * by the cycle's statements (with an undo log, see cyc.h) and by a rebuild.
 * view.epoch grows whenever capacity may have been freed or node properties changed,
 * which invalidates the per-shape caches of the placement code (place.h); the gather's
 * per-domain caches need only its bumps that the topology domains' versions do not hold
 * (sched__view_offer_epoch, view_bind.h).
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
#include "view_base.h"
#include "view_bind.h"
#include "view_class.h"
#include "view_labels.h"
#include "view_pdb.h"
#include "view_pod.h"
#include "view_queue.h"
#include "view_resv.h"
#include "view_shape.h"
#include "view_state.h"
#include "view_types.h"
#include "view_wait.h"

/* ---- view.c ---- */

/* An empty view (the built-in default queue only), new; free releases it and every part's
 * memory, and accepts NULL. */
struct sched_view *sched__view_new(void);
void sched__view_free(struct sched_view *v);

/* Take ownership of the decoded struct (even on failure). Replace by name. */
void sched__view_put_node(struct sched_view *v, struct model_node *n);
/* Room for pods more pods and jobs more jobs, so that putting them does not grow v's arrays
 * or rehash its maps again and again; that room is made present on a helper thread while
 * they are put (prefault.h): the result, which the caller joins (prefault_join) once they
 * are in, before v's arrays may grow again. */
struct prefault *sched__view_reserve(struct sched_view *v, size_t pods, size_t jobs);
void sched__view_del_node(struct sched_view *v, const char *name);
void sched__view_put_pg(struct sched_view *v, struct model_podgroup *g);
void sched__view_del_pg(struct sched_view *v, const char *key);
void sched__view_put_topo(struct sched_view *v, struct model_topology *t);
void sched__view_del_topo(struct sched_view *v);

/* ---- view_load.c ---- */

/* Reads every object in one read transaction. */
int sched__view_load(struct sched_view *v, MDB_txn *txn, struct err *err);
/* Deterministic JSON of the whole view (for tests: rebuilt == live). New. */
json_t *sched__view_dump(struct sched_view *v);

#endif
