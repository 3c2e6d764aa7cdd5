/*
 * test_cli_server.c - `muster` against a real musterd (started on port 0 with a fresh
 * data directory per test): apply, get tables, -o json|yaml, delete, errors, auth,
 * audit export/verify, cycle, why and describe (with the topology and preemption parts on
 * the demo cluster), preemptions and topology tables.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "cli_support.h"
#include "http_client.h"
#include "err.h"
#include "model.h"
#include "check_run.h"

static struct cli_musterd d;
static const char *env[2];

/* Runs muster against d and checks the exit code; caller releases r. */
static void run_ok(struct cli_result *r, const char *stdin_data, const char *const *args)
{
    cli_run_ok(env, stdin_data, args, r);
}

static void apply_cluster(void)
{
    struct cli_result r;
    char *path = cli_data_path("apply/cluster.yaml");
    run_ok(&r, NULL, CLI_ARGS("apply", "-f", path));
    ck_assert_str_eq(r.out, "node/n1 created\n"
                            "node/n2 created\n"
                            "podgroup/default/train created\n"
                            "pod/default/w-0 created\n"
                            "pod/default/w-1 created\n");
    cli_result_release(&r);
    free(path);
}

START_TEST(test_cli_apply_file_and_stdin)
{
    struct cli_result r;
    apply_cluster();
    char *json = cli_data("apply/pod.json");
    run_ok(&r, json, CLI_ARGS("apply", "-f", "-"));
    ck_assert_str_eq(r.out, "pod/team-a/solo created\n");
    cli_result_release(&r);
    /* the same again changes nothing */
    run_ok(&r, json, CLI_ARGS("apply", "-f", "-"));
    ck_assert_str_eq(r.out, "pod/team-a/solo unchanged\n");
    cli_result_release(&r);
    free(json);
}
END_TEST

/* A .ndjson file is sent as NDJSON: one object a line. */
START_TEST(test_cli_apply_ndjson_file)
{
    struct cli_result r;
    char path[] = "/tmp/muster-cli-XXXXXX.ndjson";
    int fd = mkstemps(path, 7);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(
        test_write_file(
            path, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"nd-a\"}}\n"
                  "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"nd-b\"}}\n"),
        0);
    run_ok(&r, NULL, CLI_ARGS("apply", "-f", path));
    ck_assert_str_eq(r.out, "node/nd-a created\nnode/nd-b created\n");
    cli_result_release(&r);
    unlink(path);
}
END_TEST

/* --validate like kubectl's: strict (the server's default) refuses an unknown field, warn
 * applies without it and prints the warning, a bad value is a usage error. */
START_TEST(test_cli_apply_validate)
{
    struct cli_result r;
    const char *pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: typo}\n"
                      "spec:\n  priorty: 1\n  containers: [{name: c}]\n";
    cli_run(env, pod, CLI_ARGS("apply", "-f", "-"), &r);
    ck_assert_int_ne(r.status, 0);
    ck_assert_msg(strstr(r.err, "spec.priorty: unknown field"), "%s", r.err);
    cli_result_release(&r);
    cli_run(env, pod, CLI_ARGS("apply", "-f", "-", "--validate", "bogus"), &r);
    ck_assert_int_ne(r.status, 0);
    ck_assert_msg(strstr(r.err, "flag '--validate' must be strict, warn or ignore"), "%s", r.err);
    cli_result_release(&r);
    run_ok(&r, pod, CLI_ARGS("apply", "-f", "-", "--validate=warn"));
    ck_assert_str_eq(r.out, "pod/default/typo created\n");
    ck_assert_msg(strstr(r.err, "Warning: document 1 (Pod default/typo), spec.priorty: unknown "
                                "field (not in PodSpec), dropped"),
                  "%s", r.err);
    cli_result_release(&r);
}
END_TEST

