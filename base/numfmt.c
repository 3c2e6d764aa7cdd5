/*
 * numfmt.c - a double as printf's "%.17g" writes it, without printf where that is exact.
 *
 * The store's JSON writer writes reals as jansson does, "%.17g"; glibc's printf converts
 * through multi-precision arithmetic and was a few percent of a cycle that writes a queue
 * share per placed job (bench/README.md, "Session 14"). Here the 17 significant digits are
 * the double times an exact power of ten in x87's 64-bit-mantissa long double: one
 * rounding, off by under 0.004 of a unit in the last digit, so the digits are exact unless
 * the product lies that near a half. Those cases, and every magnitude outside 1e-10 ..
 * 1e15, go to snprintf. tests/test_numfmt.c compares both on millions of values.
 */
#include "numfmt.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if LDBL_MANT_DIG >= 64
/* 10^k for k = 0..27, each exact in a 64-bit mantissa (5^27 < 2^63) */
static const long double pow10_tab[] = {
    1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
    1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
    1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L,
};

/* The 17 digits of |v| rounded (D in [1e16, 1e17)) and the decimal exponent of the first,
 * or 0 when they cannot be proved here. */
static int digits17(double a, uint64_t *d, int *x10)
{
    int e2;
    frexp(a, &e2);                                      /* a in [2^(e2-1), 2^e2) */
    int x = (int)floor((e2 - 1) * 0.30102999566398120); /* <= floor(log10(a)) <= x + 1 */
    int k = 16 - x;
    if (k < 1 || k > 27)
        return 0;
    long double p = (long double)a * pow10_tab[k];
    if (p >= 1e17L) {
        k--;
        p = (long double)a * pow10_tab[k];
    }
    uint64_t n = (uint64_t)p; /* p < 2^57: its floor */
    long double frac = p - (long double)n;
    if (frac > 0.48L && frac < 0.52L) /* too near a half to round here */
        return 0;
    n += frac > 0.5L;
    if (n == 100000000000000000ULL) { /* rounded up to the next power of ten */
        n /= 10;
        k--;
    }
    if (n < 10000000000000000ULL || n >= 100000000000000000ULL)
        return 0;
    *d = n;
    *x10 = 16 - k;
    return 1;
}
#endif

size_t numfmt_g17(char *buf, double v)
{
#if LDBL_MANT_DIG >= 64
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
