/*
 * test_model_pod.c - the Pod fields muster writes (model/pod.c): terminal phases, status
 * phase and nomination, conditions, binding on a copy that leaves the stored pod intact; a
 * pod decoded without the unsupported-field walk (after validation refused them) the same.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"
#include "model.h"
#include "model_support.h"
#include "check_run.h"

/* ---- pods: the fields muster writes ---- */

/* json_loads or fail; the documents below are literal test input. */
static json_t *json_of(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    ck_assert_msg(j != NULL, "%s: %s", text, e.text);
    return j;
}

/* Compact JSON with members in insertion order, to assert member order too. */
static void assert_dump(json_t *j, const char *want)
{
    char *got = json_dumps(j, JSON_COMPACT);
    ck_assert_str_eq(got, want);
    free(got);
}

START_TEST(test_model_pod_terminal_phases)
{
    static const struct {
        const char *phase;
        int terminal;
    } cases[] = {{"Succeeded", 1}, {"Failed", 1}, {"Pending", 0}, {"Running", 0},
                 {"Unknown", 0},   {"failed", 0}, {"", 0},        {NULL, 0}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        ck_assert_msg(model_pod_phase_terminal(cases[i].phase) == cases[i].terminal, "phase %s",
                      cases[i].phase ? cases[i].phase : "(null)");
    /* a decoded pod: the same rule, through its (defaulted) phase */
    const char *docs[] = {"status: {phase: Failed}\n", "status: {phase: Succeeded}\n",
                          "status: {phase: Running}\n", ""};
    for (size_t i = 0; i < 4; i++) {
        char *text = xasprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                               "spec: {nodeName: n1, containers: [{name: c}]}\n%s",
                               docs[i]);
        json_t *obj = model_test_load_one(text);
        struct model_pod p;
        ck_assert_int_eq(model_pod_decode(obj, &p, NULL), 0);
        ck_assert_int_eq(model_pod_terminal(&p), i < 2);
        /* neither a Succeeded nor a Failed member holds its gang place */
        ck_assert_int_eq(model_pod_gang_bound(&p), i >= 2);
        free(p.node_name); /* unbound: holds no place, whatever the phase */
        p.node_name = NULL;
        ck_assert_int_eq(model_pod_gang_bound(&p), 0);
        ck_assert_str_eq(model_pod_phase(obj), i == 3 ? "Pending" : p.phase);
        model_pod_release(&p);
        json_decref(obj);
        free(text);
    }
}
END_TEST

/* "Pending" (model/pod.c): every field the rule reads flips it, and the document form, the
 * decoded form and the store's pending index (test_store.c) give the same answer. */