START_TEST(test_cli_get_tables)
{
    struct cli_result r;
    apply_cluster();
    char *json = cli_data("apply/pod.json");
    run_ok(&r, json, CLI_ARGS("apply", "-f", "-"));
    cli_result_release(&r);
    free(json);

    run_ok(&r, NULL, CLI_ARGS("get", "nodes"));
    ck_assert_int_eq(cli_count_lines(r.out), 3);
    ck_assert_msg(strncmp(r.out, "NAME   STATUS   ", 16) == 0, "%s", r.out);
    cli_expect_line(r.out, 0, "NAME STATUS CPU MEMORY GPU PODS AGE");
    cli_expect_line(r.out, 1, "n1 Ready ");
    cli_expect_line(r.out, 2, "n2 Ready ");
    ck_assert_msg(strstr(r.out, "/8 ") && strstr(r.out, "/32Gi ") && strstr(r.out, "/4 ") &&
                      strstr(r.out, "/110 "),
                  "no used/allocatable cells:\n%s", r.out);
    cli_result_release(&r);

    run_ok(&r, NULL, CLI_ARGS("get", "pods"));
    ck_assert_int_eq(cli_count_lines(r.out), 3);
    cli_expect_line(r.out, 0, "NAME PHASE NODE AGE");
    cli_expect_line(r.out, 1, "w-0 ");
    cli_expect_line(r.out, 2, "w-1 ");
    cli_result_release(&r);

    run_ok(&r, NULL, CLI_ARGS("get", "pods", "-A"));
    ck_assert_int_eq(cli_count_lines(r.out), 4);
    cli_expect_line(r.out, 0, "NAMESPACE NAME PHASE NODE AGE");
    cli_expect_line(r.out, 1, "default w-0 ");
    cli_expect_line(r.out, 3, "team-a solo ");
    cli_result_release(&r);

    run_ok(&r, NULL, CLI_ARGS("get", "po", "-n", "team-a"));
    ck_assert_int_eq(cli_count_lines(r.out), 2);
    cli_expect_line(r.out, 1, "solo ");
    cli_result_release(&r);

    run_ok(&r, NULL, CLI_ARGS("get", "podgroups"));
    ck_assert_int_eq(cli_count_lines(r.out), 2);
    cli_expect_line(r.out, 0, "NAME MINMEMBER AGE");
    cli_expect_line(r.out, 1, "train 2 ");
    cli_result_release(&r);

    run_ok(&r, NULL, CLI_ARGS("get", "jobs"));
    cli_expect_line(r.out, 0, "NAMESPACE NAME STATE REASON PRIORITY MIN PLACED PENDING AGE");
    ck_assert_int_eq(cli_count_lines(r.out), 3);
    /* REASON: the why's primary code (the cycle timer may have placed them already) */
    ck_assert_msg((cli_has_line(r.out, "default train Pending NotTried ") ||
                   cli_has_line(r.out, "default train Scheduled <none> ")) &&
                      (cli_has_line(r.out, "team-a solo Pending NotTried ") ||
                       cli_has_line(r.out, "team-a solo Scheduled <none> ")),
                  "%s", r.out);
    cli_result_release(&r);

    run_ok(&r, NULL, CLI_ARGS("get", "jobs", "-n", "team-a"));
    ck_assert_int_eq(cli_count_lines(r.out), 2);
    cli_expect_line(r.out, 1, "team-a solo ");
    cli_result_release(&r);

    run_ok(&r, NULL, CLI_ARGS("get", "pc"));
    ck_assert_int_eq(cli_count_lines(r.out), 3);
    cli_expect_line(r.out, 0, "NAME VALUE GLOBAL-DEFAULT PREEMPTION-POLICY AGE");
    cli_expect_line(r.out, 1, "system-cluster-critical 2000000000 false PreemptLowerPriority ");
    cli_expect_line(r.out, 2, "system-node-critical 2000001000 false PreemptLowerPriority ");
    cli_result_release(&r);
}
END_TEST

START_TEST(test_cli_output_json_and_yaml)
{
    struct cli_result r;
    apply_cluster();
    json_t *list = cli_run_json(env, CLI_ARGS("get", "pods", "-o", "json"));
    json_t *items = json_object_get(list, "items");
    ck_assert_int_eq(json_array_size(items), 2);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_array_get(items, 0), "metadata"), "name")),
                     "w-0");
    json_decref(list);

    const char *const objects[][3] = {
        {"pod", "w-0", "Pod"}, {"node", "n1", "Node"}, {"podgroup", "train", "PodGroup"}};
    for (size_t i = 0; i < 3; i++) {
        json_t *want =
            cli_run_json(env, CLI_ARGS("get", objects[i][0], objects[i][1], "-o", "json"));
        ck_assert_str_eq(json_string_value(json_object_get(want, "kind")), objects[i][2]);
        run_ok(&r, NULL, CLI_ARGS("get", objects[i][0], objects[i][1], "-o", "yaml"));
        struct model_manifest m = {0};
        struct err err = ERR_INIT;
        ck_assert_msg(model_manifest_parse(r.out, strlen(r.out), MODEL_FMT_YAML, &m, &err) == 0,
                      "%s:\n%s", err.msg, r.out);
        ck_assert_int_eq(m.n, 1);
        ck_assert_msg(json_equal(m.docs[0].obj, want), "yaml differs from json:\n%s", r.out);
        model_manifest_free(&m);
        cli_result_release(&r);
        json_decref(want);
    }
}
END_TEST

