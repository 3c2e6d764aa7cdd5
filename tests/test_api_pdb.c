/*
 * test_api_pdb.c - PodDisruptionBudgets over HTTP on a real musterd (port 0, fresh data dir):
 * applied in a manifest, listed by namespace, read, deleted; every kind of bad budget is a
 * 400 naming the field and changes nothing; a preemption in standalone mode spares the job a
 * budget protects and its ledger entry says 0 violations.
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
    api_util_start(&md, "cycle_interval: 0\nmark_running: true\n");
}

static void stop(void)
{
    musterd_cleanup(&md);
}

static json_t *call(const char *method, const char *path, const char *body, long want)
{
    return api_util_call(&md, method, path, body, body ? api_util_yaml : NULL, want);
}

static const char budget_db[] = "apiVersion: policy/v1\n"
                                "kind: PodDisruptionBudget\n"
                                "metadata: {name: db, namespace: prod}\n"
                                "spec:\n"
                                "  maxUnavailable: 25%\n"
                                "  selector: {matchLabels: {app: db}}\n";

START_TEST(test_api_pdb_apply_list_get_delete)
{
    json_decref(call("POST", "/api/v1/manifests", budget_db, 201));
    json_t *list = call("GET", "/api/v1/poddisruptionbudgets?namespace=prod", NULL, 200);
    json_t *items = json_object_get(list, "items");
    ck_assert_uint_eq(json_array_size(items), 1);
    json_t *b = json_array_get(items, 0);
    ck_assert_str_eq(json_string_value(json_object_get(b, "kind")), "PodDisruptionBudget");
    json_t *max = json_object_get(json_object_get(b, "spec"), "maxUnavailable");
    ck_assert_str_eq(json_string_value(max), "25%");
    json_decref(list);
    list = call("GET", "/api/v1/poddisruptionbudgets?namespace=other", NULL, 200);
    ck_assert_uint_eq(json_array_size(json_object_get(list, "items")), 0);
    json_decref(list);
    b = call("GET", "/api/v1/poddisruptionbudgets/prod/db", NULL, 200);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(b, "metadata"), "name")),
                     "db");
    json_decref(b);
    json_decref(call("DELETE", "/api/v1/poddisruptionbudgets/prod/db", NULL, 200));
    json_t *j = call("GET", "/api/v1/poddisruptionbudgets/prod/db", NULL, 404);
    ck_assert_str_eq(api_util_err_code(j), "NotFound");
    json_decref(j);
}
END_TEST

/* The first problem of a 400 (errors[0].message, else error.message). Borrowed. */
static const char *problem(json_t *j)
{
    json_t *e = json_object_get(j, "errors");
    if (!e)
        e = json_object_get(json_object_get(j, "error"), "errors");
    const char *m = json_string_value(json_object_get(json_array_get(e, 0), "message"));
    return m ? m : api_util_err_msg(j);
}

/* Each bad budget: 400, a message naming field, and no budget stored. */
START_TEST(test_api_pdb_bad_input_names_the_field)
{
    static const struct {
        const char *spec, *field;
    } cases[] = {
        {"minAvailable: 1\n  maxUnavailable: 1\n  selector: {matchLabels: {app: db}}",
         "spec: minAvailable and maxUnavailable cannot be both set"},
        {"minAvailable: -1\n  selector: {matchLabels: {app: db}}",
         "spec.minAvailable: must be greater than or equal to 0"},
        {"maxUnavailable: 101%\n  selector: {matchLabels: {app: db}}",
         "spec.maxUnavailable: must not be greater than 100%"},
        {"minAvailable: half\n  selector: {matchLabels: {app: db}}",
         "spec.minAvailable: must be an integer or percentage"},
        {"minAvailable: 1\n  selector: {}", "spec.selector: must not be empty"},
        {"minAvailable: 1", "spec.selector: must be set"},
        {"selector: {matchLabels: {app: db}}",
         "spec: one of minAvailable and maxUnavailable must be set"},
        {"minAvailable: 1\n  selector: {matchExpressions: [{key: app, operator: Near}]}",
         "spec.selector.matchExpressions[0].operator: unknown operator 'Near'"},
        {"minAvailable: 1\n  selector: {matchLabels: {app: db}}\n"
         "  unhealthyPodEvictionPolicy: Never",
         "spec.unhealthyPodEvictionPolicy: invalid value 'Never'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char doc[1024];
        snprintf(doc, sizeof(doc),
                 "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: bad}\n"
                 "spec:\n  %s\n",
                 cases[i].spec);
        json_t *j = call("POST", "/api/v1/manifests", doc, 400);
        const char *msg = problem(j);
        ck_assert_msg(msg && strstr(msg, cases[i].field), "case %zu: '%s' lacks '%s'", i,
                      msg ? msg : "(none)", cases[i].field);
        json_decref(j);
    }
    json_t *list = call("GET", "/api/v1/poddisruptionbudgets", NULL, 200);
    ck_assert_uint_eq(json_array_size(json_object_get(list, "items")), 0);
    json_decref(list);
}
END_TEST

/* lo-a (priority 10) is protected by minAvailable 1 of 1, lo-b (20) is not: hi takes lo-b. */
START_TEST(test_api_pdb_preemption_spares_the_budget)
{
    static const char cluster[] =
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4'}}\n"
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\nstatus: {allocatable: {cpu: "
        "'4'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: lo-a, labels: {app: db}}\n"
        "spec: {nodeName: n1, priority: 10, containers: [{name: c, image: x, resources: "
        "{requests: {cpu: '4'}}}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: lo-b}\n"
        "spec: {nodeName: n2, priority: 20, containers: [{name: c, image: x, resources: "
        "{requests: {cpu: '4'}}}]}\n---\napiVersion: policy/v1\nkind: PodDisruptionBudget\n"
        "metadata: {name: db}\nspec: {minAvailable: 1, selector: {matchLabels: {app: db}}}\n";
    static const char hi[] = "apiVersion: v1\nkind: Pod\nmetadata: {name: hi}\nspec: {priority: "
                             "100, containers: [{name: c, image: x, resources: {requests: "
                             "{cpu: '4'}}}]}\n";
    json_decref(call("POST", "/api/v1/manifests", cluster, 201));
    json_decref(call("POST", "/api/v1/manifests", hi, 201));
    json_decref(call("POST", "/api/v1/cycles", NULL, 200));
    json_t *l = call("GET", "/api/v1/preemptions", NULL, 200);
    json_t *items = json_is_array(l) ? l : json_object_get(l, "items");
    ck_assert_uint_eq(json_array_size(items), 1);
    json_t *e = json_array_get(items, 0);
    json_t *victims = json_object_get(e, "victims");
    ck_assert_uint_eq(json_array_size(victims), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(victims, 0), "pod")),
                     "default/lo-b");
    ck_assert_int_eq(json_integer_value(json_object_get(e, "pdbViolations")), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(e, "pdbsViolated")), 0);
    json_decref(l);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_pdb");
    TCase *tc = tcase_create("pdb");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, start, stop);
    tcase_add_test(tc, test_api_pdb_apply_list_get_delete);
    tcase_add_test(tc, test_api_pdb_bad_input_names_the_field);
    tcase_add_test(tc, test_api_pdb_preemption_spares_the_budget);
    suite_add_tcase(s, tc);
    return check_run(s);
}
