/*
 * test_api_fields.c - field validation at the REST API of a real musterd: unknown fields
 * refused (Strict), dropped with a Warning header (Warn) or silently (Ignore) and never
 * stored; the config default; a 15 MB unknown field refused without a trace.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_run.h"
#include "api_util.h"

static struct musterd md;

static const char *const yaml_ct[] = {"Content-Type: application/yaml", NULL};

/* The pod: typos of spec.priority and of resources.requests. */
static const char typo_pod[] = "apiVersion: v1\n"
                               "kind: Pod\n"
                               "metadata:\n"
                               "  name: typo\n"
                               "spec:\n"
                               "  priorty: 100\n"
                               "  containers:\n"
                               "  - name: c\n"
                               "    image: registry.example/train:1.0\n"
                               "    resources:\n"
                               "      request:\n"
                               "        nvidia.com/gpu: \"8\"\n"
                               "      limits:\n"
                               "        cpu: \"1\"\n";

static void start_with(const char *config)
{
    api_util_start(&md, config);
}

static void start(void)
{
    start_with("cycle_interval: 0\n");
}

static void stop(void)
{
    musterd_cleanup(&md);
}

/* method path with body, asserting the status; the response is left in *r. */
static void call(const char *method, const char *path, const char *body, long want,
                 struct http_resp *r)
{
    http_request(method, md.base, path, body, body ? yaml_ct : NULL, r);
    ck_assert_msg(r->status == want, "%s %s: status %ld, want %ld: %s", method, path, r->status,
                  want, r->body);
}

static json_t *stored_pod(void)
{
    struct http_resp r;
    call("GET", "/api/v1/pods/default/typo", NULL, 200, &r);
    json_t *pod = json_incref(r.json);
    http_resp_free(&r);
    return pod;
}

/* The stored pod kept what the schema knows and none of the typos. */
static void assert_typos_dropped(json_t *pod)
{
    json_t *spec = json_object_get(pod, "spec");
    json_t *res =
        json_object_get(json_array_get(json_object_get(spec, "containers"), 0), "resources");
    ck_assert_ptr_null(json_object_get(spec, "priorty"));
    ck_assert_ptr_null(json_object_get(res, "request"));
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(res, "limits"), "cpu")),
                     "1");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(spec, "containers"), 0), "image")),
                     "registry.example/train:1.0");
}

START_TEST(test_api_fields_strict_is_the_default)
{
    struct http_resp r;
    call("POST", "/api/v1/manifests", typo_pod, 400, &r);
    ck_assert_msg(strstr(r.body, "spec.priorty: unknown field (not in PodSpec; did you mean "
                                 "'priority'?) at line 6 col 12"),
                  "%s", r.body);
    ck_assert_msg(strstr(r.body, "spec.containers[0].resources.request: unknown field"), "%s",
                  r.body);
    http_resp_free(&r);
    call("POST", "/api/v1/manifests?fieldValidation=Strict", typo_pod, 400, &r);
    http_resp_free(&r);
    call("GET", "/api/v1/pods/default/typo", NULL, 404, &r);
    http_resp_free(&r);
}
END_TEST

START_TEST(test_api_fields_warn_drops_with_a_warning_header)
{
    struct http_resp r;
    call("POST", "/api/v1/manifests?fieldValidation=Warn", typo_pod, 201, &r);
    ck_assert_msg(strstr(r.headers, "Warning: 299 - \"unknown field \\\"spec.priorty\\\" "
                                    "(document 1, Pod default/typo)\""),
                  "%s", r.headers);
    ck_assert_msg(strstr(r.headers, "\\\"spec.containers[0].resources.request\\\""), "%s",
                  r.headers);
    json_t *warnings = json_object_get(r.json, "warnings");
    ck_assert_uint_eq(json_array_size(warnings), 2);
    /* the reply is written from the results' lines: compact JSON, results then warnings, as
     * every other reply is dumped */
    char *dump = json_dumps(r.json, JSON_COMPACT | JSON_PRESERVE_ORDER);
    ck_assert_ptr_eq(json_object_iter_value(json_object_iter(r.json)),
                     json_object_get(r.json, "results"));
    ck_assert_uint_eq(strlen(r.body), strlen(dump) + 1);
    ck_assert(!strncmp(r.body, dump, strlen(dump)) && r.body[strlen(dump)] == '\n');
    free(dump);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(warnings, 0), "field")),
                     "spec.priorty");
    http_resp_free(&r);
    json_t *pod = stored_pod();
    assert_typos_dropped(pod);
    json_decref(pod);
}
END_TEST

