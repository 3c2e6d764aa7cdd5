/* test_numfmt.c - base/numfmt.h against snprintf: the edges (0, 1, -1, powers of ten,
 * INT64_MIN, INT64_MAX, UINT64_MAX), seeded random values of every length, fixed widths,
 * and that nothing is written outside the digits. */
#include <check.h>
#include <inttypes.h>
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

int main(void)
{
    const TTest *tests[] = {test_numfmt_edges, test_numfmt_random, test_numfmt_pad_widths, NULL};
    return check_run(check_suite("numfmt", NULL, NULL, tests));
}
