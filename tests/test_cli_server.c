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

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

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
    run_ok(&r, NULL, ARGS("apply", "-f", path));
    ck_assert_str_eq(r.out, "node/n1 created\n"
                            "node/n2 created\n"
                            "podgroup/default/train created\n"
                            "pod/default/w-0 created\n"
                            "pod/default/w-1 created\n");
    cli_result_release(&r);
    free(path);
}

/* Line i (0-based) of s as a new string of whitespace-separated words joined by one space. */
static char *line_words(const char *s, int i)
{
    while (i-- > 0 && s) {
        s = strchr(s, '\n');
        s = s ? s + 1 : NULL;
    }
    ck_assert_ptr_nonnull(s);
    const char *end = strchr(s, '\n');
    size_t n = end ? (size_t)(end - s) : strlen(s);
    char *out = xcalloc(1, n + 1);
    size_t o = 0;
    for (size_t k = 0; k < n; k++) {
        if (s[k] == ' ') {
            if (o > 0 && out[o - 1] != ' ')
                out[o++] = ' ';
        } else {
            out[o++] = s[k];
        }
    }
    while (o > 0 && out[o - 1] == ' ')
        out[--o] = '\0';
    return out;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* 1 when some line of out starts with prefix (words separated by single spaces). */
static int has_line(const char *out, const char *prefix)
{
    int found = 0;
    for (int i = 0; i < count_lines(out) && !found; i++) {
        char *w = line_words(out, i);
        found = strncmp(w, prefix, strlen(prefix)) == 0;
        free(w);
    }
    return found;
}

static void expect_line(const char *out, int i, const char *prefix)
{
    char *w = line_words(out, i);
    ck_assert_msg(strncmp(w, prefix, strlen(prefix)) == 0, "line %d is '%s', want '%s...'\n%s", i,
                  w, prefix, out);
    free(w);
}

START_TEST(test_cli_apply_file_and_stdin)
{
    struct cli_result r;
    apply_cluster();
    char *json = cli_data("apply/pod.json");
    run_ok(&r, json, ARGS("apply", "-f", "-"));
    ck_assert_str_eq(r.out, "pod/team-a/solo created\n");
    cli_result_release(&r);
    /* the same again changes nothing */
    run_ok(&r, json, ARGS("apply", "-f", "-"));
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
    run_ok(&r, NULL, ARGS("apply", "-f", path));
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
    cli_run(env, pod, ARGS("apply", "-f", "-"), &r);
    ck_assert_int_ne(r.status, 0);
    ck_assert_msg(strstr(r.err, "spec.priorty: unknown field"), "%s", r.err);
    cli_result_release(&r);
    cli_run(env, pod, ARGS("apply", "-f", "-", "--validate", "bogus"), &r);
    ck_assert_int_ne(r.status, 0);
    ck_assert_msg(strstr(r.err, "flag '--validate' must be strict, warn or ignore"), "%s", r.err);
    cli_result_release(&r);
    run_ok(&r, pod, ARGS("apply", "-f", "-", "--validate=warn"));
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
    run_ok(&r, json, ARGS("apply", "-f", "-"));
    cli_result_release(&r);
    free(json);

    run_ok(&r, NULL, ARGS("get", "nodes"));
    ck_assert_int_eq(count_lines(r.out), 3);
    ck_assert_msg(strncmp(r.out, "NAME   STATUS   ", 16) == 0, "%s", r.out);
    expect_line(r.out, 0, "NAME STATUS CPU MEMORY GPU PODS AGE");
    expect_line(r.out, 1, "n1 Ready ");
    expect_line(r.out, 2, "n2 Ready ");
    ck_assert_msg(strstr(r.out, "/8 ") && strstr(r.out, "/32Gi ") && strstr(r.out, "/4 ") &&
                      strstr(r.out, "/110 "),
                  "no used/allocatable cells:\n%s", r.out);
    cli_result_release(&r);

    run_ok(&r, NULL, ARGS("get", "pods"));
    ck_assert_int_eq(count_lines(r.out), 3);
    expect_line(r.out, 0, "NAME PHASE NODE AGE");
    expect_line(r.out, 1, "w-0 ");
    expect_line(r.out, 2, "w-1 ");
    cli_result_release(&r);

    run_ok(&r, NULL, ARGS("get", "pods", "-A"));
    ck_assert_int_eq(count_lines(r.out), 4);
    expect_line(r.out, 0, "NAMESPACE NAME PHASE NODE AGE");
    expect_line(r.out, 1, "default w-0 ");
    expect_line(r.out, 3, "team-a solo ");
    cli_result_release(&r);

    run_ok(&r, NULL, ARGS("get", "po", "-n", "team-a"));
    ck_assert_int_eq(count_lines(r.out), 2);
    expect_line(r.out, 1, "solo ");
    cli_result_release(&r);

    run_ok(&r, NULL, ARGS("get", "podgroups"));
    ck_assert_int_eq(count_lines(r.out), 2);
    expect_line(r.out, 0, "NAME MINMEMBER AGE");
    expect_line(r.out, 1, "train 2 ");
    cli_result_release(&r);

    run_ok(&r, NULL, ARGS("get", "jobs"));
    expect_line(r.out, 0, "NAMESPACE NAME STATE REASON PRIORITY MIN PLACED PENDING AGE");
    ck_assert_int_eq(count_lines(r.out), 3);
    /* REASON: the why's primary code (the cycle timer may have placed them already) */
    ck_assert_msg((has_line(r.out, "default train Pending NotTried ") ||
                   has_line(r.out, "default train Scheduled <none> ")) &&
                      (has_line(r.out, "team-a solo Pending NotTried ") ||
                       has_line(r.out, "team-a solo Scheduled <none> ")),
                  "%s", r.out);
    cli_result_release(&r);

    run_ok(&r, NULL, ARGS("get", "jobs", "-n", "team-a"));
    ck_assert_int_eq(count_lines(r.out), 2);
    expect_line(r.out, 1, "team-a solo ");
    cli_result_release(&r);

    run_ok(&r, NULL, ARGS("get", "pc"));
    ck_assert_int_eq(count_lines(r.out), 3);
    expect_line(r.out, 0, "NAME VALUE GLOBAL-DEFAULT PREEMPTION-POLICY AGE");
    expect_line(r.out, 1, "system-cluster-critical 2000000000 false PreemptLowerPriority ");
    expect_line(r.out, 2, "system-node-critical 2000001000 false PreemptLowerPriority ");
    cli_result_release(&r);
}
END_TEST

static json_t *run_json(const char *const *args)
{
    struct cli_result r;
    json_error_t je;
    run_ok(&r, NULL, args);
    json_t *doc = json_loads(r.out, 0, &je);
    ck_assert_msg(doc != NULL, "not JSON (%s):\n%s", je.text, r.out);
    cli_result_release(&r);
    return doc;
}

START_TEST(test_cli_output_json_and_yaml)
{
    struct cli_result r;
    apply_cluster();
    json_t *list = run_json(ARGS("get", "pods", "-o", "json"));
    json_t *items = json_object_get(list, "items");
    ck_assert_int_eq(json_array_size(items), 2);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_array_get(items, 0), "metadata"), "name")),
                     "w-0");
    json_decref(list);

    const char *const objects[][3] = {
        {"pod", "w-0", "Pod"}, {"node", "n1", "Node"}, {"podgroup", "train", "PodGroup"}};
    for (size_t i = 0; i < 3; i++) {
        json_t *want = run_json(ARGS("get", objects[i][0], objects[i][1], "-o", "json"));
        ck_assert_str_eq(json_string_value(json_object_get(want, "kind")), objects[i][2]);
        run_ok(&r, NULL, ARGS("get", objects[i][0], objects[i][1], "-o", "yaml"));
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
    run_ok(&r, NULL, ARGS("delete", "pod", "w-1"));
    ck_assert_str_eq(r.out, "pod/default/w-1 deleted\n");
    cli_result_release(&r);
    run_ok(&r, NULL, ARGS("delete", "node", "n2"));
    ck_assert_str_eq(r.out, "node/n2 deleted\n");
    cli_result_release(&r);

    cli_run(env, NULL, ARGS("get", "pod", "w-1"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "error: pod 'default/w-1' not found\n");
    ck_assert_str_eq(r.out, "");
    cli_result_release(&r);
    cli_run(env, NULL, ARGS("delete", "pod", "default/w-1"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "error: pod 'default/w-1' not found\n");
    cli_result_release(&r);

    run_ok(&r, NULL, ARGS("get", "pods"));
    ck_assert_int_eq(count_lines(r.out), 2);
    expect_line(r.out, 1, "w-0 ");
    cli_result_release(&r);
}
END_TEST

START_TEST(test_cli_invalid_manifest_lists_every_error)
{
    struct cli_result r;
    char *path = cli_data_path("invalid/manifest.yaml");
    cli_run(env, NULL, ARGS("apply", "-f", path), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.out, "");
    ck_assert_msg(strncmp(r.err, "error: ", 7) == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "document 2 (Pod default/bad-cpu)") && strstr(r.err, "'12x'"), "%s",
                  r.err);
    ck_assert_msg(strstr(r.err, "document 3 (Pod default/bad-priority), spec.priority"), "%s",
                  r.err);
    ck_assert_int_ge(count_lines(r.err), 3);
    cli_result_release(&r);
    /* nothing was written */
    run_ok(&r, NULL, ARGS("get", "nodes"));
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

    cli_run(env, NULL, ARGS("apply", "-f", path), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strncmp(r.err, "error: ", 7) == 0 && strlen(r.err) > 8, "%s", r.err);
    cli_result_release(&r);
    cli_run(env, NULL, ARGS("--token", "wrong", "apply", "-f", path), &r);
    ck_assert_int_eq(r.status, 1);
    cli_result_release(&r);

    cli_run(env, NULL, ARGS("apply", "-f", path, "--token", "s3cret"), &r);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "pod/default/w-0 created\n"));
    cli_result_release(&r);

    const char *with_env[] = {d.server_env, "MUSTER_TOKEN=s3cret", NULL};
    cli_run(with_env, NULL, ARGS("delete", "pod", "w-0"), &r);
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
    run_ok(&r, NULL, ARGS("cycle"));
    cli_result_release(&r);

    run_ok(&r, NULL, ARGS("audit", "export"));
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

    run_ok(&r, NULL, ARGS("audit", "export", "--kind", "applied", "--limit", "2"));
    ck_assert_int_eq(count_lines(r.out), 2);
    ck_assert_ptr_nonnull(strstr(r.out, "\"kind\":\"applied\""));
    cli_result_release(&r);

    /* an unknown kind is an error listing the kinds, not an empty export */
    cli_run(env, NULL, ARGS("audit", "export", "--kind", "nosuch"), &r);
    ck_assert_msg(r.status != 0, "exit %d: %s%s", r.status, r.out, r.err);
    ck_assert_msg(strstr(r.err, "unknown audit kind 'nosuch'") && strstr(r.err, "running"),
                  "stderr: %s", r.err);
    ck_assert_str_eq(r.out, "");
    cli_result_release(&r);

    run_ok(&r, NULL, ARGS("audit", "verify"));
    ck_assert_msg(strncmp(r.out, "audit chain ok: records 1..", 27) == 0, "%s", r.out);
    cli_result_release(&r);
    run_ok(&r, NULL, ARGS("audit", "verify", "--from", "2", "--to", "3", "-o", "json"));
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
    cli_run(env, NULL, ARGS("audit", "verify"), &r);
    ck_assert_msg(r.status == 1, "exit %d: %s%s", r.status, r.out, r.err);
    ck_assert_msg(strncmp(r.out, "audit chain BROKEN at record ", 29) == 0, "%s", r.out);
    cli_result_release(&r);
    /* a range before the damage still verifies */
    run_ok(&r, NULL, ARGS("audit", "verify", "--to", "1"));
    ck_assert_msg(strncmp(r.out, "audit chain ok: records 1..1, 1 checked", 39) == 0, "%s", r.out);
    cli_result_release(&r);
}
END_TEST

