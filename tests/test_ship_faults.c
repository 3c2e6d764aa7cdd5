/*
 * test_ship_faults.c - accounting against a real PostgreSQL when things go wrong (one server
 * for the suite, a database per test): the database stopped mid-stream and restarted,
 * musterd SIGKILLed mid-batch, two clusters into one database, retention waiting for the
 * shipper, and a follower that ships nothing. Helpers: tests/support/ship_util.h.
 */
#include <check.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_run.h"
#include "cli_support.h"
#include "crash_support.h"
#include "err.h"
#include "http_client.h"
#include "pg_support.h"
#include "ship.h"
#include "ship_util.h"
#include "store_util.h"

static struct pg_fx pg;

/* The end of a run: the shipped chain verifies, musterd stops, its config goes. */
static void end_run(struct musterd *m, const char *url, char *cfg)
{
    ship_util_assert_verified(url, "alpha");
    musterd_stop(m);
    musterd_cleanup(m);
    crash_config_free(cfg);
}

START_TEST(test_ship_database_down_mid_stream)
{
    struct musterd m;
    char url[512];
    pg_db(&pg, "t_down", url, sizeof(url));
    char *cfg = ship_util_acct_config(url, "alpha", NULL);
    ship_util_start(&m, cfg, NULL);
    ship_util_post_yaml(&m, ship_util_cluster_yaml);
    ship_util_post_jobs(&m, "down", 0, 4);
    ship_util_wait_shipped(&m);
    pg_stop(&pg); /* mid-stream: connections cut */
    ship_util_post_jobs(&m, "down", 4, 8);
    ship_util_delete_pod(&m, "down", "j0-0");
    ship_util_wait_placed(&m, 7);
    json_t *a = NULL;
    for (int i = 0; i < 200; i++) { /* it notices, and says how far behind it is */
        json_decref(a);
        a = ship_util_healthz_acct(&m);
        if (!json_is_true(json_object_get(a, "connected")) &&
            json_integer_value(json_object_get(a, "lagRecords")) > 0 &&
            json_is_string(json_object_get(a, "lastError")))
            break;
        usleep(50000);
    }
    ck_assert_msg(!json_is_true(json_object_get(a, "connected")), "still connected");
    ck_assert_int_gt(json_integer_value(json_object_get(a, "lagRecords")), 0);
    ck_assert(json_number_value(json_object_get(a, "lagSeconds")) > 0);
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(a, "lastError")), "accounting database"));
    json_decref(a);
    struct http_resp r;
    ck_assert_int_eq(http_request("GET", m.base, "/metrics", NULL, NULL, &r), 0);
    ck_assert_ptr_nonnull(strstr(r.body, "muster_accounting_connected 0\n"));
    ck_assert_ptr_null(strstr(r.body, "muster_accounting_lag_records 0\n"));
    http_resp_free(&r);
    ck_assert_int_eq(pg_resume(&pg), 0);
    ship_util_wait_shipped(&m);
    ship_util_check_copy(&m, url, "alpha");
    char *s = pg_value(url, "SELECT count(*) || ' ' || count(DISTINCT name) || ' ' || "
                            "sum((state = 'completed')::int) FROM muster_jobs");
    ck_assert_str_eq(s, "8 8 1");
    free(s);
    end_run(&m, url, cfg);
}
END_TEST

