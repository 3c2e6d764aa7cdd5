/* test_api_priority.c - PriorityClasses over the REST API on a real musterd (port 0, fresh
 * data dir): the built-in classes, apply / get / delete, and the Priority admission's
 * refusals. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "check_run.h"
#include "http_client.h"

static struct musterd md;

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

static size_t items(json_t *list)
{
    return json_array_size(json_object_get(list, "items"));
}

#define PC_DOC(name, value, extra)                                                                 \
    "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: " name              \
    "\nvalue: " value "\n" extra
#define POD_DOC(name, spec_extra)                                                                  \
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " name "\nspec:\n" spec_extra                   \
    "  containers:\n  - name: c\n    resources:\n      requests:\n        cpu: '1'\n"

static json_t *spec_of(const char *path)
{
    json_t *pod = call("GET", path, NULL, NULL, 200);
    json_t *spec = json_incref(json_object_get(pod, "spec"));
    json_decref(pod);
    return spec;
}

static void assert_refused(const char *body, const char *field, const char *needle)
{
    json_t *j = call("POST", "/api/v1/manifests", body, api_util_yaml, 400);
    /* validation lists every problem under "errors"; admission names one in "error" */
    json_t *e = json_array_get(json_object_get(j, "errors"), 0);
    e = e ? e : json_object_get(j, "error");
    const char *f = json_string_value(json_object_get(e, "field"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    ck_assert_msg(f && !strcmp(f, field), "field %s, want %s: %s", f ? f : "(none)", field, msg);
    ck_assert_msg(strstr(msg, needle), "'%s' does not say '%s'", msg, needle);
    json_decref(j);
}

START_TEST(test_api_priorityclasses_built_in_apply_get_delete)
{
    /* the built-ins exist from the start, in name order */
    json_t *j = call("GET", "/api/v1/priorityclasses", NULL, NULL, 200);
    ck_assert_str_eq(json_string_value(json_object_get(j, "kind")), "PriorityClassList");
    ck_assert_int_eq(items(j), 2);
    json_t *first = json_array_get(json_object_get(j, "items"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(first, "metadata"), "name")),
                     "system-cluster-critical");
    ck_assert_int_eq(json_integer_value(json_object_get(first, "value")), 2000000000);
    json_decref(j);
    j = call("GET", "/api/v1/priorityclasses/system-node-critical", NULL, NULL, 200);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "value")), 2000001000);
    json_decref(j);

    /* one manifest: pods before the class they name */
    const char *body = POD_DOC("p-high", "  priorityClassName: high\n") "---\n" POD_DOC(
        "p-crit",
        "  priorityClassName: system-cluster-critical\n") "---\n" POD_DOC("p-none",
                                                                          "") "---\n" PC_DOC("high",
                                                                                             "1000",
                                                                                             "preem"
                                                                                             "ption"
                                                                                             "Polic"
                                                                                             "y: "
                                                                                             "Never"
                                                                                             "\n");
    j = call("POST", "/api/v1/manifests", body, api_util_yaml, 201);
    json_t *res = json_object_get(j, "results");
    ck_assert_int_eq(json_array_size(res), 4);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(res, 0), "document")), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(res, 3), "kind")),
                     "PriorityClass");
    json_decref(j);
    json_t *spec = spec_of("/api/v1/pods/default/p-high");
    ck_assert_int_eq(json_integer_value(json_object_get(spec, "priority")), 1000);
    ck_assert_str_eq(json_string_value(json_object_get(spec, "preemptionPolicy")), "Never");
    json_decref(spec);
    spec = spec_of("/api/v1/pods/default/p-crit");
    ck_assert_int_eq(json_integer_value(json_object_get(spec, "priority")), 2000000000);
    ck_assert_str_eq(json_string_value(json_object_get(spec, "preemptionPolicy")),
                     "PreemptLowerPriority");
    json_decref(spec);
    /* no class and no globalDefault: nothing written, priority 0 */
    spec = spec_of("/api/v1/pods/default/p-none");
    ck_assert_ptr_null(json_object_get(spec, "priority"));
    json_decref(spec);
    j = call("GET", "/api/v1/priorityclasses", NULL, NULL, 200);
    ck_assert_int_eq(items(j), 3);
    json_decref(j);

    /* built-ins cannot be deleted; a user class can */
    j = call("DELETE", "/api/v1/priorityclasses/system-node-critical", NULL, NULL, 409);
    ck_assert_str_eq(api_util_err_code(j), "Conflict");
    json_decref(j);
    json_decref(call("DELETE", "/api/v1/priorityclasses/high", NULL, NULL, 200));
    json_decref(call("GET", "/api/v1/priorityclasses/high", NULL, NULL, 404));
    /* admission happened once: the pod keeps its priority after its class is gone */
    j = call("POST", "/api/v1/manifests", POD_DOC("p-high", "  priorityClassName: high\n"),
             api_util_yaml, 200);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(j, "results"), 0), "action")),
                     "unchanged");
    json_decref(j);
    /* the job's priority in the API is the class's value */
    j = call("GET", "/api/v1/jobs/default/p-crit", NULL, NULL, 200);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "priority")), 2000000000);
    json_decref(j);
}
END_TEST

