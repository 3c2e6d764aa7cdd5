/*
 * place_index.h - the gather placer's candidates from an index of the domains that hold a
 * gang, kept up to date as nodes fill and free (place_index.c teaches how). The index
 * (struct sched_gidx) hangs off the topology tree (sched_topo.gidx), which frees it with
 * the destructor this file hands it.
 *
 * Calls: place_gather.h (offer slots, holds, the domain score, the state), kbest.h and
 * view/.
 */
#ifndef MUSTER_SCHED_PLACE_INDEX_H
#define MUSTER_SCHED_PLACE_INDEX_H

#include "place_gather.h"

/* The candidates from the index of holding domains: fills g->cands and g->ncands as
 * sched__gather_candidates (place_cands.h) and returns 1, or returns 0 when the index
 * does not apply (hold: nodes that hold the gang alone; podCountMultiple; mixed shapes; a
 * nomination in the cluster). */
int sched__gather_indexed(struct gather *g, long hold);
/* The why's layer statistics from the index, when the candidates came from it and at least
 * max domains of depth hold the gang: *ndoms domains at depth, *hold of them hold it, and
 * the max with the most offer slots in best[0..max), in sched__gather_slot_cmp's order.
 * Returns 1, or 0 when the caller must scan. */
int sched__gather_index_best(const struct gather *g, int depth, size_t max,
                             struct gather_slot *best, size_t *ndoms, size_t *hold);
/* Times the index was brought up to date without a rebuild (tests). */
uint64_t sched__gather_index_updates(const struct sched_topo *t);

#endif