START_TEST(test_ship_sigkill_mid_batch)
{
    struct musterd m;
    char url[512], root[256];
    pg_db(&pg, "t_kill", url, sizeof(url));
    /* small batches, so that kills land between and inside them */
    char *cfg = ship_util_acct_config_batch(url, "alpha", NULL, 3);
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    ship_util_start(&m, cfg, NULL);
    snprintf(root, sizeof(root), "%s", m.root);
    ship_util_post_yaml(&m, ship_util_cluster_yaml);
    for (int k = 0; k < 8; k++) {
        ship_util_post_jobs(&m, "kill", k * 3, k * 3 + 3);
        if (k > 1) {
            char pod[32];
            snprintf(pod, sizeof(pod), "j%d-0", (k - 2) * 3);
            ship_util_delete_pod(&m, "kill", pod);
        }
        crash_kill(&m, 60000);
        ship_util_start(&m, cfg, root);
    }
    ship_util_wait_shipped(&m);
    ship_util_check_copy(&m, url, "alpha");
    char *s = pg_value(url, "SELECT count(*) || ' ' || count(DISTINCT name) || ' ' || sum(pods) "
                            "|| ' ' || count(end_time) FROM muster_jobs");
    ck_assert_str_eq(s, "24 24 24 6");
    free(s);
    /* each ended job: completed when the records placed it before its pod was deleted,
     * else cancelled (a kill may have come before its first cycle) */
    json_t *recs = ship_util_export_records(&m);
    for (int k = 0; k < 6; k++) {
        char pod[32], sql[256], want[64];
        snprintf(pod, sizeof(pod), "kill/j%d-0", k * 3);
        int64_t gone = ship_util_pod_event(recs, "deleted", pod), placed = 0;
        json_t *rec, *p;
        size_t i, n;
        json_array_foreach(recs, i, rec)
        {
            if (!strcmp(json_string_value(json_object_get(rec, "kind")), "placed"))
                json_array_foreach(json_object_get(rec, "pods"), n, p)
                {
                    if (!strcmp(json_string_value(p), pod) && !placed)
                        placed = ship_util_ts_of(rec);
                }
        }
        snprintf(want, sizeof(want), "%s", placed && placed <= gone ? "completed" : "cancelled");
        snprintf(sql, sizeof(sql), "SELECT state FROM muster_jobs WHERE name = 'j%d'", k * 3);
        s = pg_value(url, sql);
        ck_assert_str_eq(s, want);
        free(s);
    }
    /* the usage intervals: one per pod placed by the records, none left open for an
     * ended job */
    json_t *rec;
    size_t i;
    int placements = 0;
    char want[64];
    json_array_foreach(recs, i, rec)
    {
        if (!strcmp(json_string_value(json_object_get(rec, "kind")), "placed"))
            placements += (int)json_array_size(json_object_get(rec, "pods"));
    }
    json_decref(recs);
    ck_assert_int_gt(placements, 3);
    s = pg_value(url, "SELECT count(*) || ' ' || count(*) FILTER (WHERE u.end_time IS NULL AND "
                      "j.end_time IS NOT NULL) FROM muster_pod_usage u JOIN muster_jobs j ON "
                      "j.id = u.job_id");
    snprintf(want, sizeof(want), "%d 0", placements);
    ck_assert_str_eq(s, want);
    free(s);
    end_run(&m, url, cfg);
}
END_TEST

