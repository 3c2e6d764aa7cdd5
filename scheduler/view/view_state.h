/*
 * view_state.h - a job's state (scheduler.h's SCHED_JOB_STATE_MAP) from the view
 * (view_state.c): one rule for the API, the why documents, the queues and the metrics.
 *
 * Calls: view_base.h and view_class.h (a recorded victim).
 */
#ifndef MUSTER_SCHED_VIEW_STATE_H
#define MUSTER_SCHED_VIEW_STATE_H

#include <jansson.h>

#include "model.h"
#include "scheduler.h"
#include "view_types.h"

/* The job's state (scheduler.h's table). */
enum sched_job_state sched__job_state(const struct sched_view *v, const struct sv_job *j);
/* The result (SV_RESULT_*) of the attempt that left a job in state st, as its why document
 * records it: what a view rebuilt from the store gives back to its waiting jobs. */
int sched__result_of_state(enum sched_job_state st);
/* 1 when the job is a preemption victim (state Preempted): a pod of it terminates
 * because of a preemption, or it is a recorded victim (sched__view_victim) with no
 * pending pods and fewer than minMember pods bound or nominated. The cycle tries such
 * a job only for its pending pods (never for MembersMissing). */
int sched__job_preempted(const struct sched_view *v, const struct sv_job *j);
/* The job an object belongs to ("ns/group" or "ns/pod"); NULL for nodes. New. */
char *sched__object_job(enum model_kind kind, json_t *obj);

#endif
