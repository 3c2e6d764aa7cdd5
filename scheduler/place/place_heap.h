/*
 * place_heap.h - the binpack pick without a scan: a max-heap per pod shape of its
 * candidates by (score, name rank), valid for one view epoch (place_heap.c teaches how it
 * keeps up with usage). The heap lives in the shape (sv_shape.heap), in view memory.
 *
 * Calls: place_fit.h (the static filters, free capacity, the score) and view/.
 */
#ifndef MUSTER_SCHED_PLACE_HEAP_H
#define MUSTER_SCHED_PLACE_HEAP_H

#include "view.h"

/* The binpack pick of pod pi of shape sh, whose candidates (sh->cand, place_pick.c) are
 * current and do not differ in preferences: the candidate with the highest sched__score
 * that fits, the first name on ties, as a scan of sh->cand would choose; -1 (and
 * sh->fail_epoch set) when none fits. */
int sched__pick_heap(struct sched_view *v, struct sv_shape *sh, int pi);

#endif
