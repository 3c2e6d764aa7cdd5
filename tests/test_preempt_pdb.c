/*
 * test_preempt_pdb.c - a budget's status against victims the cluster is still terminating
 * (scheduler/preempt_pdb.c): a terminating victim the status already accounts for (the
 * disruption controller recounted after the API server processed its eviction) uses no
 * disruption again; one the status does not know of yet (muster's own, unprocessed) does.
 * The case folders (tests/data/preempt/pdb_*) cannot hold these states: there every
 * terminating pod must be a victim of a ledger entry of the case.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "sched_util.h"

/* n1..n4 of 4 cpu; db-0 (terminating victim of an earlier preemption, preempted at 1 s),
 * db-1 and db-2 (priority 10, app=db) on n1..n3, web-0 (20) on n4; budget db: maxUnavailable
 * 2 with the given status; hi-0 (100), db-0's preemptor, nominated to n1 (its room is
 * reserved); hi (100) asks a whole node. */
static const char cluster[] =
    "# YAML: documents separated by ---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}, \"status\": "
    "{\"allocatable\": {\"cpu\": \"4\"}}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n2\"}, \"status\": "
    "{\"allocatable\": {\"cpu\": \"4\"}}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n3\"}, \"status\": "
    "{\"allocatable\": {\"cpu\": \"4\"}}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n4\"}, \"status\": "
    "{\"allocatable\": {\"cpu\": \"4\"}}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"db-0\", \"labels\": "
    "{\"app\": \"db\"}, \"deletionTimestamp\": \"1970-01-01T00:00:01Z\"}, \"spec\": {\"nodeName\": "
    "\"n1\", \"priority\": 10, \"containers\": [{\"name\": \"c\", \"image\": \"x\", "
    "\"resources\": {\"requests\": {\"cpu\": \"4\"}}}]}, \"status\": {\"phase\": \"Running\", "
    "\"conditions\": [{\"type\": \"DisruptionTarget\", \"status\": \"True\", \"reason\": "
    "\"PreemptionByScheduler\", \"lastTransitionTime\": \"1970-01-01T00:00:01Z\"}]}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"db-1\", \"labels\": "
    "{\"app\": \"db\"}}, \"spec\": {\"nodeName\": \"n2\", \"priority\": 10, \"containers\": "
    "[{\"name\": \"c\", \"image\": \"x\", \"resources\": {\"requests\": {\"cpu\": \"4\"}}}]}, "
    "\"status\": {\"phase\": \"Running\"}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"db-2\", \"labels\": "
    "{\"app\": \"db\"}}, \"spec\": {\"nodeName\": \"n3\", \"priority\": 10, \"containers\": "
    "[{\"name\": \"c\", \"image\": \"x\", \"resources\": {\"requests\": {\"cpu\": \"4\"}}}]}, "
    "\"status\": {\"phase\": \"Running\"}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"web-0\"}, \"spec\": "
    "{\"nodeName\": \"n4\", \"priority\": 20, \"containers\": [{\"name\": \"c\", \"image\": "
    "\"x\", \"resources\": {\"requests\": {\"cpu\": \"4\"}}}]}, \"status\": {\"phase\": "
    "\"Running\"}}\n---\n"
    "{\"apiVersion\": \"policy/v1\", \"kind\": \"PodDisruptionBudget\", \"metadata\": {\"name\": "
    "\"db\"}, \"spec\": {\"maxUnavailable\": 2, \"selector\": {\"matchLabels\": {\"app\": "
    "\"db\"}}}, \"status\": %s}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"hi-0\"}, \"spec\": "
    "{\"priority\": 100, \"containers\": [{\"name\": \"c\", \"image\": \"x\", \"resources\": "
    "{\"requests\": {\"cpu\": \"4\"}}}]}, \"status\": {\"nominatedNodeName\": \"n1\"}}\n---\n"
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"hi\"}, \"spec\": "
    "{\"priority\": 100, \"containers\": [{\"name\": \"c\", \"image\": \"x\", \"resources\": "
    "{\"requests\": {\"cpu\": \"4\"}}}]}}\n";