START_TEST(test_cli_cycle_why_describe)
{
    struct cli_result r;
    apply_cluster();
    run_ok(&r, NULL, ARGS("cycle"));
    ck_assert_msg(strncmp(r.out, "cycle ", 6) == 0 && strstr(r.out, " pods ("), "%s", r.out);
    cli_result_release(&r);

    run_ok(&r, NULL, ARGS("get", "pods"));
    ck_assert_msg(strstr(r.out, " n1 ") || strstr(r.out, " n2 "), "gang not placed:\n%s", r.out);
    cli_result_release(&r);

    run_ok(&r, NULL, ARGS("why", "default/train"));
    expect_line(r.out, 0, "Job: default/train");
    ck_assert_ptr_nonnull(strstr(r.out, "\nPrimary:"));
    /* a placed job: no preemption line, and the gang counts what is bound now */
    ck_assert_msg(!strstr(r.out, "Preemption:") && strstr(r.out, "bound 2, placeable 2"), "%s",
                  r.out);
    cli_result_release(&r);

    /* a pod of a gang is answered by its gang */
    run_ok(&r, NULL, ARGS("why", "default/w-0"));
    expect_line(r.out, 0, "Job: default/train");
    expect_line(r.out, 1, "Pod: default/w-0 (a member of job default/train)");
    cli_result_release(&r);

    /* REASON is empty once nothing blocks the job */
    run_ok(&r, NULL, ARGS("get", "jobs"));
    ck_assert_msg(has_line(r.out, "default train Scheduled <none> "), "%s", r.out);
    cli_result_release(&r);

    json_t *why = run_json(ARGS("why", "default/train", "-o", "json"));
    ck_assert_str_eq(json_string_value(json_object_get(why, "job")), "default/train");
    json_decref(why);

    run_ok(&r, NULL, ARGS("describe", "job", "default/train"));
    expect_line(r.out, 0, "Name: train");
    expect_line(r.out, 1, "Namespace: default");
    ck_assert_msg(strstr(r.out, "\nMembers:\nNAME ") && strstr(r.out, "\nw-0 ") &&
                      strstr(r.out, "\nWhy:\nJob:         default/train\n"),
                  "%s", r.out);
    cli_result_release(&r);

    cli_run(env, NULL, ARGS("why", "default/nope"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strncmp(r.err, "error: ", 7) == 0 && strstr(r.err, "default/nope"), "%s", r.err);
    cli_result_release(&r);
}
END_TEST

/* A musterd without the cycle timer (cycle_interval 0), so `muster cycle` alone decides
 * which cycle a why document comes from. */
static struct musterd demo;
static char demo_env[128];

static void demo_setup(void)
{
    char cfg[] = "/tmp/muster-cli-demo-XXXXXX";
    int fd = mkstemp(cfg);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(test_write_file(cfg, "cycle_interval: 0\nsync: none\nlog_level: warn\n"), 0);
    const char *args[] = {"--config", cfg, NULL};
    ck_assert_msg(musterd_start(&demo, NULL, args) == 0, "musterd did not start");
    unlink(cfg);
    snprintf(demo_env, sizeof(demo_env), "MUSTER_SERVER=%s", demo.base);
    env[0] = demo_env;
    env[1] = NULL;
}

static void demo_teardown(void)
{
    musterd_stop(&demo);
    musterd_cleanup(&demo);
}

/* Applies examples/demo (32 GPU nodes in 2 spines x 4 blocks for the default queue's gangs
 * at several priorities, 4 in spine-2 held by three other queues), waits for the wake-up cycles the
 * applies start (the second one preempts: the ledger gets its entries) and runs `cycles` more
 * scheduling cycles. */
static void apply_demo(int cycles)
{
    struct cli_result r;
    const char *src = getenv("MUSTER_SOURCE_DIR");
    ck_assert_ptr_nonnull(src);
    for (int i = 0; i < 2; i++) {
        char *path = xasprintf("%s/examples/demo/%s", src, i ? "workloads.yaml" : "cluster.yaml");
        run_ok(&r, NULL, ARGS("apply", "-f", path));
        cli_result_release(&r);
        free(path);
    }
    size_t n = 0;
    for (int i = 0; i < 100 && n == 0; i++) {
        json_t *l = run_json(ARGS("preemptions", "-o", "json"));
        n = json_array_size(json_object_get(l, "items"));
        json_decref(l);
        if (n == 0)
            usleep(50000);
    }
    ck_assert_msg(n > 0, "the demo cluster preempts after the wake-up cycles");
    for (int i = 0; i < cycles; i++) {
        run_ok(&r, NULL, ARGS("cycle"));
        cli_result_release(&r);
    }
}

/* The line of out starting with prefix (exactly, spaces included), or fails. */
static const char *line_at(const char *out, const char *prefix)
{
    for (const char *s = out; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL)
        if (strncmp(s, prefix, strlen(prefix)) == 0)
            return s;
    ck_abort_msg("no line '%s' in:\n%s", prefix, out);
    return NULL;
}

/* The demo as a new user sees it (issue 12, "the why never misleads"): the job larger than
 * the cluster says so first, with units and no preemption line; the capacity held for the
 * preemptor's nomination is named; a pod answers for its Running gang with what is bound;
 * the REASON column. */
START_TEST(test_cli_demo_why_never_misleads)
{
    struct cli_result r;
    apply_demo(1);
    run_ok(&r, NULL, ARGS("why", "training/giant"));
    line_at(r.out, "Primary:     ExceedsClusterCapacity (NEVER): needs 320 nvidia.com/gpu, the "
                   "cluster has 288\n");
    ck_assert_msg(!strstr(r.out, "Preemption:"), "%s", r.out);
    cli_result_release(&r);

    json_t *why = run_json(ARGS("why", "vision/resnet", "-o", "json"));
    const char *sum =
        json_string_value(json_object_get(json_object_get(why, "nodeFilter"), "summary"));
    ck_assert_msg(sum && strstr(sum, "4 nodes reserved for prod/urgent-finetune") &&
                      strstr(sum, "Insufficient cpu (need 32, max free 16)"),
                  "%s", sum ? sum : "(no node filter)");
    json_decref(why);

    run_ok(&r, NULL, ARGS("why", "batch/etl-b-0"));
    line_at(r.out, "Job:         batch/etl-b\n");
    line_at(r.out, "Pod:         batch/etl-b-0 (a member of job batch/etl-b)\n");
    line_at(r.out, "  batch/etl-b: minMember 8, members 8, bound 8,");
    line_at(r.out, "Primary:     none\n");
    cli_result_release(&r);

    run_ok(&r, NULL, ARGS("get", "jobs"));
    ck_assert_msg(has_line(r.out, "training giant Unschedulable ExceedsClusterCapacity 20 ") &&
                      has_line(r.out, "batch etl-b Running <none> "),
                  "%s", r.out);
    cli_result_release(&r);
}
END_TEST

/* `muster why` prints the topology part (summary, counts, best domains) and the preemption
 * part (verdict, numbers, victims from the ledger) readably: preempting in the cycle that
 * preempts, waiting in the next; `describe job` shows preemptedBy on a victim. */
START_TEST(test_cli_why_topology_and_preemption_parts)
{
    struct cli_result r;
    apply_demo(0);
    json_t *why = run_json(ARGS("why", "prod/urgent-finetune", "-o", "json"));
    json_t *topo = json_object_get(why, "topology"), *pre = json_object_get(why, "preemption");
    ck_assert_msg(json_is_object(topo) && json_is_true(json_object_get(pre, "attempted")),
                  "the demo's MustGather job preempts in its first cycle");
    json_t *ledger = run_json(ARGS("preemptions", "--job", "prod/urgent-finetune", "-o", "json"));
    json_t *entry = json_array_get(json_object_get(ledger, "items"), 0);
    ck_assert_ptr_nonnull(entry);
    run_ok(&r, NULL, ARGS("why", "prod/urgent-finetune"));
    ck_assert_msg(!strstr(r.out, "{\""), "raw JSON printed:\n%s", r.out);
    char *want =
        xasprintf("Topology:    %s\n", json_string_value(json_object_get(topo, "summary")));
    ck_assert_ptr_nonnull(strstr(r.out, want));
    free(want);
    want = xasprintf("  %lld pending pods, %lld needed in one domain; %lld SpineLayer domains "
                     "hold the job,",
                     (long long)json_integer_value(json_object_get(topo, "jobPods")),
                     (long long)json_integer_value(json_object_get(topo, "needed")),
                     (long long)json_integer_value(json_object_get(topo, "domainsHolding")));
    line_at(r.out, want);
    free(want);
    line_at(r.out, "  Best domains:\n");
    json_t *b0 = json_array_get(json_object_get(topo, "best"), 0);
    want = xasprintf("    SpineLayer %s", json_string_value(json_object_get(b0, "name")));
    const char *l = line_at(r.out, want);
    free(want);
    want = xasprintf(" holds %lld/%lld pods, limited by nvidia.com/gpu\n",
                     (long long)json_integer_value(json_object_get(b0, "holds")),
                     (long long)json_integer_value(json_object_get(topo, "needed")));
    ck_assert_msg(strncmp(strstr(l, " holds"), want, strlen(want)) == 0, "%s", r.out);
    free(want);
    want = xasprintf("Preemption:  preempting (Preempting): %s\n",
                     json_string_value(json_object_get(pre, "reason")));
    line_at(r.out, want);
    free(want);
    want = xasprintf("  Victims (ledger entry %lld, cycle %lld):\n",
                     (long long)json_integer_value(json_object_get(entry, "id")),
                     (long long)json_integer_value(json_object_get(entry, "cycle")));
    line_at(r.out, want);
    free(want);
    l = line_at(r.out, "    batch/etl-a (priority 10): etl-a-");
    ck_assert_msg(strstr(l, "@gpu-b"), "victim pods with their nodes:\n%s", r.out);
    cli_result_release(&r);
    json_decref(why);
    json_decref(ledger);

    /* next cycle: the victims are terminating, the job waits */
    run_ok(&r, NULL, ARGS("cycle"));
    cli_result_release(&r);
    run_ok(&r, NULL, ARGS("why", "prod/urgent-finetune"));
    l = line_at(r.out, "Preemption:  waiting (PreemptionWaiting): waiting for ");
    ck_assert_msg(strstr(l, " victims to terminate\n"), "%s", r.out);
    line_at(r.out, "  Victims (ledger entry ");
    cli_result_release(&r);

    /* the victim's side: describe names every preemptor with its ledger entry */
    json_t *job = run_json(ARGS("get", "job", "batch/etl-a", "-o", "json"));
    json_t *pb = json_object_get(job, "preemptedBy"), *x;
    ck_assert_msg(json_is_object(pb), "batch/etl-a was preempted");
    ck_assert_uint_gt(json_array_size(json_object_get(pb, "preemptors")), 0);
    run_ok(&r, NULL, ARGS("describe", "job", "batch/etl-a"));
    line_at(r.out, "State:       Preempted\n");
    size_t i;
    json_array_foreach(json_object_get(pb, "preemptors"), i, x)
    {
        want = xasprintf("%s %s (cycle %lld, ", i ? "            " : "PreemptedBy:",
                         json_string_value(json_object_get(x, "preemptor")),
                         (long long)json_integer_value(json_object_get(x, "cycle")));
        l = line_at(r.out, want);
        free(want);
        want = xasprintf("ledger entry %lld, ",
                         (long long)json_integer_value(json_object_get(x, "ledger")));
        ck_assert_msg(strstr(l, want) && strstr(l, want) < strchr(l, '\n'), "%s", r.out);
        free(want);
    }
    cli_result_release(&r);
    json_decref(job);
}
END_TEST

/* `muster preemptions` and `muster topology` print kubectl-like tables of the real ledger
 * and domain tree. */
START_TEST(test_cli_preemptions_and_topology_tables)
{
    struct cli_result r;
    apply_demo(1);
    json_t *ledger = run_json(ARGS("preemptions", "-o", "json"));
    size_t n = json_array_size(json_object_get(ledger, "items"));
    ck_assert_uint_gt(n, 0);
    run_ok(&r, NULL, ARGS("preemptions"));
    expect_line(
        r.out, 0,
        "ID CYCLE PREEMPTOR TRIGGER VICTIMS GANGS BROKEN PDB VIOLATIONS NODES ROOM FROM BOUND "
        "LATENCY");
    ck_assert_int_eq(count_lines(r.out), (int)n + 1);
    /* the entry that evicted nothing names whose room it took (roomFrom) */
    size_t k, took = 0;
    json_t *x;
    json_array_foreach(json_object_get(ledger, "items"), k, x)
    {
        json_t *from = json_array_get(json_object_get(x, "roomFrom"), 0);
        if (!from)
            continue;
        took++;
        char *cell =
            xasprintf(" #%lld %s ", (long long)json_integer_value(json_object_get(from, "ledger")),
                      json_string_value(json_object_get(from, "preemptor")));
        ck_assert_msg(strstr(r.out, cell), "no '%s' in\n%s", cell, r.out);
        free(cell);
    }
    ck_assert_msg(took > 0, "the demo's vision/resnet takes room prod/urgent-finetune freed");
    json_t *e = json_array_get(json_object_get(ledger, "items"), 0);
    char *want = xasprintf(
        "%lld %lld %s %s %lld ", (long long)json_integer_value(json_object_get(e, "id")),
        (long long)json_integer_value(json_object_get(e, "cycle")),
        json_string_value(json_object_get(e, "preemptor")),
        json_string_value(json_object_get(e, "triggerPod")),
        (long long)json_integer_value(json_object_get(json_object_get(e, "cost"), "pods")));
    expect_line(r.out, 1, want);
    free(want);
    cli_result_release(&r);
    /* and the victim whose room it took says so */
    run_ok(&r, NULL, ARGS("why", "batch/etl-a"));
    ck_assert_msg(strstr(r.out, "RoomTakenBy: vision/resnet took the room of 4 of its pods"), "%s",
                  r.out);
    cli_result_release(&r);
    /* audit export --job: every record naming the job in any role, here as preemptor */
    run_ok(&r, NULL, ARGS("audit", "export", "--job", "prod/urgent-finetune"));
    int as_preemptor = 0, as_job = 0;
    for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *rec = json_loads(line, 0, NULL);
        ck_assert_ptr_nonnull(rec);
        const char *job = json_string_value(json_object_get(rec, "job")),
                   *pre = json_string_value(json_object_get(rec, "preemptor"));
        int is_job = job && !strcmp(job, "prod/urgent-finetune"),
            is_pre = pre && !strcmp(pre, "prod/urgent-finetune") && !is_job;
        as_job += is_job;
        as_preemptor += is_pre;
        ck_assert_msg(is_job || is_pre, "a record that does not name the job: %s", line);
        json_decref(rec);
    }
    ck_assert_int_gt(as_job, 0);
    ck_assert_int_eq(as_preemptor, 5); /* batch/etl-a and the four notebooks */
    cli_result_release(&r);
    run_ok(&r, NULL, ARGS("preemptions", "--victim", "batch/etl-a"));
    ck_assert_msg(count_lines(r.out) >= 2 && has_line(r.out, "ID CYCLE"), "%s", r.out);
    cli_result_release(&r);
    json_decref(ledger);

    run_ok(&r, NULL, ARGS("topology", "--pod-gpu", "8"));
    expect_line(r.out, 0, "DOMAIN LAYER NODES CPU USED/CAP GPU GANG JOBS");
    expect_line(r.out, 1, "(cluster) ClusterTopologyLayer 36 ");
    ck_assert_msg(has_line(r.out, "spine-0 SpineLayer 16 ") &&
                      has_line(r.out, "block-0 BlockLayer 4 ") &&
                      has_line(r.out, "nodes: gpu-b0-0 gpu-b0-1 gpu-b0-2 gpu-b0-3"),
                  "%s", r.out);
    cli_result_release(&r);
}
END_TEST

