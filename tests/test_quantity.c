/*
 * test_quantity.c - Kubernetes quantity parsing and formatting.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "model.h"
#include "check_run.h"

struct valid_case {
    const char *in;
    int64_t whole; /* milli == 0 */
    int64_t milli; /* milli != 0, -1: overflows */
};

static const struct valid_case valid[] = {
    {"0", 0, 0},
    {"1", 1, 1000},
    {"100m", 1, 100},
    {"1.5", 2, 1500},
    {"0.5", 1, 500},
    {".5", 1, 500},
    {"5.", 5, 5000},
    {"+1", 1, 1000},
    {"-0", 0, 0},
    {"2Ki", 2048, 2048000},
    {"2Mi", 2097152, 2097152000},
    {"2Gi", 2147483648LL, 2147483648000LL},
    {"2Ti", 2199023255552LL, 2199023255552000LL},
    {"2Pi", 2251799813685248LL, 2251799813685248000LL},
    {"2Ei", 2305843009213693952LL, -1},
    {"7Ei", 8070450532247928832LL, -1},
    {"2k", 2000, 2000000},
    {"2M", 2000000, 2000000000},
    {"2G", 2000000000, 2000000000000LL},
    {"2T", 2000000000000LL, 2000000000000000LL},
    {"2P", 2000000000000000LL, 2000000000000000000LL},
    {"2E", 2000000000000000000LL, -1},
    {"500n", 1, 1},
    {"1000000000n", 1, 1000},
    {"5u", 1, 1},
    {"1500u", 1, 2},
    {"1e3", 1000, 1000000},
    {"1E-2", 1, 10},
    {"1.5e3", 1500, 1500000},
    {"1e-30", 1, 1},
    {"1.5Gi", 1610612736LL, 1610612736000LL},
    {"0.1Gi", 107374183LL, 107374182400LL},
    {"0.001", 1, 1},
    {"0.0001", 1, 1},
    {"1500M", 1500000000LL, 1500000000000LL},
    {"12345678901234567890n", 12345678902LL, 12345678901235LL},
    {"9223372036854775807", INT64_MAX, -1},
    {"000012", 12, 12000},
    {"0.000000000000000000000000000000000000000000000000000000000000000001Ei", 1, 1},
};

static const char *const invalid[] = {
    "12x",
    "",
    "1.2.3",
    "Ki",
    "1 Gi",
    "0x10",
    "1e",
    "--1",
    "-1",
    "-100m",
    "-1Gi",
    "m",
    ".",
    "1..2",
    "1Gi ",
    " 1",
    "1ki",
    "1KI",
    "1e+",
    "1e1.5",
    "abc",
    "1mi",
    "+-1",
    "1E+",
    "1Gb",
    "e3",
    "1 ",
    "1,5",
    "1_000",
    "∞",
    "9223372036854775808",
    "8Ei",
    "1e19",
    "10E",
    "100000000000000000000",
    "1e100000000000",
};

START_TEST(test_quantity_valid_table)
{
    const struct valid_case *c = &valid[_i];
    struct err err = ERR_INIT;
    int64_t v = -7;
    ck_assert_msg(model_quantity_parse(c->in, 0, &v, &err) == 0, "'%s': %s", c->in, err.msg);
    ck_assert_msg(v == c->whole, "'%s' whole: got %lld want %lld", c->in, (long long)v,
                  (long long)c->whole);
    int rc = model_quantity_parse(c->in, 1, &v, &err);
    if (c->milli < 0) {
        ck_assert_msg(rc == ERR_INVALID, "'%s' milli should overflow", c->in);
        ck_assert_msg(strstr(err.msg, "too large") != NULL, "'%s': %s", c->in, err.msg);
    } else {
        ck_assert_msg(rc == 0, "'%s' milli: %s", c->in, err.msg);
        ck_assert_msg(v == c->milli, "'%s' milli: got %lld want %lld", c->in, (long long)v,
                      (long long)c->milli);
    }
}
END_TEST

START_TEST(test_quantity_invalid_table)
{
    const char *in = invalid[_i];
    struct err err = ERR_INIT;
    int64_t v = 42;
    ck_assert_msg(model_quantity_parse(in, 0, &v, &err) == ERR_INVALID, "'%s' accepted", in);
    ck_assert_int_eq(v, 42);
    ck_assert_msg(strstr(err.msg, in) != NULL, "message '%s' does not name '%s'", err.msg, in);
}
END_TEST

START_TEST(test_quantity_messages)
{
    struct err err = ERR_INIT;
    int64_t v;
    model_quantity_parse("12x", 1, &v, &err);
    ck_assert_str_eq(err.msg, "invalid quantity '12x'");
    model_quantity_parse("-1", 0, &v, &err);
    ck_assert_str_eq(err.msg, "quantity '-1' must not be negative");
    model_quantity_parse("8Ei", 0, &v, &err);
    ck_assert_str_eq(err.msg, "quantity '8Ei' is too large");
    ck_assert_int_eq(model_quantity_parse(NULL, 0, &v, &err), ERR_INVALID);
}
END_TEST

START_TEST(test_quantity_format)
{
    static const struct {
        int64_t v;
        int milli;
        const char *want;
    } cases[] = {
        {100, 1, "100m"}, {4000, 1, "4"},        {1500, 1, "1500m"},    {0, 1, "0"},
        {0, 0, "0"},      {110, 0, "110"},       {4LL << 30, 0, "4Gi"}, {1500000000, 0, "1500M"},
        {2048, 0, "2Ki"}, {3LL << 60, 0, "3Ei"}, {4000, 0, "4k"},       {1000000000000LL, 0, "1T"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        model_quantity_format(cases[i].v, cases[i].milli, buf, sizeof(buf));
        ck_assert_str_eq(buf, cases[i].want);
        int64_t back;
        ck_assert_int_eq(model_quantity_parse(buf, cases[i].milli, &back, NULL), 0);
        ck_assert_int_eq(back, cases[i].v);
    }
}
END_TEST

START_TEST(test_quantity_resource_is_milli)
{
    ck_assert_int_eq(model_resource_is_milli("cpu"), 1);
    ck_assert_int_eq(model_resource_is_milli("memory"), 0);
    ck_assert_int_eq(model_resource_is_milli("nvidia.com/gpu"), 0);
    ck_assert_int_eq(model_resource_is_milli(NULL), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("quantity");
    TCase *tc = tcase_create("quantity");
    tcase_add_loop_test(tc, test_quantity_valid_table, 0, sizeof(valid) / sizeof(valid[0]));
    tcase_add_loop_test(tc, test_quantity_invalid_table, 0, sizeof(invalid) / sizeof(invalid[0]));
    tcase_add_test(tc, test_quantity_messages);
    tcase_add_test(tc, test_quantity_format);
    tcase_add_test(tc, test_quantity_resource_is_milli);
    suite_add_tcase(s, tc);
    return check_run(s);
}
