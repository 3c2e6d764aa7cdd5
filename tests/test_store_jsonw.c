/* test_store_jsonw.c - the store's JSON writer (store/jsonw.c) writes what jansson's
 * json_dumpb writes with JSON_COMPACT, and with JSON_COMPACT | JSON_SORT_KEYS, byte for
 * byte: hand-picked values and seeded random trees. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../store/internal.h"
#include "check_run.h"
#include "store_util.h"
#include "json_random.h"

static char *dir;
static struct store *st;

static void assert_as_jansson(json_t *v, size_t flags)
{
    char *want = json_dumps(v, flags | JSON_ENCODE_ANY);
    ck_assert_ptr_nonnull(want);
    size_t n = store__dump(&st->scratch, v, flags, 3); /* after 3 bytes the caller keeps */
    ck_assert_msg(n == strlen(want) && memcmp(st->scratch.buf + 3, want, n) == 0,
                  "got %.*s\nwant %s", (int)n, st->scratch.buf + 3, want);
    char *text = store_json_text(v, flags & JSON_SORT_KEYS);
    ck_assert_str_eq(text, want);
    free(text);
    free(want);
}

static void assert_both(json_t *v)
{
    assert_as_jansson(v, JSON_COMPACT);
    assert_as_jansson(v, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(v);
}

START_TEST(test_store_jsonw_values)
{
    char ctl[40];
    for (int i = 1; i < 32; i++)
        ctl[i - 1] = (char)i;
    strcpy(ctl + 31, "\"\\/\x7f");
    assert_both(json_string(ctl));
    assert_both(json_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 a/b"));
    assert_both(json_stringn("nul\0inside", 10));
    assert_both(json_string(""));
    json_int_t ints[] = {0, 1, -1, 42, INT64_MAX, INT64_MIN, 1000000007};
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
        assert_both(json_integer(ints[i]));
    double reals[] = {0.0,
                      -0.0,
                      1.0,
                      -1.5,
                      0.1,
                      600.0,
                      0.0078125,
                      1e300,
                      1e-300,
                      5e-324,
                      1.5e10,
                      1e17,
                      1e16,
                      123456789012345678.0,
                      3.141592653589793,
                      1e-5,
                      2.5e-7};
    for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
        assert_both(json_real(reals[i]));
    /* whole numbers, written without printf below 10^15 (jsonw.c put_real) */
    double whole[] = {999999999999999.0,  -999999999999999.0, 1e15, -1e15, 1e14, -7.0, 123.0,
                      4503599627370496.0, 9007199254740993.0};
    for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
        assert_both(json_real(whole[i]));
    unsigned wseed = 7;
    for (int i = 0; i < 20000; i++) {
        double w = (double)(rand_r(&wseed) % 2000001 - 1000000);
        for (int k = rand_r(&wseed) % 10; k > 0; k--)
            w *= 10;
        assert_both(json_real(w));
    }
    assert_both(json_true());
    assert_both(json_false());
    assert_both(json_null());
    assert_both(json_object());
    assert_both(json_array());
    assert_both(json_pack("{s:i,s:i,s:i,s:i,s:i,s:[{},[],{s:n}]}", "b", 1, "ab", 2, "a", 3, "B", 4,
                          "\xc3\xa9", 5, "z", "y"));
}
END_TEST

/* Strings and keys of every length up to 24 with one byte to escape (or one just past
 * the escaped range) at every position: the writer tests 8 bytes at a time first. */
START_TEST(test_store_jsonw_escape_positions)
{
    static const unsigned char odd[] = {'"',  '\\', '\n', 0x01, 0x1f, 0x20,
                                        0x21, 0x5b, 0x5d, 0x7f, 0xc3};
    for (size_t len = 1; len <= 24; len++)
        for (size_t at = 0; at < len; at++)
            for (size_t k = 0; k < sizeof(odd); k++) {
                char s[32];
                memset(s, 'a', len);
                s[len] = '\0';
                s[at] = (char)odd[k];
                if (odd[k] == 0xc3 && at + 1 == len)
                    continue;
                if (odd[k] == 0xc3) /* a two-byte UTF-8 character, not escaped */
                    s[at + 1] = (char)0xa9;
                assert_both(json_string(s));
                json_t *o = json_pack("{s:i,s:i}", "x", 0, s, 1);
                char *want = json_dumps(o, JSON_COMPACT);
                struct store_jw w = STORE_JW_INIT;
                store_jw_lit(&w, "{");
                store_jw_key(&w, "x"); /* after the brace: no comma */
                store_jw_int(&w, 0);
                store_jw_key(&w, s); /* after a member: a comma */
                store_jw_int(&w, 1);
                store_jw_lit(&w, "}");
                ck_assert_msg(w.len == strlen(want) && !memcmp(w.buf, want, w.len),
                              "key %zu at %zu: got %.*s, want %s", k, at, (int)w.len, w.buf, want);
                store_jw_release(&w);
                free(want);
                json_decref(o);
            }
}
END_TEST

START_TEST(test_store_jsonw_random_trees)
{
    unsigned seed = 20261123;
    for (int i = 0; i < 3000; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "root", json_random_tree(&seed, 0));
        assert_both(o);
    }
}
END_TEST

/* An audit chain written with the store's writer verifies with jansson's (audit_verify.c
 * recomputes every hash from json_dumpb). */
START_TEST(test_store_jsonw_audit_verifies)
{
    unsigned seed = 7;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    for (int i = 0; i < 200; i++) {
        json_t *rec =
            json_pack("{s:s,s:o}", "kind", "applied", "object", json_random_tree(&seed, 0));
        ck_assert_int_eq(store_audit_append(txn, rec, NULL, NULL), 0);
        json_decref(rec);
    }
    store_util_commit(&txn);
    struct store_audit_verdict v;
    txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_audit_verify(txn, 0, 0, &v, NULL), 0);
    store_txn_abort(&txn);
    ck_assert_msg(v.ok, "%s", v.reason);
    ck_assert_uint_eq(v.checked, 200);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_store_jsonw_values, test_store_jsonw_escape_positions,
                            test_store_jsonw_random_trees, test_store_jsonw_audit_verifies, NULL};
    return check_run(store_util_suite("store_jsonw", &dir, &st, tests));
}
