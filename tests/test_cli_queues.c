/*
 * test_cli_queues.c - `muster get queues`, `get queue NAME`, `describe queue NAME` and
 * `delete queue NAME` against a real musterd (port 0, fresh data dir per test). Every
 * number the tables print is checked against the API's queue documents (fetched with
 * `-o json`), so the tests follow the scheduler's shares instead of restating them.
 *
 * Clusters: tests/data/api/queues/manifest.yaml (alpha runs, beta waits, spare and its
 * child are empty; shared with test_api_queues.c) and tests/data/cli/queues/reclaim.yaml
 * (claimer takes back two jobs of lender).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "check_run.h"
#include "cli_support.h"
#include "model.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static struct cli_musterd d;
static const char *env[2];

static void run_ok(struct cli_result *r, const char *const *args)
{
    cli_run_ok(env, NULL, args, r);
}

static json_t *run_json(const char *const *args)
{
    struct cli_result r;
    json_error_t je;
    run_ok(&r, args);
    json_t *doc = json_loads(r.out, 0, &je);
    ck_assert_msg(doc != NULL, "not JSON (%s):\n%s", je.text, r.out);
    cli_result_release(&r);
    return doc;
}

/* Applies a manifest (a path under tests/data/cli) and runs a cycle. */
static void apply(const char *rel)
{
    struct cli_result r;
    char *path = cli_data_path(rel);
    run_ok(&r, ARGS("apply", "-f", path));
    cli_result_release(&r);
    free(path);
    run_ok(&r, ARGS("cycle"));
    cli_result_release(&r);
}

/* The line of out that starts with prefix, up to its end (new), after squeezing runs of
 * spaces to one; fails the test when there is none. */
static char *line(const char *out, const char *prefix)
{
    for (const char *s = out; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL) {
        size_t n = strcspn(s, "\n");
        char *w = xcalloc(1, n + 1);
        size_t o = 0;
        for (size_t k = 0; k < n; k++)
            if (s[k] != ' ' || (o > 0 && w[o - 1] != ' '))
                w[o++] = s[k];
        while (o > 0 && w[o - 1] == ' ')
            w[--o] = '\0';
        if (!strncmp(w, prefix, strlen(prefix)))
            return w;
        free(w);
    }
    ck_abort_msg("no line '%s' in:\n%s", prefix, out);
    return NULL;
}

static void expect_line(const char *out, const char *want)
{
    char *l = line(out, want);
    ck_assert_msg(!strcmp(l, want), "line '%s', want '%s'\n%s", l, want, out);
    free(l);
}

/* resources.<res>.<what> of a queue document formatted as the CLI does ("-" when absent,
 * "unlimited" for a null capability). */
static const char *q_num(json_t *q, const char *res, const char *what, char *buf, size_t n)
{
    json_t *v = json_object_get(json_object_get(json_object_get(q, "resources"), res), what);
    if (json_is_null(v))
        snprintf(buf, n, "unlimited");
    else if (!json_is_integer(v))
        snprintf(buf, n, "-");
    else
        model_quantity_format(json_integer_value(v), model_resource_is_milli(res), buf, n);
    return buf;
}

static json_t *queue_in(json_t *list, const char *name)
{
    size_t i;
    json_t *q;
    json_array_foreach(json_object_get(list, "items"), i, q)
    {
        if (!strcmp(json_string_value(json_object_get(q, "name")), name))
            return q;
    }
    ck_abort_msg("queue '%s' not listed", name);
    return NULL;
}

/* "name parent weight share pending running cpu memory gpu" as the table row must read. */
static char *table_row(json_t *q)
{
    char a[3][32], b[3][32];
    static const char *const res[] = {"cpu", "memory", "nvidia.com/gpu"};
    json_t *jobs = json_object_get(q, "jobs");
    const char *parent = json_string_value(json_object_get(q, "parent"));
    for (int k = 0; k < 3; k++) {
        q_num(q, res[k], "allocated", a[k], sizeof(a[k]));
        q_num(q, res[k], "deserved", b[k], sizeof(b[k]));
    }
    return xasprintf("%s %s %lld %.2f %lld %lld %s/%s %s/%s %s/%s",
                     json_string_value(json_object_get(q, "name")), parent ? parent : "root",
                     (long long)json_integer_value(json_object_get(q, "weight")),
                     json_number_value(json_object_get(q, "share")),
                     (long long)json_integer_value(json_object_get(jobs, "pending")),
                     (long long)json_integer_value(json_object_get(jobs, "running")), a[0], b[0],
                     a[1], b[1], a[2], b[2]);
}