/* `muster whatif` on the demo: where the probe gang would go, the room it would take from a
 * lower-priority preemptor once those nodes are cordoned, bad input, and nothing written by
 * any of it. */
START_TEST(test_cli_whatif_on_the_demo)
{
    struct cli_result r;
    apply_demo(1);
    json_t *before = run_json(ARGS("preemptions", "-o", "json"));
    char *probe = cli_data_path("whatif/probe.yaml");
    run_ok(&r, NULL, ARGS("whatif", "-f", probe));
    ck_assert_msg(has_line(r.out, "JOB STATE WOULD PLACE NODES WHY"), "%s", r.out);
    ck_assert_msg(has_line(r.out, "training/probe Scheduled yes"), "%s", r.out);
    cli_result_release(&r);

    /* its two nodes cordoned: it would preempt for room instead */
    json_t *res = run_json(ARGS("whatif", "-f", probe, "-o", "json"));
    json_t *members = json_object_get(json_array_get(json_object_get(res, "jobs"), 0), "members");
    char *nodes =
        xasprintf("%s,%s", json_string_value(json_object_get(json_array_get(members, 0), "node")),
                  json_string_value(json_object_get(json_array_get(members, 1), "node")));
    json_decref(res);
    run_ok(&r, NULL, ARGS("whatif", "-f", probe, "--cordon", nodes));
    ck_assert_msg(has_line(r.out, "training/probe Pipelined no nominated"), "%s", r.out);
    ck_assert_msg(strstr(r.out, "Preemptions it would make:\n  training/probe preempts "), "%s",
                  r.out);
    /* it evicts nothing: the ledger names whose preemption frees the room it takes */
    ck_assert_msg(strstr(r.out, "preempts nothing; takes the room prod/urgent-finetune's "
                                "preemption frees (batch/etl-a"),
                  "%s", r.out);
    /* the room it takes is vision/resnet's, nominated to a lower priority (50 < 200) */
    ck_assert_msg(has_line(r.out, "changed vision/resnet: Pipelined ->"), "%s", r.out);
    cli_result_release(&r);

    cli_run(env, NULL, ARGS("whatif"), &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "whatif needs -f FILE"), "%s", r.err);
    cli_result_release(&r);
    cli_run(env, NULL, ARGS("whatif", "--cordon", "nosuch"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "node 'nosuch' not found"), "%s", r.err);
    cli_result_release(&r);

    json_t *after = run_json(ARGS("preemptions", "-o", "json"));
    ck_assert(json_equal(before, after));
    cli_run(env, NULL, ARGS("get", "pod", "probe-0", "-n", "training"), &r);
    ck_assert_int_eq(r.status, 1);
    cli_result_release(&r);
    json_decref(before);
    json_decref(after);
    free(nodes);
    free(probe);
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
           ARGS("apply", "-f", "-"));
    cli_result_release(&r);
    usleep(1200 * 1000); /* past the gang's max-wait */
    run_ok(&r, NULL, ARGS("cycle"));
    cli_result_release(&r);
    run_ok(&r, NULL, ARGS("get", "reservations"));
    ck_assert_int_eq(count_lines(r.out), 2);
    expect_line(r.out, 0, "JOB PRIORITY EXPECTED START NODES COUNT WAITING FOR REASON SINCE");
    char *w = line_words(r.out, 1);
    ck_assert_msg(strncmp(w, "default/g 0 ", 12) == 0 && strstr(w, " n1 1 default/r1 max-wait "),
                  "row '%s'", w);
    free(w);
    cli_result_release(&r);
    json_t *doc = run_json(ARGS("get", "reservations", "-o", "json"));
    ck_assert_str_eq(json_string_value(json_object_get(doc, "kind")), "ReservationList");
    ck_assert_int_eq(json_array_size(json_object_get(doc, "items")), 1);
    json_decref(doc);
    cli_run(env, NULL, ARGS("get", "reservations", "x"), &r);
    ck_assert_int_eq(r.status, 2);
    cli_result_release(&r);
}
END_TEST

