/*
 * test_api_nodemap.c - GET /api/v1/nodemap (the UI's cluster map) on a real musterd: every
 * node once, by name, with allocatable and used as numbers (cpu in cores, fractional when it
 * is), the cordon, the taints, NotReady from status.conditions (and back to Ready when the
 * node is applied again: a readiness change is not a heartbeat), the pods that count and the
 * pending pods nominated to it (a preemption of the demo cluster); and `muster describe node`
 * printing the same node.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "check_run.h"

static struct musterd md;

static void start(void)
{
    api_util_start(&md, "cycle_interval: 0\n");
}

static void stop(void)
{
    musterd_cleanup(&md);
}

static const char nodes_yaml[] =
    "apiVersion: v1\nkind: Node\nmetadata: {name: b-ok}\n"
    "status: {allocatable: {cpu: '1500m', memory: 4Gi, pods: '10', nvidia.com/gpu: '8'}}\n"
    "---\n"
    "apiVersion: v1\nkind: Node\nmetadata: {name: a-sick}\n"
    "spec:\n  unschedulable: true\n"
    "  taints: [{key: gpu-broken, value: 'yes', effect: NoSchedule}]\n"
    "status:\n  allocatable: {cpu: '4', pods: '10'}\n"
    "  conditions: [{type: Ready, status: 'False', reason: KubeletNotReady}]\n"
    "---\n"
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: t}\n"
    "spec:\n  nodeName: b-ok\n  containers:\n  - name: c\n    image: x\n"
    "    resources: {requests: {cpu: 500m, nvidia.com/gpu: '3'}}\n";

static json_t *item(json_t *map, const char *name)
{
    json_t *it;
    size_t i;
    json_array_foreach(json_object_get(map, "items"), i,
                       it) if (strcmp(json_string_value(json_object_get(it, "name")), name) ==
                               0) return it;
    return NULL;
}

START_TEST(test_api_nodemap_lists_numbers_and_marks)
{
    json_decref(api_util_call(&md, "POST", "/api/v1/manifests", nodes_yaml, api_util_yaml, 201));
    json_t *map = api_util_call(&md, "GET", "/api/v1/nodemap", NULL, NULL, 200);
    json_t *items = json_object_get(map, "items");
    ck_assert_uint_eq(json_array_size(items), 2);
    /* by name */
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(items, 0), "name")),
                     "a-sick");

    json_t *ok = item(map, "b-ok"), *sick = item(map, "a-sick");
    json_t *want_ok = json_pack(
        "{s:s, s:{s:f, s:I, s:i, s:i}, s:{s:f, s:i, s:i, s:i}, s:b, s:b, s:[], s:i, s:i}", "name",
        "b-ok", "allocatable", "cpu", 1.5, "memory", (json_int_t)4 << 30, "pods", 10,
        "nvidia.com/gpu", 8, "used", "cpu", 0.5, "memory", 0, "pods", 1, "nvidia.com/gpu", 3,
        "unschedulable", 0, "notReady", 0, "taints", "pods", 1, "nominated", 0);
    ck_assert_msg(json_equal(ok, want_ok), "%s", json_dumps(ok, JSON_SORT_KEYS));
    json_t *want_sick =
        json_pack("{s:s, s:{s:i, s:i}, s:{s:i, s:i}, s:b, s:b, s:[{s:s, s:s, s:s}], s:i, s:i}",
                  "name", "a-sick", "allocatable", "cpu", 4, "pods", 10, "used", "cpu", 0, "pods",
                  0, "unschedulable", 1, "notReady", 1, "taints", "key", "gpu-broken", "value",
                  "yes", "effect", "NoSchedule", "pods", 0, "nominated", 0);
    ck_assert_msg(json_equal(sick, want_sick), "%s", json_dumps(sick, JSON_SORT_KEYS));
    json_decref(want_ok);
    json_decref(want_sick);
    json_decref(map);

    /* Ready again: the map says so */
    json_decref(api_util_call(&md, "POST", "/api/v1/manifests",
                              "apiVersion: v1\nkind: Node\nmetadata: {name: a-sick}\n"
                              "status:\n  allocatable: {cpu: '4', pods: '10'}\n"
                              "  conditions: [{type: Ready, status: 'True'}]\n",
                              api_util_yaml, 200));
    map = api_util_call(&md, "GET", "/api/v1/nodemap", NULL, NULL, 200);
    ck_assert(json_is_false(json_object_get(item(map, "a-sick"), "notReady")));
    ck_assert(json_is_false(json_object_get(item(map, "a-sick"), "unschedulable")));
    json_decref(map);
}
END_TEST

/* The demo preempts in its first cycle: the preemptor's pods are nominated to the nodes of
 * its victims, and the map counts them per node exactly as the jobs list names them. */
START_TEST(test_api_nodemap_counts_nominations)
{
    char *src = getenv("MUSTER_SOURCE_DIR"), path[4096];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/examples/demo/%s", src ? src : ".",
                 i ? "workloads.yaml" : "cluster.yaml");
        FILE *f = fopen(path, "rb");
        ck_assert_ptr_nonnull(f);
        static char buf[1 << 20];
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        json_decref(api_util_call(&md, "POST", "/api/v1/manifests", buf, api_util_yaml, 201));
    }
    json_decref(api_util_call(&md, "POST", "/api/v1/cycles", NULL, NULL, 200));
    json_t *jobs = api_util_call(&md, "GET", "/api/v1/jobs", NULL, NULL, 200);
    json_t *want = json_object(), *j, *m;
    size_t i, k;
    json_array_foreach(json_object_get(jobs, "items"), i, j)
    {
        json_array_foreach(json_object_get(j, "members"), k, m)
        {
            const char *nom = json_string_value(json_object_get(m, "nominatedNode"));
            if (nom && !json_string_value(json_object_get(m, "node")))
                json_object_set_new(
                    want, nom, json_integer(json_integer_value(json_object_get(want, nom)) + 1));
        }
    }
    ck_assert_uint_gt(json_object_size(want), 0); /* the demo has nominations */
    json_t *map = api_util_call(&md, "GET", "/api/v1/nodemap", NULL, NULL, 200),
           *got = json_object();
    json_array_foreach(json_object_get(map, "items"), i, j)
    {
        json_int_t n = json_integer_value(json_object_get(j, "nominated"));
        if (n)
            json_object_set_new(got, json_string_value(json_object_get(j, "name")),
                                json_integer(n));
    }
    ck_assert_msg(json_equal(got, want), "map %s jobs %s", json_dumps(got, JSON_SORT_KEYS),
                  json_dumps(want, JSON_SORT_KEYS));
    json_decref(got);
    json_decref(want);
    json_decref(map);
    json_decref(jobs);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_nodemap");
    TCase *tc = tcase_create("api_nodemap");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, start, stop);
    tcase_add_test(tc, test_api_nodemap_lists_numbers_and_marks);
    tcase_add_test(tc, test_api_nodemap_counts_nominations);
    suite_add_tcase(s, tc);
    return check_run(s);
}