START_TEST(test_api_priority_admission_refusals_are_400_naming_the_field)
{
    json_decref(call("POST", "/api/v1/manifests",
                     PC_DOC("batch", "100", "globalDefault: true\n") "---\n" PC_DOC("low", "5", ""),
                     api_util_yaml, 201));
    assert_refused(POD_DOC("p", "  priorityClassName: nope\n"), "spec.priorityClassName",
                   "no PriorityClass with name 'nope' was found");
    json_decref(call("GET", "/api/v1/pods/default/p", NULL, NULL, 404));
    assert_refused(POD_DOC("p", "  priorityClassName: low\n  priority: 7\n"), "spec.priority",
                   "the integer value of priority (7) must not be provided in pod spec");
    assert_refused(POD_DOC("p", "  priorityClassName: low\n  preemptionPolicy: Never\n"),
                   "spec.preemptionPolicy", "computed PreemptLowerPriority");
    assert_refused(PC_DOC("other", "1", "globalDefault: true\n"), "globalDefault",
                   "PriorityClass batch is already marked as default");
    assert_refused(PC_DOC("low", "6", ""), "value", "may not be changed in an update");
    assert_refused(PC_DOC("low", "5", "preemptionPolicy: Never\n"), "preemptionPolicy",
                   "field is immutable");
    assert_refused(PC_DOC("system-mine", "5", ""), "metadata.name", "reserved for system use");
    assert_refused(PC_DOC("huge", "1000000001", ""), "value",
                   "maximum allowed value of a user defined priority is 1000000000");
    assert_refused("apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n"
                   "  name: g\nspec:\n  minMember: 1\n  priorityClassName: nope\n",
                   "spec.priorityClassName", "no PriorityClass with name 'nope' was found");
    /* a refused manifest writes nothing, not even its valid documents */
    assert_refused(PC_DOC("fine", "1", "") "---\n" POD_DOC("p", "  priorityClassName: nope\n"),
                   "spec.priorityClassName", "document 2");
    json_decref(call("GET", "/api/v1/priorityclasses/fine", NULL, NULL, 404));

    /* no class named: the globalDefault class, its name too; a bare priority is kept */
    json_decref(call("POST", "/api/v1/manifests",
                     POD_DOC("p-def", "") "---\n" POD_DOC("p-bare", "  priority: 42\n"),
                     api_util_yaml, 201));
    json_t *spec = spec_of("/api/v1/pods/default/p-def");
    ck_assert_int_eq(json_integer_value(json_object_get(spec, "priority")), 100);
    ck_assert_str_eq(json_string_value(json_object_get(spec, "priorityClassName")), "batch");
    json_decref(spec);
    spec = spec_of("/api/v1/pods/default/p-bare");
    ck_assert_int_eq(json_integer_value(json_object_get(spec, "priority")), 42);
    ck_assert_ptr_null(json_object_get(spec, "priorityClassName"));
    json_decref(spec);
    /* re-applying the default class unchanged is fine */
    json_decref(call("POST", "/api/v1/manifests", PC_DOC("batch", "100", "globalDefault: true\n"),
                     api_util_yaml, 200));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("api_priority");
    TCase *tc = tcase_create("api_priority");
    tcase_add_checked_fixture(tc, start, stop);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_api_priorityclasses_built_in_apply_get_delete);
    tcase_add_test(tc, test_api_priority_admission_refusals_are_400_naming_the_field);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
