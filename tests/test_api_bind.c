/* test_api_bind.c - a pod bound by a cycle, read through the API: GET of the pod and the pod
 * list show spec.nodeName and the PodScheduled condition the binding record adds
 * (store_pod_bind), before and after musterd restarts on the same data directory. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "check_run.h"

static const char *const CLUSTER =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    "status: {allocatable: {cpu: \"4\", memory: 8Gi}}\n---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team, labels: {app: a}}\n"
    "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]}\n";

/* spec.nodeName, status.phase and the PodScheduled condition of a pod document. */
static void assert_bound(json_t *pod)
{
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName")),
                     "n1");
    json_t *st = json_object_get(pod, "status"), *c;
    ck_assert_str_eq(json_string_value(json_object_get(st, "phase")), "Pending");
    size_t i, found = 0;
    json_array_foreach(json_object_get(st, "conditions"), i, c)
    {
        if (strcmp(json_string_value(json_object_get(c, "type")), "PodScheduled"))
            continue;
        found++;
        ck_assert_str_eq(json_string_value(json_object_get(c, "status")), "True");
        ck_assert_ptr_nonnull(json_string_value(json_object_get(c, "lastTransitionTime")));
    }
    ck_assert_int_eq(found, 1);
    /* the rest of the pod is as applied */
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(pod, "metadata"), "labels"), "app")),
                     "a");
}

static json_t *get_and_check(struct musterd *m)
{
    json_t *pod = api_util_call(m, "GET", "/api/v1/pods/team/p", NULL, NULL, 200);
    assert_bound(pod);
    json_t *list = api_util_call(m, "GET", "/api/v1/pods", NULL, NULL, 200);
    json_t *item = json_array_get(json_object_get(list, "items"), 0);
    ck_assert_ptr_nonnull(item);
    ck_assert(json_equal(item, pod));
    json_decref(list);
    return pod;
}

START_TEST(test_api_bind_pod_reads_bound)
{
    struct musterd m;
    api_util_start(&m, "cycle_interval: 0\n");
    json_decref(api_util_call(&m, "POST", "/api/v1/manifests", CLUSTER, api_util_yaml, 201));
    json_decref(api_util_call(&m, "POST", "/api/v1/cycles", NULL, NULL, 200));
    json_t *before = get_and_check(&m);

    ck_assert_int_eq(musterd_stop(&m), 0);
    const char *args[] = {"--log-level", "warn", NULL};
    ck_assert_msg(musterd_start(&m, m.root, args) == 0, "musterd did not restart");
    json_t *after = get_and_check(&m);
    ck_assert(json_equal(before, after));
    json_decref(before);
    json_decref(after);
    musterd_stop(&m);
    musterd_cleanup(&m);
}
END_TEST

static Suite *api_bind_suite(void)
{
    Suite *s = suite_create("api_bind");
    TCase *tc = tcase_create("api_bind");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_api_bind_pod_reads_bound);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(api_bind_suite());
}