/* Applies the cluster with the budget's status, runs a cycle: the last entry's victim. */
static char *victim_with(const char *status, json_int_t *violations)
{
    char *yaml = NULL;
    if (asprintf(&yaml, cluster, status) < 0)
        ck_abort_msg("asprintf");
    struct sched_options o = {.mark_running = 1};
    struct sched_util u;
    sched_util_open(&u, &o);
    json_decref(sched_util_apply(&u, yaml, 1500));
    json_decref(sched_util_cycle(&u, 2000));
    json_t *entries = sched_util_ledger(&u, NULL, NULL, NULL);
    ck_assert_uint_eq(json_array_size(entries), 1);
    json_t *e = json_array_get(entries, 0);
    json_t *victims = json_object_get(e, "victims");
    ck_assert_uint_eq(json_array_size(victims), 1);
    char *pod = strdup(json_string_value(json_object_get(json_array_get(victims, 0), "pod")));
    *violations = json_integer_value(json_object_get(e, "pdbViolations"));
    json_decref(entries);
    sched_util_close(&u);
    free(yaml);
    return pod;
}

/* The controller recounted after db-0's eviction: 2 healthy of 3, 1 desired, 1 allowed, and
 * db-0 (terminating) no longer in disruptedPods. db-1 may go: the lowest priority, within. */
START_TEST(test_preempt_pdb_processed_victim_not_counted_twice)
{
    json_int_t viol = -1;
    char *v = victim_with("{\"disruptionsAllowed\": 1, \"currentHealthy\": 2, \"desiredHealthy\": "
                          "1, \"expectedPods\": 3}",
                          &viol);
    ck_assert_str_eq(v, "default/db-1");
    ck_assert_int_eq(viol, 0);
    free(v);
}
END_TEST

/* The API server processed db-0's eviction (allowed 2 -> 1, db-0 in disruptedPods) and the
 * controller has not recounted (currentHealthy still 3): db-1 may still go. */
START_TEST(test_preempt_pdb_disrupted_victim_not_counted_twice)
{
    json_int_t viol = -1;
    char *v = victim_with("{\"disruptionsAllowed\": 1, \"currentHealthy\": 3, \"desiredHealthy\": "
                          "1, \"expectedPods\": 3, \"disruptedPods\": {\"db-0\": "
                          "\"1970-01-01T00:00:01Z\"}}",
                          &viol);
    ck_assert_str_eq(v, "default/db-1");
    ck_assert_int_eq(viol, 0);
    free(v);
}
END_TEST

/* The status predates db-0's eviction (3 healthy, 2 allowed) and the API server has not
 * processed it: db-0 uses one disruption, one is left, db-1 may go. With 1 allowed in that
 * same state, none is left: web-0 goes instead. */
START_TEST(test_preempt_pdb_unprocessed_victim_counted)
{
    json_int_t viol = -1;
    char *v = victim_with("{\"disruptionsAllowed\": 2, \"currentHealthy\": 3, \"desiredHealthy\": "
                          "1, \"expectedPods\": 3}",
                          &viol);
    ck_assert_str_eq(v, "default/db-1");
    free(v);
    v = victim_with("{\"disruptionsAllowed\": 1, \"currentHealthy\": 3, \"desiredHealthy\": 2, "
                    "\"expectedPods\": 3}",
                    &viol);
    ck_assert_str_eq(v, "default/web-0");
    ck_assert_int_eq(viol, 0);
    free(v);
    /* without currentHealthy: muster's own terminating victims not in disruptedPods count */
    v = victim_with("{\"disruptionsAllowed\": 1}", &viol);
    ck_assert_str_eq(v, "default/web-0");
    free(v);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("preempt_pdb");
    TCase *tc = tcase_create("pdb");
    tcase_add_test(tc, test_preempt_pdb_processed_victim_not_counted_twice);
    tcase_add_test(tc, test_preempt_pdb_disrupted_victim_not_counted_twice);
    tcase_add_test(tc, test_preempt_pdb_unprocessed_victim_counted);
    suite_add_tcase(s, tc);
    return check_run(s);
}