START_TEST(test_model_pod_pending_rule)
{
    static const struct {
        const char *extra; /* appended to the Pod's spec line and document */
        int pending, unstarted;
    } cases[] = {
        {"}\n", 1, 1}, /* no nodeName, no status: a new pod */
        {"}\nstatus: {phase: Pending}\n", 1, 1},
        {", nodeName: ''}\n", 1, 1}, /* an empty nodeName is unbound */
        {", nodeName: n1}\n", 0, 1}, /* bound, not started yet */
        {", nodeName: n1}\nstatus: {phase: Pending}\n", 0, 1},
        {", nodeName: n1}\nstatus: {phase: Running}\n", 0, 0},
        {"}\nstatus: {phase: Running}\n", 0, 0},
        {"}\nstatus: {phase: Succeeded}\n", 0, 0},
        {"}\nstatus: {phase: Failed}\n", 0, 0},
        {"}\nstatus: {phase: Unknown}\n", 0, 0},
        {"}\nmetadata: {name: p, deletionTimestamp: '2026-01-01T00:00:00Z'}\n", 0, 0},
        {", nodeName: n1}\nmetadata: {name: p, deletionTimestamp: '2026-01-01T00:00:00Z'}\n", 0, 0},
        /* a null deletionTimestamp is no deletion, as in Kubernetes (the store's index read
         * the member's presence until issue #24) */
        {"}\nmetadata: {name: p, deletionTimestamp: null}\n", 1, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *text = xasprintf("apiVersion: v1\nkind: Pod\nspec: {containers: [{name: c}]%s%s",
                               cases[i].extra,
                               strstr(cases[i].extra, "metadata") ? "" : "metadata: {name: p}\n");
        json_t *obj = model_test_load_one(text);
        struct model_pod p;
        ck_assert_int_eq(model_pod_decode(obj, &p, NULL), 0);
        ck_assert_msg(model_pod_json_pending(obj) == cases[i].pending, "json form, case %zu", i);
        ck_assert_msg(model_pod_is_pending(&p) == cases[i].pending, "typed form, case %zu", i);
        ck_assert_msg(model_pod_unstarted(&p) == cases[i].unstarted, "unstarted, case %zu", i);
        model_pod_release(&p);
        json_decref(obj);
        free(text);
    }
    /* a typed pod whose phase is unset (the view may clear it) reads as Pending */
    struct model_pod p = {0};
    ck_assert_int_eq(model_pod_is_pending(&p), 1);
    p.deletion_ms = 1;
    ck_assert_int_eq(model_pod_is_pending(&p), 0);
    ck_assert_int_eq(model_pod_unstarted(&p), 0);
}
END_TEST

START_TEST(test_model_pod_status_phase_and_nomination)
{
    json_t *pod = json_of("{\"metadata\": {\"name\": \"p\"}}");
    /* clearing a nomination does not invent a status */
    model_pod_set_nominated(pod, NULL);
    ck_assert_ptr_null(json_object_get(pod, "status"));
    json_t *st = model_pod_status(pod);
    ck_assert_ptr_eq(st, json_object_get(pod, "status"));
    ck_assert_ptr_eq(model_pod_status(pod), st); /* created once */
    ck_assert_int_eq(json_object_size(st), 0);

    model_pod_set_nominated(pod, "n2");
    model_pod_set_phase(pod, "Failed", "NodeLost", "gone");
    assert_dump(st, "{\"nominatedNodeName\":\"n2\",\"phase\":\"Failed\",\"reason\":\"NodeLost\","
                    "\"message\":\"gone\"}");
    ck_assert_str_eq(model_pod_phase(pod), "Failed");
    /* NULL reason and message leave what is there */
    model_pod_set_phase(pod, "Running", NULL, NULL);
    assert_dump(st, "{\"nominatedNodeName\":\"n2\",\"phase\":\"Running\",\"reason\":\"NodeLost\","
                    "\"message\":\"gone\"}");
    model_pod_set_nominated(pod, NULL);
    ck_assert_ptr_null(json_object_get(st, "nominatedNodeName"));

    model_pod_set_deletion(pod, "2026-01-01T00:00:05.250Z");
    assert_dump(json_object_get(pod, "metadata"),
                "{\"name\":\"p\",\"deletionTimestamp\":\"2026-01-01T00:00:05.250Z\"}");
    json_decref(pod);
}
END_TEST

START_TEST(test_model_pod_set_condition_replaces_at_end)
{
    json_t *pod =
        json_of("{\"status\": {\"conditions\": ["
                "{\"type\": \"PodScheduled\", \"status\": \"False\"},"
                "{\"type\": \"Ready\", \"status\": \"True\"},"
                "{\"status\": \"True\"},"
                "{\"type\": \"PodScheduled\", \"status\": \"False\", \"reason\": \"x\"}]}}");
    json_t *before = json_object_get(json_object_get(pod, "status"), "conditions");
    json_incref(before);
    model_pod_set_condition(pod, "PodScheduled", "True", NULL, NULL, "2026-01-01T00:00:01Z");
    /* every PodScheduled goes, the others keep their order, the new one is last; NULL
     * reason and message are left out */
    assert_dump(json_object_get(json_object_get(pod, "status"), "conditions"),
                "[{\"type\":\"Ready\",\"status\":\"True\"},{\"status\":\"True\"},"
                "{\"type\":\"PodScheduled\",\"status\":\"True\","
                "\"lastTransitionTime\":\"2026-01-01T00:00:01Z\"}]");
    /* the old array was replaced, not edited */
    ck_assert_int_eq(json_array_size(before), 4);
    json_decref(before);

    model_pod_set_condition(pod, "DisruptionTarget", "True", "PreemptionByScheduler", "why",
                            "2026-01-01T00:00:02.500Z");
    json_t *conds = json_object_get(json_object_get(pod, "status"), "conditions");
    ck_assert_int_eq(json_array_size(conds), 4);
    assert_dump(json_array_get(conds, 3),
                "{\"type\":\"DisruptionTarget\",\"status\":\"True\","
                "\"reason\":\"PreemptionByScheduler\",\"message\":\"why\","
                "\"lastTransitionTime\":\"2026-01-01T00:00:02.500Z\"}");
    json_decref(pod);

    /* no status at all: created with the one condition */
    pod = json_object();
    model_pod_set_condition(pod, "Ready", "False", "R", NULL, "2026-01-01T00:00:03Z");
    assert_dump(pod, "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\","
                     "\"reason\":\"R\",\"lastTransitionTime\":\"2026-01-01T00:00:03Z\"}]}}");
    json_decref(pod);
}
END_TEST

START_TEST(test_model_pod_condition_time)
{
    json_t *pod = json_of("{\"status\": {\"conditions\": ["
                          "{\"type\": \"Ready\", \"lastTransitionTime\": \"2026-01-01T00:00:09Z\"},"
                          "{\"type\": \"PodScheduled\", \"lastTransitionTime\": \"yesterday\"},"
                          "{\"type\": \"PodScheduled\"},"
                          "{\"type\": \"PodScheduled\","
                          " \"lastTransitionTime\": \"2026-01-01T00:00:01.500Z\"},"
                          "{\"type\": \"PodScheduled\","
                          " \"lastTransitionTime\": \"2026-01-01T00:00:07Z\"}]}}");
    int64_t ms = -1;
    /* the first one that has a valid time */
    ck_assert_int_eq(model_pod_condition_time(pod, "PodScheduled", &ms), 0);
    ck_assert_int_eq(ms, 1767225601500LL);
    ck_assert_int_eq(model_pod_condition_time(pod, "Ready", &ms), 0);
    ck_assert_int_eq(ms, 1767225609000LL);
    ms = -1;
    ck_assert_int_eq(model_pod_condition_time(pod, "DisruptionTarget", &ms), ERR_NOT_FOUND);
    ck_assert_int_eq(ms, -1);
    json_decref(pod);
    /* a pod without status: not found, and still without status */
    pod = json_object();
    ck_assert_int_eq(model_pod_condition_time(pod, "PodScheduled", &ms), ERR_NOT_FOUND);
    ck_assert_int_eq(ms, -1);
    ck_assert_int_eq(json_object_size(pod), 0);
    json_decref(pod);
}
END_TEST

/* The way cycle_stmt.c binds: a shallow copy with its own spec and status. */
static json_t *bind_copy(json_t *old, const char *node, const char *ts)
{
    json_t *pod = json_copy(old);
    json_t *spec = json_object_get(old, "spec"), *status = json_object_get(old, "status");
    json_object_set_new(pod, "spec", spec ? json_copy(spec) : json_object());
    json_object_set_new(pod, "status", status ? json_copy(status) : json_object());
    model_pod_set_bound(pod, node, ts);
    return pod;
}

START_TEST(test_model_pod_set_bound_leaves_the_stored_pod)
{
    json_t *old = json_of("{\"metadata\": {\"name\": \"p\"}, \"spec\": {\"containers\": []},"
                          " \"status\": {\"nominatedNodeName\": \"n9\", \"conditions\": ["
                          "{\"type\": \"PodScheduled\", \"status\": \"False\"},"
                          "{\"type\": \"Ready\", \"status\": \"False\"}]}}");
    json_t *was = json_deep_copy(old);
    json_t *pod = bind_copy(old, "n1", "2026-01-01T00:00:04Z");
    ck_assert(json_equal(old, was)); /* nothing shared was edited */
    assert_dump(pod, "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[],"
                     "\"nodeName\":\"n1\"},\"status\":{\"conditions\":[{\"type\":\"Ready\","
                     "\"status\":\"False\"},{\"type\":\"PodScheduled\",\"status\":\"True\","
                     "\"lastTransitionTime\":\"2026-01-01T00:00:04Z\"}],\"phase\":\"Pending\","
                     "\"startTime\":\"2026-01-01T00:00:04Z\"}}");
    /* the metadata is shared, not copied */
    ck_assert_ptr_eq(json_object_get(pod, "metadata"), json_object_get(old, "metadata"));
    json_decref(pod);
    json_decref(was);
    json_decref(old);

    /* a phase and a start time that are there stay; a pod without spec and status gets
     * both */
    old =
        json_of("{\"status\": {\"phase\": \"Running\", \"startTime\": \"2026-01-01T00:00:01Z\"}}");
    pod = bind_copy(old, "n2", "2026-01-01T00:00:05Z");
    ck_assert_str_eq(model_pod_phase(pod), "Running");
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(pod, "status"), "startTime")),
        "2026-01-01T00:00:01Z");
    ck_assert_str_eq(model_pod_phase(old), "Running");
    ck_assert_ptr_null(json_object_get(old, "spec"));
    json_decref(pod);
    json_decref(old);
    pod = json_object();
    model_pod_set_bound(pod, "n3", "2026-01-01T00:00:06Z");
    assert_dump(pod, "{\"spec\":{\"nodeName\":\"n3\"},\"status\":{\"phase\":\"Pending\","
                     "\"startTime\":\"2026-01-01T00:00:06Z\",\"conditions\":[{\"type\":"
                     "\"PodScheduled\",\"status\":\"True\","
                     "\"lastTransitionTime\":\"2026-01-01T00:00:06Z\"}]}}");
    json_decref(pod);
}
END_TEST

