/* test_api_batch.c - batch input to POST /api/v1/manifests on a real musterd: NDJSON (one
 * object a line) and a JSON array of objects, their errors naming the line or item and
 * changing nothing, "Expect: 100-continue" answered before the body is sent, and many
 * pods' status at once (POST /api/v1/pods/status). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "check_run.h"

static struct musterd md;
static const char *const ndjson[] = {"Content-Type: application/x-ndjson", NULL};

static void start(void)
{
    api_util_start(&md, "cycle_interval: 0\n");
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

#define NODE(name)                                                                                 \
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\"},"               \
    "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"10\"}}}"
#define POD(name)                                                                                  \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name "\","                 \
    "\"namespace\":\"batch\"},\"spec\":{\"containers\":[{\"name\":\"main\",\"image\":\"x\"}]}}"

static const char *action_of(json_t *reply, size_t i)
{
    return json_string_value(
        json_object_get(json_array_get(json_object_get(reply, "results"), i), "action"));
}

/* The first error of a 400 reply (borrowed from reply). */
static json_t *first_error(json_t *reply)
{
    json_t *e = json_array_get(json_object_get(reply, "errors"), 0);
    ck_assert_msg(e != NULL, "no errors in the reply");
    return e;
}

START_TEST(test_api_batch_ndjson_applies_every_line)
{
    /* a blank line and a CRLF line end are fine */
    const char *body = NODE("nd-1") "\n\n" NODE("nd-2") "\r\n" POD("nd-pod") "\n";
    json_t *j = call("POST", "/api/v1/manifests", body, ndjson, 201);
    ck_assert_int_eq(json_array_size(json_object_get(j, "results")), 3);
    json_t *pod = json_array_get(json_object_get(j, "results"), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(pod, "document")), 3);
    ck_assert_str_eq(json_string_value(json_object_get(pod, "name")), "batch/nd-pod");
    ck_assert_str_eq(action_of(j, 0), "created");
    json_decref(j);
    json_decref(call("GET", "/api/v1/nodes/nd-2", NULL, NULL, 200));
    json_decref(call("GET", "/api/v1/pods/batch/nd-pod", NULL, NULL, 200));
    /* the same lines again change nothing */
    j = call("POST", "/api/v1/manifests", body, ndjson, 200);
    ck_assert_str_eq(action_of(j, 2), "unchanged");
    json_decref(j);
}
END_TEST

START_TEST(test_api_batch_json_array_applies_every_item)
{
    const char *body = "[" NODE("arr-1") "," NODE("arr-2") "," POD("arr-pod") "]";
    json_t *j = call("POST", "/api/v1/manifests", body, api_util_json, 201);
    ck_assert_int_eq(json_array_size(json_object_get(j, "results")), 3);
    ck_assert_str_eq(action_of(j, 1), "created");
    json_decref(j);
    json_decref(call("GET", "/api/v1/nodes/arr-2", NULL, NULL, 200));
    json_decref(call("GET", "/api/v1/pods/batch/arr-pod", NULL, NULL, 200));
}
END_TEST

/* A bad object on line 4 (the third object: line 2 is blank) refuses the whole body. */
START_TEST(test_api_batch_ndjson_invalid_object_names_its_line_and_writes_nothing)
{
    json_int_t seq = api_util_settle(&md, NULL);
    const char *body = NODE("ok-1") "\n\n" NODE("ok-2") "\n" NODE("Bad") "\n";
    json_t *j = call("POST", "/api/v1/manifests", body, ndjson, 400);
    json_t *e = first_error(j);
    ck_assert_int_eq(json_integer_value(json_object_get(e, "document")), 3);
    ck_assert_int_eq(json_integer_value(json_object_get(e, "line")), 4);
    const char *msg = json_string_value(json_object_get(e, "message"));
    ck_assert_msg(msg && strstr(msg, "Node Bad") && strstr(msg, "at line 4"), "%s", msg);
    json_decref(j);
    json_decref(call("GET", "/api/v1/nodes/ok-1", NULL, NULL, 404));
    json_decref(call("GET", "/api/v1/nodes/ok-2", NULL, NULL, 404));
    ck_assert_int_eq(api_util_audit_last(&md, NULL), seq);
}
END_TEST

/* A kind: List on a line is its items, each named by that line. */
START_TEST(test_api_batch_ndjson_list_line_names_its_line)
{
    const char *body = NODE("l-1") "\n{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[" NODE(
        "l-2") "," NODE("L-Bad") "]}\n";
    json_t *j = call("POST", "/api/v1/manifests", body, ndjson, 400);
    json_t *e = first_error(j);
    ck_assert_int_eq(json_integer_value(json_object_get(e, "document")), 3);
    ck_assert_int_eq(json_integer_value(json_object_get(e, "line")), 2);
    json_decref(j);
    json_decref(call("GET", "/api/v1/nodes/l-1", NULL, NULL, 404));
}
END_TEST

