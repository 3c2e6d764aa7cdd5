/* test_numfmt.c - base/numfmt.h against snprintf: the edges (0, 1, -1, powers of ten,
 * INT64_MIN, INT64_MAX, UINT64_MAX), seeded random values of every length, fixed widths,
 * and that nothing is written outside the digits; numfmt_g17 against "%.17g" on edges,
 * ratios, a million random doubles of every magnitude and values near a half. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "numfmt.h"

#define GUARD 'x'

/* Every byte of buf[0..n) outside [from, to) is still GUARD, and [from, to) is inside buf.
 * Checked in plain C and reported once: Check's asserts are slow enough per call that one a
 * byte made the random case take seconds. */
static int guarded(const char *buf, size_t n, const char *from, const char *to)
{
    if (from < buf || to > buf + n || from > to)
        return 0;
    for (const char *q = buf; q < buf + n; q++)
        if ((q < from || q >= to) && *q != GUARD)
            return 0;
    return 1;
}

/* The digits [p, end) a formatter wrote into buf, against snprintf's text want: the same
 * text, and nothing touched before it or after the end. */
static void assert_wrote(const char *buf, size_t n, const char *p, const char *end,
                         const char *want)
{
    if ((size_t)(end - p) != strlen(want) || memcmp(p, want, strlen(want)) ||
        !guarded(buf, n, p, end))
        ck_abort_msg("%s: got '%.*s'", want, (int)(end - p), p);
}

/* numfmt_u64(u), and numfmt_i64 of the same bits, each in the middle of a guarded buffer. */
static void assert_both(uint64_t u)
{
    char want[32], buf[NUMFMT_INT64_LEN + 8], *end = buf + 4 + NUMFMT_INT64_LEN;
    snprintf(want, sizeof(want), "%" PRIu64, u);
    memset(buf, GUARD, sizeof(buf));
    assert_wrote(buf, sizeof(buf), numfmt_u64(end, u), end, want);
    snprintf(want, sizeof(want), "%" PRId64, (int64_t)u);
    memset(buf, GUARD, sizeof(buf));
    assert_wrote(buf, sizeof(buf), numfmt_i64(end, (int64_t)u), end, want);
}

/* numfmt_pad(u, width): exactly width characters, as "%0*" with the leading digits cut. */
static void assert_pad(unsigned u, int width, const char *want)
{
    char buf[32];
    memset(buf, GUARD, sizeof(buf));
    char *q = numfmt_pad(buf + 2, u, width);
    ck_assert_ptr_eq(q, buf + 2 + width);
    ck_assert_msg(!memcmp(buf + 2, want, strlen(want)) && strlen(want) == (size_t)width,
                  "%u in %d: got '%.*s', want '%s'", u, width, width, buf + 2, want);
    ck_assert(guarded(buf, sizeof(buf), buf + 2, q));
}

START_TEST(test_numfmt_edges)
{
    static const int64_t s[] = {0,         1,         -1,        9,          10,
                                -10,       99,        100,       -99,        INT32_MAX,
                                INT32_MIN, INT64_MAX, INT64_MIN, -INT64_MAX, INT64_MIN + 1};
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
        assert_both((uint64_t)s[i]);
    assert_both(UINT64_MAX - 1);
    /* every power of ten and its neighbours: each digit count, both signs */
    uint64_t p = 1;
    for (int k = 0; k <= 19; k++, p *= 10) {
        assert_both(p - 1);
        assert_both(p);
        assert_both(p + 1);
        assert_both(0 - p);
        assert_both(1 - p);
    }
    /* the longest texts fill NUMFMT_INT64_LEN exactly */
    char buf[NUMFMT_INT64_LEN];
    ck_assert_ptr_eq(numfmt_i64(buf + sizeof(buf), INT64_MIN), buf);
    ck_assert_ptr_eq(numfmt_u64(buf + sizeof(buf), UINT64_MAX), buf);
}
END_TEST

START_TEST(test_numfmt_random)
{
    unsigned seed = 16;
    for (int i = 0; i < 200000; i++) {
        uint64_t r = ((uint64_t)rand_r(&seed) << 42) ^ ((uint64_t)rand_r(&seed) << 21) ^
                     (uint64_t)rand_r(&seed) ^ ((uint64_t)rand_r(&seed) << 62);
        r >>= rand_r(&seed) % 64; /* every length, not only 19-20 digits */
        assert_both(r);
        assert_both(0 - r);
    }
}
END_TEST

