/*
 * numfmt.h - numbers in decimal into a caller's buffer, written by hand: the store's JSON
 * writer, the view's shape keys, resourceVersions and timestamps format numbers on every
 * object, and snprintf showed in their profiles. The one place these digits are written
 * (integers here, reals as "%.17g" in numfmt.c).
 *
 * Neither function writes a terminating NUL or checks room: the caller sizes the buffer
 * (NUMFMT_INT64_LEN bytes hold any int64_t or uint64_t) and terminates it if it needs to.
 *
 *     char buf[NUMFMT_INT64_LEN], *end = buf + sizeof(buf);
 *     char *p = numfmt_i64(end, v);               the digits are p .. end, "-" first if v < 0
 *
 *     q = numfmt_pad(q, minutes, 2);              "07": exactly 2 digits at q, q moves past them
 */
#ifndef MUSTER_NUMFMT_H
#define MUSTER_NUMFMT_H

#include <stddef.h>
#include <stdint.h>

/* Bytes any int64_t ("-9223372036854775808") or uint64_t ("18446744073709551615") takes,
 * without a NUL. */
#define NUMFMT_INT64_LEN 20

/* Writes u in decimal so that its last digit is just before end. Returns the first
 * character written (end - 1 at the least: 0 is "0"). */
static inline char *numfmt_u64(char *end, uint64_t u)
{
    do
        *--end = (char)('0' + u % 10);
    while (u /= 10);
    return end;
}

/* The same for v, with a '-' first when v is negative (INT64_MIN included). */
static inline char *numfmt_i64(char *end, int64_t v)
{
    char *p = numfmt_u64(end, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
    if (v < 0)
        *--p = '-';
    return p;
}

/* Writes exactly width digits of u at p, zero-padded on the left ("07", "009"); a u of
 * more than width digits keeps only its last width. Returns p + width. For the small
 * fixed-width fields of timestamps: unsigned, as 64-bit division made them 2% slower. */
static inline char *numfmt_pad(char *p, unsigned u, int width)
{
    for (int i = width - 1; i >= 0; i--, u /= 10)
        p[i] = (char)('0' + u % 10);
    return p + (width > 0 ? width : 0);
}

/* Bytes "%.17g" of any double takes, with its NUL ("-2.2250738585072014e-308"). */
#define NUMFMT_G17_LEN 32

/* Writes v as printf's "%.17g" does, NUL-terminated, into buf (NUMFMT_G17_LEN bytes).
 * Returns its length. Exact (numfmt.c); magnitudes outside 1e-10 .. 1e15 go to snprintf. */
size_t numfmt_g17(char *buf, double v);

#endif
