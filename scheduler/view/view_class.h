/*
 * view_class.h - the PriorityClasses in the view and the priority of pods and jobs
 * (view_class.c), and the preemption victims the ledger keeps, with the priority each had.
 *
 * The class set (struct sv_classes, view_part_types.h) is also kept outside the view: an
 * apply stages a copy (sched_apply.c), so its functions take the set, not the view.
 *
 * Calls: view_base.h, view_shape.h (a pod's shape holds its priority) and view_wait.h (a
 * changed class or victim record wakes jobs).
 */
#ifndef MUSTER_SCHED_VIEW_CLASS_H
#define MUSTER_SCHED_VIEW_CLASS_H

#include <stdint.h>

#include "view_types.h"

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

/* A PriorityClass changed: the pods of every job whose PodGroup names it take its value.
 * put takes ownership of pc (even on failure). */
void sched__view_put_class(struct sched_view *v, struct model_priorityclass *pc);
void sched__view_del_class(struct sched_view *v, const char *name);

/* Recomputes prio and never (and the shape) of the pods of job ji: its PodGroup's class,
 * else each pod's own spec.priority / spec.preemptionPolicy. */
void sched__view_prio_sync(struct sched_view *v, int ji);
/* The job's priority: its PodGroup's class value when the PodGroup names an existing
 * class, else the highest priority of its pods; without pods, the priority it had when
 * it was preempted (a retained victim), else 0. */
int32_t sched__job_priority(const struct sched_view *v, const struct sv_job *j);
/* The class a job's PodGroup names (the job's priority), NULL when it names none or the
 * class does not exist (sched__job_class_missing says which). Borrowed. */
const struct model_priorityclass *sched__job_class(const struct sched_view *v,
                                                   const struct sv_job *j);
/* 1 when the job's PodGroup names a class that does not exist. */
int sched__job_class_missing(const struct sched_view *v, const struct sv_job *j);

/* Preemption victims: a job the ledger keeps a record of, with the priority it had when it
 * was preempted (put replaces it). victim returns 1 and *prio for such a job, else 0. */
void sched__view_victim_put(struct sched_view *v, const char *id, int32_t prio);
void sched__view_victim_del(struct sched_view *v, const char *id);
int sched__view_victim(const struct sched_view *v, const char *id, int32_t *prio);

#endif
