/*
 * test_ship.c - accounting against a real PostgreSQL (tests/support/pg_support.h, one
 * server for the suite, a database per test): the job rows and reports against figures
 * computed here from the audit records of the workload applied, the database stopped
 * mid-stream and restarted, musterd SIGKILLed mid-batch, two clusters into one database,
 * and `muster audit verify --from-db` over the copied chain (and over a tampered copy).
 */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check_run.h"
#include "cli_support.h"
#include "clock.h"
#include "crash_support.h"
#include "err.h"
#include "http_client.h"
#include "pg_support.h"
#include "ship.h"
#include "store_util.h"

static struct pg_fx pg;

static char *acct_config_batch(const char *url, const char *cluster, const char *extra, int batch)
{
    char body[2048];
    snprintf(body, sizeof(body),
             "cycle_interval: 0.02\nmark_running: true\ngrace_period: 0\n%s"
             "accounting:\n  url: \"%s\"\n  cluster: %s\n  batch: %d\n",
             extra ? extra : "", url, cluster, batch);
    return crash_config(body);
}

static char *acct_config(const char *url, const char *cluster, const char *extra)
{
    return acct_config_batch(url, cluster, extra, 1000);
}

static void start(struct musterd *m, const char *cfg, const char *root)
{
    const char *args[] = {"--config", cfg, NULL};
    ck_assert_int_eq(musterd_start(m, root, args), 0);
}

static json_t *get_json(const struct musterd *m, const char *path)
{
    struct http_resp r;
    ck_assert_int_eq(http_request("GET", m->base, path, NULL, NULL, &r), 0);
    ck_assert_int_eq(r.status, 200);
    json_t *j = json_incref(r.json);
    http_resp_free(&r);
    return j;
}

static void post_yaml(const struct musterd *m, const char *yaml)
{
    struct http_resp r;
    const char *h[] = {"Content-Type: application/yaml", NULL};
    ck_assert_int_eq(http_request("POST", m->base, "/api/v1/manifests", yaml, h, &r), 0);
    ck_assert_msg(r.status == 200 || r.status == 201, "apply: %ld %s", r.status, r.body);
    http_resp_free(&r);
}

static void delete_pod(const struct musterd *m, const char *ns, const char *name)
{
    struct http_resp r;
    char path[256];
    snprintf(path, sizeof(path), "/api/v1/pods/%s/%s", ns, name);
    ck_assert_int_eq(http_request("DELETE", m->base, path, NULL, NULL, &r), 0);
    ck_assert_msg(r.status == 200, "delete %s: %ld %s", path, r.status, r.body);
    http_resp_free(&r);
}

/* Waits until the shipper has every record (healthz accounting lagRecords 0) and the
 * log is quiet; returns the head seq. */
static json_int_t wait_shipped(const struct musterd *m)
{
    for (int i = 0; i < 1200; i++) {
        json_t *h = get_json(m, "/healthz"), *a = json_object_get(h, "accounting");
        ck_assert_ptr_nonnull(a);
        json_int_t head = json_integer_value(json_object_get(a, "headSeq"));
        json_int_t shipped = json_integer_value(json_object_get(a, "shippedSeq"));
        json_decref(h);
        if (head && head == shipped) {
            usleep(300000); /* quiet: no cycle wrote since */
            h = get_json(m, "/healthz");
            a = json_object_get(h, "accounting");
            int same = json_integer_value(json_object_get(a, "headSeq")) == head &&
                       json_integer_value(json_object_get(a, "shippedSeq")) == head;
            json_decref(h);
            if (same)
                return head;
        }
        usleep(50000);
    }
    ck_abort_msg("the shipper did not catch up");
    return 0;
}

/* Every audit record of the store (the export) is in the database exactly once, byte for
 * byte, in seq order 1..head, and nothing else for (cluster, chain). */
