/* test_api.c - the REST API on a real musterd (port 0, fresh data dir) over HTTP. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api_util.h"
#include "check_run.h"
#include "http_client.h"
#include "routes.h"
#include "scheduler.h"

static struct musterd md;

static struct musterd with_config(const char *config)
{
    struct musterd m;
    api_util_start(&m, config);
    return m;
}

/* No timer: cycles run only after an apply or delete (and on POST /api/v1/cycles), so a
 * test can wait for the state to settle. */
static void start(void)
{
    md = with_config("cycle_interval: 0\n");
}

static void stop(void)
{
    musterd_cleanup(&md);
}

static json_t *call(const char *method, const char *path, const char *body,
                    const char *const *headers, long want)
{
    return api_util_call(&md, method, path, body, headers, want);
}

static void apply_cluster(void)
{
    api_util_apply_case(&md, "cluster/manifest.yaml");
}

static size_t items(json_t *list)
{
    return json_array_size(json_object_get(list, "items"));
}

static json_int_t audit_last(void)
{
    return api_util_audit_last(&md, NULL);
}

static json_int_t settle(void)
{
    return api_util_settle(&md, NULL);
}

START_TEST(test_api_healthz)
{
    json_t *j = call("GET", "/healthz", NULL, NULL, 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "status")), "ok");
    json_decref(j);
}
END_TEST

START_TEST(test_api_apply_yaml_results_per_document)
{
    char *text = api_util_case_file("cluster/manifest.yaml");
    json_t *j = call("POST", "/api/v1/manifests", text, api_util_yaml, 201);
    json_t *res = json_object_get(j, "results");
    ck_assert_int_eq(json_array_size(res), 7);
    json_t *pod = json_array_get(res, 4);
    ck_assert_int_eq(json_integer_value(json_object_get(pod, "document")), 5);
    ck_assert_str_eq(json_string_value(json_object_get(pod, "kind")), "Pod");
    ck_assert_str_eq(json_string_value(json_object_get(pod, "name")), "team/train-0");
    ck_assert_str_eq(json_string_value(json_object_get(pod, "action")), "created");
    json_decref(j);
    /* the same manifest again creates nothing: 200, not 201 */
    j = call("POST", "/api/v1/manifests", text, api_util_yaml, 200);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(j, "results"), 4), "action")),
                     "unchanged");
    json_decref(j);
    free(text);
}
END_TEST

START_TEST(test_api_apply_json_and_sniffed)
{
    char *text = api_util_case_file("json/manifest.json");
    json_t *j = call("POST", "/api/v1/manifests", text, api_util_json, 201);
    ck_assert_int_eq(json_array_size(json_object_get(j, "results")), 2);
    json_decref(j);
    j = call("GET", "/api/v1/pods/ml/jp", NULL, NULL, 200);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(j, "metadata"), "uid")) ? "uid" : "",
        "uid");
    json_decref(j);
    free(text);
    /* no Content-Type: the body is sniffed (YAML here) */
    j = call("POST", "/api/v1/manifests",
             "apiVersion: v1\nkind: Node\nmetadata:\n  name: sniffed\nstatus:\n  allocatable:\n"
             "    cpu: \"1\"\n",
             NULL, 201);
    json_decref(j);
    json_decref(call("GET", "/api/v1/nodes/sniffed", NULL, NULL, 200));
}
END_TEST

START_TEST(test_api_apply_invalid_returns_every_error_and_writes_nothing)
{
    apply_cluster();
    json_int_t seq = settle();
    json_t *before = call("GET", "/api/v1/nodes", NULL, NULL, 200);
    char *text = api_util_case_file("invalid/manifest.yaml");
    json_t *j = call("POST", "/api/v1/manifests", text, api_util_yaml, 400);
    free(text);
    ck_assert_str_eq(api_util_err_code(j), "Invalid");
    ck_assert_str_eq(api_util_err_msg(j), "2 errors");
    json_t *errors = json_object_get(j, "errors");
    ck_assert_int_eq(json_array_size(errors), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(errors, 0), "document")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(errors, 0), "line")), 13);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(errors, 1), "document")), 3);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(errors, 1), "line")), 24);
    json_decref(j);
    /* the valid document in the middle was not written either */
    json_decref(call("GET", "/api/v1/nodes/fine", NULL, NULL, 404));
    json_t *after = call("GET", "/api/v1/nodes", NULL, NULL, 200);
    ck_assert_int_eq(items(after), items(before));
    ck_assert_int_eq(audit_last(), seq);
    json_decref(before);
    json_decref(after);
}
END_TEST

