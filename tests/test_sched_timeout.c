/*
 * test_sched_timeout.c - the gang timeout (scheduler/cycle_timeout.c, docs/why.md "Gang
 * timeout"): a gang short of minMember is rejected after its window, retried in a new one,
 * and a preemptor stops holding its nominations.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "err.h"
#include "scheduler.h"
#include "sched_objs.h"
#include "sched_util.h"

static const char *PG_TIMEOUT_FMT =
    "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"PodGroup\",\"metadata\":{"
    "\"name\":\"%s\",\"namespace\":\"default\"%s},\"spec\":{\"minMember\":%d%s}}";

static void apply_pg_timeout(struct sched_util *u, const char *name, int min, const char *ann,
                             const char *spec)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), PG_TIMEOUT_FMT, name, ann, min, spec);
    json_decref(sched_util_apply(u, buf, 1000));
}

static const char *job_state(struct sched_util *u, const char *id, char *buf, size_t n)
{
    json_t *j = NULL;
    struct err err = ERR_INIT;
    ck_assert_msg(sched_job(u->s, id, &j, &err) == 0, "%s", err.msg);
    snprintf(buf, n, "%s", json_string_value(json_object_get(j, "state")));
    json_decref(j);
    return buf;
}

static json_t *why_timeout_since(struct sched_util *u, const char *id)
{
    json_t *w = sched_util_why(u, id);
    json_t *s = json_incref(json_object_get(json_object_get(w, "gangTimeout"), "unsatisfiedSince"));
    json_decref(w);
    return s;
}

/* Koordinator core_test.go TestPermit: a gang short of minMember waits at most its
 * scheduleTimeoutSeconds (10 s there too); then it is rejected and tried again. The window
 * survives a restart (the why document keeps it). */
START_TEST(test_sched_gang_timeout_marks_and_retries)
{
    struct sched_util u;
    char st[64];
    sched_util_open(&u, NULL);
    sched_objs_node(&u, "n1", "a", 4, 0);
    sched_objs_busy_node(&u, "n0", 4);
    apply_pg_timeout(&u, "g", 3, "", ",\"scheduleTimeoutSeconds\":10");
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof(name), "g-%d", i);
        sched_objs_pod(&u, name, "g", 0, 2); /* only two fit */
    }
    json_decref(sched_util_cycle(&u, 2000));
    ck_assert_str_eq(job_state(&u, "default/g", st, sizeof(st)), "Unschedulable");
    json_t *since = why_timeout_since(&u, "default/g");
    ck_assert_str_eq(json_string_value(since), "1970-01-01T00:00:02Z");
    json_decref(since);
    sched_util_reopen(&u); /* a restart keeps the window, and the state */
    ck_assert_str_eq(job_state(&u, "default/g", st, sizeof(st)), "Unschedulable");
    json_decref(sched_util_cycle(&u, 11000));
    ck_assert_str_eq(job_state(&u, "default/g", st, sizeof(st)), "Unschedulable");
    ck_assert_int_eq(sched_util_audit_count(&u, "gang-timed-out", NULL), 0);
    json_decref(sched_util_cycle(&u, 12000)); /* 10 s after the first failed attempt */
    ck_assert_str_eq(job_state(&u, "default/g", st, sizeof(st)), "TimedOut");
    sched_util_reopen(&u);
    ck_assert_str_eq(job_state(&u, "default/g", st, sizeof(st)), "TimedOut");
    ck_assert_int_eq(sched_util_audit_count(&u, "gang-timed-out", "default/g"), 1);
    json_t *w = sched_util_why(&u, "default/g");
    ck_assert_str_eq(sched_objs_primary(w), "GangTimedOut");
    ck_assert_str_eq(json_string_value(json_object_get(w, "state")), "TimedOut");
    ck_assert(json_is_null(json_object_get(json_object_get(w, "gangTimeout"), "unsatisfiedSince")));
    json_decref(w);
    /* retried at the next attempt, in a new window */
    json_decref(sched_util_cycle(&u, 13000));
    ck_assert_str_eq(job_state(&u, "default/g", st, sizeof(st)), "Unschedulable");
    since = why_timeout_since(&u, "default/g");
    ck_assert_str_eq(json_string_value(since), "1970-01-01T00:00:13Z");
    json_decref(since);
    ck_assert_int_eq(sched_util_audit_count(&u, "gang-timed-out", NULL), 1);
    /* placed once capacity comes: the window closes */
    sched_objs_node(&u, "n2", "a", 4, 0);
    json_decref(sched_util_cycle(&u, 14000));
    ck_assert_str_eq(job_state(&u, "default/g", st, sizeof(st)), "Scheduled");
    since = why_timeout_since(&u, "default/g");
    ck_assert(json_is_null(since));
    json_decref(since);
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