static void check_copy(const struct musterd *m, const char *url, const char *cluster)
{
    struct http_resp r;
    char sql[512];
    ck_assert_int_eq(http_request("GET", m->base, "/api/v1/audit", NULL, NULL, &r), 0);
    ck_assert_int_eq(r.status, 200);
    json_t *h = get_json(m, "/healthz");
    long long chain =
        (long long)json_integer_value(json_object_get(json_object_get(h, "accounting"), "chain"));
    json_decref(h);
    snprintf(sql, sizeof(sql),
             "SELECT count(*) || ' ' || count(DISTINCT seq) || ' ' || coalesce(max(seq), 0) || "
             "' ' || md5(string_agg(record, E'\\n' ORDER BY seq) || E'\\n') FROM muster_audit "
             "WHERE cluster = '%s' AND chain = %lld",
             cluster, chain);
    char *got = pg_value(url, sql);
    size_t lines = 0;
    for (size_t i = 0; i < r.len; i++)
        lines += r.body[i] == '\n';
    /* md5 of the export, computed here */
    char cmd[64], want[512];
    snprintf(cmd, sizeof(cmd), "md5sum > /tmp/muster-ship-md5-%d", (int)getpid());
    FILE *p = popen(cmd, "w");
    fwrite(r.body, 1, r.len, p);
    pclose(p);
    snprintf(cmd, sizeof(cmd), "/tmp/muster-ship-md5-%d", (int)getpid());
    FILE *f = fopen(cmd, "r");
    char md5[64] = "";
    ck_assert_int_eq(fscanf(f, "%32s", md5), 1);
    fclose(f);
    unlink(cmd);
    snprintf(want, sizeof(want), "%zu %zu %zu %s", lines, lines, lines, md5);
    ck_assert_ptr_nonnull(got);
    ck_assert_str_eq(got, want);
    free(got);
    http_resp_free(&r);
}

/* The audit records of the export, parsed (new array). */
static json_t *export_records(const struct musterd *m)
{
    struct http_resp r;
    json_t *a = json_array();
    ck_assert_int_eq(http_request("GET", m->base, "/api/v1/audit", NULL, NULL, &r), 0);
    for (char *line = r.body, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        json_t *rec = json_loadb(line, nl ? (size_t)(nl - line) : strlen(line), 0, NULL);
        if (rec)
            json_array_append_new(a, rec);
    }
    http_resp_free(&r);
    return a;
}

static int64_t ts_of(json_t *rec)
{
    int64_t ms = 0;
    ck_assert_int_eq(clock_parse_rfc3339(json_string_value(json_object_get(rec, "ts")), &ms, NULL),
                     0);
    return ms;
}

/* The ts of the first record of kind about pod (in "pods" or as "object") */
static int64_t pod_event(json_t *recs, const char *kind, const char *pod)
{
    json_t *rec, *p;
    size_t i, k;
    json_array_foreach(recs, i, rec)
    {
        if (strcmp(json_string_value(json_object_get(rec, "kind")), kind))
            continue;
        const char *o = json_string_value(json_object_get(json_object_get(rec, "object"), "name"));
        if (o && !strcmp(o, pod))
            return ts_of(rec);
        json_array_foreach(json_object_get(rec, "pods"), k, p)
        {
            if (!strcmp(json_string_value(p), pod))
                return ts_of(rec);
        }
    }
    ck_abort_msg("no '%s' record of pod %s", kind, pod);
    return 0;
}

static const char cluster_yaml[] =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    "status: {allocatable: {cpu: \"16\", memory: 64Gi, pods: \"20\", nvidia.com/gpu: \"8\"}}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: qa}\n"
    "spec: {weight: 1}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: qb}\n"
    "spec: {weight: 1}\n";

/* A gang of n pods of g GPUs and 1 cpu in queue q. */
static char *gang_yaml(const char *ns, const char *name, int n, int g, const char *q)
{
    char *buf = malloc(8192);
    size_t len = (size_t)snprintf(buf, 8192,
                                  "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"
                                  "metadata: {name: %s, namespace: %s}\nspec: {minMember: %d, "
                                  "queue: %s}\n",
                                  name, ns, n, q);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(
            buf + len, 8192 - len,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s-%d, namespace: %s, labels: "
            "{pod-group.scheduling.sigs.k8s.io: %s}}\nspec: {containers: [{name: c, resources: "
            "{requests: {cpu: \"1\", memory: 1Gi, nvidia.com/gpu: \"%d\"}}}]}\n",
            name, i, ns, name, g);
    return buf;
}

