/*
 * view_queue.h - the view's queues (view_queue.c), PriorityClasses (view_class.c) and
 * PodDisruptionBudgets (view_pdb.c). Part of the view (view.h includes it).
 */
#ifndef MUSTER_SCHED_VIEW_QUEUE_H
#define MUSTER_SCHED_VIEW_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "view_types.h"

/* ---- PriorityClasses (view_class.c; struct sv_classes in view_part_types.h) ---- */
/* The class of this name: stored, else built-in, else NULL. Borrowed, valid until the
 * classes change. */
const struct model_priorityclass *sched__class_find(const struct sv_classes *cs, const char *name);
/* The globalDefault class (the lowest value when several are, as Kubernetes picks), or
 * NULL. Borrowed, as for sched__class_find. */
const struct model_priorityclass *sched__class_default(const struct sv_classes *cs);
/* Replace by name; takes ownership of pc (even on failure). */
void sched__class_put(struct sv_classes *cs, struct model_priorityclass *pc);
void sched__class_del(struct sv_classes *cs, const char *name);
/* A deep copy into out (empty before), for an apply that stages classes. */
void sched__classes_copy(struct sv_classes *out, const struct sv_classes *cs);
void sched__classes_free(struct sv_classes *cs);

/* ---- queues (view_queue.c) ---- */
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
/* ---- PodDisruptionBudgets (view_pdb.c) ---- */
/* Replace by key (takes ownership of b, even on failure); del by key "ns/name". */
void sched__view_put_pdb(struct sched_view *v, struct model_pdb *b);
void sched__view_del_pdb(struct sched_view *v, const char *key);
/* The live budget slots of namespace ns (borrowed until the next budget change), NULL with
 * *n = 0 when it has none. */
const int *sched__view_pdbs_in(const struct sched_view *v, const char *ns, size_t *n);
void sched__view_pdbs_free(struct sched_view *v);
/* The name of the queue a job asks for: its PodGroup's spec.queue, else the queue-name
 * annotation of its first pod that has one, else MODEL_QUEUE_DEFAULT. Borrowed, valid
 * until the job's PodGroup or pods change. */
const char *sched__job_queue_name(const struct sched_view *v, const struct sv_job *j);

/* ---- the priority of jobs (view_class.c) ---- */

/* The job's priority: its PodGroup's class value when the PodGroup names an existing
 * class, else the highest priority of its pods; without pods, the priority it had when
 * it was preempted (a retained victim), else 0. */
int32_t sched__job_priority(const struct sched_view *v, const struct sv_job *j);
/* The class a job's PodGroup names (the job's priority), NULL when it names none or the
 * class does not exist (sched__job_class_missing says which). Borrowed. */
const struct model_priorityclass *sched__job_class(const struct sched_view *v,
                                                   const struct sv_job *j);
/* Preemption victims (view_class.c): a job the ledger keeps a record of, with the
 * priority it had when it was preempted (put replaces it). victim returns 1 and *prio
 * for such a job, else 0. */
void sched__view_victim_put(struct sched_view *v, const char *id, int32_t prio);
void sched__view_victim_del(struct sched_view *v, const char *id);
int sched__view_victim(const struct sched_view *v, const char *id, int32_t *prio);
/* 1 when the job's PodGroup names a class that does not exist. */
int sched__job_class_missing(const struct sched_view *v, const struct sv_job *j);

#endif
