/* test_json_read.c - the JSON reader (model/json_read.c) reads what json_loadb(s, n, 0) and
 * json_loadb(s, n, JSON_REJECT_DUPLICATES) read, member order included, or gives up (NULL)
 * where the caller falls back to jansson; the store's store__json_load answers as jansson:
 * hand-picked inputs, seeded random trees as the store writes them (compact, sorted or
 * not, and pretty-printed), and those bytes mutated, where it must never accept what
 * jansson refuses nor read anything differently. */
#include <check.h>
#include <locale.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../model/internal.h" /* model__json_read_split */
#include "../store/internal.h"
#include "alloc.h"
#include "check_run.h"
#include "json_random.h"
#include "store_util.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#endif

/* Same value and the same member order (dumped unsorted: insertion order). */
static void assert_same(json_t *a, json_t *b, const char *in, size_t n)
{
    char *da = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY);
    char *db = json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY);
    ck_assert_msg(json_equal(a, b) && !strcmp(da, db), "input %.*s\nread   %s\njansson %s", (int)n,
                  in, da, db);
    free(da);
    free(db);
}

/* The reader on s[0..n): when it reads something, jansson reads the same; when jansson
 * refuses, so does the reader. Returns 1 when the reader read it. */
static int check_mode(const char *s, size_t n, int dups)
{
    json_error_t e;
    json_t *want = json_loadb(s, n, dups ? JSON_REJECT_DUPLICATES : 0, &e);
    json_t *got = model_json_read(s, n, dups);
    int read = got != NULL;
    if (got) {
        ck_assert_msg(want != NULL, "read what jansson refuses (%s): %.*s", e.text, (int)n, s);
        assert_same(got, want, s, n);
    }
    json_decref(got);
    json_decref(want);
    return read;
}

static int check_bytes(const char *s, size_t n)
{
    json_error_t e;
    int read = check_mode(s, n, 0);
    check_mode(s, n, 1);
    json_t *want = json_loadb(s, n, 0, &e);
    json_t *loaded = store__json_load(s, n, &e); /* the fallback answers as jansson */
    ck_assert_int_eq(loaded != NULL, want != NULL);
    if (loaded)
        assert_same(loaded, want, s, n);
    json_decref(loaded);
    json_error_t e2;
    loaded = model_json_load(s, n, &e2); /* the mirror's list pages and watch events */
    ck_assert_int_eq(loaded != NULL, want != NULL);
    if (loaded)
        assert_same(loaded, want, s, n);
    else
        ck_assert_str_eq(e2.text, e.text);
    json_decref(loaded);
    json_decref(want);
    return read;
}

static int check_str(const char *s)
{
    return check_bytes(s, strlen(s));
}

START_TEST(test_json_read_inputs)
{
    /* read by the reader itself */
    const char *fast[] = {"{}",
                          "[]",
                          " { \"a\" : 1 , \"b\":[true,false,null] }\n",
                          "{\"a\":1,\"a\":2,\"b\":3}",
                          "{\"k\":\"\xc3\xa9\\n\\t\\\"\\\\\\/\"}",
                          "[-0,0,-1,9223372036854775807,-9223372036854775808]",
                          "[1.5,-0.25,1e10,1E-5,2.5e+3,0.1,1e-320]",
                          "{\"\":\"\"}",
                          "{\"x\":{\"y\":{\"z\":[[[]]]}}}",
                          "[\"\x7f\"]"};
    for (size_t i = 0; i < sizeof(fast) / sizeof(fast[0]); i++)
        ck_assert_msg(check_str(fast[i]), "gave up on %s", fast[i]);
    /* left to jansson (read or refused there) */
    const char *slow[] = {"\"top\"",
                          "1",
                          "true",
                          "{\"a\":\"\\u00e9\"}",
                          "{\"a\":\"\\u0000\"}",
                          "[9223372036854775808]",
                          "[-9223372036854775809]",
                          "[1e999]",
                          "[01]",
                          "[1.]",
                          "[.5]",
                          "[-]",
                          "[1e]",
                          "{\"a\":1,}",
                          "[1,]",
                          "{\"a\"}",
                          "[1 2]",
                          "[1]x",
                          "[\"\xff\"]",
                          "{\"\xc3\":1}",
                          "[\"a\tb\"]",
                          "{\"a\":tru}",
                          "[nul]",
                          "",
                          "   ",
                          "[",
                          "{\"a\":[1,2}",
                          "{'a':1}",
                          "[\"\\x\"]",
                          "[+1]",
                          "[1e5.5]",
                          "[Infinity]",
                          "[NaN]",
                          "[-01]"};
    for (size_t i = 0; i < sizeof(slow) / sizeof(slow[0]); i++)
        ck_assert_msg(!check_str(slow[i]), "read %s", slow[i]);
    ck_assert(!check_mode("{\"a\":1,\"b\":{\"a\":2,\"a\":3}}", 25, 1)); /* a repeat */
    ck_assert(check_mode("{\"a\":1,\"b\":{\"a\":2,\"c\":3}}", 25, 1));
    ck_assert(!check_bytes("[1,\0]", 5));
    ck_assert(!check_bytes("{\"a\":\"b\0c\"}", 11));
    /* deeper than the reader goes: jansson's */
    char deep[2 * 300 + 1];
    memset(deep, '[', 300);
    memset(deep + 300, ']', 300);
    deep[600] = '\0';
    ck_assert(!check_str(deep));
}
END_TEST