START_TEST(test_cli_delete_and_not_found)
{
    struct cli_result r;
    apply_cluster();
    run_ok(&r, NULL, CLI_ARGS("delete", "pod", "w-1"));
    ck_assert_str_eq(r.out, "pod/default/w-1 deleted\n");
    cli_result_release(&r);
    run_ok(&r, NULL, CLI_ARGS("delete", "node", "n2"));
    ck_assert_str_eq(r.out, "node/n2 deleted\n");
    cli_result_release(&r);

    cli_run(env, NULL, CLI_ARGS("get", "pod", "w-1"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "error: pod 'default/w-1' not found\n");
    ck_assert_str_eq(r.out, "");
    cli_result_release(&r);
    cli_run(env, NULL, CLI_ARGS("delete", "pod", "default/w-1"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "error: pod 'default/w-1' not found\n");
    cli_result_release(&r);

    run_ok(&r, NULL, CLI_ARGS("get", "pods"));
    ck_assert_int_eq(cli_count_lines(r.out), 2);
    cli_expect_line(r.out, 1, "w-0 ");
    cli_result_release(&r);
}
END_TEST

START_TEST(test_cli_invalid_manifest_lists_every_error)
{
    struct cli_result r;
    char *path = cli_data_path("invalid/manifest.yaml");
    cli_run(env, NULL, CLI_ARGS("apply", "-f", path), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.out, "");
    ck_assert_msg(strncmp(r.err, "error: ", 7) == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "document 2 (Pod default/bad-cpu)") && strstr(r.err, "'12x'"), "%s",
                  r.err);
    ck_assert_msg(strstr(r.err, "document 3 (Pod default/bad-priority), spec.priority"), "%s",
                  r.err);
    ck_assert_int_ge(cli_count_lines(r.err), 3);
    cli_result_release(&r);
    /* nothing was written */
    run_ok(&r, NULL, CLI_ARGS("get", "nodes"));
    ck_assert_str_eq(r.out, "");
    ck_assert_str_eq(r.err, "No resources found\n");
    cli_result_release(&r);
    free(path);
}
END_TEST

START_TEST(test_cli_token_required)
{
    struct cli_result r;
    char *path = cli_data_path("apply/cluster.yaml");
    cli_musterd_stop(&d);
    cli_musterd_start("s3cret", &d);
    env[0] = d.server_env;

    cli_run(env, NULL, CLI_ARGS("apply", "-f", path), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strncmp(r.err, "error: ", 7) == 0 && strlen(r.err) > 8, "%s", r.err);
    cli_result_release(&r);
    cli_run(env, NULL, CLI_ARGS("--token", "wrong", "apply", "-f", path), &r);
    ck_assert_int_eq(r.status, 1);
    cli_result_release(&r);

    cli_run(env, NULL, CLI_ARGS("apply", "-f", path, "--token", "s3cret"), &r);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "pod/default/w-0 created\n"));
    cli_result_release(&r);

    const char *with_env[] = {d.server_env, "MUSTER_TOKEN=s3cret", NULL};
    cli_run(with_env, NULL, CLI_ARGS("delete", "pod", "w-0"), &r);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_str_eq(r.out, "pod/default/w-0 deleted\n");
    cli_result_release(&r);
    free(path);
}
END_TEST

