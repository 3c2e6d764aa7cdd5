/*
 * kbest.h - keeping the best k of n candidates, in order, without sorting all n: the
 * gather placer's first SCHED_GATHER_TRIES candidates (place_cands.c) and the why's best
 * domains of a layer (place_nodeset.c, place_index.c). One insertion each: O(n k) at worst,
 * O(n) when most candidates are worse than the last kept one, as on a large cluster.
 *
 * Calling sequence (best holds max elements of size bytes; cmp < 0: its first argument
 * goes first):
 *
 *     size_t kept = 0;
 *     for (each candidate x)
 *         sched__kbest_offer(best, &kept, max, sizeof(*best), &x, cmp);
 *     best[0..kept) are the first min(n, max) candidates of a stable sort by cmp, in order
 *
 * A candidate equal to a kept one by cmp goes after it; with a total order (no two equal)
 * the result is exactly the sort's first max.
 */
#ifndef MUSTER_SCHED_KBEST_H
#define MUSTER_SCHED_KBEST_H

#include <stddef.h>
#include <string.h>

/* Offers x (copied) to best[0..*kept): keeps it in its place when fewer than max are kept
 * or it goes before the last kept one (which then drops out). Returns 1 when x was kept,
 * 0 when not. static inline so that a cmp and size known to the caller are compiled in. */
static inline int sched__kbest_offer(void *best, size_t *kept, size_t max, size_t size,
                                     const void *x, int (*cmp)(const void *, const void *))
{
    char *b = best;
    if (*kept >= max && (max == 0 || cmp(x, b + (max - 1) * size) >= 0))
        return 0;
    size_t at = *kept < max ? (*kept)++ : max - 1;
    for (; at > 0 && cmp(x, b + (at - 1) * size) < 0; at--)
        memcpy(b + at * size, b + (at - 1) * size, size);
    memcpy(b + at * size, x, size);
    return 1;
}

#endif