START_TEST(test_api_apply_malformed_is_400)
{
    json_t *j = call("POST", "/api/v1/manifests", "{\"apiVersion\": ", api_util_json, 400);
    ck_assert_str_eq(api_util_err_code(j), "Invalid");
    ck_assert_int_ge(json_array_size(json_object_get(j, "errors")), 1);
    json_decref(j);
    j = call("POST", "/api/v1/manifests", "kind: [unclosed\n", api_util_yaml, 400);
    ck_assert_str_eq(api_util_err_code(j), "Invalid");
    json_decref(j);
    j = call("GET", "/api/v1/pods", NULL, NULL, 200);
    ck_assert_int_eq(items(j), 0);
    json_decref(j);
}
END_TEST

/* The answer at path is jansson's compact text of itself, byte for byte, and a newline (the
 * lists are written by the store's writer, not json_dumps: web/list.c). */
static void assert_compact(const char *path)
{
    struct http_resp r;
    ck_assert_int_eq(http_request("GET", md.base, path, NULL, NULL, &r), 0);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(r.json);
    char *want = json_dumps(r.json, JSON_COMPACT);
    ck_assert_msg(r.len == strlen(want) + 1 && !memcmp(r.body, want, r.len - 1) &&
                      r.body[r.len - 1] == '\n',
                  "%s:\n%s\nagainst\n%s", path, r.body, want);
    free(want);
    http_resp_free(&r);
}

START_TEST(test_api_get_and_list_with_filters)
{
    apply_cluster();
    json_t *j = call("GET", "/api/v1/pods", NULL, NULL, 200);
    ck_assert_int_eq(items(j), 3);
    json_decref(j);
    j = call("GET", "/api/v1/pods?namespace=team", NULL, NULL, 200);
    ck_assert_int_eq(items(j), 2);
    json_decref(j);
    j = call("GET", "/api/v1/pods?node=n1", NULL, NULL, 200);
    ck_assert_int_eq(items(j), 1);
    ck_assert_str_eq(
        json_string_value(json_object_get(
            json_object_get(json_array_get(json_object_get(j, "items"), 0), "metadata"), "name")),
        "web");
    json_decref(j);
    j = call("GET", "/api/v1/pods?node=n1&namespace=team", NULL, NULL, 200);
    ck_assert_int_eq(items(j), 0);
    json_decref(j);
    j = call("GET", "/api/v1/pods?phase=Running", NULL, NULL, 200);
    ck_assert_int_eq(items(j), 1);
    json_decref(j);
    j = call("GET", "/api/v1/podgroups?namespace=team", NULL, NULL, 200);
    ck_assert_int_eq(items(j), 1);
    json_decref(j);
    j = call("GET", "/api/v1/podgroups?namespace=other", NULL, NULL, 200);
    ck_assert_int_eq(items(j), 0);
    json_decref(j);
    j = call("GET", "/api/v1/podgroups/team/train", NULL, NULL, 200);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "spec"), "minMember")),
                     2);
    json_decref(j);
    j = call("GET", "/api/v1/clusternetworktopologies", NULL, NULL, 200);
    ck_assert_int_eq(items(j), 1);
    json_decref(j);
    json_decref(call("GET", "/api/v1/clusternetworktopologies/default", NULL, NULL, 200));
    j = call("POST", "/api/v1/manifests",
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n9\","
             "\"annotations\":{\"a\":\"caf\u00e9 \\\"q\\\" a/b \\\\ \\t\\u0001 \u2603\"}}}",
             api_util_json, 201);
    json_decref(j);
    assert_compact("/api/v1/pods");
    assert_compact("/api/v1/nodes");
    assert_compact("/api/v1/pods?limit=1");
    assert_compact("/api/v1/podgroups?namespace=team");
    j = call("GET", "/api/v1/pods/default/nope", NULL, NULL, 404);
    ck_assert_str_eq(api_util_err_code(j), "NotFound");
    ck_assert_ptr_nonnull(strstr(api_util_err_msg(j), "'default/nope'"));
    json_decref(j);
}
END_TEST