START_TEST(test_api_batch_ndjson_syntax_errors_name_the_line)
{
    struct {
        const char *body, *want;
    } cases[] = {
        {NODE("s-1") "\n{\"apiVersion\": \n", "line 2: "},
        {NODE("s-1") "\n\n[1, 2]\n", "line 3: an NDJSON line must be one object"},
        {NODE("s-1") " " NODE("s-2") "\n", "line 1: "},
    };
    json_int_t seq = api_util_settle(&md, NULL);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *j = call("POST", "/api/v1/manifests", cases[i].body, ndjson, 400);
        const char *msg = api_util_err_msg(j);
        ck_assert_msg(msg && strstr(msg, cases[i].want), "case %zu: %s", i, msg);
        json_decref(j);
    }
    json_decref(call("GET", "/api/v1/nodes/s-1", NULL, NULL, 404));
    ck_assert_int_eq(api_util_audit_last(&md, NULL), seq);
}
END_TEST

/* Item i of the array is document i + 1. */
START_TEST(test_api_batch_json_array_invalid_item_names_it_and_writes_nothing)
{
    json_int_t seq = api_util_settle(&md, NULL);
    const char *body = "[" NODE("a-ok") "," NODE("A-Bad") "]";
    json_t *j = call("POST", "/api/v1/manifests", body, api_util_json, 400);
    json_t *e = first_error(j);
    ck_assert_int_eq(json_integer_value(json_object_get(e, "document")), 2);
    ck_assert_str_eq(json_string_value(json_object_get(e, "field")), "metadata.name");
    json_decref(j);
    json_decref(call("GET", "/api/v1/nodes/a-ok", NULL, NULL, 404));
    ck_assert_int_eq(api_util_audit_last(&md, NULL), seq);
}
END_TEST

/* curl sends "Expect: 100-continue" with bodies over 1 MiB and waits for the interim reply
 * before sending them; libcurl hands the interim head to the header callback too. */
#define BIG_POD(name)                                                                              \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name "\","                 \
    "\"namespace\":\"batch\"},\"spec\":{\"containers\":[{\"name\":\"main\",\"image\":\"x\","       \
    "\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}}"
#define STATUS(name, phase)                                                                        \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name "\","                 \
    "\"namespace\":\"batch\"},\"status\":{\"phase\":\"" phase "\"}}"

static const char *pod_field(const char *name, const char *part, const char *field)
{
    static char buf[64];
    char path[128];
    snprintf(path, sizeof(path), "/api/v1/pods/batch/%s", name);
    json_t *pod = call("GET", path, NULL, NULL, 200);
    const char *v = json_string_value(json_object_get(json_object_get(pod, part), field));
    snprintf(buf, sizeof(buf), "%s", v ? v : "");
    json_decref(pod);
    return buf;
}

/* Two bound pods fill a node; a bulk status update finishes one (and says the other runs):
 * the binding stays, the audit says it was the status subresource, and the freed room
 * places the third pod in the next cycle. */
