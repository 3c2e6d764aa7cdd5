/*
 * test_api_whatif.c - POST /api/v1/whatif on a real musterd: a job that would fit and
 * where, a cordon that makes it not fit, a delete that frees room, every bad input a 400
 * naming it, and none of it written (the audit log and the objects stay as they were).
 *
 * The cluster (tests/data/api/cluster/manifest.yaml): two 8-GPU nodes, n1 with a bound pod,
 * and a gang that never fits.
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
    api_util_apply_case(&md, "cluster/manifest.yaml");
    api_util_settle(&md, NULL);
}

static void stop(void)
{
    musterd_cleanup(&md);
}

static const char probe[] = "apiVersion: v1\n"
                            "kind: Pod\n"
                            "metadata: {name: probe, namespace: team}\n"
                            "spec:\n"
                            "  containers:\n"
                            "  - name: c\n"
                            "    image: x\n"
                            "    resources: {requests: {nvidia.com/gpu: \"8\"}}\n";

static json_t *whatif(const char *query, const char *body, long want)
{
    char path[256];
    snprintf(path, sizeof(path), "/api/v1/whatif%s", query);
    return api_util_call(&md, "POST", path, body, api_util_yaml, want);
}

static json_t *probe_job(json_t *res)
{
    json_t *job = json_array_get(json_object_get(res, "jobs"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(job, "id")), "team/probe");
    return job;
}

START_TEST(test_api_whatif_answers_and_writes_nothing)
{
    json_int_t seq = api_util_audit_last(&md, NULL);
    json_t *res = whatif("", probe, 200);
    json_t *job = probe_job(res);
    ck_assert(json_is_true(json_object_get(job, "wouldPlace")));
    const char *node = json_string_value(
        json_object_get(json_array_get(json_object_get(job, "members"), 0), "node"));
    ck_assert_ptr_nonnull(node);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(res, "basedOn"), "auditSeq")), seq);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(job, "why"), "state")),
                     "Scheduled");

    /* both nodes cordoned, it fits nowhere: the why says so */
    json_t *res2 = whatif("?cordon=n1,n2", probe, 200);
    job = probe_job(res2);
    ck_assert(json_is_false(json_object_get(job, "wouldPlace")));
    ck_assert_str_eq(json_string_value(json_object_get(job, "state")), "Unschedulable");
    json_decref(res2);
    json_decref(res);

    /* nothing was written: no record, no pod, no cordon */
    ck_assert_int_eq(api_util_audit_last(&md, NULL), seq);
    json_decref(api_util_call(&md, "GET", "/api/v1/pods/team/probe", NULL, NULL, 404));
    json_t *n1 = api_util_call(&md, "GET", "/api/v1/nodes/n1", NULL, NULL, 200);
    ck_assert_ptr_null(json_object_get(json_object_get(n1, "spec"), "unschedulable"));
    json_decref(n1);
}
END_TEST

START_TEST(test_api_whatif_bad_input)
{
    json_int_t seq = api_util_audit_last(&md, NULL);
    struct {
        const char *query, *body, *says;
    } bad[] = {
        {"", "", "nothing to try"},
        {"?cordon=ghost", "", "node 'ghost' not found"},
        {"?cordon=n1,,n2", "", "an empty item"},
        {"?delete=n1", "", "is not KIND/NAME"},
        {"?delete=widget/x", "", "is not KIND/NAME"},
        {"?delete=pod/team/ghost", "", "not found"},
        {"", "kind: Pod\nmetadata: {name: x}\n", "error"},
        {"", "a: [", "line"},
        {"?bogus=1", probe, "bogus"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_t *res = whatif(bad[i].query, bad[i].body, 400);
        const char *msg = api_util_err_msg(res);
        ck_assert_msg(msg && strstr(msg, bad[i].says), "%s: '%s' does not say '%s'", bad[i].query,
                      msg ? msg : "(none)", bad[i].says);
        json_decref(res);
    }
    ck_assert_int_eq(api_util_audit_last(&md, NULL), seq);
}
END_TEST

START_TEST(test_api_whatif_delete_frees_room)
{
    /* 8 cpus: with n2 cordoned, n1 has 7.5 free until default/web (500m) leaves it */
    const char *big = "apiVersion: v1\n"
                      "kind: Pod\n"
                      "metadata: {name: probe, namespace: team}\n"
                      "spec:\n"
                      "  containers:\n"
                      "  - name: c\n"
                      "    image: x\n"
                      "    resources: {requests: {cpu: \"8\"}}\n";
    json_t *res = whatif("?cordon=n2", big, 200);
    ck_assert(json_is_false(json_object_get(probe_job(res), "wouldPlace")));
    json_decref(res);
    res = whatif("?cordon=n2&delete=pod/default/web", big, 200);
    json_t *job = probe_job(res);
    ck_assert(json_is_true(json_object_get(job, "wouldPlace")));
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_array_get(json_object_get(job, "members"), 0), "node")),
                     "n1");
    json_decref(res);
    json_decref(api_util_call(&md, "GET", "/api/v1/pods/default/web", NULL, NULL, 200));
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_api_whatif_answers_and_writes_nothing, test_api_whatif_bad_input,
                            test_api_whatif_delete_frees_room, NULL};
    return check_run(check_suite("api_whatif", start, stop, tests));
}
