/*
 * test_preempt_grace.c - after a preemption's plan: the grace period (a victim stays until
 * it ends, to the millisecond), the "evicted" records naming their preemptor (victims of
 * several preemptions in one pass too), a victim deleted by hand before it ends, mirrored
 * victims left to the API server, and the preemptor's binding (latency, nominated nodes).
 * The plans themselves are test_preempt.c's.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "err.h"
#include "scheduler.h"
#include "sched_util.h"

/* The "evicted" audit records: each one's pod is among want's n (pod, preemptor) pairs and
 * names that preemptor, as the ledger has it. Returns how many there are. */
static int evicted_by(struct sched_util *u, const char *const want[][2], size_t n)
{
    json_t *all = sched_util_audit(u), *rec;
    size_t i;
    int seen = 0;
    json_array_foreach(all, i, rec)
    {
        const char *kind = json_string_value(json_object_get(rec, "kind"));
        if (!kind || strcmp(kind, "evicted"))
            continue;
        const char *pod = json_string_value(json_array_get(json_object_get(rec, "pods"), 0));
        size_t k = 0;
        while (k < n && strcmp(want[k][0], pod))
            k++;
        ck_assert_msg(k < n, "%s evicted", pod);
        ck_assert_str_eq(json_string_value(json_object_get(rec, "preemptor")), want[k][1]);
        seen++;
    }
    json_decref(all);
    return seen;
}

START_TEST(test_preempt_bound_latency_and_audit)
{
    struct sched_util u;
    struct sched_options opts = {.grace_ms = 10000};
    sched_util_open(&u, &opts);
    sched_util_two_rounds(&u);
    json_decref(sched_util_cycle(&u, 13000)); /* lo-1 gone (deleted at 2 s), hi-1 binds */
    json_t *l = sched_util_ledger(&u, "default/hi-1", NULL, NULL), *e = json_array_get(l, 0);
    ck_assert(json_is_true(json_object_get(e, "bound")));
    ck_assert_int_eq(json_integer_value(json_object_get(e, "latencyMs")), 11000);
    ck_assert(json_is_true(json_object_get(e, "boundOnNominatedNodes")));
    json_t *j = sched_util_job(&u, "default/hi-1");
    ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "Scheduled");
    json_decref(j);
    j = sched_util_job(&u, "default/hi-2");
    ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "Pipelined");
    json_decref(j);
    ck_assert_int_eq(sched_util_audit_count(&u, "preempted", "default/lo-1"), 1);
    ck_assert_int_eq(sched_util_audit_count(&u, "nominated", "default/hi-1"), 1);
    ck_assert_int_eq(sched_util_audit_count(&u, "evicted", "default/lo-1"), 1);
    ck_assert_int_eq(sched_util_audit_count(&u, "evicted", "default/lo-2"), 0);
    /* the evicted record names the preemptor, as the ledger has it */
    static const char *const evicted[][2] = {{"default/lo-1", "default/hi-1"}};
    ck_assert_int_eq(evicted_by(&u, evicted, 1), 1);
    json_decref(l);
    sched_util_close(&u);
}
END_TEST

/* Victims of two preemptions removed in one housekeeping pass: each "evicted" record names
 * its own preemptor, and each victim's job its retention (the pass keeps the ledger entry it
 * read last for the next victim: only for the victims of that entry). */
START_TEST(test_preempt_two_entries_evicted_in_one_pass)
{
    struct sched_util u;
    struct sched_options opts = {.grace_ms = 10000};
    sched_util_open(&u, &opts);
    sched_util_two_rounds(&u); /* lo-1 terminating from 2 s (hi-1's), lo-2 from 6 s (hi-2's) */
    json_decref(sched_util_cycle(&u, 20000));
    static const char *const evicted[][2] = {{"default/lo-1", "default/hi-1"},
                                             {"default/lo-2", "default/hi-2"}};
    ck_assert_int_eq(evicted_by(&u, evicted, 2), 2);
    for (int k = 1; k <= 2; k++) { /* both victims' jobs gone, their retention started */
        char job[32];
        snprintf(job, sizeof(job), "default/lo-%d", k);
        json_t *j = sched_util_job(&u, job);
        ck_assert_msg(j != NULL, "%s has no why", job);
        ck_assert_msg(json_is_string(json_object_get(json_object_get(j, "preemptedBy"), "goneAt")),
                      "%s: no goneAt", job);
        json_decref(j);
    }
    sched_util_close(&u);
}
END_TEST

/* A victim deleted by hand before its grace period ended is no victim any more: a new pod
 * of that name that is later removed terminating is not reported "evicted". */