START_TEST(test_api_batch_pod_status_updates_many)
{
    const char *body = NODE("st-node") "\n" BIG_POD("st-1") "\n" BIG_POD("st-2") "\n";
    json_decref(call("POST", "/api/v1/manifests", body, ndjson, 201));
    json_decref(call("POST", "/api/v1/cycles", NULL, api_util_json, 200));
    json_decref(call("POST", "/api/v1/manifests", BIG_POD("st-3"), api_util_json, 201));
    json_decref(call("POST", "/api/v1/cycles", NULL, api_util_json, 200));
    ck_assert_str_eq(pod_field("st-3", "spec", "nodeName"), ""); /* no room */

    const char *update = STATUS("st-1", "Succeeded") "\n" STATUS("st-2", "Running") "\n";
    json_t *j = call("POST", "/api/v1/pods/status", update, ndjson, 200);
    ck_assert_int_eq(json_array_size(json_object_get(j, "results")), 2);
    ck_assert_str_eq(action_of(j, 0), "configured");
    json_decref(j);
    ck_assert_str_eq(pod_field("st-1", "status", "phase"), "Succeeded");
    ck_assert_str_eq(pod_field("st-1", "spec", "nodeName"), "st-node");
    ck_assert_str_eq(pod_field("st-2", "status", "phase"), "Running");
    json_decref(call("POST", "/api/v1/cycles", NULL, api_util_json, 200));
    ck_assert_str_eq(pod_field("st-3", "spec", "nodeName"), "st-node");
    /* the same update again changes nothing */
    j = call("POST", "/api/v1/pods/status", update, ndjson, 200);
    ck_assert_str_eq(action_of(j, 1), "unchanged");
    json_decref(j);
    struct http_resp r;
    http_request("GET", md.base, "/api/v1/audit?kind=applied", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_ptr_nonnull(strstr(r.body, "\"subresource\":\"status\""));
    http_resp_free(&r);
}
END_TEST

/* A bad document anywhere refuses the whole body, naming it, and changes nothing. */
START_TEST(test_api_batch_pod_status_errors_change_nothing)
{
    json_decref(call("POST", "/api/v1/manifests", BIG_POD("se-1"), api_util_json, 201));
    char *before = strdup(pod_field("se-1", "status", "phase"));
    struct {
        const char *body, *code, *says;
        long status;
    } bad[] = {
        {STATUS("se-1", "Failed") "\n" STATUS("se-none", "Failed"), "NotFound",
         "document 2: pod 'batch/se-none' not found", 404},
        {STATUS("se-1", "Failed") "\n" NODE("se-node"), "Invalid",
         "document 2: a status update is a Pod's, not a 'Node'", 400},
        {POD("se-1"), "Invalid", "document 1 (Pod batch/se-1): no 'status' object", 400},
        {"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"se-1\",\"namespace\":"
         "\"batch\"},\"status\":{\"phase\":5}}",
         "Invalid", "status.phase", 400},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *j = call("POST", "/api/v1/pods/status", bad[i].body, ndjson, bad[i].status);
        ck_assert_str_eq(api_util_err_code(j), bad[i].code);
        ck_assert_msg(strstr(api_util_err_msg(j), bad[i].says), "case %zu: %s", i,
                      api_util_err_msg(j));
        json_decref(j);
        ck_assert_str_eq(pod_field("se-1", "status", "phase"), before);
    }
    free(before);
}
END_TEST

START_TEST(test_api_batch_expect_100_continue_is_answered)
{
    const char *const headers[] = {"Content-Type: application/x-ndjson", "Expect: 100-continue",
                                   NULL};
    const char *body = NODE("exp-1") "\n" NODE("exp-2") "\n";
    struct http_resp r;
    http_request("POST", md.base, "/api/v1/manifests", body, headers, &r);
    ck_assert_int_eq(r.status, 201);
    ck_assert_msg(r.headers && strstr(r.headers, "HTTP/1.1 100 Continue"), "%s", r.headers);
    char *ctype = http_resp_header(&r, "Content-Type");
    ck_assert_msg(ctype && !strncmp(ctype, "application/json", 16), "%s", ctype);
    free(ctype);
    ck_assert_int_eq(json_array_size(json_object_get(r.json, "results")), 2);
    http_resp_free(&r);
    /* and an error reply after the interim one is a whole JSON error */
    http_request("POST", md.base, "/api/v1/manifests", NODE("Exp-Bad") "\n", headers, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_msg(strstr(r.headers, "100 Continue") != NULL, "%s", r.headers);
    ck_assert_ptr_nonnull(api_util_err_msg(r.json));
    http_resp_free(&r);
}
END_TEST

/* Results come in document order: a PriorityClass is applied before the pods that name it
 * (here after them in the manifest), and without one nothing is reordered. */
START_TEST(test_api_batch_results_in_document_order)
{
    const char *klass = "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\","
                        "\"metadata\":{\"name\":\"ord\"},\"value\":3}";
    char body[2048];
    snprintf(body, sizeof(body), "%s\n%s\n%s\n%s\n", POD("ord-1"), NODE("ord-n"), klass,
             POD("ord-2"));
    json_t *j = call("POST", "/api/v1/manifests", body, ndjson, 201);
    json_t *r = json_object_get(j, "results");
    const char *kinds[] = {"Pod", "Node", "PriorityClass", "Pod"};
    ck_assert_int_eq(json_array_size(r), 4);
    for (size_t i = 0; i < 4; i++) {
        json_t *e = json_array_get(r, i);
        ck_assert_int_eq(json_integer_value(json_object_get(e, "document")), (json_int_t)i + 1);
        ck_assert_str_eq(json_string_value(json_object_get(e, "kind")), kinds[i]);
    }
    json_decref(j);
    snprintf(body, sizeof(body), "%s\n%s\n", POD("ord-3"), POD("ord-1"));
    j = call("POST", "/api/v1/manifests", body, ndjson, 201);
    r = json_object_get(j, "results");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(r, 0), "name")),
                     "batch/ord-3");
    ck_assert_str_eq(action_of(j, 1), "unchanged");
    json_decref(j);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("api_batch");
    TCase *tc = tcase_create("api_batch");

    tcase_add_checked_fixture(tc, start, stop);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_api_batch_ndjson_applies_every_line);
    tcase_add_test(tc, test_api_batch_json_array_applies_every_item);
    tcase_add_test(tc, test_api_batch_results_in_document_order);
    tcase_add_test(tc, test_api_batch_ndjson_invalid_object_names_its_line_and_writes_nothing);
    tcase_add_test(tc, test_api_batch_ndjson_list_line_names_its_line);
    tcase_add_test(tc, test_api_batch_ndjson_syntax_errors_name_the_line);
    tcase_add_test(tc, test_api_batch_json_array_invalid_item_names_it_and_writes_nothing);
    tcase_add_test(tc, test_api_batch_expect_100_continue_is_answered);
    tcase_add_test(tc, test_api_batch_pod_status_updates_many);
    tcase_add_test(tc, test_api_batch_pod_status_errors_change_nothing);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
