/*
 * place_cands.h - topology gather's candidates: the domains (and single nodes) that hold
 * the job, the first SCHED_GATHER_TRIES in try order (place_cands.c).
 *
 * Calls: place_index.h (the candidates of a stream of like gangs), place_gather.h (offer
 * slots, holds, scores), place_fit.h (a node's score), kbest.h and view/.
 */
#ifndef MUSTER_SCHED_PLACE_CANDS_H
#define MUSTER_SCHED_PLACE_CANDS_H

#include "place_gather.h"

/* Fills g->cands with the first SCHED_GATHER_TRIES candidates in try order (DESIGN.md
 * section 3, steps 2-3; fewer when there are fewer) and g->ncands with how many there are
 * in all; allocates g->cands when NULL. */
void sched__gather_candidates(struct gather *g);
/* The try order of candidates (<0: a first): deeper, fewer offer slots, the parent's and
 * the grandparent's fewer, higher score, name. */
int sched__gather_cand_cmp(const struct gather_cand *a, const struct gather_cand *b);

#endif
