/*
 * test_cli_postmortem.c - the job's story on the demo cluster (examples/demo, whose first
 * cycle preempts batch/etl-a for prod/urgent-finetune and lets vision/resnet take part of
 * the room): `muster postmortem` writes a bundle whose timeline, node snapshots, report and
 * chart say what happened; `muster audit verify --bundle` checks it offline and finds a
 * changed record or timeline line; bad inputs are refused and write nothing.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "check_run.h"
#include "cli_support.h"
#include "http_client.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static struct musterd demo;
static char demo_env[128];
static const char *env[2];
static char out[300];

static void run_ok(struct cli_result *r, const char *const *args)
{
    cli_run_ok(env, NULL, args, r);
}

static void setup(void)
{
    cli_musterd_untimed(&demo, demo_env, sizeof(demo_env), env);
    snprintf(out, sizeof(out), "%s/bundles", demo.root);
    mkdir(out, 0755);
    struct cli_result r;
    const char *src = getenv("MUSTER_SOURCE_DIR");
    ck_assert_ptr_nonnull(src);
    for (int i = 0; i < 2; i++) {
        char *path = xasprintf("%s/examples/demo/%s", src, i ? "workloads.yaml" : "cluster.yaml");
        run_ok(&r, ARGS("apply", "-f", path));
        cli_result_release(&r);
        free(path);
    }
    run_ok(&r, ARGS("cycle")); /* the preemption, if the apply's wake-up has not run it */
    cli_result_release(&r);
}

static void teardown(void)
{
    musterd_stop(&demo);
    musterd_cleanup(&demo);
}

static char *slurp(const char *dir, const char *name)
{
    char *path = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "no '%s'", path);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int c;
    while ((c = fgetc(f)) != EOF)
        fputc(c, m);
    fclose(m);
    fclose(f);
    free(path);
    return buf;
}

static json_t *lines(const char *text)
{
    json_t *a = json_array();
    char *copy = xstrdup(text);
    for (char *l = strtok(copy, "\n"); l; l = strtok(NULL, "\n")) {
        json_t *x = json_loads(l, 0, NULL);
        ck_assert_msg(x != NULL, "not JSON: %s", l);
        json_array_append_new(a, x);
    }
    free(copy);
    return a;
}

static const char *s_of(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

START_TEST(test_cli_postmortem_victim_bundle)
{
    struct cli_result r;
    char *dir = xasprintf("%s/etl-a", out);
    run_ok(&r, ARGS("postmortem", "--job", "batch/etl-a", "-o", dir));
    ck_assert_ptr_nonnull(strstr(r.out, "timeline records"));
    cli_result_release(&r);

    /* the timeline: its own records, and the preemption with the job as victim */
    char *text = slurp(dir, "timeline.ndjson");
    json_t *tl = lines(text), *e, *victim = NULL;
    size_t i;
    json_array_foreach(tl, i, e) if (!strcmp(s_of(e, "role"), "victim")) victim = e;
    ck_assert_ptr_nonnull(victim);
    ck_assert_str_eq(s_of(victim, "kind"), "preempted");
    ck_assert_str_eq(s_of(victim, "preemptor"), "prod/urgent-finetune");
    ck_assert_ptr_nonnull(
        strstr(s_of(victim, "what"), "8 pod(s) preempted by prod/urgent-finetune"));

    /* the nodes at that decision: the 8 nodes of its pods, each pod terminating */
    char name[64];
    snprintf(name, sizeof(name), "nodes/%lld.json",
             (long long)json_integer_value(json_object_get(victim, "seq")));
    char *ntext = slurp(dir, name);
    json_t *snap = json_loads(ntext, 0, NULL), *nodes = json_object_get(snap, "nodes"), *n;
    ck_assert_int_eq(json_array_size(nodes), 8);
    int terminating = 0;
    json_array_foreach(nodes, i, n)
    {
        json_t *p = json_array_get(json_object_get(n, "podsThen"), 0);
        ck_assert_str_eq(s_of(p, "job"), "batch/etl-a");
        terminating += json_is_true(json_object_get(p, "deleting"));
    }
    ck_assert_int_eq(terminating, 8);
    json_decref(snap);

    /* who holds its nodes at the end: the 8 nodes its pods were on */
    char *etext = slurp(dir, "nodes/end.json");
    json_t *end = json_loads(etext, 0, NULL);
    ck_assert_int_eq(json_array_size(json_object_get(end, "nodes")), 8);
    json_decref(end);
    free(etext);
    /* the report names both preemptors: who evicted it and who took the room */
    char *md = slurp(dir, "report.md");
    ck_assert_ptr_nonnull(
        strstr(md, "**prod/urgent-finetune** (priority 1000) evicted 8 of its pods"));
    ck_assert_ptr_nonnull(strstr(md, "**vision/resnet** took the room of 4 of its evicted pods"));
    ck_assert_ptr_nonnull(strstr(md, "musterd verified the range: ok"));
    /* the chart is a PNG */
    char *png = slurp(dir, "timeline.png");
    ck_assert_int_eq(memcmp(png, "\x89PNG\r\n\x1a\n", 8), 0);

    /* offline: the bundle verifies; a changed record or timeline line does not */
    run_ok(&r, ARGS("audit", "verify", "--bundle", dir));
    ck_assert_ptr_nonnull(strstr(r.out, " ok: audit records 1.."));
    cli_result_release(&r);
    char *audit = xasprintf("%s/audit.ndjson", dir);
    char *bad = slurp(dir, "audit.ndjson");
    char *at = strstr(bad, "\"batch/etl-a-3\"");
    ck_assert_ptr_nonnull(at);
    at[12] = '9'; /* etl-a-9 */
    ck_assert_int_eq(test_write_file(audit, bad), 0);
    cli_run(env, NULL, ARGS("audit", "verify", "--bundle", dir), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "BROKEN"));
    ck_assert_ptr_nonnull(strstr(r.out, "hash mismatch"));
    cli_result_release(&r);
    free(bad);
    free(audit);
    json_decref(tl);
    free(text);
    free(ntext);
    free(md);
    free(png);
    free(dir);
}
END_TEST