START_TEST(test_api_nodes_usage_and_pods)
{
    apply_cluster();
    json_t *j = call("GET", "/api/v1/nodes/n1", NULL, NULL, 200);
    json_t *usage = json_object_get(j, "usage");
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(usage, "allocatable"), "cpu")), "8");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(usage, "requested"), "cpu")),
                     "500m");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(usage, "free"), "cpu")),
                     "7500m");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(usage, "free"), "memory")),
                     "31Gi");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "pods"), 0)),
                     "default/web");
    json_decref(j);
    j = call("GET", "/api/v1/nodes", NULL, NULL, 200);
    ck_assert_int_eq(items(j), 2);
    ck_assert_ptr_nonnull(json_object_get(json_array_get(json_object_get(j, "items"), 1), "usage"));
    json_decref(j);
}
END_TEST

/* GET /nodes/{name} and the same node in GET /nodes: equal usage and pods. New. */
static json_t *node_usage(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "/api/v1/nodes/%s", name);
    json_t *one = call("GET", path, NULL, NULL, 200),
           *list = call("GET", "/api/v1/nodes", NULL, NULL, 200);
    json_t *item = NULL, *it;
    size_t i;
    json_array_foreach(json_object_get(list, "items"), i, it)
    {
        if (!strcmp(json_string_value(json_object_get(json_object_get(it, "metadata"), "name")),
                    name))
            item = it;
    }
    ck_assert_ptr_nonnull(item);
    ck_assert(json_equal(json_object_get(item, "usage"), json_object_get(one, "usage")));
    ck_assert(json_equal(json_object_get(item, "pods"), json_object_get(one, "pods")));
    json_t *out = json_pack("{s:O, s:O}", "usage", json_object_get(one, "usage"), "pods",
                            json_object_get(one, "pods"));
    json_decref(one);
    json_decref(list);
    return out;
}

static void assert_usage(const char *name, json_t *want)
{
    json_t *got = node_usage(name);
    char *g = json_dumps(got, JSON_SORT_KEYS), *w = json_dumps(want, JSON_SORT_KEYS);
    ck_assert_msg(json_equal(got, want), "node %s: got %s, want %s", name, g, w);
    free(g);
    free(w);
    json_decref(got);
    json_decref(want);
}

/* A pod document (after a "---"): name, its requests (a YAML flow mapping), phase. */
#define USAGE_POD(name, requests, phase)                                                           \
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name "}\n"                                 \
    "spec: {containers: [{name: c, resources: {requests: " requests "}}]}\n"                       \
    "status: {phase: " phase "}\n"
#define U1 "{cpu: '1', memory: 1Gi}"
#define U2 "{cpu: 500m}"

