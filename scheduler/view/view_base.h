/*
 * view_base.h - the view's slots and lookups (view_base.c): the free lists of slots, the
 * interned resources, nodes in name order, pods and jobs by name, a job's slot, and the
 * small facts of a pod or a job (pending, creation time, minMember) that every part asks.
 *
 * The lowest part of the view: it calls only the string map (strmap.h), and every other
 * file of view/ may call it. Interning a resource grows every vector sized by the resource
 * count, the nodes' and the queues'.
 */
#ifndef MUSTER_SCHED_VIEW_BASE_H
#define MUSTER_SCHED_VIEW_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "view_types.h"

/* A free slot of f, -1 when none; push gives slot i back. */
int sched__slot_pop(struct sv_free *f);
void sched__slot_push(struct sv_free *f, int i);

/* The index of resource name, interned when new (every [rescap] vector grows with it). */
int sched__view_res(struct sched_view *v, const char *name);

/* Node and pod index by name ("ns/name" for a pod), -1 when unknown. */
int sched__view_node(const struct sched_view *v, const char *name);
int sched__view_pod(const struct sched_view *v, const char *key);
/* Live node indexes in name order (borrowed until the next node change); v->node_rank is
 * valid with it. */
const int *sched__view_node_order(struct sched_view *v, size_t *n);
/* 1 when the pod is pending (model_pod_is_pending). */
int sched__pod_pending(const struct sv_pod *p);

/* Job by id: the PodGroup job first, then the lone-pod job. -1 when unknown. */
int sched__view_job(const struct sched_view *v, const char *id);
int sched__view_gang_job(const struct sched_view *v, const char *id);
/* The key of job id in v->job_ix ("g:<id>" for a gang, "p:<id>" for a lone pod), cut to
 * 512 bytes. */
void sched__view_job_key(char buf[512], const char *id, int gang);
/* Get or create the job of this id; gang selects the PodGroup namespace of ids. */
int sched__view_job_get(struct sched_view *v, const char *id, int gang);
/* sched__view_job_get by the job's key (new, taken: the job's when it is made, else freed)
 * and its hash (sched__strmap_hash). */
int sched__view_job_take(struct sched_view *v, char *key, uint32_t h);
/* Frees the job slot when it has neither PodGroup nor pods. */
void sched__view_job_maybe_free(struct sched_view *v, int ji);
/* Releases what job j holds and zeroes it (the slot's part of a free). */
void sched__job_clear(struct sv_job *j);
/* The job's creation time: its PodGroup's, else its oldest pod's; 0 without either. */
int64_t sched__job_creation(const struct sched_view *v, const struct sv_job *j);
/* Needed pods of a job: minMember for a gang with a PodGroup, else 1. */
int sched__job_min(const struct sv_job *j);

#endif
