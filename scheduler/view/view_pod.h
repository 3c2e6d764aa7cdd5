/*
 * view_pod.h - what changes a pod in the view outside an apply: the statements' bind and
 * unbind (view_pod.c), the cycle's own edits of a live pod, nominations; and a job's state
 * (view_state.c). Part of the view (view.h includes it).
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

/* ---- job states (view_state.c) ---- */

/* The job's state (scheduler.h's table). */
enum sched_job_state sched__job_state(const struct sched_view *v, const struct sv_job *j);
/* 1 when the job is a preemption victim (state Preempted): a pod of it terminates
 * because of a preemption, or it is a recorded victim (sched__view_victim) with no
 * pending pods and fewer than minMember pods bound or nominated. The cycle tries such
 * a job only for its pending pods (never for MembersMissing). */
int sched__job_preempted(const struct sched_view *v, const struct sv_job *j);
/* The job an object belongs to ("ns/group" or "ns/pod"); NULL for nodes. New. */
char *sched__object_job(enum model_kind kind, json_t *obj);

#endif