START_TEST(test_preempt_victim_deleted_by_hand_is_forgotten)
{
    struct sched_util u;
    struct sched_options opts = {.grace_ms = 10000};
    sched_util_open(&u, &opts);
    sched_util_two_rounds(&u); /* lo-1 marked at 2 s */
    struct err err = ERR_INIT;
    ck_assert_int_eq(sched_delete(u.s, MODEL_POD, "default/lo-1", 3000, &err), 0);
    json_decref(sched_util_apply(
        &u,
        "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"lo-1\", "
        "\"namespace\": \"default\", \"deletionTimestamp\": \"1970-01-01T00:00:04Z\"}, "
        "\"spec\": {\"nodeName\": \"n1\", \"priority\": 1, \"containers\": [{\"name\": "
        "\"c\", \"image\": \"x\"}]}}\n",
        3500));
    json_decref(sched_util_cycle(&u, 20000)); /* removed: terminating past the grace period */
    json_t *lo = sched_util_pod(&u, "default/lo-1");
    ck_assert_ptr_null(lo);
    ck_assert_int_eq(sched_util_audit_count(&u, "evicted", "default/lo-1"), 0);
    sched_util_close(&u);
}
END_TEST

/* A victim marked at t stays until t + grace - 1 ms and is gone at the first cycle at or
 * after t + grace, for a grace below a second, with t inside a second, live and after a
 * rebuild (the stored deletionTimestamp carries the milliseconds). */
START_TEST(test_preempt_grace_exact)
{
    static const int64_t graces[] = {50, 1000, 2500};
    for (size_t gi = 0; gi < sizeof(graces) / sizeof(*graces); gi++) {
        for (int rebuild = 0; rebuild < 2; rebuild++) {
            struct sched_options opts = {.grace_ms = graces[gi]};
            struct sched_util u;
            char pod[1024], doc[1024];
            const int64_t t = 2730;
            sched_util_open(&u, &opts);
            json_decref(sched_util_apply(&u, sched_util_two_preemptions, 1000));
            snprintf(doc, sizeof(doc), "# hi\n%s", sched_util_hi_pod);
            snprintf(pod, sizeof(pod), doc, "hi-1");
            json_decref(sched_util_apply(&u, pod, 1500));
            json_decref(sched_util_cycle(&u, t));
            json_t *l = sched_util_ledger(&u, "default/hi-1", NULL, NULL);
            ck_assert_int_eq(json_array_size(l), 1);
            json_decref(l);
            if (rebuild)
                sched_util_reopen(&u);
            json_decref(sched_util_cycle(&u, t + graces[gi] - 1));
            json_t *lo = sched_util_pod(&u, "default/lo-1");
            ck_assert_msg(lo != NULL, "grace %lld ms (rebuild %d): victim removed 1 ms early",
                          (long long)graces[gi], rebuild);
            ck_assert_str_eq(sched_util_str2(lo, "metadata", "deletionTimestamp"),
                             "1970-01-01T00:00:02.730Z");
            json_decref(lo);
            json_decref(sched_util_cycle(&u, t + graces[gi]));
            lo = sched_util_pod(&u, "default/lo-1");
            ck_assert_msg(lo == NULL, "grace %lld ms (rebuild %d): victim still there at t + grace",
                          (long long)graces[gi], rebuild);
            ck_assert_int_eq(sched_util_audit_count(&u, "evicted", "default/lo-1"), 1);
            sched_util_close(&u);
        }
    }
}
END_TEST

/* Mirrored: the API server removes victims (it may refuse an eviction), never the grace
 * period. */
START_TEST(test_preempt_mirrored_victims_wait_for_the_api_server)
{
    struct sched_options opts = {.grace_ms = 50, .mirrored = 1};
    struct sched_util u;
    char pod[1024], doc[1024];
    sched_util_open(&u, &opts);
    json_decref(sched_util_apply(&u, sched_util_two_preemptions, 1000));
    snprintf(doc, sizeof(doc), "# hi\n%s", sched_util_hi_pod);
    snprintf(pod, sizeof(pod), doc, "hi-1");
    json_decref(sched_util_apply(&u, pod, 1500));
    json_decref(sched_util_cycle(&u, 2000));
    json_t *l = sched_util_ledger(&u, "default/hi-1", NULL, NULL);
    ck_assert_int_eq(json_array_size(l), 1);
    json_decref(l);
    json_decref(sched_util_cycle(&u, 60000));
    json_t *lo = sched_util_pod(&u, "default/lo-1");
    ck_assert_msg(lo != NULL, "a mirrored victim was removed by the grace period");
    ck_assert_ptr_nonnull(sched_util_str2(lo, "metadata", "deletionTimestamp"));
    json_decref(lo);
    sched_util_close(&u);
}
END_TEST

static Suite *preempt_grace_suite(void)
{
    Suite *s = suite_create("preempt_grace");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_preempt_bound_latency_and_audit);
    tcase_add_test(tc, test_preempt_two_entries_evicted_in_one_pass);
    tcase_add_test(tc, test_preempt_victim_deleted_by_hand_is_forgotten);
    tcase_add_test(tc, test_preempt_grace_exact);
    tcase_add_test(tc, test_preempt_mirrored_victims_wait_for_the_api_server);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(preempt_grace_suite());
}