START_TEST(test_api_nodes_usage_follows_placements_and_terminal_pods)
{
    const char *cluster = "apiVersion: v1\nkind: Node\nmetadata: {name: u1}\n"
                          "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}\n" //
        USAGE_POD("u-1", U1, "Pending")                                                  //
        USAGE_POD("u-2", U2, "Pending")                                                  //
        USAGE_POD("u-big", "{cpu: '8'}", "Pending");
    json_decref(call("POST", "/api/v1/manifests", cluster, api_util_yaml, 201));
    json_decref(call("POST", "/api/v1/cycles", NULL, NULL, 200));
    settle();
    /* both small pods placed (u-big fits nowhere); every pod requests one "pods" */
    assert_usage("u1", json_pack("{s:{s:{s:s,s:s,s:s}, s:{s:s,s:s,s:s}, s:{s:s,s:s,s:s}}, s:[s,s]}",
                                 "usage", "allocatable", "cpu", "4", "memory", "8Gi", "pods", "10",
                                 "requested", "cpu", "1500m", "memory", "1Gi", "pods", "2", "free",
                                 "cpu", "2500m", "memory", "7Gi", "pods", "8", "pods",
                                 "default/u-1", "default/u-2"));
    /* u-1 fails: it holds nothing any more (memory leaves requested), and is still listed */
    json_decref(
        call("POST", "/api/v1/manifests", USAGE_POD("u-1", U1, "Failed"), api_util_yaml, 200));
    settle();
    assert_usage("u1",
                 json_pack("{s:{s:{s:s,s:s,s:s}, s:{s:s,s:s}, s:{s:s,s:s,s:s}}, s:[s,s]}", "usage",
                           "allocatable", "cpu", "4", "memory", "8Gi", "pods", "10", "requested",
                           "cpu", "500m", "pods", "1", "free", "cpu", "3500m", "memory", "8Gi",
                           "pods", "9", "pods", "default/u-1", "default/u-2"));
    /* u-2 succeeds: nothing is requested */
    json_decref(
        call("POST", "/api/v1/manifests", USAGE_POD("u-2", U2, "Succeeded"), api_util_yaml, 200));
    settle();
    assert_usage("u1", json_pack("{s:{s:{s:s,s:s,s:s}, s:{}, s:{s:s,s:s,s:s}}, s:[s,s]}", "usage",
                                 "allocatable", "cpu", "4", "memory", "8Gi", "pods", "10",
                                 "requested", "free", "cpu", "4", "memory", "8Gi", "pods", "10",
                                 "pods", "default/u-1", "default/u-2"));
    json_decref(call("GET", "/api/v1/nodes/u2", NULL, NULL, 404)); /* no such node */
}
END_TEST

START_TEST(test_api_delete)
{
    apply_cluster();
    json_t *j = call("DELETE", "/api/v1/pods/team/train-1", NULL, NULL, 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "action")), "deleted");
    json_decref(j);
    json_decref(call("GET", "/api/v1/pods/team/train-1", NULL, NULL, 404));
    json_decref(call("DELETE", "/api/v1/pods/team/train-1", NULL, NULL, 404));
    json_decref(call("DELETE", "/api/v1/podgroups/team/train", NULL, NULL, 200));
    json_decref(call("DELETE", "/api/v1/nodes/n2", NULL, NULL, 200));
    json_decref(call("DELETE", "/api/v1/clusternetworktopologies/default", NULL, NULL, 200));
    j = call("GET", "/api/v1/nodes", NULL, NULL, 200);
    ck_assert_int_eq(items(j), 1);
    json_decref(j);
    /* the deletes are in the audit log */
    struct http_resp r;
    http_request("GET", md.base, "/api/v1/audit?kind=deleted", NULL, NULL, &r);
    int lines = 0;
    for (char *p = r.body; (p = strchr(p, '\n')); p++)
        lines++;
    ck_assert_int_eq(lines, 4);
    http_resp_free(&r);
}
END_TEST

START_TEST(test_api_unknown_route_is_404)
{
    json_t *j = call("GET", "/api/v1/gadgets", NULL, NULL, 404);
    ck_assert_str_eq(api_util_err_code(j), "NotFound");
    ck_assert_ptr_nonnull(strstr(api_util_err_msg(j), "/api/v1/gadgets"));
    json_decref(j);
    json_decref(call("POST", "/nothing/here", "x", NULL, 404));
}
END_TEST

START_TEST(test_api_wrong_method_is_405_with_allow)
{
    struct http_resp r;
    http_request("PUT", md.base, "/api/v1/pods/default/x", "{}", api_util_json, &r);
    ck_assert_int_eq(r.status, 405);
    char *allow = http_resp_header(&r, "Allow");
    ck_assert_ptr_nonnull(allow);
    ck_assert_str_eq(allow, "GET, DELETE");
    ck_assert_str_eq(api_util_err_code(r.json), "MethodNotAllowed");
    free(allow);
    http_resp_free(&r);
    json_decref(call("GET", "/api/v1/manifests", NULL, NULL, 405));
}
END_TEST

START_TEST(test_api_unsupported_media_type_is_415)
{
    const char *const text[] = {"Content-Type: text/plain", NULL};
    json_t *j = call("POST", "/api/v1/manifests", "kind: Node", text, 415);
    ck_assert_str_eq(api_util_err_code(j), "UnsupportedMediaType");
    json_decref(j);
}
END_TEST