START_TEST(test_numfmt_pad_widths)
{
    assert_pad(0, 1, "0");
    assert_pad(0, 2, "00");
    assert_pad(7, 2, "07");
    assert_pad(59, 2, "59");
    assert_pad(0, 3, "000");
    assert_pad(9, 3, "009");
    assert_pad(45, 3, "045");
    assert_pad(999, 3, "999");
    assert_pad(2026, 4, "2026");
    assert_pad(123, 2, "23"); /* more digits than width: the last width kept */
    assert_pad(UINT32_MAX, 10, "4294967295");
    assert_pad(UINT32_MAX, 12, "004294967295");
    assert_pad(1, 20, "00000000000000000001");
    char buf[4] = {GUARD, GUARD, GUARD, GUARD};
    ck_assert_ptr_eq(numfmt_pad(buf + 1, 5, 0), buf + 1); /* width 0 writes nothing */
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(buf[i], GUARD);
}
END_TEST

/* numfmt_g17(v) against snprintf's "%.17g"; counted in plain C, reported once (as above). */
static int g17_differs(double v)
{
    char want[NUMFMT_G17_LEN], got[NUMFMT_G17_LEN + 8];
    int n = snprintf(want, sizeof(want), "%.17g", v);
    memset(got, GUARD, sizeof(got));
    size_t len = numfmt_g17(got, v);
    if (len == (size_t)n && !memcmp(got, want, len + 1) &&
        guarded(got, sizeof(got), got, got + len + 1))
        return 0;
    fprintf(stderr, "%%.17g of %a: want %s, got %.*s\n", v, want, (int)len, got);
    return 1;
}

START_TEST(test_numfmt_g17)
{
    int bad = 0;
    static const double edge[] = {0.0,
                                  -0.0,
                                  1.0,
                                  -1.0,
                                  0.5,
                                  0.1,
                                  0.2,
                                  0.3,
                                  1e-10,
                                  1e-11,
                                  1e-5,
                                  1e-4,
                                  9.5e-5,
                                  1e14,
                                  1e15,
                                  1e16,
                                  0.125,
                                  2.5,
                                  1.5e-7,
                                  3.141592653589793,
                                  999999999999999.9,
                                  99999999999999.99,
                                  5e-324,
                                  1e300,
                                  -2.2250738585072014e-308};
    for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
        bad += g17_differs(edge[i]) + g17_differs(-edge[i]) + g17_differs(1.0 / 0.0 * edge[i]);
    /* exact ties in the 17th digit (a 15-digit integer and eighths: 18 digits ending in
     * 5): printf rounds them to even */
    for (int i = 1; i < 8; i += 2)
        for (double w = 123456789012345.0; w < 123456789012360.0; w += 1.0)
            bad += g17_differs(w + i / 8.0) + g17_differs(-(w + i / 8.0));
    /* each power of ten and its neighbours, a few ulps either side */
    for (int k = -12; k <= 16; k++) {
        double p = pow(10, k), q = p;
        for (int u = 0; u < 4; u++, q = nextafter(q, 0), p = nextafter(p, INFINITY))
            bad += g17_differs(p) + g17_differs(q) + g17_differs(-q);
    }
    /* shares as the cycle writes them: small ratios */
    for (int i = 1; i < 400; i++)
        for (int j = i; j < 400; j++)
            bad += g17_differs((double)i / j) + g17_differs((double)i / j / 1000);
    /* random bits over every magnitude the fast path takes, and past it either side */
    unsigned seed = 17;
    for (int i = 0; i < 1000000; i++) {
        uint64_t m = ((uint64_t)rand_r(&seed) << 31) ^ (uint64_t)rand_r(&seed);
        double v = ldexp((double)(m & ((1ULL << 53) - 1)) + 0x1p53, rand_r(&seed) % 120 - 110);
        bad += g17_differs(rand_r(&seed) & 1 ? -v : v);
    }
    /* decimal fractions near a half in the 17th digit (the fallback's cases) */
    for (int i = 0; i < 100000; i++) {
        double v = (rand_r(&seed) % 100000000 + 0.5) / pow(10, rand_r(&seed) % 12 + 4);
        bad += g17_differs(v);
    }
    ck_assert_int_eq(bad, 0);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_numfmt_edges, test_numfmt_random, test_numfmt_pad_widths,
                            test_numfmt_g17, NULL};
    return check_run(check_suite("numfmt", NULL, NULL, tests));
}