/* `muster audit replay` on the demo: the preemptions, evictions and placements of its
 * cycles, run again from the first record, agree with the log; bad ranges are refused. */
START_TEST(test_cli_audit_replay_on_the_demo)
{
    struct cli_result r;
    apply_demo(2);
    run_ok(&r, NULL, ARGS("audit", "replay", "--from", "1"));
    ck_assert_msg(strstr(r.out, "decisions as the log says"), "%s", r.out);
    cli_result_release(&r);
    json_t *rep = run_json(ARGS("audit", "replay", "--from", "1", "-o", "json"));
    ck_assert(json_is_true(json_object_get(rep, "ok")));
    ck_assert_int_ge(json_integer_value(json_object_get(rep, "cycles")), 3);
    ck_assert_int_gt(json_integer_value(json_object_get(rep, "decisions")), 5);
    json_decref(rep);
    cli_run(env, NULL, ARGS("audit", "replay"), &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "audit replay needs --from SEQ"), "%s", r.err);
    cli_result_release(&r);
    cli_run(env, NULL, ARGS("audit", "replay", "--from", "1", "--to", "99999999"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "not a range of the log"), "%s", r.err);
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
    TCase *demo_tc = tcase_create("demo");
    tcase_set_timeout(demo_tc, 60);
    tcase_add_checked_fixture(demo_tc, demo_setup, demo_teardown);
    tcase_add_test(demo_tc, test_cli_why_topology_and_preemption_parts);
    tcase_add_test(demo_tc, test_cli_demo_why_never_misleads);
    tcase_add_test(demo_tc, test_cli_preemptions_and_topology_tables);
    tcase_add_test(demo_tc, test_cli_whatif_on_the_demo);
    tcase_add_test(demo_tc, test_cli_audit_replay_on_the_demo);
    suite_add_tcase(s, demo_tc);
    suite_add_tcase(s, tc);
    return check_run(s);
}