START_TEST(test_cli_queues_get_table_and_one)
{
    struct cli_result r;
    apply("../api/queues/manifest.yaml");
    json_t *list = run_json(ARGS("get", "queues", "-o", "json"));
    ck_assert_str_eq(json_string_value(json_object_get(list, "kind")), "QueueList");
    run_ok(&r, ARGS("get", "queues"));
    expect_line(r.out, "NAME PARENT WEIGHT SHARE PENDING RUNNING CPU MEMORY GPU");
    size_t i;
    json_t *q;
    int rows = 0;
    json_array_foreach(json_object_get(list, "items"), i, q)
    {
        char *want = table_row(q);
        expect_line(r.out, want);
        free(want);
        rows++;
    }
    ck_assert_int_eq(rows, 5);
    /* the numbers the cluster makes: alpha holds 24 GPUs and 12 cores, spare-child is spare's */
    char *l = line(r.out, "alpha root 1 ");
    ck_assert_msg(strstr(l, " 0 1 12/") && strstr(l, " 48Gi/") && strstr(l, " 24/"), "%s", l);
    free(l);
    free(line(r.out, "spare-child spare 1 0.00 0 0 "));
    cli_result_release(&r);

    /* one queue: a one-row table; -o json is the API's document with its jobs */
    run_ok(&r, ARGS("get", "queue", "beta"));
    ck_assert_int_eq(strchr(strchr(r.out, '\n') + 1, '\n') - r.out + 1, (long)strlen(r.out));
    char *want = table_row(queue_in(list, "beta"));
    expect_line(r.out, want);
    free(want);
    cli_result_release(&r);
    json_t *beta = run_json(ARGS("get", "q", "beta", "-o", "json"));
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(beta, "pendingJobs"), 0)),
                     "team-b/tune");
    json_decref(beta);
    run_ok(&r, ARGS("get", "queue", "alpha", "-o", "yaml"));
    ck_assert_msg(strstr(r.out, "name: alpha\n") && strstr(r.out, "- team-a/train\n"), "%s", r.out);
    cli_result_release(&r);
    cli_run(env, NULL, ARGS("get", "queue", "nope"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "error: queue 'nope' not found\n");
    cli_result_release(&r);
    json_decref(list);
}
END_TEST

START_TEST(test_cli_queues_describe_every_number)
{
    struct cli_result r;
    apply("../api/queues/manifest.yaml");
    json_t *alpha = run_json(ARGS("get", "queue", "alpha", "-o", "json"));
    run_ok(&r, ARGS("describe", "queue", "alpha"));
    expect_line(r.out, "Name: alpha");
    expect_line(r.out, "Parent: root");
    expect_line(r.out, "Children: <none>");
    expect_line(r.out, "Weight: 1");
    expect_line(r.out, "Reclaimable: false");
    expect_line(r.out, "Jobs: 0 pending, 1 running");
    expect_line(r.out, "Reclaims: 0 by its jobs, 0 against them");
    expect_line(r.out, "RESOURCE ALLOCATED DESERVED REQUEST GUARANTEE CAPABILITY BORROWED LENT");
    const char *res;
    json_t *v;
    int n = 0;
    json_object_foreach(json_object_get(alpha, "resources"), res, v)
    {
        char c[7][32];
        static const char *const what[] = {"allocated",  "deserved", "request", "guarantee",
                                           "capability", "borrowed", "lent"};
        for (int k = 0; k < 7; k++)
            q_num(alpha, res, what[k], c[k], sizeof(c[k]));
        char *want =
            xasprintf("%s %s %s %s %s %s %s %s", res, c[0], c[1], c[2], c[3], c[4], c[5], c[6]);
        expect_line(r.out, want);
        free(want);
        n++;
    }
    ck_assert_int_ge(n, 3);
    /* the numbers themselves: 24 GPUs held, no capability, 8 above its deserved 16 */
    expect_line(r.out, "nvidia.com/gpu 24 16 24 0 unlimited 8 0");
    ck_assert_msg(strstr(r.out, "Running jobs:\n  team-a/train\n"), "%s", r.out);
    expect_line(r.out, "Pending jobs: <none>");
    expect_line(r.out, "Reclaims by this queue: <none>");
    expect_line(r.out, "Reclaims against this queue: <none>");
    cli_result_release(&r);
    json_decref(alpha);

    /* a capability prints as the limit; a child names its parent and the parent its child */
    run_ok(&r, ARGS("describe", "queue", "beta"));
    char *l = line(r.out, "nvidia.com/gpu 0 ");
    ck_assert_msg(strstr(l, " 24 0 ") != NULL, "capability 24: %s", l);
    free(l);
    ck_assert_msg(strstr(r.out, "Pending jobs:\n  team-b/tune\n"), "%s", r.out);
    cli_result_release(&r);
    run_ok(&r, ARGS("describe", "queue", "spare"));
    expect_line(r.out, "Children: spare-child");
    cli_result_release(&r);
    run_ok(&r, ARGS("describe", "q", "default"));
    expect_line(r.out, "Name: default (built-in, not stored)");
    cli_result_release(&r);
    json_t *both = run_json(ARGS("describe", "queue", "spare-child", "-o", "json"));
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(both, "queue"), "parent")),
                     "spare");
    ck_assert(json_is_array(json_object_get(json_object_get(both, "reclaims"), "by")));
    json_decref(both);
    cli_run(env, NULL, ARGS("describe", "queue", "nope"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, "error: queue 'nope' not found\n");
    cli_result_release(&r);

    /* `why` prints the why document's queue part: the queue, its share and rank, numbers */
    json_t *why = run_json(ARGS("why", "team-b/tune", "-o", "json"));
    json_t *q = json_object_get(why, "queue");
    ck_assert_str_eq(json_string_value(json_object_get(q, "name")), "beta");
    run_ok(&r, ARGS("why", "team-b/tune"));
    char *want =
        xasprintf("Queue: beta: share %.3f", json_number_value(json_object_get(q, "share")));
    free(line(r.out, want));
    free(want);
    want = xasprintf(
        "capability: nvidia.com/gpu %s",
        json_string_value(json_object_get(json_object_get(q, "capability"), "nvidia.com/gpu")));
    expect_line(r.out, want);
    free(want);
    cli_result_release(&r);
    json_decref(why);
}
END_TEST

