/*
 * sched_objs.h - objects the scheduler suites apply at time 1000 (namespace "default"), and
 * the check they end with.
 *
 *     sched_objs_node(&u, "n1", "pool-a", 4, 0);    a node of 4 cpus, no GPU, label pool
 *     sched_objs_pod(&u, "p", "g", 0, 2);           priority 0, 2 cpus, in PodGroup g (or NULL)
 *     sched_objs_assert_consistent(&u);             live view == the store's, invariants hold
 */
#ifndef MUSTER_TEST_SCHED_OBJS_H
#define MUSTER_TEST_SCHED_OBJS_H

#include <jansson.h>
#include <stddef.h>

#include "sched_util.h"

void sched_objs_node(struct sched_util *u, const char *name, const char *pool, int cpu, int gpu);
void sched_objs_pod(struct sched_util *u, const char *name, const char *group, int prio, int cpu);
/* That pod's JSON text, into buf[n], to apply at another time or look at the answer. */
void sched_objs_pod_json(char *buf, size_t n, const char *name, const char *group, int prio,
                         int cpu);
/* A node of cpu cpus held whole by a bound pod of priority 1000: the cluster's capacity
 * counts it (no ExceedsClusterCapacity), yet nothing lower can use or preempt it. */
void sched_objs_busy_node(struct sched_util *u, const char *name, int cpu);
/* A PodGroup of minMember min. */
void sched_objs_pg(struct sched_util *u, const char *name, int min);
/* The live view equals one rebuilt from the store, and the store's invariants hold;
 * exempt (borrowed, may be NULL): gangs the case's own input leaves partly bound. */
void sched_objs_assert_consistent_ex(struct sched_util *u, json_t *exempt);
void sched_objs_assert_consistent(struct sched_util *u);
/* why's primary reason code (borrowed), or NULL. */
const char *sched_objs_primary(json_t *why);

#endif