START_TEST(test_cli_postmortem_preemptor_and_timeline_check)
{
    struct cli_result r;
    char *dir = xasprintf("%s/urgent", out);
    run_ok(&r, ARGS("postmortem", "--job", "prod/urgent-finetune", "-o", dir));
    cli_result_release(&r);
    char *text = slurp(dir, "timeline.ndjson");
    json_t *tl = lines(text), *e;
    size_t i;
    int as_preemptor = 0, nominated = 0;
    json_array_foreach(tl, i, e)
    {
        as_preemptor += !strcmp(s_of(e, "role"), "preemptor");
        nominated += !strcmp(s_of(e, "kind"), "nominated") && !strcmp(s_of(e, "role"), "decision");
    }
    ck_assert_int_eq(as_preemptor, 5); /* batch/etl-a and four notebooks */
    ck_assert_int_ge(nominated, 1);
    /* a timeline line that is not the record of its seq is found */
    char *path = xasprintf("%s/timeline.ndjson", dir);
    char *bad = xstrdup(text), *h = strstr(bad, "\"hash\":\"");
    ck_assert_ptr_nonnull(h);
    h[8] = h[8] == '0' ? '1' : '0';
    ck_assert_int_eq(test_write_file(path, bad), 0);
    cli_run(env, NULL, ARGS("audit", "verify", "--bundle", dir), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.out, "is not the record of that seq"));
    cli_result_release(&r);
    free(bad);
    free(path);
    json_decref(tl);
    free(text);
    free(dir);
}
END_TEST

/* The seq of the first "preempted" record (the demo's preemption). */
static long long first_preempted(void)
{
    struct cli_result r;
    run_ok(&r, ARGS("audit", "export", "--kind", "preempted", "--limit", "1"));
    json_t *rec = json_loads(r.out, JSON_DISABLE_EOF_CHECK, NULL);
    ck_assert_ptr_nonnull(rec);
    long long seq = (long long)json_integer_value(json_object_get(rec, "seq"));
    json_decref(rec);
    cli_result_release(&r);
    return seq;
}

