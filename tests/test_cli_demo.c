/*
 * test_cli_demo.c - `muster` against a real musterd on the demo cluster (examples/demo, the
 * cycle timer off so `muster cycle` decides): why and describe with the topology and
 * preemption parts, the why that never misleads, the preemptions and topology tables,
 * what-if, reservations and audit replay. The basic commands are test_cli_server.c's.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "check_run.h"
#include "cli_support.h"
#include "err.h"
#include "http_client.h"
#include "model.h"

static const char *env[2];

/* Runs muster against the demo's musterd and checks the exit code; caller releases r. */
static void run_ok(struct cli_result *r, const char *stdin_data, const char *const *args)
{
    cli_run_ok(env, stdin_data, args, r);
}

/* A musterd without the cycle timer (cycle_interval 0), so `muster cycle` alone decides
 * which cycle a why document comes from. */
static struct musterd demo;
static char demo_env[128];

static void demo_setup(void)
{
    cli_musterd_untimed(&demo, demo_env, sizeof(demo_env), env);
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
        run_ok(&r, NULL, CLI_ARGS("apply", "-f", path));
        cli_result_release(&r);
        free(path);
    }
    size_t n = 0;
    for (int i = 0; i < 100 && n == 0; i++) {
        json_t *l = cli_run_json(env, CLI_ARGS("preemptions", "-o", "json"));
        n = json_array_size(json_object_get(l, "items"));
        json_decref(l);
        if (n == 0)
            usleep(50000);
    }
    ck_assert_msg(n > 0, "the demo cluster preempts after the wake-up cycles");
    for (int i = 0; i < cycles; i++) {
        run_ok(&r, NULL, CLI_ARGS("cycle"));
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
    run_ok(&r, NULL, CLI_ARGS("why", "training/giant"));
    line_at(r.out, "Primary:     ExceedsClusterCapacity (NEVER): needs 320 nvidia.com/gpu, the "
                   "cluster has 288\n");
    ck_assert_msg(!strstr(r.out, "Preemption:"), "%s", r.out);
    cli_result_release(&r);

    json_t *why = cli_run_json(env, CLI_ARGS("why", "vision/resnet", "-o", "json"));
    const char *sum =
        json_string_value(json_object_get(json_object_get(why, "nodeFilter"), "summary"));
    ck_assert_msg(sum && strstr(sum, "4 nodes reserved for prod/urgent-finetune") &&
                      strstr(sum, "Insufficient cpu (need 32, max free 16)"),
                  "%s", sum ? sum : "(no node filter)");
    json_decref(why);

    run_ok(&r, NULL, CLI_ARGS("why", "batch/etl-b-0"));
    line_at(r.out, "Job:         batch/etl-b\n");
    line_at(r.out, "Pod:         batch/etl-b-0 (a member of job batch/etl-b)\n");
    line_at(r.out, "  batch/etl-b: minMember 8, members 8, bound 8,");
    line_at(r.out, "Primary:     none\n");
    cli_result_release(&r);

    run_ok(&r, NULL, CLI_ARGS("get", "jobs"));
    ck_assert_msg(cli_has_line(r.out, "training giant Unschedulable ExceedsClusterCapacity 20 ") &&
                      cli_has_line(r.out, "batch etl-b Running <none> "),
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
    json_t *why = cli_run_json(env, CLI_ARGS("why", "prod/urgent-finetune", "-o", "json"));
    json_t *topo = json_object_get(why, "topology"), *pre = json_object_get(why, "preemption");
    ck_assert_msg(json_is_object(topo) && json_is_true(json_object_get(pre, "attempted")),
                  "the demo's MustGather job preempts in its first cycle");
    json_t *ledger =
        cli_run_json(env, CLI_ARGS("preemptions", "--job", "prod/urgent-finetune", "-o", "json"));
    json_t *entry = json_array_get(json_object_get(ledger, "items"), 0);
    ck_assert_ptr_nonnull(entry);
    run_ok(&r, NULL, CLI_ARGS("why", "prod/urgent-finetune"));
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
    run_ok(&r, NULL, CLI_ARGS("cycle"));
    cli_result_release(&r);
    run_ok(&r, NULL, CLI_ARGS("why", "prod/urgent-finetune"));
    l = line_at(r.out, "Preemption:  waiting (PreemptionWaiting): waiting for ");
    ck_assert_msg(strstr(l, " victims to terminate\n"), "%s", r.out);
    line_at(r.out, "  Victims (ledger entry ");
    cli_result_release(&r);

    /* the victim's side: describe names every preemptor with its ledger entry */
    json_t *job = cli_run_json(env, CLI_ARGS("get", "job", "batch/etl-a", "-o", "json"));
    json_t *pb = json_object_get(job, "preemptedBy"), *x;
    ck_assert_msg(json_is_object(pb), "batch/etl-a was preempted");
    ck_assert_uint_gt(json_array_size(json_object_get(pb, "preemptors")), 0);
    run_ok(&r, NULL, CLI_ARGS("describe", "job", "batch/etl-a"));
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
    json_t *ledger = cli_run_json(env, CLI_ARGS("preemptions", "-o", "json"));
    size_t n = json_array_size(json_object_get(ledger, "items"));
    ck_assert_uint_gt(n, 0);
    run_ok(&r, NULL, CLI_ARGS("preemptions"));
    cli_expect_line(
        r.out, 0,
        "ID CYCLE PREEMPTOR TRIGGER VICTIMS GANGS BROKEN PDB VIOLATIONS NODES ROOM FROM BOUND "
        "LATENCY");
    ck_assert_int_eq(cli_count_lines(r.out), (int)n + 1);
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
    cli_expect_line(r.out, 1, want);
    free(want);
    cli_result_release(&r);
    /* and the victim whose room it took says so */
    run_ok(&r, NULL, CLI_ARGS("why", "batch/etl-a"));
    ck_assert_msg(strstr(r.out, "RoomTakenBy: vision/resnet took the room of 4 of its pods"), "%s",
                  r.out);
    cli_result_release(&r);
    /* audit export --job: every record naming the job in any role, here as preemptor */
    run_ok(&r, NULL, CLI_ARGS("audit", "export", "--job", "prod/urgent-finetune"));
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
    run_ok(&r, NULL, CLI_ARGS("preemptions", "--victim", "batch/etl-a"));
    ck_assert_msg(cli_count_lines(r.out) >= 2 && cli_has_line(r.out, "ID CYCLE"), "%s", r.out);
    cli_result_release(&r);
    json_decref(ledger);

    run_ok(&r, NULL, CLI_ARGS("topology", "--pod-gpu", "8"));
    cli_expect_line(r.out, 0, "DOMAIN LAYER NODES CPU USED/CAP GPU GANG JOBS");
    cli_expect_line(r.out, 1, "(cluster) ClusterTopologyLayer 36 ");
    ck_assert_msg(cli_has_line(r.out, "spine-0 SpineLayer 16 ") &&
                      cli_has_line(r.out, "block-0 BlockLayer 4 ") &&
                      cli_has_line(r.out, "nodes: gpu-b0-0 gpu-b0-1 gpu-b0-2 gpu-b0-3"),
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
    json_t *before = cli_run_json(env, CLI_ARGS("preemptions", "-o", "json"));
    char *probe = cli_data_path("whatif/probe.yaml");
    run_ok(&r, NULL, CLI_ARGS("whatif", "-f", probe));
    ck_assert_msg(cli_has_line(r.out, "JOB STATE WOULD PLACE NODES WHY"), "%s", r.out);
    ck_assert_msg(cli_has_line(r.out, "training/probe Scheduled yes"), "%s", r.out);
    cli_result_release(&r);

    /* its two nodes cordoned: it would preempt for room instead */
    json_t *res = cli_run_json(env, CLI_ARGS("whatif", "-f", probe, "-o", "json"));
    json_t *members = json_object_get(json_array_get(json_object_get(res, "jobs"), 0), "members");
    char *nodes =
        xasprintf("%s,%s", json_string_value(json_object_get(json_array_get(members, 0), "node")),
                  json_string_value(json_object_get(json_array_get(members, 1), "node")));
    json_decref(res);
    run_ok(&r, NULL, CLI_ARGS("whatif", "-f", probe, "--cordon", nodes));
    ck_assert_msg(cli_has_line(r.out, "training/probe Pipelined no nominated"), "%s", r.out);
    ck_assert_msg(strstr(r.out, "Preemptions it would make:\n  training/probe preempts "), "%s",
                  r.out);
    /* it evicts nothing: the ledger names whose preemption frees the room it takes */
    ck_assert_msg(strstr(r.out, "preempts nothing; takes the room prod/urgent-finetune's "
                                "preemption frees (batch/etl-a"),
                  "%s", r.out);
    /* the room it takes is vision/resnet's, nominated to a lower priority (50 < 200) */
    ck_assert_msg(cli_has_line(r.out, "changed vision/resnet: Pipelined ->"), "%s", r.out);
    cli_result_release(&r);

    cli_run(env, NULL, CLI_ARGS("whatif"), &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "whatif needs -f FILE"), "%s", r.err);
    cli_result_release(&r);
    cli_run(env, NULL, CLI_ARGS("whatif", "--cordon", "nosuch"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "node 'nosuch' not found"), "%s", r.err);
    cli_result_release(&r);

    json_t *after = cli_run_json(env, CLI_ARGS("preemptions", "-o", "json"));
    ck_assert(json_equal(before, after));
    cli_run(env, NULL, CLI_ARGS("get", "pod", "probe-0", "-n", "training"), &r);
    ck_assert_int_eq(r.status, 1);
    cli_result_release(&r);
    json_decref(before);
    json_decref(after);
    free(nodes);
    free(probe);
}
END_TEST

/* `muster audit replay` on the demo: the preemptions, evictions and placements of its
 * cycles, run again from the first record, agree with the log; bad ranges are refused. */
START_TEST(test_cli_audit_replay_on_the_demo)
{
    struct cli_result r;
    apply_demo(2);
    run_ok(&r, NULL, CLI_ARGS("audit", "replay", "--from", "1"));
    ck_assert_msg(strstr(r.out, "decisions as the log says"), "%s", r.out);
    cli_result_release(&r);
    json_t *rep = cli_run_json(env, CLI_ARGS("audit", "replay", "--from", "1", "-o", "json"));
    ck_assert(json_is_true(json_object_get(rep, "ok")));
    ck_assert_int_ge(json_integer_value(json_object_get(rep, "cycles")), 3);
    ck_assert_int_gt(json_integer_value(json_object_get(rep, "decisions")), 5);
    /* from the middle: run from where the waiting jobs are known, compared from there on */
    char mid[32];
    snprintf(mid, sizeof(mid), "%lld",
             (long long)json_integer_value(json_object_get(rep, "to")) / 2);
    json_decref(rep);
    run_ok(&r, NULL, CLI_ARGS("audit", "replay", "--from", mid));
    ck_assert_msg(strstr(r.out, "decisions as the log says"), "%s", r.out);
    ck_assert_msg(strstr(r.out, "where the scheduler's waiting jobs are known"), "%s", r.out);
    cli_result_release(&r);
    /* --quick: run from there, the waiting jobs parked anew, and said so (whether the
     * cycles then agree is not promised) */
    cli_run(env, NULL, CLI_ARGS("audit", "replay", "--from", mid, "--quick"), &r);
    ck_assert_msg(strstr(r.out, "not exact: run from record"), "%s / %s", r.out, r.err);
    cli_result_release(&r);
    char path[96];
    snprintf(path, sizeof(path), "/api/v1/audit/replay?from=%s&exact=false", mid);
    struct http_resp h;
    ck_assert_int_eq(http_request("GET", demo.base, path, NULL, NULL, &h), 0);
    ck_assert_int_eq(h.status, 200);
    ck_assert(json_is_false(json_object_get(h.json, "exact")));
    ck_assert_int_eq(json_integer_value(json_object_get(h.json, "replayedFrom")),
                     json_integer_value(json_object_get(h.json, "from")));
    http_resp_free(&h);
    ck_assert_int_eq(
        http_request("GET", demo.base, "/api/v1/audit/replay?from=1&exact=maybe", NULL, NULL, &h),
        0);
    ck_assert_int_eq(h.status, 400);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(h.json, "error"), "field")),
                     "exact");
    http_resp_free(&h);
    /* --quick is the replay's: verify and export refuse it */
    cli_run(env, NULL, CLI_ARGS("audit", "verify", "--quick"), &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "audit verify accepts only"), "%s", r.err);
    cli_result_release(&r);
    cli_run(env, NULL, CLI_ARGS("audit", "export", "--quick"), &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--quick"), "%s", r.err);
    cli_result_release(&r);
    cli_run(env, NULL, CLI_ARGS("audit", "replay"), &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "audit replay needs --from SEQ"), "%s", r.err);
    cli_result_release(&r);
    cli_run(env, NULL, CLI_ARGS("audit", "replay", "--from", "1", "--to", "99999999"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "not a range of the log"), "%s", r.err);
    cli_result_release(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cli_demo");
    TCase *tc = tcase_create("demo");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, demo_setup, demo_teardown);
    tcase_add_test(tc, test_cli_why_topology_and_preemption_parts);
    tcase_add_test(tc, test_cli_demo_why_never_misleads);
    tcase_add_test(tc, test_cli_preemptions_and_topology_tables);
    tcase_add_test(tc, test_cli_whatif_on_the_demo);
    tcase_add_test(tc, test_cli_audit_replay_on_the_demo);
    suite_add_tcase(s, tc);
    return check_run(s);
}