START_TEST(test_ship_two_clusters_one_database)
{
    struct musterd m1, m2;
    char url[512];
    pg_db(&pg, "t_two", url, sizeof(url));
    char *c1 = ship_util_acct_config(url, "alpha", NULL),
         *c2 = ship_util_acct_config(url, "beta", NULL);
    ship_util_start(&m1, c1, NULL);
    ship_util_start(&m2, c2, NULL);
    ship_util_post_yaml(&m1, ship_util_cluster_yaml);
    ship_util_post_yaml(&m2, ship_util_cluster_yaml);
    char *a = ship_util_gang_yaml("team", "a", 2, 2, "qa"),
         *b = ship_util_gang_yaml("team", "a", 1, 3, "qb");
    ship_util_post_yaml(&m1, a);
    ship_util_post_yaml(&m2, b);
    free(a);
    free(b);
    ship_util_wait_placed(&m1, 2);
    ship_util_wait_placed(&m2, 1);
    ship_util_wait_shipped(&m1);
    ship_util_wait_shipped(&m2);
    usleep(300000);
    ship_util_delete_pod(&m1, "team", "a-0");
    ship_util_delete_pod(&m1, "team", "a-1");
    ship_util_delete_pod(&m2, "team", "a-0");
    ship_util_wait_shipped(&m1);
    ship_util_wait_shipped(&m2);
    ship_util_check_copy(&m1, url, "alpha");
    ship_util_check_copy(&m2, url, "beta");
    json_t *r1 = ship_util_export_records(&m1), *r2 = ship_util_export_records(&m2);
    double alpha = 2.0 *
                       (double)(ship_util_pod_event(r1, "deleted", "team/a-0") -
                                ship_util_pod_event(r1, "placed", "team/a-0")) /
                       1000.0 +
                   2.0 *
                       (double)(ship_util_pod_event(r1, "deleted", "team/a-1") -
                                ship_util_pod_event(r1, "placed", "team/a-1")) /
                       1000.0;
    double beta = 3.0 *
                  (double)(ship_util_pod_event(r2, "deleted", "team/a-0") -
                           ship_util_pod_event(r2, "placed", "team/a-0")) /
                  1000.0;
    json_t *u = cli_run_json(NULL, (const char *[]){"report", "usage", "--db", url, "--by",
                                                    "cluster", "-o", "json", NULL});
    json_t *rows = json_object_get(u, "rows");
    ck_assert_int_eq(json_array_size(rows), 2);
    SHIP_NEAR(json_number_value(json_object_get(
                  json_object_get(ship_util_row_of(rows, "alpha"), "resources"), "nvidia.com/gpu")),
              alpha / 3600.0);
    SHIP_NEAR(json_number_value(json_object_get(
                  json_object_get(ship_util_row_of(rows, "beta"), "share"), "nvidia.com/gpu")),
              beta / (alpha + beta));
    json_decref(u);
    /* the same job name in two clusters: two rows */
    char *s = pg_value(url, "SELECT string_agg(cluster || ':' || pods, ',' ORDER BY cluster) FROM "
                            "muster_jobs WHERE namespace = 'team' AND name = 'a'");
    ck_assert_str_eq(s, "alpha:2,beta:1");
    free(s);
    ship_util_assert_verified(url, "beta");
    json_decref(r1);
    json_decref(r2);
    musterd_stop(&m1);
    musterd_stop(&m2);
    musterd_cleanup(&m1);
    musterd_cleanup(&m2);
    crash_config_free(c1);
    crash_config_free(c2);
}
END_TEST

/* Retention prunes the store's log, never a record not shipped yet: with the database
 * away nothing goes; once it is back, everything ships and then the store prunes, and the
 * database still holds every record from 1. */
START_TEST(test_ship_retention_waits_for_shipping)
{
    struct musterd m;
    char url[512], key[300], cmd[700], extra[1200], archive[300];
    snprintf(key, sizeof(key), "/tmp/muster-ship-rkey-%d.pem", (int)getpid());
    snprintf(archive, sizeof(archive), "/tmp/muster-ship-archive-%d", (int)getpid());
    snprintf(cmd, sizeof(cmd),
             "openssl genpkey -algorithm ed25519 -out %s 2>/dev/null && mkdir -p %s", key, archive);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(extra, sizeof(extra),
             "audit_key: %s\naudit_checkpoint_records: 3\naudit_checkpoint_interval: 0.2\n"
             "audit_keep_records: 2\naudit_archive: %s\n",
             key, archive);
    pg_url(&pg, "t_retain", url, sizeof(url)); /* not created yet: shipping fails */
    free(pg_value(url, "SELECT 1"));           /* (there is no such database) */
    char admin[512];
    pg_url(&pg, "postgres", admin, sizeof(admin));
    free(pg_value(admin, "SELECT 1 FROM pg_database WHERE datname = 't_retain'"));
    char *cfg = ship_util_acct_config(url, "alpha", extra);
    ship_util_start(&m, cfg, NULL);
    ship_util_post_yaml(&m, ship_util_cluster_yaml);
    ship_util_post_jobs(&m, "r", 0, 4);
    ship_util_wait_placed(&m, 4);
    sleep(1); /* several checkpoints, each a chance to prune */
    json_t *recs = ship_util_export_records(&m);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(recs, 0), "seq")), 1);
    json_decref(recs);
    char tmp[512];
    pg_db(&pg, "t_retain", tmp, sizeof(tmp));
    ship_util_wait_shipped(&m);
    ship_util_post_jobs(&m, "r", 4, 6); /* more records, checkpoints, and so a prune */
    ship_util_wait_placed(&m, 6);
    int64_t first = 1;
    for (int i = 0; i < 100 && first == 1; i++) {
        usleep(100000);
        recs = ship_util_export_records(&m);
        first = json_integer_value(json_object_get(json_array_get(recs, 0), "seq"));
        json_decref(recs);
    }
    ck_assert_int_gt(first, 1);
    ship_util_wait_shipped(&m);
    char *s = pg_value(url, "SELECT min(seq) || ' ' || (count(*) = max(seq)) FROM muster_audit");
    ck_assert_str_eq(s, "1 true");
    free(s);
    end_run(&m, url, cfg);
    snprintf(cmd, sizeof(cmd), "rm -rf %s %s", archive, key);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static atomic_int leading_now;