START_TEST(test_cli_audit_export_and_verify)
{
    struct cli_result r;
    apply_cluster();
    run_ok(&r, NULL, CLI_ARGS("cycle"));
    cli_result_release(&r);

    run_ok(&r, NULL, CLI_ARGS("audit", "export"));
    int lines = 0;
    uint64_t last = 0;
    for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
        json_error_t je;
        json_t *rec = json_loads(line, 0, &je);
        ck_assert_msg(rec != NULL, "line %d is not JSON: %s", lines + 1, line);
        uint64_t seq = (uint64_t)json_integer_value(json_object_get(rec, "seq"));
        ck_assert_msg(seq > last, "seq %llu after %llu", (unsigned long long)seq,
                      (unsigned long long)last);
        last = seq;
        ck_assert_ptr_nonnull(json_object_get(rec, "hash"));
        json_decref(rec);
        lines++;
    }
    ck_assert_int_ge(lines, 6); /* five applied records and a cycle */
    cli_result_release(&r);

    run_ok(&r, NULL, CLI_ARGS("audit", "export", "--kind", "applied", "--limit", "2"));
    ck_assert_int_eq(cli_count_lines(r.out), 2);
    ck_assert_ptr_nonnull(strstr(r.out, "\"kind\":\"applied\""));
    cli_result_release(&r);

    /* an unknown kind is an error listing the kinds, not an empty export */
    cli_run(env, NULL, CLI_ARGS("audit", "export", "--kind", "nosuch"), &r);
    ck_assert_msg(r.status != 0, "exit %d: %s%s", r.status, r.out, r.err);
    ck_assert_msg(strstr(r.err, "unknown audit kind 'nosuch'") && strstr(r.err, "running"),
                  "stderr: %s", r.err);
    ck_assert_str_eq(r.out, "");
    cli_result_release(&r);

    run_ok(&r, NULL, CLI_ARGS("audit", "verify"));
    ck_assert_msg(strncmp(r.out, "audit chain ok: records 1..", 27) == 0, "%s", r.out);
    cli_result_release(&r);
    run_ok(&r, NULL, CLI_ARGS("audit", "verify", "--from", "2", "--to", "3", "-o", "json"));
    json_t *v = json_loads(r.out, 0, NULL);
    ck_assert(json_is_true(json_object_get(v, "ok")));
    ck_assert_int_eq(json_integer_value(json_object_get(v, "checked")), 2);
    json_decref(v);
    cli_result_release(&r);
}
END_TEST

START_TEST(test_cli_audit_verify_broken_chain)
{
    struct cli_result r;
    apply_cluster();
    cli_musterd_halt(&d);
    /* record 2 or 3 is "applied Node n1/n2"; a flipped byte must break the chain there */
    ck_assert_int_ge(cli_musterd_tamper(&d, "\"name\":\"n2\"},\"seq\"", "\"name\":\"n7\"},\"seq\""),
                     1);
    cli_musterd_resume(&d);
    env[0] = d.server_env;
    cli_run(env, NULL, CLI_ARGS("audit", "verify"), &r);
    ck_assert_msg(r.status == 1, "exit %d: %s%s", r.status, r.out, r.err);
    ck_assert_msg(strncmp(r.out, "audit chain BROKEN at record ", 29) == 0, "%s", r.out);
    cli_result_release(&r);
    /* a range before the damage still verifies */
    run_ok(&r, NULL, CLI_ARGS("audit", "verify", "--to", "1"));
    ck_assert_msg(strncmp(r.out, "audit chain ok: records 1..1, 1 checked", 39) == 0, "%s", r.out);
    cli_result_release(&r);
}
END_TEST