static void wait_placed(const struct musterd *m, int pods)
{
    for (int i = 0; i < 600; i++) {
        json_t *j = get_json(m, "/api/v1/pods"), *items = json_object_get(j, "items"), *p;
        size_t k;
        int bound = 0;
        json_array_foreach(items, k, p)
        {
            bound += json_is_string(json_object_get(json_object_get(p, "spec"), "nodeName"));
        }
        json_decref(j);
        if (bound >= pods)
            return;
        usleep(20000);
    }
    ck_abort_msg("pods not placed");
}

static json_t *run_json(const char *const *args)
{
    struct cli_result r;
    cli_run(NULL, NULL, args, &r);
    ck_assert_msg(r.status == 0, "muster %s %s: exit %d: %s", args[0], args[1], r.status, r.err);
    json_t *j = json_loads(r.out, 0, NULL);
    ck_assert_msg(j != NULL, "not JSON: %s", r.out);
    cli_result_release(&r);
    return j;
}

static json_t *row_of(json_t *rows, const char *key)
{
    json_t *row;
    size_t i;
    json_array_foreach(rows, i, row)
    {
        if (!strcmp(json_string_value(json_object_get(row, "key")), key))
            return row;
    }
    ck_abort_msg("no row '%s'", key);
    return NULL;
}

#define NEAR(a, b) ck_assert_msg(fabs((a) - (b)) < 1e-6, "%.9f != %.9f", (double)(a), (double)(b))

