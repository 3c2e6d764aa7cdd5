/*
 * view_queue.h - the view's queues (view_queue.c): the tree, which queue each job is in,
 * and each queue's allocation and pending sums (struct sv_queue, view_part_types.h).
 *
 * Calls: view_base.h (resources, a pod pending) and view_wait.h (a changed queue wakes
 * jobs).
 */
#ifndef MUSTER_SCHED_VIEW_QUEUE_H
#define MUSTER_SCHED_VIEW_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "view_types.h"

/* Replace by name (takes ownership of q, even on failure); del restores the built-in for
 * MODEL_QUEUE_DEFAULT. Both re-resolve the tree, every job's queue and the allocation. */
void sched__view_put_queue(struct sched_view *v, struct model_queue *q);
void sched__view_del_queue(struct sched_view *v, const char *name);
/* Queue index by name, -1 when unknown. */
int sched__view_queue(const struct sched_view *v, const char *name);
/* Re-resolves job ji's queue after its PodGroup or pods changed, moving the allocation
 * of its counted pods. */
void sched__view_job_requeue(struct sched_view *v, int ji);
/* Adds (sign 1) or removes (-1) pod p's requests to its job's queue and its ancestors
 * (sched__view_usage calls it). */
void sched__queue_usage(struct sched_view *v, const struct sv_pod *p, int sign);
/* The one rule of the queues' pending sums: a live pod that is not counted and is pending
 * (sched__pod_pending) adds its requests to its job's queue's pend and every ancestor's.
 * pend(-1) takes a pod's part off and pend(1) puts it back; every change of a pod's
 * alive, counted, node_name, deletion_ms, phase or requests (and of its job's queue, which
 * sched__view_job_requeue moves) is made between the two, so each sum stays exact.
 * Queues added, removed or re-parented recount every sum (as alloc). */
int sched__queue_pends(const struct sv_pod *p);
void sched__queue_pend(struct sched_view *v, const struct sv_pod *p, int sign);
void sched__view_queues_free(struct sched_view *v);
/* The built-in default queue, at view creation. */
void sched__view_queues_init(struct sched_view *v);
/* The name of the queue a job asks for: its PodGroup's spec.queue, else the queue-name
 * annotation of its first pod that has one, else MODEL_QUEUE_DEFAULT. Borrowed, valid
 * until the job's PodGroup or pods change. */
const char *sched__job_queue_name(const struct sched_view *v, const struct sv_job *j);

#endif
