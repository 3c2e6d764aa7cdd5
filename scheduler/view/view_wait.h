/*
 * view_wait.h - waiting jobs: which jobs a cycle attempts again, and when (view_wait.c);
 * the events that wake them, and the jobs the next cycle looks at (the todo).
 *
 * Calls: view_base.h (a pod pending). The put/del functions of every part raise events.
 */
#ifndef MUSTER_SCHED_VIEW_WAIT_H
#define MUSTER_SCHED_VIEW_WAIT_H

#include <jansson.h>
#include <stdint.h>

#include "view_types.h"

/* A job whose attempt left it unplaced is parked: it is not attempted again until an event
 * of a kind it waits on happens, its own PodGroup or pods change, or its backoff runs out
 * (SV_WAIT_BACKOFF_MIN_MS doubling up to SV_WAIT_BACKOFF_MAX_MS; a gang with an open
 * timeout window also at the window's end). The kinds of events (SV_EVENT_MAP) and a job's
 * waiting state (struct sv_wait) are in view_part_types.h. */
#define SV_WAIT_BACKOFF_MIN_MS 1000
#define SV_WAIT_BACKOFF_MAX_MS 60000

/* An event of kind e happened: every job parked on e is due at the next cycle. */
void sched__wait_event(struct sched_view *v, enum sv_event e);
/* Room was freed or added on node ni (a pod gone, a nomination dropped, the node put): the
 * jobs parked on capacity whose pending pods' shapes pass ni's static filters are due (every
 * capacity waiter when ni < 0: a node that is unknown or gone). Logged; the cycle maps the
 * log onto shapes (sched__wait_sync) before it looks for due jobs. */
void sched__wait_freed(struct sched_view *v, int ni);
/* Marks each shape that passes the static filters of a node in the log (fit, place.h) with
 * the clock of that entry, and empties the log. */
typedef int (*sv_static_fit)(const struct sv_node *n, const struct sv_shape *sh);
void sched__wait_sync(struct sched_view *v, sv_static_fit fit);
/* Pod p, terminating on its node (a victim in its grace period: counted, with a deletion
 * time), is gone or finished there: the jobs nominated to that node, which waited for it
 * (PreemptionWaiting, cycle_attempt.c), are due at once, since with nothing terminating
 * there any more their own placer runs wherever there is room, not only on that node. */
void sched__wait_victim_gone(struct sched_view *v, const struct sv_pod *p);
/* Job ji's own PodGroup or pods changed: it is due at the next cycle (its backoff stays),
 * and in the cycle's todo. */
void sched__wait_wake(struct sched_view *v, int ji);
/* Puts job ji into the jobs the next cycle looks at (v->todo), once: its pods or
 * nominations changed, a pod of it was unbound, its victim record came or went. */
void sched__view_todo(struct sched_view *v, int ji);
/* 1 when job j is to be attempted at now_ms: not parked, woken, or its retry time came. */
int sched__wait_due(const struct sched_view *v, const struct sv_job *j, int64_t now_ms);
/* Parks job ji after an attempt that left it unplaced at now_ms, waiting on the kinds in
 * on (sched__wait_kinds) and backing off (doubled from the last backoff). */
void sched__wait_park(struct sched_view *v, int ji, unsigned on, int64_t now_ms);
/* Job ji was placed whole: not parked, backoff reset. */
void sched__wait_clear(struct sched_view *v, int ji);
/* The kinds job ji waits on: capacity, queue, topology and priority always; placement
 * when a pod of it has affinity or spread rules; podGroup when it is in a GangGroup;
 * podDisruptionBudget when preempted says its attempt tried preemption. */
unsigned sched__wait_kinds(const struct sched_view *v, int ji, int preempted);
/* {"retriedOn": [kind names..., "job"], "nextRetry": RFC 3339, "backoffSeconds"} of a
 * parked job that no event woke yet (new; a nextRetry in the past means the next cycle);
 * NULL otherwise. */
json_t *sched__wait_json(const struct sched_view *v, const struct sv_job *j);

#endif