START_TEST(test_ship_jobs_and_reports)
{
    struct musterd m;
    char url[512];
    pg_db(&pg, "t_jobs", url, sizeof(url));
    char *cfg = acct_config(url, "alpha", NULL);
    start(&m, cfg, NULL);
    post_yaml(&m, cluster_yaml);
    char *a = gang_yaml("team", "a", 2, 2, "qa"), *b = gang_yaml("lab", "b", 1, 1, "qb");
    post_yaml(&m, a);
    post_yaml(&m, b);
    free(a);
    free(b);
    wait_placed(&m, 3);
    wait_shipped(&m); /* the shipper reads the placed pods' requests while they exist */
    usleep(400000);
    delete_pod(&m, "team", "a-0");
    usleep(200000);
    delete_pod(&m, "team", "a-1");
    delete_pod(&m, "lab", "b-0");
    wait_shipped(&m);
    check_copy(&m, url, "alpha");

    /* by hand, from the records: GPU-seconds of each pod = (removed - placed) x GPUs */
    json_t *recs = export_records(&m);
    double a0 =
        (double)(pod_event(recs, "deleted", "team/a-0") - pod_event(recs, "placed", "team/a-0")) /
        1000.0;
    double a1 =
        (double)(pod_event(recs, "deleted", "team/a-1") - pod_event(recs, "placed", "team/a-1")) /
        1000.0;
    double b0 =
        (double)(pod_event(recs, "deleted", "lab/b-0") - pod_event(recs, "placed", "lab/b-0")) /
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
    NEAR(strtod(s, NULL), gpu_a);
    free(s);
    s = pg_value(url, "SELECT count(*) FROM muster_pod_usage WHERE end_time IS NULL");
    ck_assert_str_eq(s, "0");
    free(s);

    /* muster report usage --by queue: GPU-hours and shares */
    const char *db = url;
    json_t *u = run_json(
        (const char *[]){"report", "usage", "--db", db, "--by", "queue", "-o", "json", NULL});
    json_t *rows = json_object_get(u, "rows");
    ck_assert_int_eq(json_array_size(rows), 2);
    NEAR(json_number_value(
             json_object_get(json_object_get(row_of(rows, "qa"), "resources"), "nvidia.com/gpu")),
         gpu_a / 3600.0);
    NEAR(json_number_value(
             json_object_get(json_object_get(row_of(rows, "qb"), "resources"), "nvidia.com/gpu")),
         gpu_b / 3600.0);
    NEAR(json_number_value(
             json_object_get(json_object_get(row_of(rows, "qa"), "share"), "nvidia.com/gpu")),
         gpu_a / (gpu_a + gpu_b));
    /* memory in GiB-hours: 1 GiB per pod */
    NEAR(json_number_value(
             json_object_get(json_object_get(row_of(rows, "qa"), "resources"), "memory")),
         (a0 + a1) / 3600.0);
    json_decref(u);

    /* a window that cuts pod a-1's interval: only its part inside counts */
    int64_t cut = pod_event(recs, "deleted", "team/a-0");
    char since[40];
    clock_format_rfc3339_ms(cut, since, sizeof(since));
    u = run_json((const char *[]){"report", "usage", "--db", db, "--by", "namespace", "--since",
                                  since, "-o", "json", NULL});
    double a1_after = (double)(pod_event(recs, "deleted", "team/a-1") - cut) / 1000.0;
    double b0_after = fmax(0, (double)(pod_event(recs, "deleted", "lab/b-0") - cut) / 1000.0);
    NEAR(json_number_value(json_object_get(
             json_object_get(row_of(json_object_get(u, "rows"), "team"), "resources"),
             "nvidia.com/gpu")),
         2 * a1_after / 3600.0);
    NEAR(json_number_value(json_object_get(
             json_object_get(row_of(json_object_get(u, "rows"), "lab"), "resources"),
             "nvidia.com/gpu")),
         b0_after / 3600.0);
    json_decref(u);

    /* muster report jobs: filters and CSV */
    json_t *j = run_json(
        (const char *[]){"report", "jobs", "--db", db, "--queue", "qa", "-o", "json", NULL});
    json_t *items = json_object_get(j, "items");
    ck_assert_int_eq(json_array_size(items), 1);
    json_t *ja = json_array_get(items, 0);
    ck_assert_str_eq(json_string_value(json_object_get(ja, "name")), "a");
    ck_assert_str_eq(json_string_value(json_object_get(ja, "state")), "completed");
    int64_t placed = pod_event(recs, "placed", "team/a-0"), submit = 0;
    ck_assert_int_eq(
        clock_parse_rfc3339(json_string_value(json_object_get(ja, "submit")), &submit, NULL), 0);
    NEAR(json_number_value(json_object_get(ja, "waitSeconds")), (double)(placed - submit) / 1000.0);
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
    j = run_json((const char *[]){"report", "waits", "--db", db, "-o", "json", NULL});
    ck_assert_int_eq(json_array_size(json_object_get(j, "rows")), 2);
    json_t *w0 = json_array_get(json_object_get(j, "rows"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(w0, "queue")), "qa");
    ck_assert_str_eq(json_string_value(json_object_get(w0, "size")), "2-7");
    NEAR(json_number_value(json_object_get(w0, "p90")), (double)(placed - submit) / 1000.0);
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

/* single-pod jobs j<from>..j<to-1> of 1 GPU in queue qa */
static void post_jobs(const struct musterd *m, const char *ns, int from, int to)
{
    for (int i = from; i < to; i++) {
        char name[32];
        snprintf(name, sizeof(name), "j%d", i);
        char *y = gang_yaml(ns, name, 1, 1, "qa");
        post_yaml(m, y);
        free(y);
    }
}

static char *verify_db(const char *url, const char *cluster, const char *key, int *status)
{
    struct cli_result r;
    const char *args[] = {"audit", "verify", "--from-db",          url, "--cluster", cluster,
                          "-o",    "json",   key ? "--key" : NULL, key, NULL};
    cli_run(NULL, NULL, args, &r);
    *status = r.status;
    char *out = strdup(r.out);
    cli_result_release(&r);
    return out;
}

static json_t *healthz_acct(const struct musterd *m)
{
    json_t *h = get_json(m, "/healthz");
    json_t *a = json_incref(json_object_get(h, "accounting"));
    json_decref(h);
    return a;
}

START_TEST(test_ship_database_down_mid_stream)
{
    struct musterd m;
    char url[512];
    int st;
    pg_db(&pg, "t_down", url, sizeof(url));
    char *cfg = acct_config(url, "alpha", NULL);
    start(&m, cfg, NULL);
    post_yaml(&m, cluster_yaml);
    post_jobs(&m, "down", 0, 4);
    wait_shipped(&m);
    pg_stop(&pg); /* mid-stream: connections cut */
    post_jobs(&m, "down", 4, 8);
    delete_pod(&m, "down", "j0-0");
    wait_placed(&m, 7);
    json_t *a = NULL;
    for (int i = 0; i < 200; i++) { /* it notices, and says how far behind it is */
        json_decref(a);
        a = healthz_acct(&m);
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
    wait_shipped(&m);
    check_copy(&m, url, "alpha");
    char *s = pg_value(url, "SELECT count(*) || ' ' || count(DISTINCT name) || ' ' || "
                            "sum((state = 'completed')::int) FROM muster_jobs");
    ck_assert_str_eq(s, "8 8 1");
    free(s);
    char *out = verify_db(url, "alpha", NULL, &st);
    ck_assert_msg(st == 0, "%s", out);
    free(out);
    musterd_stop(&m);
    musterd_cleanup(&m);
    crash_config_free(cfg);
}
END_TEST

START_TEST(test_ship_sigkill_mid_batch)
{
    struct musterd m;
    char url[512], root[256];
    pg_db(&pg, "t_kill", url, sizeof(url));
    /* small batches, so that kills land between and inside them */
    char *cfg = acct_config_batch(url, "alpha", NULL, 3);
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    start(&m, cfg, NULL);
    snprintf(root, sizeof(root), "%s", m.root);
    post_yaml(&m, cluster_yaml);
    for (int k = 0; k < 8; k++) {
        post_jobs(&m, "kill", k * 3, k * 3 + 3);
        if (k > 1) {
            char pod[32];
            snprintf(pod, sizeof(pod), "j%d-0", (k - 2) * 3);
            delete_pod(&m, "kill", pod);
        }
        crash_kill(&m, 60000);
        start(&m, cfg, root);
    }
    wait_shipped(&m);
    check_copy(&m, url, "alpha");
    char *s = pg_value(url, "SELECT count(*) || ' ' || count(DISTINCT name) || ' ' || sum(pods) "
                            "|| ' ' || count(end_time) FROM muster_jobs");
    ck_assert_str_eq(s, "24 24 24 6");
    free(s);
    /* each ended job: completed when the records placed it before its pod was deleted,
     * else cancelled (a kill may have come before its first cycle) */
    json_t *recs = export_records(&m);
    for (int k = 0; k < 6; k++) {
        char pod[32], sql[256], want[64];
        snprintf(pod, sizeof(pod), "kill/j%d-0", k * 3);
        int64_t gone = pod_event(recs, "deleted", pod), placed = 0;
        json_t *rec, *p;
        size_t i, n;
        json_array_foreach(recs, i, rec)
        {
            if (!strcmp(json_string_value(json_object_get(rec, "kind")), "placed"))
                json_array_foreach(json_object_get(rec, "pods"), n, p)
                {
                    if (!strcmp(json_string_value(p), pod) && !placed)
                        placed = ts_of(rec);
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
    int st;
    char *out = verify_db(url, "alpha", NULL, &st);
    ck_assert_msg(st == 0, "%s", out);
    free(out);
    musterd_stop(&m);
    musterd_cleanup(&m);
    crash_config_free(cfg);
}
END_TEST

START_TEST(test_ship_two_clusters_one_database)
{
    struct musterd m1, m2;
    char url[512];
    pg_db(&pg, "t_two", url, sizeof(url));
    char *c1 = acct_config(url, "alpha", NULL), *c2 = acct_config(url, "beta", NULL);
    start(&m1, c1, NULL);
    start(&m2, c2, NULL);
    post_yaml(&m1, cluster_yaml);
    post_yaml(&m2, cluster_yaml);
    char *a = gang_yaml("team", "a", 2, 2, "qa"), *b = gang_yaml("team", "a", 1, 3, "qb");
    post_yaml(&m1, a);
    post_yaml(&m2, b);
    free(a);
    free(b);
    wait_placed(&m1, 2);
    wait_placed(&m2, 1);
    wait_shipped(&m1);
    wait_shipped(&m2);
    usleep(300000);
    delete_pod(&m1, "team", "a-0");
    delete_pod(&m1, "team", "a-1");
    delete_pod(&m2, "team", "a-0");
    wait_shipped(&m1);
    wait_shipped(&m2);
    check_copy(&m1, url, "alpha");
    check_copy(&m2, url, "beta");
    json_t *r1 = export_records(&m1), *r2 = export_records(&m2);
    double alpha =
        2.0 * (double)(pod_event(r1, "deleted", "team/a-0") - pod_event(r1, "placed", "team/a-0")) /
            1000.0 +
        2.0 * (double)(pod_event(r1, "deleted", "team/a-1") - pod_event(r1, "placed", "team/a-1")) /
            1000.0;
    double beta =
        3.0 * (double)(pod_event(r2, "deleted", "team/a-0") - pod_event(r2, "placed", "team/a-0")) /
        1000.0;
    json_t *u = run_json(
        (const char *[]){"report", "usage", "--db", url, "--by", "cluster", "-o", "json", NULL});
    json_t *rows = json_object_get(u, "rows");
    ck_assert_int_eq(json_array_size(rows), 2);
    NEAR(json_number_value(json_object_get(json_object_get(row_of(rows, "alpha"), "resources"),
                                           "nvidia.com/gpu")),
         alpha / 3600.0);
    NEAR(json_number_value(
             json_object_get(json_object_get(row_of(rows, "beta"), "share"), "nvidia.com/gpu")),
         beta / (alpha + beta));
    json_decref(u);
    /* the same job name in two clusters: two rows */
    char *s = pg_value(url, "SELECT string_agg(cluster || ':' || pods, ',' ORDER BY cluster) FROM "
                            "muster_jobs WHERE namespace = 'team' AND name = 'a'");
    ck_assert_str_eq(s, "alpha:2,beta:1");
    free(s);
    int st;
    char *out = verify_db(url, "beta", NULL, &st);
    ck_assert_msg(st == 0, "%s", out);
    free(out);
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
    char *cfg = acct_config(url, "alpha", extra);
    start(&m, cfg, NULL);
    post_yaml(&m, cluster_yaml);
    post_jobs(&m, "v", 0, 3);
    wait_placed(&m, 3);
    musterd_stop(&m); /* signs the head at shutdown */
    start(&m, cfg, m.root);
    wait_shipped(&m);
    check_copy(&m, url, "alpha");
    int st;
    char *out = verify_db(url, "alpha", pub, &st);
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
    out = verify_db(url, "alpha", pub, &st);
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
    char *cfg = acct_config(url, "alpha", NULL);
    start(&m, cfg, NULL);
    post_yaml(&m, cluster_yaml);
    post_yaml(&m, "apiVersion: v1\nkind: Pod\nmetadata: {name: low, namespace: p, annotations: "
                  "{scheduling.volcano.sh/queue-name: qa}}\nspec: {priority: 1, containers: "
                  "[{name: c, resources: {requests: {cpu: \"1\", nvidia.com/gpu: \"8\"}}}]}\n");
    wait_placed(&m, 1);
    wait_shipped(&m);
    usleep(200000);
    post_yaml(&m, "apiVersion: v1\nkind: Pod\nmetadata: {name: high, namespace: p, annotations: "
                  "{scheduling.volcano.sh/queue-name: qa}}\nspec: {priority: 100, containers: "
                  "[{name: c, resources: {requests: {cpu: \"1\", nvidia.com/gpu: \"4\"}}}]}\n");
    json_t *recs = NULL;
    for (int i = 0; i < 300; i++) { /* the victim goes, the preemptor binds */
        json_decref(recs);
        recs = export_records(&m);
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
    wait_shipped(&m);
    /* the pod's interval ends at the first record that removes it: its eviction, or a
     * "deleted" written just before it */
    int64_t gone = pod_event(recs, "evicted", "p/low"), placed = pod_event(recs, "placed", "p/low");
    json_t *rec;
    size_t k;
    json_array_foreach(recs, k, rec)
    {
        const char *o = json_string_value(json_object_get(json_object_get(rec, "object"), "name"));
        if (!strcmp(json_string_value(json_object_get(rec, "kind")), "deleted") && o &&
            !strcmp(o, "p/low") && ts_of(rec) < gone)
            gone = ts_of(rec);
    }
    pod_event(recs, "preempted", "p/low");
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
    NEAR(strtod(s, NULL), 8.0 * (double)(gone - placed) / 1000.0);
    free(s);
    json_t *j = run_json((const char *[]){"report", "jobs", "--db", url, "--state", "preempted",
                                          "-o", "json", NULL});
    ck_assert_int_eq(json_array_size(json_object_get(j, "items")), 1);
    json_decref(j);
    /* a running job's GPU-seconds in the report count up to --until: 4 GPUs x 250 ms */
    char until[40];
    int64_t high = pod_event(recs, "placed", "p/high");
    clock_format_rfc3339_ms(high + 250, until, sizeof(until));
    j = run_json((const char *[]){"report", "jobs", "--db", url, "--state", "running", "--until",
                                  until, "-o", "json", NULL});
    ck_assert_int_eq(json_array_size(json_object_get(j, "items")), 1);
    NEAR(json_number_value(json_object_get(
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
    char *cfg = acct_config(url, "alpha", extra);
    start(&m, cfg, NULL);
    post_yaml(&m, cluster_yaml);
    post_jobs(&m, "r", 0, 4);
    wait_placed(&m, 4);
    sleep(1); /* several checkpoints, each a chance to prune */
    json_t *recs = export_records(&m);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(recs, 0), "seq")), 1);
    json_decref(recs);
    char tmp[512];
    pg_db(&pg, "t_retain", tmp, sizeof(tmp));
    wait_shipped(&m);
    post_jobs(&m, "r", 4, 6); /* more records, checkpoints, and so a prune */
    wait_placed(&m, 6);
    int64_t first = 1;
    for (int i = 0; i < 100 && first == 1; i++) {
        usleep(100000);
        recs = export_records(&m);
        first = json_integer_value(json_object_get(json_array_get(recs, 0), "seq"));
        json_decref(recs);
    }
    ck_assert_int_gt(first, 1);
    wait_shipped(&m);
    char *s = pg_value(url, "SELECT min(seq) || ' ' || (count(*) = max(seq)) FROM muster_audit");
    ck_assert_str_eq(s, "1 true");
    free(s);
    int st;
    char *out = verify_db(url, "alpha", NULL, &st);
    ck_assert_msg(st == 0, "%s", out);
    free(out);
    musterd_stop(&m);
    musterd_cleanup(&m);
    crash_config_free(cfg);
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
    const TTest *tests[] = {test_ship_jobs_and_reports,   test_ship_database_down_mid_stream,
                            test_ship_sigkill_mid_batch,  test_ship_two_clusters_one_database,
                            test_ship_verify_from_db,     test_ship_config_refused,
                            test_ship_preemption_counted, test_ship_retention_waits_for_shipping,
                            test_ship_leader_only,        NULL};
    int rc = check_run(check_suite("ship", NULL, NULL, tests));
    pg_cleanup(&pg);
    return rc;
}
