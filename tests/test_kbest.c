/* test_kbest.c - sched__kbest_offer (scheduler/kbest.h) against a full stable sort: seeded
 * random candidates with many ties, every k from 0 to past n; what it returns; and that
 * nothing past best[max) is written. The placers' uses are checked against recomputation in
 * test_place.c. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "kbest.h"

struct item {
    int key; /* compared */
    int seq; /* the offer order, not compared: shows where ties went */
};

static int ncmp; /* comparisons, to see that a worse candidate costs one */

static int cmp_key(const void *x, const void *y)
{
    const struct item *a = x, *b = y;
    ncmp++;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* The stable sort's order: key, then offer order. */
static int cmp_stable(const void *x, const void *y)
{
    const struct item *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

START_TEST(test_kbest_equals_stable_sort)
{
    unsigned seed = 8;
    int kept_some = 0, dropped_some = 0;
    for (int round = 0; round < 400; round++) {
        size_t n = (size_t)(rand_r(&seed) % 60), max = (size_t)(rand_r(&seed) % 20);
        int range = 1 + rand_r(&seed) % 30; /* small ranges: many ties */
        struct item *in = calloc(n + 1, sizeof(*in)), *best = calloc(max + 2, sizeof(*best));
        for (size_t i = 0; i < n; i++)
            in[i] = (struct item){rand_r(&seed) % range, (int)i};
        best[max] = best[max + 1] = (struct item){-7, -7}; /* guards */
        size_t kept = 0;
        for (size_t i = 0; i < n; i++) {
            size_t before = kept;
            struct item was_last = kept ? best[kept - 1] : (struct item){0, 0};
            int r = sched__kbest_offer(best, &kept, max, sizeof(*best), &in[i], cmp_key);
            /* kept when there was room, or when it goes before the last kept one */
            int want = before < max || (max > 0 && in[i].key < was_last.key);
            ck_assert_int_eq(r, want);
            kept_some |= r && before == max;
            dropped_some |= !r && max > 0;
        }
        qsort(in, n, sizeof(*in), cmp_stable);
        ck_assert_uint_eq(kept, n < max ? n : max);
        for (size_t i = 0; i < kept; i++)
            ck_assert_msg(best[i].key == in[i].key && best[i].seq == in[i].seq,
                          "round %d (n %zu, k %zu): best[%zu] is %d#%d, the sort's %d#%d", round, n,
                          max, i, best[i].key, best[i].seq, in[i].key, in[i].seq);
        ck_assert_int_eq(best[max].key, -7);
        ck_assert_int_eq(best[max + 1].seq, -7);
        free(in);
        free(best);
    }
    ck_assert(kept_some);    /* a full set was displaced into */
    ck_assert(dropped_some); /* and refused */
}
END_TEST

/* A candidate no better than the last kept one, with max kept, costs one comparison and
 * changes nothing; max 0 keeps nothing and compares nothing. */
START_TEST(test_kbest_worse_costs_one_compare)
{
    struct item best[3] = {{1, 0}, {2, 1}, {3, 2}}, x = {3, 9};
    size_t kept = 3;
    ncmp = 0;
    ck_assert_int_eq(sched__kbest_offer(best, &kept, 3, sizeof(*best), &x, cmp_key), 0);
    ck_assert_int_eq(ncmp, 1);
    ck_assert_uint_eq(kept, 3);
    ck_assert_int_eq(best[2].seq, 2); /* a tie with the last kept one goes after it: out */
    x.key = 0;
    ck_assert_int_eq(sched__kbest_offer(best, &kept, 3, sizeof(*best), &x, cmp_key), 1);
    ck_assert(best[0].seq == 9 && best[1].seq == 0 && best[2].seq == 1);
    size_t none = 0;
    ncmp = 0;
    ck_assert_int_eq(sched__kbest_offer(best, &none, 0, sizeof(*best), &x, cmp_key), 0);
    ck_assert_uint_eq(none, 0);
    ck_assert_int_eq(ncmp, 0);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_kbest_equals_stable_sort, test_kbest_worse_costs_one_compare,
                            NULL};
    return check_run(check_suite("kbest", NULL, NULL, tests));
}