START_TEST(test_api_bad_query_is_400_naming_the_parameter)
{
    json_t *j = call("GET", "/api/v1/audit?limit=abc", NULL, NULL, 400);
    ck_assert_ptr_nonnull(strstr(api_util_err_msg(j), "'limit'"));
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "error"), "field")),
                     "limit");
    json_decref(j);
    j = call("GET", "/api/v1/audit?since=yesterday", NULL, NULL, 400);
    ck_assert_ptr_nonnull(strstr(api_util_err_msg(j), "'since'"));
    json_decref(j);
    j = call("GET", "/api/v1/pods?colour=red", NULL, NULL, 400);
    ck_assert_ptr_nonnull(strstr(api_util_err_msg(j), "'colour'"));
    json_decref(j);
    j = call("GET", "/api/v1/jobs?state=Sleeping", NULL, NULL, 400);
    ck_assert_ptr_nonnull(strstr(api_util_err_msg(j), "'Sleeping'"));
    json_decref(j);
}
END_TEST

START_TEST(test_api_jobs_and_why)
{
    apply_cluster();
    json_t *j = call("GET", "/api/v1/jobs", NULL, NULL, 200);
    ck_assert_int_ge(items(j), 2);
    json_decref(j);
    j = call("GET", "/api/v1/jobs/team/train", NULL, NULL, 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "id")), "team/train");
    json_decref(j);
    j = call("GET", "/api/v1/jobs/team/train/why", NULL, NULL, 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "job")), "team/train");
    ck_assert_ptr_nonnull(json_object_get(j, "primary"));
    json_decref(j);
    json_decref(call("GET", "/api/v1/jobs/team/ghost", NULL, NULL, 404));
    j = call("GET", "/api/v1/jobs/team/ghost/why", NULL, NULL, 404);
    ck_assert_msg(strstr(api_util_err_msg(j), "'team/ghost'") &&
                      strstr(api_util_err_msg(j), "nor a pod"),
                  "%s", api_util_err_msg(j));
    json_decref(j);
}
END_TEST

static json_t *job_item(json_t *list, const char *id)
{
    size_t i;
    json_t *it;
    json_array_foreach(json_object_get(list, "items"), i, it)
    {
        if (!strcmp(json_string_value(json_object_get(it, "id")), id))
            return it;
    }
    return NULL;
}

/* The why never misleads through the API: every job has a REASON (its primary code, "" when
 * nothing blocks it); why of a pod answers for its job; a pod whose PodGroup does not exist
 * says so. */
START_TEST(test_api_jobs_reason_and_pod_why)
{
    apply_cluster();
    const char *orphan = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                         "\"orphan-0\",\"namespace\":\"team\",\"labels\":{\"pod-group."
                         "scheduling.sigs.k8s.io\":\"nogroup\"}},\"spec\":{\"containers\":[{"
                         "\"name\":\"c\",\"image\":\"x\"}]}}";
    json_decref(call("POST", "/api/v1/manifests", orphan, api_util_json, 201));
    json_decref(call("POST", "/api/v1/cycles", NULL, NULL, 200));
    settle();
    json_t *list = call("GET", "/api/v1/jobs", NULL, NULL, 200);
    json_t *train = job_item(list, "team/train"), *orph = job_item(list, "team/nogroup");
    json_t *web = job_item(list, "default/web");
    ck_assert_ptr_nonnull(train);
    ck_assert_ptr_nonnull(orph);
    ck_assert_ptr_nonnull(web);
    /* 2 x 16 GPUs on two nodes of 8 */
    ck_assert_str_eq(json_string_value(json_object_get(train, "reason")), "ExceedsClusterCapacity");
    /* bound from the manifest, never tried: nothing blocks it (not NotTried) */
    ck_assert_str_eq(json_string_value(json_object_get(web, "reason")), "");
    ck_assert_str_eq(json_string_value(json_object_get(orph, "reason")), "PodGroupMissing");
    json_decref(list);
    json_t *j = call("GET", "/api/v1/jobs/team/nogroup", NULL, NULL, 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "reason")), "PodGroupMissing");
    json_decref(j);
    /* a pod of a gang: the gang's why, naming the pod */
    j = call("GET", "/api/v1/jobs/team/train-0/why", NULL, NULL, 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "job")), "team/train");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "pod"), "name")),
                     "team/train-0");
    json_decref(j);
    /* a pod whose PodGroup does not exist */
    j = call("GET", "/api/v1/jobs/team/orphan-0/why", NULL, NULL, 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "job")), "team/nogroup");
    json_t *p = json_object_get(j, "primary");
    ck_assert_str_eq(json_string_value(json_object_get(p, "code")), "PodGroupMissing");
    ck_assert_str_eq(json_string_value(json_object_get(p, "message")),
                     "PodGroup 'team/nogroup' does not exist");
    json_decref(j);
}
END_TEST