/* ---- decoding a pod whose unsupported fields were refused ---- */

static struct model_manifest parse_validated(const char *yaml, int *problems)
{
    struct model_manifest m = {0};
    struct err err = ERR_INIT;
    ck_assert_msg(model_manifest_parse(yaml, strlen(yaml), MODEL_FMT_AUTO, &m, &err) == 0, "%s",
                  err.msg);
    json_t *errors = json_array(), *warnings = json_array();
    *problems = model_validate_all(&m, yaml, strlen(yaml), MODEL_FIELDS_IGNORE, errors, warnings);
    json_decref(errors);
    json_decref(warnings);
    return m;
}

/* model_pod_decode_refused decodes what model_pod_decode does, but for the walk: and
 * model_validate_all refuses every document the walk would find something in, in every
 * field validation mode (here the most lenient). */
START_TEST(test_model_pod_decode_refused_same_as_decode)
{
    const char *ok =
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: t, labels: {app: x, "
        "pod-group.scheduling.sigs.k8s.io: g}}\n"
        "spec:\n  priority: 5\n  nodeSelector: {zone: z1}\n"
        "  tolerations: [{key: k, operator: Exists, effect: NoSchedule}]\n"
        "  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
        "{nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [z1]}]}]}}}\n"
        "  containers: [{name: c, image: i, resources: {requests: {cpu: 250m, memory: 1Gi}}}]\n"
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\n"
        "spec: {containers: [{name: c, image: i}]}\n";
    int problems = -1;
    struct model_manifest m = parse_validated(ok, &problems);
    ck_assert_int_eq(problems, 0);
    ck_assert_int_eq(m.validated, 1);
    ck_assert_int_eq(m.fields_checked, 1);
    for (size_t i = 0; i < m.n; i++) {
        struct model_pod a, b;
        struct err err = ERR_INIT;
        ck_assert_int_eq(model_pod_decode(m.docs[i].obj, &a, &err), 0);
        ck_assert_int_eq(model_pod_decode_refused(m.docs[i].obj, &b, &err), 0);
        ck_assert_ptr_null(a.unsupported);
        ck_assert_ptr_null(b.unsupported);
        ck_assert_str_eq(a.ns, b.ns);
        ck_assert_str_eq(a.name, b.name);
        ck_assert_uint_eq(a.nrequests, b.nrequests);
        for (size_t r = 0; r < a.nrequests; r++) {
            ck_assert_str_eq(a.requests[r].name, b.requests[r].name);
            ck_assert(a.requests[r].value == b.requests[r].value);
        }
        ck_assert_uint_eq(a.nlabels, b.nlabels);
        ck_assert_uint_eq(a.nnode_selector, b.nnode_selector);
        ck_assert_uint_eq(a.ntolerations, b.ntolerations);
        ck_assert_int_eq(a.priority, b.priority);
        ck_assert_int_eq(a.aff != NULL, b.aff != NULL);
        ck_assert_int_eq(a.group != NULL, b.group != NULL);
        model_pod_release(&a);
        model_pod_release(&b);
    }
    model_manifest_free(&m);

    const char *bad = "apiVersion: v1\nkind: Pod\nmetadata: {name: c}\n"
                      "spec: {runtimeClassName: gvisor, containers: [{name: c, image: i}]}\n";
    m = parse_validated(bad, &problems);
    ck_assert_int_gt(problems, 0); /* refused: the refused decode never sees it */
    ck_assert_int_eq(m.validated, 0);
    ck_assert_int_eq(m.fields_checked, 0);
    struct model_pod a;
    struct err err = ERR_INIT;
    ck_assert_int_eq(model_pod_decode(m.docs[0].obj, &a, &err), 0);
    ck_assert_str_eq(a.unsupported, "spec.runtimeClassName");
    model_pod_release(&a);
    model_manifest_free(&m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model_pod");
    TCase *tc = tcase_create("pod");
    tcase_add_test(tc, test_model_pod_terminal_phases);
    tcase_add_test(tc, test_model_pod_pending_rule);
    tcase_add_test(tc, test_model_pod_status_phase_and_nomination);
    tcase_add_test(tc, test_model_pod_set_condition_replaces_at_end);
    tcase_add_test(tc, test_model_pod_condition_time);
    tcase_add_test(tc, test_model_pod_set_bound_leaves_the_stored_pod);
    tcase_add_test(tc, test_model_pod_decode_refused_same_as_decode);
    suite_add_tcase(s, tc);
    return check_run(s);
}
