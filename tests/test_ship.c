/*
 * test_ship.c - accounting against a real PostgreSQL (tests/support/pg_support.h, one
 * server for the suite, a database per test): the job rows and reports against figures
 * computed here from the audit records of the workload applied, preemptions counted,
 * `muster audit verify --from-db` over the copied chain (and over a tampered copy), and
 * options refused. The faults (the database down, a SIGKILL mid-batch, two clusters, retention,
 * a follower) are test_ship_faults.c's; the helpers tests/support/ship_util.h.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_run.h"
#include "cli_support.h"
#include "clock.h"
#include "crash_support.h"
#include "err.h"
#include "pg_support.h"
#include "ship.h"
#include "ship_util.h"

static struct pg_fx pg;

START_TEST(test_ship_jobs_and_reports)
{
    struct musterd m;
    char url[512];
    pg_db(&pg, "t_jobs", url, sizeof(url));
    char *cfg = ship_util_acct_config(url, "alpha", NULL);
    ship_util_start(&m, cfg, NULL);
    ship_util_post_yaml(&m, ship_util_cluster_yaml);
    char *a = ship_util_gang_yaml("team", "a", 2, 2, "qa"),
         *b = ship_util_gang_yaml("lab", "b", 1, 1, "qb");
    ship_util_post_yaml(&m, a);
    ship_util_post_yaml(&m, b);
    free(a);
    free(b);
    ship_util_wait_placed(&m, 3);
    ship_util_wait_shipped(&m); /* the shipper reads the placed pods' requests while they exist */
    usleep(400000);
    ship_util_delete_pod(&m, "team", "a-0");
    usleep(200000);
    ship_util_delete_pod(&m, "team", "a-1");
    ship_util_delete_pod(&m, "lab", "b-0");
    ship_util_wait_shipped(&m);
    ship_util_check_copy(&m, url, "alpha");

    /* by hand, from the records: GPU-seconds of each pod = (removed - placed) x GPUs */
    json_t *recs = ship_util_export_records(&m);
    double a0 = (double)(ship_util_pod_event(recs, "deleted", "team/a-0") -
                         ship_util_pod_event(recs, "placed", "team/a-0")) /
                1000.0;
    double a1 = (double)(ship_util_pod_event(recs, "deleted", "team/a-1") -
                         ship_util_pod_event(recs, "placed", "team/a-1")) /
                1000.0;
    double b0 = (double)(ship_util_pod_event(recs, "deleted", "lab/b-0") -
                         ship_util_pod_event(recs, "placed", "lab/b-0")) /
                1000.0;
    double gpu_a = 2 * a0 + 2 * a1, gpu_b = 1 * b0;
    ck_assert(a0 > 0.3 && a1 > a0);

    char *s =
        pg_value(url, "SELECT state || ' ' || pods || ' ' || queue || ' ' || "
                      "(requested->>'nvidia.com/gpu') || ' ' || (allocated->>'nvidia.com/gpu')"
                      " || ' ' || (requested->>'cpu') FROM muster_jobs WHERE name = 'a'");
    ck_assert_str_eq(s, "completed 2 qa 4 4 2");
    free(s);
    s = pg_value(url,
                 "SELECT resource_seconds->>'nvidia.com/gpu' FROM muster_jobs WHERE name = 'a'");
    SHIP_NEAR(strtod(s, NULL), gpu_a);
    free(s);
    s = pg_value(url, "SELECT count(*) FROM muster_pod_usage WHERE end_time IS NULL");
    ck_assert_str_eq(s, "0");
    free(s);

    /* muster report usage --by queue: GPU-hours and shares */
    const char *db = url;
    json_t *u = cli_run_json(
        NULL, (const char *[]){"report", "usage", "--db", db, "--by", "queue", "-o", "json", NULL});
    json_t *rows = json_object_get(u, "rows");
    ck_assert_int_eq(json_array_size(rows), 2);
    SHIP_NEAR(json_number_value(json_object_get(
                  json_object_get(ship_util_row_of(rows, "qa"), "resources"), "nvidia.com/gpu")),
              gpu_a / 3600.0);
    SHIP_NEAR(json_number_value(json_object_get(
                  json_object_get(ship_util_row_of(rows, "qb"), "resources"), "nvidia.com/gpu")),
              gpu_b / 3600.0);
    SHIP_NEAR(json_number_value(json_object_get(
                  json_object_get(ship_util_row_of(rows, "qa"), "share"), "nvidia.com/gpu")),
              gpu_a / (gpu_a + gpu_b));
    /* memory in GiB-hours: 1 GiB per pod */
    SHIP_NEAR(json_number_value(json_object_get(
                  json_object_get(ship_util_row_of(rows, "qa"), "resources"), "memory")),
              (a0 + a1) / 3600.0);
    json_decref(u);

    /* a window that cuts pod a-1's interval: only its part inside counts */
    int64_t cut = ship_util_pod_event(recs, "deleted", "team/a-0");
    char since[40];
    clock_format_rfc3339_ms(cut, since, sizeof(since));
    u = cli_run_json(NULL, (const char *[]){"report", "usage", "--db", db, "--by", "namespace",
                                            "--since", since, "-o", "json", NULL});
    double a1_after = (double)(ship_util_pod_event(recs, "deleted", "team/a-1") - cut) / 1000.0;
    double b0_after =
        fmax(0, (double)(ship_util_pod_event(recs, "deleted", "lab/b-0") - cut) / 1000.0);
    SHIP_NEAR(
        json_number_value(json_object_get(
            json_object_get(ship_util_row_of(json_object_get(u, "rows"), "team"), "resources"),
            "nvidia.com/gpu")),
        2 * a1_after / 3600.0);
    SHIP_NEAR(json_number_value(json_object_get(
                  json_object_get(ship_util_row_of(json_object_get(u, "rows"), "lab"), "resources"),
                  "nvidia.com/gpu")),
              b0_after / 3600.0);
    json_decref(u);

    /* muster report jobs: filters and CSV */
    json_t *j = cli_run_json(
        NULL, (const char *[]){"report", "jobs", "--db", db, "--queue", "qa", "-o", "json", NULL});
    json_t *items = json_object_get(j, "items");
    ck_assert_int_eq(json_array_size(items), 1);
    json_t *ja = json_array_get(items, 0);
    ck_assert_str_eq(json_string_value(json_object_get(ja, "name")), "a");
    ck_assert_str_eq(json_string_value(json_object_get(ja, "state")), "completed");
    int64_t placed = ship_util_pod_event(recs, "placed", "team/a-0"), submit = 0;
    ck_assert_int_eq(
        clock_parse_rfc3339(json_string_value(json_object_get(ja, "submit")), &submit, NULL), 0);
    SHIP_NEAR(json_number_value(json_object_get(ja, "waitSeconds")),
              (double)(placed - submit) / 1000.0);
    json_decref(j);
    struct cli_result r;
    cli_run(
        NULL, NULL,
        (const char *[]){"report", "jobs", "--db", db, "--state", "completed", "-o", "csv", NULL},
        &r);
    ck_assert_int_eq(r.status, 0);
    ck_assert_msg(!strncmp(r.out, "cluster,namespace,name,queue,", 29), "%s", r.out);
    int nl = 0;
    for (char *p = r.out; *p; p++)
        nl += *p == '\n';
    ck_assert_int_eq(nl, 3); /* header + a + b */
    cli_result_release(&r);

    /* muster report waits: one job per (queue, size) here, so every percentile is it */
    j = cli_run_json(NULL, (const char *[]){"report", "waits", "--db", db, "-o", "json", NULL});
    ck_assert_int_eq(json_array_size(json_object_get(j, "rows")), 2);
    json_t *w0 = json_array_get(json_object_get(j, "rows"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(w0, "queue")), "qa");
    ck_assert_str_eq(json_string_value(json_object_get(w0, "size")), "2-7");
    SHIP_NEAR(json_number_value(json_object_get(w0, "p90")), (double)(placed - submit) / 1000.0);
    json_decref(j);

    /* bad input: exit 2, one line naming what is wrong */
    cli_run(NULL, NULL, (const char *[]){"report", "usage", "--db", db, "--by", "team", NULL}, &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--by 'team'"));
    cli_result_release(&r);
    cli_run(NULL, NULL,
            (const char *[]){"report", "jobs", "--db", db, "--since", "yesterday", NULL}, &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--since 'yesterday'"));
    cli_result_release(&r);

    json_decref(recs);
    musterd_stop(&m);
    musterd_cleanup(&m);
    crash_config_free(cfg);
}
END_TEST

START_TEST(test_ship_verify_from_db)
{
    struct musterd m;
    char url[512], key[300], pub[300], cmd[1024], extra[700];
    pg_db(&pg, "t_verify", url, sizeof(url));
    snprintf(key, sizeof(key), "/tmp/muster-ship-key-%d.pem", (int)getpid());
    snprintf(pub, sizeof(pub), "/tmp/muster-ship-pub-%d.pem", (int)getpid());
    snprintf(cmd, sizeof(cmd),
             "openssl genpkey -algorithm ed25519 -out %s 2>/dev/null && openssl pkey -in %s "
             "-pubout -out %s 2>/dev/null",
             key, key, pub);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(extra, sizeof(extra), "audit_key: %s\naudit_checkpoint_records: 4\n", key);
    char *cfg = ship_util_acct_config(url, "alpha", extra);
    ship_util_start(&m, cfg, NULL);
    ship_util_post_yaml(&m, ship_util_cluster_yaml);
    ship_util_post_jobs(&m, "v", 0, 3);
    ship_util_wait_placed(&m, 3);
    musterd_stop(&m); /* signs the head at shutdown */
    ship_util_start(&m, cfg, m.root);
    ship_util_wait_shipped(&m);
    ship_util_check_copy(&m, url, "alpha");
    int st;
    char *out = ship_util_verify_db(url, "alpha", pub, &st);
    ck_assert_msg(st == 0, "%s", out);
    json_t *v = json_loads(out, 0, NULL);
    ck_assert(json_is_true(json_object_get(v, "ok")));
    ck_assert_int_gt(json_integer_value(json_object_get(v, "checkpoints")), 0);
    json_decref(v);
    free(out);
    /* a record changed in the copy: found, and named */
    char *s = pg_value(url, "SELECT min(seq) FROM muster_audit WHERE kind = 'placed'");
    long long bad = atoll(s);
    free(s);
    char sql[256];
    snprintf(
        sql, sizeof(sql),
        "UPDATE muster_audit SET record = replace(record, '\"n1\"', '\"n2\"') WHERE seq = %lld "
        "RETURNING seq",
        bad);
    free(pg_value(url, sql));
    out = ship_util_verify_db(url, "alpha", pub, &st);
    ck_assert_int_eq(st, 1);
    v = json_loads(out, 0, NULL);
    ck_assert(json_is_false(json_object_get(v, "ok")));
    ck_assert_int_eq(json_integer_value(json_object_get(v, "firstBad")), bad);
    json_decref(v);
    free(out);
    /* the usage errors */
    struct cli_result r;
    cli_run(NULL, NULL, (const char *[]){"audit", "verify", "--from-db", url, NULL}, &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--cluster"));
    cli_result_release(&r);
    cli_run(NULL, NULL,
            (const char *[]){"audit", "verify", "--from-db", url, "--cluster", "nope", NULL}, &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "no audit records of cluster 'nope'"));
    cli_result_release(&r);
    musterd_stop(&m);
    musterd_cleanup(&m);
    crash_config_free(cfg);
    unlink(key);
    unlink(pub);
}
END_TEST

/* A config that asks for accounting wrongly is refused with the key named, and starts
 * nothing. */
START_TEST(test_ship_config_refused)
{
    static const char *const bad[][2] = {
        {"accounting:\n  url: \"host=/nowhere\"\n", "needs both 'url'"},
        {"accounting:\n  url: \"host=/nowhere\"\n  cluster: \"a b\"\n", "accounting cluster 'a b'"},
        {"accounting:\n  url: x\n  cluster: a\n  batches: 3\n", "unknown key 'accounting.batches'"},
        {"accounting:\n  url: x\n  cluster: a\n  batch: 0\n", "'accounting.batch' must be"},
        {"accounting: postgresql://x\n", "'accounting' must be a mapping"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct musterd m;
        char *cfg = crash_config(bad[i][0]);
        const char *args[] = {"--config", cfg, NULL};
        int status = 0;
        ck_assert_int_eq(musterd_start_status(&m, NULL, args, &status), -1);
        ck_assert_int_eq(status, 2);
        char buf[4096] = "";
        FILE *f = fopen(m.log_file, "r");
        size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
        buf[n] = '\0';
        if (f)
            fclose(f);
        ck_assert_msg(strstr(buf, bad[i][1]) != NULL, "case %zu: %s", i, buf);
        musterd_cleanup(&m);
        crash_config_free(cfg);
    }
}
END_TEST

START_TEST(test_ship_preemption_counted)
{
    struct musterd m;
    char url[512];
    pg_db(&pg, "t_preempt", url, sizeof(url));
    char *cfg = ship_util_acct_config(url, "alpha", NULL);
    ship_util_start(&m, cfg, NULL);
    ship_util_post_yaml(&m, ship_util_cluster_yaml);
    ship_util_post_yaml(
        &m, "apiVersion: v1\nkind: Pod\nmetadata: {name: low, namespace: p, annotations: "
            "{scheduling.volcano.sh/queue-name: qa}}\nspec: {priority: 1, containers: "
            "[{name: c, resources: {requests: {cpu: \"1\", nvidia.com/gpu: \"8\"}}}]}\n");
    ship_util_wait_placed(&m, 1);
    ship_util_wait_shipped(&m);
    usleep(200000);
    ship_util_post_yaml(
        &m, "apiVersion: v1\nkind: Pod\nmetadata: {name: high, namespace: p, annotations: "
            "{scheduling.volcano.sh/queue-name: qa}}\nspec: {priority: 100, containers: "
            "[{name: c, resources: {requests: {cpu: \"1\", nvidia.com/gpu: \"4\"}}}]}\n");
    json_t *recs = NULL;
    for (int i = 0; i < 300; i++) { /* the victim goes, the preemptor binds */
        json_decref(recs);
        recs = ship_util_export_records(&m);
        json_t *rec;
        size_t k;
        int placed_high = 0;
        json_array_foreach(recs, k, rec)
        {
            placed_high |= !strcmp(json_string_value(json_object_get(rec, "kind")), "placed") &&
                           !strcmp(json_string_value(json_object_get(rec, "job")), "p/high");
        }
        if (placed_high)
            break;
        usleep(50000);
    }
    ship_util_wait_shipped(&m);
    /* the pod's interval ends at the first record that removes it: its eviction, or a
     * "deleted" written just before it */
    int64_t gone = ship_util_pod_event(recs, "evicted", "p/low"),
            placed = ship_util_pod_event(recs, "placed", "p/low");
    json_t *rec;
    size_t k;
    json_array_foreach(recs, k, rec)
    {
        const char *o = json_string_value(json_object_get(json_object_get(rec, "object"), "name"));
        if (!strcmp(json_string_value(json_object_get(rec, "kind")), "deleted") && o &&
            !strcmp(o, "p/low") && ship_util_ts_of(rec) < gone)
            gone = ship_util_ts_of(rec);
    }
    ship_util_pod_event(recs, "preempted", "p/low");
    char *s = pg_value(url, "SELECT state || ' ' || preemptions_suffered || ' ' || "
                            "preemptions_caused || ' ' || (end_time IS NOT NULL) FROM muster_jobs "
                            "WHERE name = 'low'");
    ck_assert_str_eq(s, "preempted 1 0 true");
    free(s);
    s = pg_value(url, "SELECT state || ' ' || preemptions_suffered || ' ' || preemptions_caused || "
                      "' ' || priority FROM muster_jobs WHERE name = 'high'");
    ck_assert_str_eq(s, "running 0 1 100");
    free(s);
    s = pg_value(url, "SELECT resource_seconds->>'nvidia.com/gpu' FROM muster_jobs WHERE name = "
                      "'low'");
    SHIP_NEAR(strtod(s, NULL), 8.0 * (double)(gone - placed) / 1000.0);
    free(s);
    json_t *j = cli_run_json(NULL, (const char *[]){"report", "jobs", "--db", url, "--state",
                                                    "preempted", "-o", "json", NULL});
    ck_assert_int_eq(json_array_size(json_object_get(j, "items")), 1);
    json_decref(j);
    /* a running job's GPU-seconds in the report count up to --until: 4 GPUs x 250 ms */
    char until[40];
    int64_t high = ship_util_pod_event(recs, "placed", "p/high");
    clock_format_rfc3339_ms(high + 250, until, sizeof(until));
    j = cli_run_json(NULL, (const char *[]){"report", "jobs", "--db", url, "--state", "running",
                                            "--until", until, "-o", "json", NULL});
    ck_assert_int_eq(json_array_size(json_object_get(j, "items")), 1);
    SHIP_NEAR(
        json_number_value(json_object_get(
            json_object_get(json_array_get(json_object_get(j, "items"), 0), "resourceSeconds"),
            "nvidia.com/gpu")),
        1.0);
    json_decref(j);
    json_decref(recs);
    musterd_stop(&m);
    musterd_cleanup(&m);
    crash_config_free(cfg);
}
END_TEST

int main(void)
{
    pg_start(&pg);
    const TTest *tests[] = {test_ship_jobs_and_reports, test_ship_verify_from_db,
                            test_ship_config_refused, test_ship_preemption_counted, NULL};
    int rc = check_run(check_suite("ship", NULL, NULL, tests));
    pg_cleanup(&pg);
    return rc;
}