START_TEST(test_cli_cycle_why_describe)
{
    struct cli_result r;
    apply_cluster();
    run_ok(&r, NULL, CLI_ARGS("cycle"));
    ck_assert_msg(strncmp(r.out, "cycle ", 6) == 0 && strstr(r.out, " pods ("), "%s", r.out);
    cli_result_release(&r);

    run_ok(&r, NULL, CLI_ARGS("get", "pods"));
    ck_assert_msg(strstr(r.out, " n1 ") || strstr(r.out, " n2 "), "gang not placed:\n%s", r.out);
    cli_result_release(&r);

    run_ok(&r, NULL, CLI_ARGS("why", "default/train"));
    cli_expect_line(r.out, 0, "Job: default/train");
    ck_assert_ptr_nonnull(strstr(r.out, "\nPrimary:"));
    /* a placed job: no preemption line, and the gang counts what is bound now */
    ck_assert_msg(!strstr(r.out, "Preemption:") && strstr(r.out, "bound 2, placeable 2"), "%s",
                  r.out);
    cli_result_release(&r);

    /* a pod of a gang is answered by its gang */
    run_ok(&r, NULL, CLI_ARGS("why", "default/w-0"));
    cli_expect_line(r.out, 0, "Job: default/train");
    cli_expect_line(r.out, 1, "Pod: default/w-0 (a member of job default/train)");
    cli_result_release(&r);

    /* REASON is empty once nothing blocks the job */
    run_ok(&r, NULL, CLI_ARGS("get", "jobs"));
    ck_assert_msg(cli_has_line(r.out, "default train Scheduled <none> "), "%s", r.out);
    cli_result_release(&r);

    json_t *why = cli_run_json(env, CLI_ARGS("why", "default/train", "-o", "json"));
    ck_assert_str_eq(json_string_value(json_object_get(why, "job")), "default/train");
    json_decref(why);

    run_ok(&r, NULL, CLI_ARGS("describe", "job", "default/train"));
    cli_expect_line(r.out, 0, "Name: train");
    cli_expect_line(r.out, 1, "Namespace: default");
    ck_assert_msg(strstr(r.out, "\nMembers:\nNAME ") && strstr(r.out, "\nw-0 ") &&
                      strstr(r.out, "\nWhy:\nJob:         default/train\n"),
                  "%s", r.out);
    cli_result_release(&r);

    cli_run(env, NULL, CLI_ARGS("why", "default/nope"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strncmp(r.err, "error: ", 7) == 0 && strstr(r.err, "default/nope"), "%s", r.err);
    cli_result_release(&r);
}
END_TEST

/* muster get reservations: a gang that waited past its max-wait reserves the node its
 * running pod's limit frees (docs/reservations.md); the table names job, node, what it
 * waits for and why; -o json is the API's list; a name is a usage error. */
START_TEST(test_cli_get_reservations)
{
    struct cli_result r;
    run_ok(&r,
           "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"4\"}}\n"
           "---\napiVersion: v1\nkind: Pod\nmetadata: {name: r1, namespace: default}\nspec:\n"
           "  nodeName: n1\n  activeDeadlineSeconds: 600\n  containers: [{name: c, image: x, "
           "resources: {requests: {cpu: \"4\"}}}]\nstatus: {phase: Running}\n---\n"
           "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\nmetadata:\n  name: g\n"
           "  namespace: default\n  annotations: {muster.io/max-wait: 1s}\nspec: {minMember: 1}\n"
           "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: g-0\n  namespace: default\n"
           "  labels: {pod-group.scheduling.sigs.k8s.io: g}\nspec: {containers: [{name: c, "
           "image: x, resources: {requests: {cpu: \"4\"}}}]}\n",
           CLI_ARGS("apply", "-f", "-"));
    cli_result_release(&r);
    usleep(1200 * 1000); /* past the gang's max-wait */
    run_ok(&r, NULL, CLI_ARGS("cycle"));
    cli_result_release(&r);
    run_ok(&r, NULL, CLI_ARGS("get", "reservations"));
    ck_assert_int_eq(cli_count_lines(r.out), 2);
    cli_expect_line(r.out, 0, "JOB PRIORITY EXPECTED START NODES COUNT WAITING FOR REASON SINCE");
    char *w = cli_line_words(r.out, 1);
    ck_assert_msg(strncmp(w, "default/g 0 ", 12) == 0 && strstr(w, " n1 1 default/r1 max-wait "),
                  "row '%s'", w);
    free(w);
    cli_result_release(&r);
    json_t *doc = cli_run_json(env, CLI_ARGS("get", "reservations", "-o", "json"));
    ck_assert_str_eq(json_string_value(json_object_get(doc, "kind")), "ReservationList");
    ck_assert_int_eq(json_array_size(json_object_get(doc, "items")), 1);
    json_decref(doc);
    cli_run(env, NULL, CLI_ARGS("get", "reservations", "x"), &r);
    ck_assert_int_eq(r.status, 2);
    cli_result_release(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_server");
    TCase *tc = tcase_create("musterd");
    tcase_set_timeout(tc, 120);
    cli_fixture_use(&d, env);
    tcase_add_checked_fixture(tc, cli_fixture_setup, cli_fixture_teardown);
    tcase_add_test(tc, test_cli_apply_file_and_stdin);
    tcase_add_test(tc, test_cli_apply_ndjson_file);
    tcase_add_test(tc, test_cli_apply_validate);
    tcase_add_test(tc, test_cli_get_tables);
    tcase_add_test(tc, test_cli_get_reservations);
    tcase_add_test(tc, test_cli_output_json_and_yaml);
    tcase_add_test(tc, test_cli_delete_and_not_found);
    tcase_add_test(tc, test_cli_invalid_manifest_lists_every_error);
    tcase_add_test(tc, test_cli_token_required);
    tcase_add_test(tc, test_cli_audit_export_and_verify);
    tcase_add_test(tc, test_cli_audit_verify_broken_chain);
    tcase_add_test(tc, test_cli_cycle_why_describe);
    suite_add_tcase(s, tc);
    return check_run(s);
}