START_TEST(test_api_cycles_run_and_place)
{
    char *text = api_util_case_file("schedulable/manifest.yaml");
    json_decref(call("POST", "/api/v1/manifests", text, api_util_yaml, 201));
    free(text);
    json_t *j = call("POST", "/api/v1/cycles", NULL, NULL, 200);
    ck_assert_int_ge(json_integer_value(json_object_get(j, "cycle")), 1);
    ck_assert_ptr_nonnull(json_object_get(j, "placed"));
    ck_assert_ptr_nonnull(json_object_get(j, "unschedulable"));
    json_decref(j);
    /* placed by this cycle or by the one the apply triggered */
    j = call("GET", "/api/v1/jobs?state=Scheduled", NULL, NULL, 200);
    json_t *items_ = json_object_get(j, "items");
    int found = 0;
    for (size_t i = 0; i < json_array_size(items_); i++)
        found |= !strcmp(json_string_value(json_object_get(json_array_get(items_, i), "id")),
                         "team/fits");
    ck_assert_msg(found, "team/fits is not Scheduled after a cycle");
    json_decref(j);
    j = call("GET", "/api/v1/pods?node=s1", NULL, NULL, 200);
    ck_assert_int_eq(items(j), 2);
    json_decref(j);
}
END_TEST

/* The UI builds its state filter and legend from this answer: every state of the
 * scheduler's table, in its order, and nothing else. */
START_TEST(test_api_jobstates_lists_every_state_in_order)
{
    json_t *j = call("GET", "/api/v1/jobstates", NULL, NULL, 200);
    json_t *list = json_object_get(j, "items");

    ck_assert_str_eq(json_string_value(json_object_get(j, "kind")), "JobStateList");
    ck_assert_int_eq(json_array_size(list), SCHED_JOB_STATE_COUNT);
    for (int i = 0; i < SCHED_JOB_STATE_COUNT; i++) {
        const char *name = json_string_value(json_object_get(json_array_get(list, i), "name"));
        ck_assert_msg(name != NULL, "item %d has no name", i);
        ck_assert_str_eq(name, sched_job_state_name((enum sched_job_state)i));
    }
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(list, 0), "name")),
                     "Pending");
    json_decref(j);
}
END_TEST

/* docs/api.md's route table names every route of web/routes.c's table with its method. */
START_TEST(test_api_docs_route_table_lists_every_route)
{
    char *path = NULL;
    ck_assert_int_ge(asprintf(&path, "%s/docs/api.md", getenv("MUSTER_SOURCE_DIR")), 0);
    char *doc = test_read_file(path, NULL);
    ck_assert_msg(doc != NULL, "cannot read %s", path);
    char *table = strstr(doc, "\n## Routes\n");
    ck_assert_ptr_nonnull(table);
    char *end = strstr(table + 1, "\n## ");
    char *sub = strstr(table + 1, "\n### ");
    if (sub && (!end || sub < end))
        end = sub;
    if (end)
        *end = '\0';
    int n = 0;
    for (const char *pattern; (pattern = api__route_pattern(n)) != NULL; n++) {
        const char *method = api__route_method(n);
        char cell[256];
        snprintf(cell, sizeof(cell), "| `%s` |", pattern);
        int found = 0;
        for (const char *at = table; !found && (at = strstr(at, cell)) != NULL; at++) {
            const char *row = at;
            while (row > table && row[-1] != '\n')
                row--;
            found = row[0] == '|' && memmem(row, (size_t)(at - row), method, strlen(method));
        }
        ck_assert_msg(found, "docs/api.md's route table has no '%s %s'", method, pattern);
    }
    ck_assert_int_gt(n, 30);
    free(doc);
    free(path);
}
END_TEST

