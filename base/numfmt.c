/*
 * numfmt.c - a double as printf's "%.17g" writes it, without printf where that is exact.
 *
 * The store's JSON writer writes reals as jansson does, "%.17g"; glibc's printf converts
 * through multi-precision arithmetic and was a few percent of a cycle that writes a queue
 * share per placed job (bench/README.md, "Session 14"). Here the 17 significant digits are
 * the double's integer mantissa times 5^k, shifted by its exponent: the exact product in
 * 128-bit integers, rounded once, ties to even as printf does. Magnitudes outside 1e-10 ..
 * 1e15 (and compilers without 128-bit integers) go to snprintf. tests/test_numfmt.c
 * compares both on a million values.
 */
#include "numfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(__SIZEOF_INT128__)
/* 5^k for k = 0..27 (5^27 < 2^63) */
static const uint64_t pow5[] = {
    1ULL,
    5ULL,
    25ULL,
    125ULL,
    625ULL,
    3125ULL,
    15625ULL,
    78125ULL,
    390625ULL,
    1953125ULL,
    9765625ULL,
    48828125ULL,
    244140625ULL,
    1220703125ULL,
    6103515625ULL,
    30517578125ULL,
    152587890625ULL,
    762939453125ULL,
    3814697265625ULL,
    19073486328125ULL,
    95367431640625ULL,
    476837158203125ULL,
    2384185791015625ULL,
    11920928955078125ULL,
    59604644775390625ULL,
    298023223876953125ULL,
    1490116119384765625ULL,
    7450580596923828125ULL,
};

#define E16 10000000000000000ULL
#define E17 100000000000000000ULL

/* a * 10^k rounded to an integer, ties to even as printf rounds: a = m * 2^e exactly, so
 * the product is m * 5^k * 2^(e + k), exact in 128 bits. UINT64_MAX when too large. */
static uint64_t scaled(uint64_t m, int e, int k)
{
    unsigned __int128 p = (unsigned __int128)m * pow5[k];
    int s = -(e + k);
    if (s <= 0)
        return -s < 8 && p < ((unsigned __int128)1 << (64 + s)) ? (uint64_t)(p << -s) : UINT64_MAX;
    if (s >= 120)
        return 0;
    unsigned __int128 q = p >> s, r = p - (q << s), half = (unsigned __int128)1 << (s - 1);
    if (r > half || (r == half && (q & 1)))
        q++;
    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

/* The 17 digits of a rounded (D in [1e16, 1e17)) and the decimal exponent of the first;
 * 0 outside the powers of ten the table covers. Exact: no rounding but the last. */
static int digits17(double a, uint64_t *d, int *x10)
{
    int e2;
    uint64_t m = (uint64_t)ldexp(frexp(a, &e2), 53); /* a = m * 2^(e2 - 53), exactly */
    int e = e2 - 53;
    int k = 16 - (int)floor((e2 - 1) * 0.30102999566398120); /* at most one too large */
    for (int tries = 0; tries < 3; tries++) {
        if (k < 0 || k > 27)
            return 0;
        uint64_t q = scaled(m, e, k);
        if (q > E17) {
            k--;
        } else if (q < E16) {
            k++;
        } else {
            *d = q == E17 ? E16 : q; /* rounded up to the next power of ten */
            *x10 = 16 - k + (q == E17);
            return 1;
        }
    }
    return 0;
}
#endif

size_t numfmt_g17(char *buf, double v)
{
#if defined(__SIZEOF_INT128__)
    double a = fabs(v);
    uint64_t n;
    int x;
    if (a >= 1e-10 && a < 1e15 && digits17(a, &n, &x) && x <= 16) { /* 17 digits hold x + 1 */
        char dg[17];
        for (int i = 16; i >= 0; i--, n /= 10)
            dg[i] = (char)('0' + n % 10);
        int nd = 17; /* %g drops trailing zeros, and the point when nothing follows it */
        while (nd > 1 && dg[nd - 1] == '0')
            nd--;
        char *p = buf;
        if (v < 0)
            *p++ = '-';
        if (x < -4) { /* d.ddde-XX */
            *p++ = dg[0];
            if (nd > 1) {
                *p++ = '.';
                memcpy(p, dg + 1, (size_t)nd - 1);
                p += nd - 1;
            }
            *p++ = 'e';
            *p++ = '-';
            p = numfmt_pad(p, (unsigned)-x, 2); /* x >= -10 */
        } else if (x < 0) {                     /* 0.000ddd */
            *p++ = '0';
            *p++ = '.';
            for (int i = -1; i > x; i--)
                *p++ = '0';
            memcpy(p, dg, (size_t)nd);
            p += nd;
        } else { /* ddd[.ddd], x < 15 */
            memcpy(p, dg, (size_t)x + 1);
            p += x + 1;
            if (nd > x + 1) {
                *p++ = '.';
                memcpy(p, dg + x + 1, (size_t)(nd - x - 1));
                p += nd - x - 1;
            }
        }
        *p = '\0';
        return (size_t)(p - buf);
    }
#endif
    int len = snprintf(buf, NUMFMT_G17_LEN, "%.17g", v);
    return len > 0 ? (size_t)len : 0;
}
