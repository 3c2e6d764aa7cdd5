/*
 * test_view_strmap.c - the view's string map (view_strmap.c) against a reference: random
 * puts, gets, deletes and reserves over keys that differ only in their last characters (as
 * pod and job keys do), then every key's value, the count, and one visit of each entry by
 * sched__strmap_next, in maps that copy their keys and in maps that borrow them (each entry
 * then the very key put last, never a copy); and the view's key joins against snprintf.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "view.h"

#define NKEYS 3000

struct ref {
    char key[64];
    int val; /* -1: absent */
};

static int cmp_ref(const void *a, const void *b)
{
    return strcmp(((const struct ref *)a)->key, ((const struct ref *)b)->key);
}

static void make_keys(struct ref *r)
{
    for (int i = 0; i < NKEYS; i++) {
        if (i % 3 == 0)
            snprintf(r[i].key, sizeof(r[i].key), "bench/pod-%06d", i);
        else if (i % 3 == 1)
            snprintf(r[i].key, sizeof(r[i].key), "p:ns%d/job-%d", i % 7, i);
        else /* short keys, and the empty one */
            snprintf(r[i].key, sizeof(r[i].key), "%.*s", i % 5, "abcdefgh" + i % 4);
        r[i].val = -1;
    }
    /* the short ones repeat: keep only the first of each */
    for (int i = 0; i < NKEYS; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(r[i].key, r[j].key)) {
                snprintf(r[i].key, sizeof(r[i].key), "dup/%d", i);
                break;
            }
    qsort(r, NKEYS, sizeof(*r), cmp_ref); /* check_all looks keys up */
}

static void check_all(const struct sched_strmap *m, const struct ref *r)
{
    size_t live = 0;
    for (int i = 0; i < NKEYS; i++) {
        ck_assert_msg(sched__strmap_get(m, r[i].key) == r[i].val, "key '%s': %d, want %d", r[i].key,
                      sched__strmap_get(m, r[i].key), r[i].val);
        live += r[i].val >= 0;
    }
    ck_assert_uint_eq(m->count, live);
    size_t seen = 0;
    for (size_t i = sched__strmap_next(m, 0); i < m->cap; i = sched__strmap_next(m, i + 1)) {
        struct ref want = {0}, *f;
        snprintf(want.key, sizeof(want.key), "%s", m->keys[i]);
        f = bsearch(&want, r, NKEYS, sizeof(*r), cmp_ref);
        int found = f && f->val == m->vals[i];
        ck_assert_msg(found, "visited '%s' = %d, not in the reference", m->keys[i], m->vals[i]);
        if (m->borrowed) /* the reference's own key, not a copy */
            ck_assert_ptr_eq(m->keys[i], f->key);
        else
            ck_assert_ptr_ne(m->keys[i], f->key);
        seen++;
    }
    ck_assert_uint_eq(seen, live);
    ck_assert(m->cap == 0 || m->used * 2 <= m->cap); /* at most half full */
}

START_TEST(test_strmap_random_against_reference)
{
    static struct ref r[NKEYS];
    make_keys(r);
    for (unsigned seed = 1; seed <= 8; seed++) {
        struct sched_strmap m;
        if (seed <= 4)
            sched__strmap_init(&m);
        else /* the keys are r's, which outlive m */
            sched__strmap_init_borrowed(&m);
        srand(seed);
        for (int i = 0; i < NKEYS; i++)
            r[i].val = -1;
        check_all(&m, r); /* empty: every get misses */
        for (int step = 0; step < 40000; step++) {
            int k = rand() % NKEYS, op = rand() % 100;
            if (op < 55) {
                r[k].val = rand() % 100000;
                if (op % 2) /* the hash given, as a lookup then put does */
                    sched__strmap_put_h(&m, r[k].key, sched__strmap_hash(r[k].key), r[k].val);
                else
                    sched__strmap_put(&m, r[k].key, r[k].val);
            } else if (op < 90) {
                r[k].val = -1;
                sched__strmap_del(&m, r[k].key);
            } else if (op < 91) {
                sched__strmap_reserve(&m, m.count + (size_t)(rand() % 5000));
            } else {
                ck_assert_int_eq(sched__strmap_get(&m, r[k].key), r[k].val);
                uint32_t h = sched__strmap_hash(r[k].key);
                ck_assert_int_eq(sched__strmap_get_h(&m, r[k].key, h), r[k].val);
            }
            if (step % 5000 == 0)
                check_all(&m, r);
        }
        check_all(&m, r);
        sched__strmap_free(&m);
    }
}
END_TEST