/* The waiting-time annotation (a Go duration) when scheduleTimeoutSeconds is not set; a
 * preemptor whose victims never go (mirror mode) stops holding its nominations. */
START_TEST(test_sched_gang_timeout_drops_nominations)
{
    struct sched_util u;
    struct sched_options opts = {.mirrored = 1};
    char st[64];
    sched_util_open(&u, &opts);
    sched_objs_node(&u, "n1", "a", 4, 0);
    sched_objs_pod(&u, "low", NULL, 0, 4);
    json_decref(sched_util_cycle(&u, 1500));
    apply_pg_timeout(&u, "g", 2,
                     ",\"annotations\":{\"gang.scheduling.koordinator.sh/waiting-time\":\"5s\"}",
                     "");
    sched_objs_pod(&u, "g-0", "g", 10, 2);
    sched_objs_pod(&u, "g-1", "g", 10, 2);
    json_decref(sched_util_cycle(&u, 3000)); /* preempts low, nominates g-0 and g-1 */
    ck_assert_str_eq(job_state(&u, "default/g", st, sizeof(st)), "Pipelined");
    json_decref(sched_util_cycle(&u, 7900));
    ck_assert_str_eq(job_state(&u, "default/g", st, sizeof(st)), "Pipelined");
    json_decref(sched_util_cycle(&u, 8000));
    ck_assert_str_eq(job_state(&u, "default/g", st, sizeof(st)), "TimedOut");
    for (int i = 0; i < 2; i++) {
        json_t *pod = sched_util_pod(&u, i ? "default/g-1" : "default/g-0");
        ck_assert_ptr_null(json_object_get(json_object_get(pod, "status"), "nominatedNodeName"));
        json_decref(pod);
    }
    json_t *all = sched_util_audit(&u), *rec;
    size_t i;
    int found = 0, cleared = 0;
    json_array_foreach(all, i, rec)
    {
        /* write-back removes the dropped nominations on the API server (outbox.h) */
        if (!strcmp(json_string_value(json_object_get(rec, "kind")), "nominated") &&
            json_array_size(json_object_get(rec, "cleared")) == 2)
            cleared++;
        if (strcmp(json_string_value(json_object_get(rec, "kind")), "gang-timed-out"))
            continue;
        found++;
        ck_assert_int_eq(json_array_size(json_object_get(rec, "pods")), 2);
        ck_assert(json_real_value(json_object_get(rec, "timeoutSeconds")) == 5.0);
        ck_assert_str_eq(json_string_value(json_object_get(rec, "unsatisfiedSince")),
                         "1970-01-01T00:00:03Z");
    }
    ck_assert_int_eq(found, 1);
    ck_assert_int_eq(cleared, 1);
    json_decref(all);
    json_decref(sched_util_cycle(&u, 9000));
    ck_assert_str_ne(job_state(&u, "default/g", st, sizeof(st)), "TimedOut");
    sched_util_close(&u);
}
END_TEST

static Suite *sched_timeout_suite(void)
{
    Suite *s = suite_create("sched_timeout");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sched_gang_timeout_marks_and_retries);
    tcase_add_test(tc, test_sched_gang_timeout_drops_nominations);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(sched_timeout_suite());
}