/* times texts made from the n bytes at text, each with one byte changed, dropped or cut at
 * a random place, handed to check. */
static void mutations(const char *text, size_t n, int times, unsigned *seed,
                      void (*check)(const char *, size_t))
{
    static const char mut[] = "{}[],:\"\\ 0-.eE+x\x01\xff";
    for (int m = 0; m < times && n; m++) {
        char *b = xmalloc(n + 1);
        memcpy(b, text, n + 1);
        size_t at = (size_t)rand_r(seed) % n, len = n;
        int how = rand_r(seed) % 3;
        if (how == 0)
            b[at] = mut[rand_r(seed) % (sizeof(mut) - 1)];
        else if (how == 1)
            memmove(b + at, b + at + 1, n - at), len--;
        else
            len = at;
        check(b, len);
        free(b);
    }
}

static void check_mutated_bytes(const char *s, size_t n)
{
    check_bytes(s, n);
}

START_TEST(test_json_read_random_trees_and_mutations)
{
    unsigned seed = 7341;
    size_t flags[] = {JSON_COMPACT, JSON_COMPACT | JSON_SORT_KEYS, JSON_INDENT(2)};
    int read = 0;
    for (int i = 0; i < 3000; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "root", json_random_tree(&seed, 0));
        char *text = json_dumps(o, flags[i % 3]);
        size_t n = strlen(text);
        read += check_bytes(text, n);
        mutations(text, n, 8, &seed, check_mutated_bytes);
        free(text);
        json_decref(o);
    }
    ck_assert_int_gt(read, 1000); /* the common case is the reader's */
}
END_TEST

/* A locale whose decimal point is a comma, for this thread (uselocale): an installed one,
 * else de_DE built by localedef (the "locales" package's sources) into dir, found through
 * LOCPATH. (locale_t)0 when neither can be had. */
static locale_t comma_locale(const char *dir)
{
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "nl_NL.UTF-8"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        locale_t l = newlocale(LC_ALL_MASK, names[i], (locale_t)0);
        if (l)
            return l;
    }
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' >/dev/null 2>&1", dir);
    if (system(cmd) != 0)
        return (locale_t)0;
    setenv("LOCPATH", dir, 1);
#ifdef __SANITIZE_ADDRESS__
    __lsan_disable(); /* glibc 2.36's newlocale never frees its parse of LOCPATH */
#endif
    locale_t l = newlocale(LC_ALL_MASK, "de_DE.UTF-8", (locale_t)0);
#ifdef __SANITIZE_ADDRESS__
    __lsan_enable();
#endif
    return l;
}

/* The reader's numbers do not depend on LC_NUMERIC: 1.5 is 1.5 where the locale's decimal
 * point is a comma (strtod would stop at the '.' and read 1), as jansson reads it. */
START_TEST(test_json_read_numbers_ignore_the_locale)
{
    char *dir = store_util_tmpdir();
    locale_t l = comma_locale(dir);
    ck_assert_msg(l != (locale_t)0, "no locale with a comma decimal point (install 'locales')");
    locale_t was = uselocale(l);
    ck_assert_str_eq(localeconv()->decimal_point, ",");
    ck_assert_double_eq(strtod("1.5", NULL), 1.0); /* the trap the reader must avoid */
    static const char *const in[] = {"[1.5]", "{\"a\":-2.25e3,\"b\":[0.125,1E-2,7]}",
                                     "{\"cpu\":0.5}"};
    static const double want[] = {1.5, -2250.0, 0.5};
    for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
        json_t *got = model_json_read(in[i], strlen(in[i]), 0);
        ck_assert_msg(got != NULL, "%s: the reader gave up", in[i]);
        json_t *x = json_is_array(got) ? json_array_get(got, 0)
                                       : json_object_get(got, i == 1 ? "a" : "cpu");
        ck_assert_msg(json_is_real(x) && json_real_value(x) == want[i], "%s: read %g", in[i],
                      json_real_value(x));
        json_decref(got);
        check_str(in[i]); /* and the same as jansson, member for member */
    }
    uselocale(was);
    freelocale(l);
    store_util_rmrf(dir);
}
END_TEST