/* get --at/--seq and why --seq: the cluster and the why just before and after the preemption */
START_TEST(test_cli_postmortem_get_and_why_as_they_were)
{
    struct cli_result r;
    char before[32], after[32];
    long long p = first_preempted();
    snprintf(before, sizeof(before), "%lld", p - 1);
    snprintf(after, sizeof(after), "%lld", p);
    run_ok(&r, ARGS("get", "jobs", "-n", "batch", "--seq", before));
    ck_assert_ptr_nonnull(strstr(r.out, "# as of audit record "));
    ck_assert_msg(strstr(r.out, "batch/etl-a   Running"), "%s", r.out);
    cli_result_release(&r);
    run_ok(&r, ARGS("get", "jobs", "-n", "batch", "--seq", after));
    ck_assert_msg(strstr(r.out, "batch/etl-a   Preempted"), "%s", r.out);
    cli_result_release(&r);
    run_ok(&r, ARGS("get", "pods", "-n", "batch", "--seq", after, "-o", "json"));
    json_t *doc = json_loads(r.out, 0, NULL), *x;
    size_t i;
    int terminating = 0;
    json_array_foreach(json_object_get(doc, "items"), i, x) terminating +=
        !strcmp(s_of(x, "job"), "batch/etl-a") && json_is_true(json_object_get(x, "deleting"));
    ck_assert_int_eq(terminating, 8);
    json_decref(doc);
    cli_result_release(&r);
    run_ok(&r, ARGS("why", "batch/etl-a", "--seq", after));
    ck_assert_msg(strstr(r.out, "PreemptedBy: preempted by prod/urgent-finetune"), "%s", r.out);
    cli_result_release(&r);
    /* bad values: exit 2 before anything is sent; a time in the future: musterd's 400 */
    cli_run(env, NULL, ARGS("get", "jobs", "--at", "noon"), &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--at 'noon' is not an RFC 3339 time"));
    cli_result_release(&r);
    cli_run(env, NULL, ARGS("why", "batch/etl-a", "--at", "2026-01-01T00:00:00Z", "--seq", "3"),
            &r);
    ck_assert_int_eq(r.status, 2);
    cli_result_release(&r);
    cli_run(env, NULL, ARGS("get", "queues", "--seq", "3"), &r);
    ck_assert_int_eq(r.status, 2);
    cli_result_release(&r);
    cli_run(env, NULL, ARGS("get", "nodes", "--at", "2999-01-01T00:00:00Z"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "is in the future"));
    cli_result_release(&r);
}
END_TEST

static void refused(const char *const *args, int status, const char *words)
{
    struct cli_result r;
    cli_run(env, NULL, args, &r);
    ck_assert_msg(r.status == status, "exit %d, want %d: %s", r.status, status, r.err);
    ck_assert_msg(strstr(r.err, words), "'%s' lacks '%s'", r.err, words);
    cli_result_release(&r);
}

START_TEST(test_cli_postmortem_bad_input)
{
    char *dir = xasprintf("%s/none", out);
    refused(ARGS("postmortem", "-o", dir), 2, "needs --job NAMESPACE/NAME");
    refused(ARGS("postmortem", "--job", "batch/etl-a"), 2, "needs -o DIR");
    refused(ARGS("postmortem", "--job", "batch/etl-a", "--since", "monday", "-o", dir), 2,
            "--since 'monday' is not an RFC 3339 time");
    refused(ARGS("postmortem", "--job", "nobody/here", "-o", dir), 1,
            "no audit record names job 'nobody/here'");
    struct stat sb;
    ck_assert_int_ne(stat(dir, &sb), 0); /* nothing written */
    refused(ARGS("audit", "verify", "--bundle", dir), 2, "is not a post-mortem bundle");
    struct cli_result r;
    run_ok(&r, ARGS("postmortem", "--job", "batch/etl-a", "-o", dir));
    cli_result_release(&r);
    refused(ARGS("postmortem", "--job", "batch/etl-a", "-o", dir), 2, "already holds a bundle");
    free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_postmortem");
    TCase *tc = tcase_create("demo");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_cli_postmortem_victim_bundle);
    tcase_add_test(tc, test_cli_postmortem_preemptor_and_timeline_check);
    tcase_add_test(tc, test_cli_postmortem_bad_input);
    tcase_add_test(tc, test_cli_postmortem_get_and_why_as_they_were);
    suite_add_tcase(s, tc);
    return check_run(s);
}