START_TEST(test_cli_queues_delete)
{
    struct cli_result r;
    apply("../api/queues/manifest.yaml");
    cli_run(env, NULL, ARGS("delete", "queue", "alpha"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "team-a/train") != NULL, "%s", r.err);
    cli_result_release(&r);
    run_ok(&r, ARGS("delete", "queue", "spare-child"));
    ck_assert_str_eq(r.out, "queue/spare-child deleted\n");
    cli_result_release(&r);
    cli_run(env, NULL, ARGS("get", "queue", "spare-child"), &r);
    ck_assert_int_eq(r.status, 1);
    cli_result_release(&r);
}
END_TEST

/* The reclaims of describe are the ledger's entries of kind reclaim: by the claimer, against
 * the lender, with the entry's id, preemptor and victim queues. */
START_TEST(test_cli_queues_describe_reclaims)
{
    struct cli_result r;
    apply("queues/reclaim.yaml");
    json_t *e = NULL, *ledger = NULL;
    for (int i = 0; i < 150 && !e; i++) {
        json_decref(ledger);
        ledger = run_json(ARGS("preemptions", "-o", "json"));
        size_t k;
        json_t *x;
        json_array_foreach(json_object_get(ledger, "items"), k, x)
        {
            const char *kind = json_string_value(json_object_get(x, "kind"));
            if (kind && !strcmp(kind, "reclaim"))
                e = x;
        }
        if (!e) {
            struct timespec ts = {0, 200 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    ck_assert_msg(e != NULL, "no reclaim in the ledger");
    json_t *q = json_object_get(e, "queue"),
           *vq = json_array_get(json_object_get(e, "victimQueues"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(q, "name")), "claimer");
    ck_assert_int_eq(json_array_size(json_object_get(e, "victimQueues")), 1);
    ck_assert_str_eq(json_string_value(json_object_get(vq, "name")), "lender");
    char *row = xasprintf(
        "%lld %lld lab/claim claimer (share %.2f -> %.2f) %zu lender (share %.2f -> %.2f)",
        (long long)json_integer_value(json_object_get(e, "id")),
        (long long)json_integer_value(json_object_get(e, "cycle")),
        json_number_value(json_object_get(q, "shareBefore")),
        json_number_value(json_object_get(q, "shareAfter")),
        json_array_size(json_object_get(e, "victims")),
        json_number_value(json_object_get(vq, "shareBefore")),
        json_number_value(json_object_get(vq, "shareAfter")));
    run_ok(&r, ARGS("describe", "queue", "claimer"));
    expect_line(r.out, "Reclaims by this queue:");
    expect_line(r.out, "ID CYCLE PREEMPTOR QUEUE VICTIMS VICTIM QUEUES");
    expect_line(r.out, row);
    expect_line(r.out, "Reclaims against this queue: <none>");
    cli_result_release(&r);
    run_ok(&r, ARGS("describe", "queue", "lender"));
    expect_line(r.out, "Reclaims by this queue: <none>");
    expect_line(r.out, "Reclaims against this queue:");
    expect_line(r.out, row);
    cli_result_release(&r);
    free(row);
    json_decref(ledger);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_queues");
    TCase *tc = tcase_create("musterd");
    tcase_set_timeout(tc, 60);
    cli_fixture_use(&d, env);
    tcase_add_checked_fixture(tc, cli_fixture_setup, cli_fixture_teardown);
    tcase_add_test(tc, test_cli_queues_get_table_and_one);
    tcase_add_test(tc, test_cli_queues_describe_every_number);
    tcase_add_test(tc, test_cli_queues_delete);
    tcase_add_test(tc, test_cli_queues_describe_reclaims);
    suite_add_tcase(s, tc);
    return check_run(s);
}