/* The split read of n bytes at s is the whole read's, or NULL; never a value the whole read
 * refuses, and NULL after trying only when the whole read refuses it too (model__json_parse
 * then does not read it again). Returns 1 when it split, and counts in *whole_read (may be
 * NULL) the texts the whole read accepts. */
static int check_split(const char *s, size_t n, int *whole_read)
{
    int tried;
    json_t *whole = model_json_read(s, n, 1), *split = model__json_read_split(s, n, &tried);
    ck_assert_msg(!split || whole, "split read accepts what the whole read refuses: %.*s", (int)n,
                  s);
    ck_assert_msg(split || !tried || !whole,
                  "split read tried and refused what the whole read accepts: %.*s", (int)n, s);
    ck_assert_msg(!split || tried, "split read without trying");
    if (split)
        assert_same(split, whole, s, n);
    if (whole_read)
        *whole_read += whole != NULL;
    json_decref(whole);
    json_decref(split);
    return split != NULL;
}

static void check_mutated_split(const char *s, size_t n)
{
    check_split(s, n, NULL);
}

/* A big array or List is read in two halves on two threads (model/manifest_json.c): the same
 * values in the same order as the whole read, for arrays and Lists of random items dumped
 * compact or indented, with members around "items", and those bytes mutated; and no split
 * where one side of the cut would be empty or the text is not one array or List. */
START_TEST(test_json_read_split_halves)
{
    static const char *const refused[] = {
        "[1]", "[1,2,]", "[,1,2]", "[1,,2]", "[1,2] x", "{\"items\":[1,2],\"items\":[3]}",
        "{\"items\":{}}", "{\"kind\":\"List\",\"items\":[1,2]}x", "\"[1,2]\"", "{\"items\":[1,2]",
        /* no byte between the '[' and the middle
           (fuzz_json_read, session 20) */
        "[", "{\"items\":[", "[ "};
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        int tried;
        json_t *v = model__json_read_split(refused[i], strlen(refused[i]), &tried);
        ck_assert_msg(v == NULL, "%s split", refused[i]);
    }
    /* a NUL after the List: copied to the reader, which refuses it, as the whole read does */
    static const char nul[] = "{\"kind\":\"List\",\"items\":[1,2,3]}\0x";
    int tried;
    ck_assert_ptr_null(model__json_read_split(nul, sizeof(nul) - 1, &tried));
    ck_assert_int_eq(tried, 1); /* refused as the whole read refuses it: not read again */
    ck_assert_ptr_null(model_json_read(nul, sizeof(nul) - 1, 1));
    /* the cut is a guess (a ',' near the middle): here one inside an item's nested array
     * that starts as the first item does, and one inside a string; the half before it then
     * reads past it to the end */
    static const char *const splits[] = {
        "[\"a,]\\\"\",{\"b\":\"],[\"},[1,[2,3]],\"\\\\\"]",
        "{\"a\":\"items\",\"items\" : [1, 2, 3],\"z\":{\"items\":[]}}",
        "[{\"k\":0,\"n\":[{\"k\":1},{\"k\":2},{\"k\":3}]},{\"k\":4}]",
        "[\"x\",\"aaaaaaaaaaaaaaaaaa,bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\"]"};
    for (size_t i = 0; i < sizeof(splits) / sizeof(splits[0]); i++)
        ck_assert_msg(check_split(splits[i], strlen(splits[i]), NULL), "%s not split", splits[i]);

    unsigned seed = 1723;
    size_t flags[] = {JSON_COMPACT, JSON_INDENT(2)};
    int split = 0, whole = 0;
    for (int i = 0; i < 600; i++) {
        json_t *items = json_array();
        for (int k = 2 + rand_r(&seed) % 30; k > 0; k--)
            json_array_append_new(items, json_random_tree(&seed, 1));
        json_t *top = items;
        if (i % 2) { /* a List, its items among other members */
            top = json_pack("{ss ss s{ss}}", "apiVersion", "v1", "kind", "List", "metadata",
                            "resourceVersion", "1");
            json_object_set_new(top, "items", items);
            json_object_set_new(top, "after", json_random_tree(&seed, 2));
        }
        char *text = json_dumps(top, flags[i % 2]);
        size_t n = strlen(text);
        split += check_split(text, n, &whole); /* two items or more: always split */
        mutations(text, n, 6, &seed, check_mutated_split);
        free(text);
        json_decref(top);
    }
    ck_assert_int_eq(split, whole);
    ck_assert_int_gt(split, 150);
}
END_TEST

static Suite *json_read_suite(void)
{
    Suite *s = suite_create("json_read");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_json_read_inputs);
    tcase_add_test(tc, test_json_read_random_trees_and_mutations);
    tcase_add_test(tc, test_json_read_numbers_ignore_the_locale);
    tcase_add_test(tc, test_json_read_split_halves);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(json_read_suite());
}