/* A map reserved up front takes its entries without growing: a restart sizes the pod and
 * job maps from the store's counts. */
START_TEST(test_strmap_reserve_holds)
{
    struct sched_strmap m;
    sched__strmap_init(&m);
    sched__strmap_reserve(&m, 10000);
    size_t cap = m.cap;
    char key[32];
    for (int i = 0; i < 10000; i++) {
        snprintf(key, sizeof(key), "bench/pod-%06d", i);
        sched__strmap_put(&m, key, i);
    }
    ck_assert_uint_eq(m.cap, cap);
    for (int i = 0; i < 10000; i++) {
        snprintf(key, sizeof(key), "bench/pod-%06d", i);
        ck_assert_int_eq(sched__strmap_get(&m, key), i);
    }
    sched__strmap_reserve(&m, 10); /* never shrinks */
    ck_assert_uint_eq(m.cap, cap);
    ck_assert_uint_eq(m.count, 10000);
    sched__strmap_free(&m);
}
END_TEST

/* A borrowing map keeps the pointer put last for a key: an update by a new owner (a pod
 * replaced) is not left pointing at the old owner's string. Freeing the map frees no key
 * (the sanitizers' run would see a double free: the owners free theirs). */
START_TEST(test_strmap_borrowed_owner)
{
    struct sched_strmap m;
    sched__strmap_init_borrowed(&m);
    char *a = strdup("bench/pod-1"), *b = strdup("bench/pod-1");
    sched__strmap_put(&m, a, 1);
    sched__strmap_put(&m, b, 2);
    free(a);
    size_t i = sched__strmap_next(&m, 0);
    ck_assert_uint_lt(i, m.cap);
    ck_assert_ptr_eq(m.keys[i], b);
    ck_assert_int_eq(sched__strmap_get(&m, "bench/pod-1"), 2);
    ck_assert_uint_eq(m.count, 1);
    sched__strmap_del(&m, "bench/pod-1");
    ck_assert_int_eq(sched__strmap_get(&m, "bench/pod-1"), -1);
    sched__strmap_put(&m, b, 3);
    sched__strmap_free(&m);
    ck_assert(m.borrowed); /* still borrowing if used again */
    free(b);
}
END_TEST

/* The key joins cut and terminate exactly as snprintf("%s<sep>%s") does. */
START_TEST(test_str_join_as_snprintf)
{
    const char *parts[] = {"", "a", "bench", "pod-000123", "a-much-longer-namespace-name"};
    size_t np = sizeof(parts) / sizeof(parts[0]);
    for (size_t i = 0; i < np; i++)
        for (size_t j = 0; j < np; j++) {
            char want[64], got[64];
            snprintf(want, sizeof(want), "%s/%s", parts[i], parts[j]);
            char *whole = sched__str_join(parts[i], '/', parts[j]);
            ck_assert_str_eq(whole, want);
            free(whole);
            for (size_t n = 1; n <= sizeof(got); n++) {
                memset(got, 'x', sizeof(got));
                snprintf(want, n, "%s/%s", parts[i], parts[j]);
                sched__str_join_to(got, n, parts[i], '/', parts[j]);
                ck_assert_msg(!strcmp(got, want), "n %zu: '%s', want '%s'", n, got, want);
            }
        }
}
END_TEST

static Suite *view_strmap_suite(void)
{
    Suite *s = suite_create("view_strmap");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_strmap_random_against_reference);
    tcase_add_test(tc, test_strmap_reserve_holds);
    tcase_add_test(tc, test_strmap_borrowed_owner);
    tcase_add_test(tc, test_str_join_as_snprintf);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(view_strmap_suite());
}
