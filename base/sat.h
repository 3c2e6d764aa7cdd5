/*
 * sat.h - saturating int64 arithmetic for sums of resource quantities.
 *
 * Quantities are exact int64 (model_quantity.h). One node's or pod's claim is bounded at
 * decoding (MODEL_QUANTITY_MAX), but a sum over many nodes (the cluster's capacity, a
 * topology domain's) could still pass INT64_MAX, and signed overflow is undefined
 * behaviour: two nodes of 7Ei once made the cluster's memory negative. Sums over an
 * unbounded number of terms use these instead of +: a sum that would pass a limit stays at
 * it, which every comparison in the scheduler reads as "more than anything asks".
 */
#ifndef MUSTER_SAT_H
#define MUSTER_SAT_H

#include <stdint.h>

/* a + b, or INT64_MAX / INT64_MIN when it would overflow. */
static inline int64_t sat_add_i64(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return b > 0 ? INT64_MAX : INT64_MIN;
    return r;
}

/* a - b, or INT64_MAX / INT64_MIN when it would overflow. */
static inline int64_t sat_sub_i64(int64_t a, int64_t b)
{
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return b < 0 ? INT64_MAX : INT64_MIN;
    return r;
}

#endif
