/*
 * test_model_pdb.c - the PodDisruptionBudget kind in the model: its names, the typed decode
 * (percentages, a missing or empty selector selecting nothing, disruptedPods), the disruption
 * controller's arithmetic (pkg/controller/disruption: getExpectedPodCount, updatePdbStatus),
 * and what admission refuses beyond Kubernetes' validation.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "err.h"
#include "model.h"

static json_t *doc(const char *text)
{
    json_error_t e;
    json_t *o = json_loads(text, 0, &e);
    ck_assert_msg(o != NULL, "%s", e.text);
    return o;
}

START_TEST(test_model_pdb_names)
{
    enum model_kind k;
    static const char *const names[] = {"pdb", "poddisruptionbudgets", "PodDisruptionBudget"};
    for (size_t i = 0; i < 3; i++) {
        ck_assert_int_eq(model_kind_from_resource(names[i], &k), 0);
        ck_assert_int_eq(k, MODEL_PDB);
    }
    ck_assert_str_eq(model_kind_api_version(MODEL_PDB), "policy/v1");
    ck_assert(model_kind_namespaced(MODEL_PDB));
    ck_assert_int_eq(model_kind_from_doc("PodDisruptionBudget", "policy/v1", &k, NULL), 0);
    ck_assert_int_lt(model_kind_from_doc("PodDisruptionBudget", "v1", &k, NULL), 0);
}
END_TEST

START_TEST(test_model_pdb_decode)
{
    struct model_pdb b;
    struct err err = ERR_INIT;
    json_t *o =
        doc("{\"metadata\": {\"name\": \"db\", \"namespace\": \"prod\"}, \"spec\": "
            "{\"maxUnavailable\": \"30%\", \"unhealthyPodEvictionPolicy\": \"AlwaysAllow\", "
            "\"selector\": {\"matchLabels\": {\"app\": \"db\"}}}, \"status\": "
            "{\"disruptionsAllowed\": 2, \"disruptedPods\": {\"db-2\": \"t\", \"db-0\": "
            "\"t\"}}}");
    ck_assert_int_eq(model_pdb_decode(o, &b, &err), 0);
    ck_assert_str_eq(b.ns, "prod");
    ck_assert(!b.min_available.set);
    ck_assert(b.max_unavailable.set && b.max_unavailable.percent);
    ck_assert_int_eq(b.max_unavailable.value, 30);
    ck_assert(b.always_allow && b.has_status);
    ck_assert_int_eq(b.disruptions_allowed, 2);
    ck_assert(model_pdb_disrupted(&b, "db-0") && model_pdb_disrupted(&b, "db-2"));
    ck_assert(!model_pdb_disrupted(&b, "db-1"));
    struct model_kv db = {"app", "db"}, web = {"app", "web"};
    ck_assert(model_selector_match(&b.sel, &db, 1));
    ck_assert(!model_selector_match(&b.sel, &web, 1));
    model_pdb_release(&b);
    json_decref(o);
    /* a mirrored budget without a selector, or with an empty one, selects nothing */
    static const char *const none[] = {
        "{\"metadata\": {\"name\": \"a\"}, \"spec\": {\"minAvailable\": 1}}",
        "{\"metadata\": {\"name\": \"a\"}, \"spec\": {\"minAvailable\": 1, \"selector\": {}}}"};
    for (size_t i = 0; i < 2; i++) {
        o = doc(none[i]);
        ck_assert_int_eq(model_pdb_decode(o, &b, &err), 0);
        ck_assert(!b.has_status);
        ck_assert(!model_selector_match(&b.sel, &db, 1));
        model_pdb_release(&b);
        json_decref(o);
    }
}
END_TEST

/* (spec, expected pods, healthy pods) -> (desired healthy, disruptions allowed) */
START_TEST(test_model_pdb_allowed_as_the_disruption_controller)
{
    static const struct {
        const char *spec;
        int32_t expected, healthy, desired, allowed;
    } cases[] = {
        {"{\"minAvailable\": 2}", 3, 3, 2, 1},
        {"{\"minAvailable\": 2}", 3, 2, 2, 0},
        {"{\"minAvailable\": 5}", 3, 3, 5, 0},       /* never negative */
        {"{\"minAvailable\": \"50%\"}", 3, 3, 2, 1}, /* 1.5 rounds up */
        {"{\"minAvailable\": \"100%\"}", 2, 2, 2, 0},
        {"{\"maxUnavailable\": 1}", 4, 4, 3, 1},
        {"{\"maxUnavailable\": \"25%\"}", 5, 5, 3, 2}, /* 1.25 rounds up to 2 unavailable */
        {"{\"maxUnavailable\": 0}", 2, 2, 2, 0},
        {"{\"maxUnavailable\": 3}", 2, 2, 0, 2}, /* desired never below 0 */
        {"{\"minAvailable\": 0}", 0, 0, 0, 0},   /* nothing expected: nothing allowed */
        {"{\"minAvailable\": 0}", 2, 2, 0, 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *o = json_pack("{s:{s:s},s:o}", "metadata", "name", "b", "spec", doc(cases[i].spec));
        struct model_pdb b;
        ck_assert_int_eq(model_pdb_decode(o, &b, NULL), 0);
        int32_t desired = -1;
        int32_t allowed = model_pdb_allowed(&b, cases[i].expected, cases[i].healthy, &desired);
        ck_assert_msg(desired == cases[i].desired && allowed == cases[i].allowed,
                      "case %zu (%s, %d expected, %d healthy): desired %d allowed %d, want %d %d",
                      i, cases[i].spec, cases[i].expected, cases[i].healthy, desired, allowed,
                      cases[i].desired, cases[i].allowed);
        model_pdb_release(&b);
        json_decref(o);
    }
}
END_TEST

START_TEST(test_model_pdb_admission)
{
    static const struct {
        const char *spec, *field;
    } cases[] = {
        {"{\"selector\": {\"matchLabels\": {\"a\": \"b\"}}}", "spec"},
        {"{\"minAvailable\": 1}", "spec.selector"},
        {"{\"minAvailable\": 1, \"selector\": {}}", "spec.selector"},
        {"{\"minAvailable\": 1, \"selector\": {\"matchExpressions\": []}}", "spec.selector"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct err err = ERR_INIT;
        json_t *o = json_pack("{s:o}", "spec", doc(cases[i].spec));
        ck_assert_int_eq(model_pdb_admit(o, &err), ERR_INVALID);
        ck_assert_str_eq(err.field, cases[i].field);
        ck_assert_msg(!strncmp(err.msg, cases[i].field, strlen(cases[i].field)), "%s", err.msg);
        json_decref(o);
    }
    json_t *ok =
        doc("{\"spec\": {\"maxUnavailable\": \"10%\", \"selector\": {\"matchExpressions\": "
            "[{\"key\": \"app\", \"operator\": \"Exists\"}]}}}");
    ck_assert_int_eq(model_pdb_admit(ok, NULL), 0);
    json_decref(ok);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model_pdb");
    TCase *tc = tcase_create("pdb");
    tcase_add_test(tc, test_model_pdb_names);
    tcase_add_test(tc, test_model_pdb_decode);
    tcase_add_test(tc, test_model_pdb_allowed_as_the_disruption_controller);
    tcase_add_test(tc, test_model_pdb_admission);
    suite_add_tcase(s, tc);
    return check_run(s);
}