START_TEST(test_api_fields_ignore_drops_silently)
{
    struct http_resp r;
    call("POST", "/api/v1/manifests?fieldValidation=ignore", typo_pod, 201, &r);
    ck_assert_ptr_null(strstr(r.headers, "Warning"));
    ck_assert_ptr_null(json_object_get(r.json, "warnings"));
    http_resp_free(&r);
    json_t *pod = stored_pod();
    assert_typos_dropped(pod);
    json_decref(pod);
}
END_TEST

START_TEST(test_api_fields_bad_mode_is_400)
{
    struct http_resp r;
    call("POST", "/api/v1/manifests?fieldValidation=Lenient", typo_pod, 400, &r);
    ck_assert_msg(strstr(r.body, "invalid field validation 'Lenient': must be Strict, Warn or "
                                 "Ignore"),
                  "%s", r.body);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r.json, "error"), "field")),
                     "fieldValidation");
    http_resp_free(&r);
}
END_TEST

START_TEST(test_api_fields_config_default)
{
    struct http_resp r;
    start_with("cycle_interval: 0\nfield_validation: Warn\n");
    call("POST", "/api/v1/manifests?fieldValidation=Strict", typo_pod, 400, &r);
    http_resp_free(&r);
    call("POST", "/api/v1/manifests", typo_pod, 201, &r);
    ck_assert_msg(strstr(r.headers, "Warning: 299"), "%s", r.headers);
    http_resp_free(&r);
    json_t *pod = stored_pod();
    assert_typos_dropped(pod);
    json_decref(pod);
}
END_TEST

/* The Node with a 15 MB unknown field: refused, the reply does not echo it, and
 * nothing is stored. */
START_TEST(test_api_fields_huge_unknown_field_refused)
{
    const char head[] = "apiVersion: v1\nkind: Node\nmetadata:\n  name: big\n"
                        "status:\n  allocatable: {cpu: \"4\"}\nblob: \"";
    size_t n = 15u << 20, hl = strlen(head);
    char *body = malloc(hl + n + 3);
    memcpy(body, head, hl);
    memset(body + hl, 'x', n);
    memcpy(body + hl + n, "\"\n", 3);
    struct http_resp r;
    http_request_len("POST", md.base, "/api/v1/manifests", body, hl + n + 2, yaml_ct, &r);
    ck_assert_msg(r.status == 400, "status %ld: %.300s", r.status, r.body);
    ck_assert_msg(strstr(r.body, "document 1 (Node big), blob: unknown field (not in Node) at "
                                 "line 7 col 7"),
                  "%.500s", r.body);
    ck_assert_uint_lt(r.len, 4096);
    http_resp_free(&r);
    call("GET", "/api/v1/nodes/big", NULL, 404, &r);
    http_resp_free(&r);
    call("GET", "/api/v1/nodes", NULL, 200, &r);
    ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 0);
    http_resp_free(&r);
    free(body);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_fields");
    TCase *tc = tcase_create("api_fields");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, start, stop);
    tcase_add_test(tc, test_api_fields_strict_is_the_default);
    tcase_add_test(tc, test_api_fields_warn_drops_with_a_warning_header);
    tcase_add_test(tc, test_api_fields_ignore_drops_silently);
    tcase_add_test(tc, test_api_fields_bad_mode_is_400);
    tcase_add_test(tc, test_api_fields_huge_unknown_field_refused);
    suite_add_tcase(s, tc);
    TCase *cfg = tcase_create("config");
    tcase_set_timeout(cfg, 120);
    tcase_add_checked_fixture(cfg, NULL, stop);
    tcase_add_test(cfg, test_api_fields_config_default);
    suite_add_tcase(s, cfg);
    return check_run(s);
}