static int leading_fn(void *ctx)
{
    (void)ctx;
    return atomic_load(&leading_now);
}

static int append_records(MDB_txn *txn, void *ctx, struct err *err)
{
    for (int i = 0; i < *(int *)ctx; i++) {
        json_t *rec = json_pack("{s:s,s:I}", "kind", "cycle", "cycle", (json_int_t)i);
        int rc = store_audit_append(txn, rec, NULL, err);
        json_decref(rec);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Only the leader ships: a follower's shipper does not even connect, and begins once it
 * leads. */
START_TEST(test_ship_leader_only)
{
    char url[512];
    struct err err = ERR_INIT;
    struct ship *sh = NULL;
    int n = 25;
    pg_db(&pg, "t_leader", url, sizeof(url));
    char *dir = store_util_tmpdir();
    struct store *st = store_util_open(dir, 0, STORE_SYNC_NONE);
    ck_assert_int_eq(store_write(st, append_records, &n, &err), 0);
    atomic_store(&leading_now, 0);
    struct ship_options o = {.url = url, .cluster = "alpha", .batch = 10, .leading = leading_fn};
    ck_assert_int_eq(ship_open(st, &o, &sh, &err), 0);
    ck_assert_int_eq(ship_start(sh, &err), 0);
    json_t *state = NULL;
    for (int i = 0; i < 200; i++) { /* the thread has asked, and follows */
        json_decref(state);
        state = ship_state(sh);
        if (json_is_false(json_object_get(state, "leading")))
            break;
        usleep(10000);
    }
    ck_assert(json_is_false(json_object_get(state, "leading")));
    ck_assert_int_eq(json_integer_value(json_object_get(state, "lagRecords")), n);
    json_decref(state);
    char *s = pg_value(url, "SELECT coalesce(to_regclass('muster_audit')::text, 'none')");
    ck_assert_str_eq(s, "none"); /* not even migrated: a follower never connects */
    free(s);
    atomic_store(&leading_now, 1);
    for (int i = 0; i < 500; i++) {
        state = ship_state(sh);
        int done = json_integer_value(json_object_get(state, "shippedSeq")) == n;
        json_decref(state);
        if (done)
            break;
        usleep(10000);
    }
    s = pg_value(url, "SELECT count(*) || ' ' || max(seq) || ' ' || (SELECT max(version) FROM "
                      "muster_schema) FROM muster_audit");
    ck_assert_str_eq(s, "25 25 1");
    free(s);
    state = ship_state(sh);
    ck_assert_int_eq(json_integer_value(json_object_get(state, "batches")), 3); /* 10+10+5 */
    ck_assert_int_eq(json_integer_value(json_object_get(state, "lagRecords")), 0);
    json_decref(state);
    ship_close(sh);
    /* options refused, naming what is wrong */
    o.cluster = "no/slash";
    ck_assert_int_eq(ship_open(st, &o, &sh, &err), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "accounting cluster 'no/slash'"));
    store_close(st);
    store_util_rmrf(dir);
}
END_TEST

int main(void)
{
    pg_start(&pg);
    const TTest *tests[] = {test_ship_database_down_mid_stream,
                            test_ship_sigkill_mid_batch,
                            test_ship_two_clusters_one_database,
                            test_ship_retention_waits_for_shipping,
                            test_ship_leader_only,
                            NULL};
    int rc = check_run(check_suite("ship_faults", NULL, NULL, tests));
    pg_cleanup(&pg);
    return rc;
}
