/* test_fmt.c - base/fmt.h against snprintf: each conversion it writes (and those it hands
 * on) with edge values, every buffer size from 0 past the text's length, and the why's own
 * message formats. */
#include <check.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check_run.h"
#include "fmt.h"

/* Both writers into buffers of every size up to the text's length + 2: same result, same
 * bytes, nothing written past n. Evaluates the arguments once per call of each. */
#define ASSERT_SAME(...)                                                                           \
    do {                                                                                           \
        char want[512], got[520];                                                                  \
        int wn = snprintf(want, sizeof(want), __VA_ARGS__);                                        \
        for (size_t n = 0; n <= (size_t)wn + 2 && n < sizeof(want); n++) {                         \
            char ref[512];                                                                         \
            memset(got, 'x', sizeof(got));                                                         \
            int gn = fmt_snprintf(got, n, __VA_ARGS__);                                            \
            snprintf(ref, n ? n : 1, __VA_ARGS__);                                                 \
            ck_assert_int_eq(gn, wn);                                                              \
            ck_assert_msg(!n || !memcmp(got, ref, strlen(ref) + 1), "n %zu: got '%s' want '%s'",   \
                          n, got, ref);                                                            \
            for (size_t k = n; k < sizeof(got); k++)                                               \
                ck_assert_int_eq(got[k], 'x');                                                     \
        }                                                                                          \
    } while (0)

START_TEST(test_fmt_conversions)
{
    ASSERT_SAME("plain text");
    ASSERT_SAME("%s", "");
    ASSERT_SAME("a %s b %s", "x", "yz");
    ASSERT_SAME("100%% of %s", "it");
    ASSERT_SAME("%d %d %d %d", 0, -1, INT_MAX, INT_MIN);
    ASSERT_SAME("%i|%u|%u", -7, 0u, UINT_MAX);
    ASSERT_SAME("%ld %ld %lu", LONG_MIN, LONG_MAX, ULONG_MAX);
    ASSERT_SAME("%lld %llu", LLONG_MIN, ULLONG_MAX);
    ASSERT_SAME("%zu %zu %zd", (size_t)0, SIZE_MAX, (size_t)42);
    ASSERT_SAME("%c%c%s", 'a', 'b', "c");
    /* handed on: flags, widths, precisions, reals */
    ASSERT_SAME("%5d|%-4s|%.2s|%05ld", 42, "ab", "xyz", 7L);
    ASSERT_SAME("%g %.17g", 0.1, 1.0 / 3);
    ASSERT_SAME("%x %lx", 255u, 4096UL);
}
END_TEST

/* Message shapes of scheduler/reason/why_msg.h (the cycle's own). */
START_TEST(test_fmt_messages)
{
    ASSERT_SAME("%s %s: %zu/%zu %s hold %d pod%s", "MustGather", "BlockLayer", (size_t)3,
                (size_t)16, "blocks", 32, "s");
    ASSERT_SAME("; best %s holds %ld%s%s%s", "block-0", 0L, " (", "cpu", ")");
    ASSERT_SAME("pod '%s': %ld/%ld nodes fit%s", "ns/p-0", 0L, 1024L, ": 1024 Insufficient cpu");
    ASSERT_SAME("%d jobs placed earlier in this cycle took nodes pod '%s' would fit on", 20,
                "bench/gang-00014-0000");
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_fmt_conversions, test_fmt_messages, NULL};
    return check_run(check_suite("fmt", NULL, NULL, tests));
}
