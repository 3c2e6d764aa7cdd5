/*
 * release.h - the "release" way of running a workload (the Slurm side-by-side of issue
 * #16): every job is applied first with no cycle in between, then cycles run until one
 * places nothing, as Slurm's run released its held jobs at once.
 *
 *     release_run(s, st, &w, 1000, &err);   prints apply time, first cycle, total, quality
 */
#ifndef MUSTER_BENCH_RELEASE_H
#define MUSTER_BENCH_RELEASE_H

#include <stddef.h>

#include "workload.h"

struct err;
struct sched;
struct store;

/* Applies w's jobs through sched_apply in batches of about `batch` pods (no cycles), then
 * runs cycles until one places nothing (at most 100) and prints: the apply time, the first
 * cycle's time and pods, the total over the cycles, and the placement quality of the gangs
 * (how many span one leaf of WORKLOAD_SLURM_LEAF nodes, two, more; against the fewest
 * possible, ceil(size / leaf)), read back from the store. Returns 0 or the first error. */
int release_run(struct sched *s, struct store *st, struct workload *w, size_t batch,
                struct err *err);

/* Applies an array of documents as one manifest through sched_apply. */
int release_apply_docs(struct sched *s, json_t *docs, struct err *err);

#endif