START_TEST(test_api_metrics_and_ui)
{
    json_decref(call("GET", "/api/v1/gadgets", NULL, NULL, 404));
    struct http_resp r;
    http_request("GET", md.base, "/metrics", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "muster_http_requests_total{class=\"4xx\"} 1"));
    http_resp_free(&r);
    http_request("GET", md.base, "/", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "<html"));
    http_resp_free(&r);
    json_decref(call("GET", "/missing.js", NULL, NULL, 404));
    json_decref(call("GET", "/../CMakeLists.txt", NULL, NULL, 404));
}
END_TEST

/* The value of series (a metric's name with its labels) in /metrics; -1 when absent. */
static double metric(const char *series)
{
    struct http_resp r;
    http_request("GET", md.base, "/metrics", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    char line[160];
    snprintf(line, sizeof(line), "\n%s ", series);
    const char *at = strstr(r.body, line);
    double v = at ? strtod(at + strlen(line), NULL) : -1;
    http_resp_free(&r);
    return v;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* muster_apply_seconds_total: an apply's parts, each timed once, summed over the applies
 * that committed (a refused one adds nothing), and together within the request's time. */
START_TEST(test_api_metrics_apply_phases)
{
    static const char *const phases[] = {"body",  "parse",  "validate", "lock",
                                         "write", "commit", "view",     "reply"};
    enum { N = sizeof(phases) / sizeof(*phases) };
    char series[N][64];
    double before[N], after[N], sum = 0;
    for (size_t i = 0; i < N; i++) {
        snprintf(series[i], sizeof(series[i]), "muster_apply_seconds_total{phase=\"%s\"}",
                 phases[i]);
        before[i] = metric(series[i]);
        ck_assert_msg(before[i] == 0, "%s is %g before any apply", series[i], before[i]);
    }
    ck_assert(metric("muster_applies_total") == 0);

    size_t cap = 64 * 1024, len = 0;
    char *yaml = malloc(cap);
    for (int i = 0; i < 300; i++)
        len += (size_t)snprintf(yaml + len, cap - len,
                                "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\n  "
                                "namespace: default\nspec:\n  containers:\n  - name: main\n    "
                                "resources:\n      requests: {cpu: 100m}\n",
                                i);
    ck_assert_uint_lt(len, cap);
    double t0 = seconds_now();
    json_decref(call("POST", "/api/v1/manifests", yaml, api_util_yaml, 201));
    double wall = seconds_now() - t0;
    free(yaml);
    ck_assert(metric("muster_applies_total") == 1);
    for (size_t i = 0; i < N; i++) {
        after[i] = metric(series[i]);
        ck_assert_msg(after[i] >= 0, "%s is %g", series[i], after[i]);
        sum += after[i];
    }
    /* parsing, writing and committing 300 pods take more than the microsecond printed */
    ck_assert(after[1] > 0 && after[4] > 0 && after[5] > 0);
    ck_assert_msg(sum <= wall, "the parts sum to %g s, the request took %g s", sum, wall);

    /* refused: nothing is counted */
    json_decref(call("POST", "/api/v1/manifests",
                     "apiVersion: v1\nkind: Pod\nmetadata:\n  name: bad name\n", api_util_yaml,
                     400));
    ck_assert(metric("muster_applies_total") == 1);
    for (size_t i = 0; i < N; i++)
        ck_assert_msg(metric(series[i]) == after[i], "%s moved", series[i]);
}
END_TEST

/* ---- configured servers: body limit, auth ---- */

START_TEST(test_api_body_over_limit_is_413)
{
    md = with_config("body_limit: 1Ki\n");
    size_t n = 64 * 1024;
    char *big = malloc(n + 1);
    memset(big, ' ', n);
    memcpy(big, "# padding", 9);
    big[n] = '\0';
    struct http_resp r;
    http_request_len("POST", md.base, "/api/v1/manifests", big, n, api_util_yaml, &r);
    ck_assert_int_eq(r.status, 413);
    ck_assert_str_eq(api_util_err_code(r.json), "TooLarge");
    http_resp_free(&r);
    /* chunked: no Content-Length, counted while reading */
    const char *chunked[] = {"Content-Type: application/yaml", "Transfer-Encoding: chunked", NULL};
    http_request_len("POST", md.base, "/api/v1/manifests", big, n, chunked, &r);
    ck_assert_int_eq(r.status, 413);
    http_resp_free(&r);
    free(big);
    /* a small body still works */
    json_decref(call("POST", "/api/v1/manifests",
                     "apiVersion: v1\nkind: Node\nmetadata:\n  name: small\n", api_util_yaml, 201));
}
END_TEST

START_TEST(test_api_auth_mutating_calls_need_token)
{
    md = with_config("token: s3cret\n");
    const char *node = "apiVersion: v1\nkind: Node\nmetadata:\n  name: a1\n";
    const char *none[] = {"Content-Type: application/yaml", NULL};
    const char *wrong[] = {"Content-Type: application/yaml", "Authorization: Bearer s3cre", NULL};
    const char *right[] = {"Content-Type: application/yaml", "Authorization: Bearer s3cret", NULL};
    json_t *j = call("POST", "/api/v1/manifests", node, none, 401);
    ck_assert_str_eq(api_util_err_code(j), "Unauthorized");
    json_decref(j);
    json_decref(call("POST", "/api/v1/manifests", node, wrong, 401));
    json_decref(call("DELETE", "/api/v1/nodes/a1", NULL, NULL, 401));
    json_decref(call("POST", "/api/v1/manifests", node, right, 201));
    /* reads are open unless auth_reads */
    json_decref(call("GET", "/api/v1/nodes/a1", NULL, NULL, 200));
    json_decref(call("DELETE", "/api/v1/nodes/a1", NULL, right + 1, 200));
}
END_TEST

START_TEST(test_api_auth_reads)
{
    md = with_config("token: s3cret\nauth_reads: true\n");
    const char *right[] = {"Authorization: Bearer s3cret", NULL};
    json_decref(call("GET", "/api/v1/nodes", NULL, NULL, 401));
    json_decref(call("GET", "/api/v1/nodes", NULL, right, 200));
    json_decref(call("GET", "/healthz", NULL, NULL, 200));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("api");
    TCase *tc = tcase_create("api");

    tcase_add_checked_fixture(tc, start, stop);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_api_healthz);
    tcase_add_test(tc, test_api_apply_yaml_results_per_document);
    tcase_add_test(tc, test_api_apply_json_and_sniffed);
    tcase_add_test(tc, test_api_apply_invalid_returns_every_error_and_writes_nothing);
    tcase_add_test(tc, test_api_apply_malformed_is_400);
    tcase_add_test(tc, test_api_get_and_list_with_filters);
    tcase_add_test(tc, test_api_nodes_usage_and_pods);
    tcase_add_test(tc, test_api_nodes_usage_follows_placements_and_terminal_pods);
    tcase_add_test(tc, test_api_delete);
    tcase_add_test(tc, test_api_unknown_route_is_404);
    tcase_add_test(tc, test_api_wrong_method_is_405_with_allow);
    tcase_add_test(tc, test_api_unsupported_media_type_is_415);
    tcase_add_test(tc, test_api_bad_query_is_400_naming_the_parameter);
    tcase_add_test(tc, test_api_jobs_and_why);
    tcase_add_test(tc, test_api_jobs_reason_and_pod_why);
    tcase_add_test(tc, test_api_cycles_run_and_place);
    tcase_add_test(tc, test_api_metrics_and_ui);
    tcase_add_test(tc, test_api_metrics_apply_phases);
    tcase_add_test(tc, test_api_jobstates_lists_every_state_in_order);
    tcase_add_test(tc, test_api_docs_route_table_lists_every_route);
    suite_add_tcase(s, tc);

    TCase *cfg = tcase_create("configured");
    tcase_add_checked_fixture(cfg, NULL, stop);
    tcase_set_timeout(cfg, 60);
    tcase_add_test(cfg, test_api_body_over_limit_is_413);
    tcase_add_test(cfg, test_api_auth_mutating_calls_need_token);
    tcase_add_test(cfg, test_api_auth_reads);
    suite_add_tcase(s, cfg);
    return s;
}

int main(void)
{
    return check_run(suite());
}
