/* ship_util.c - helpers of the accounting tests (ship_util.h). */
#include "ship_util.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_support.h"
#include "clock.h"
#include "err.h"
#include "http_client.h"
#include "pg_support.h"
#include "ship.h"
#include "store_util.h"

char *ship_util_acct_config_batch(const char *url, const char *cluster, const char *extra,
                                  int batch)
{
    char body[2048];
    snprintf(body, sizeof(body),
             "cycle_interval: 0.02\nmark_running: true\ngrace_period: 0\n%s"
             "accounting:\n  url: \"%s\"\n  cluster: %s\n  batch: %d\n",
             extra ? extra : "", url, cluster, batch);
    return crash_config(body);
}

char *ship_util_acct_config(const char *url, const char *cluster, const char *extra)
{
    return ship_util_acct_config_batch(url, cluster, extra, 1000);
}

void ship_util_start(struct musterd *m, const char *cfg, const char *root)
{
    const char *args[] = {"--config", cfg, NULL};
    ck_assert_int_eq(musterd_start(m, root, args), 0);
}

json_t *ship_util_get_json(const struct musterd *m, const char *path)
{
    struct http_resp r;
    ck_assert_int_eq(http_request("GET", m->base, path, NULL, NULL, &r), 0);
    ck_assert_int_eq(r.status, 200);
    json_t *j = json_incref(r.json);
    http_resp_free(&r);
    return j;
}

void ship_util_post_yaml(const struct musterd *m, const char *yaml)
{
    struct http_resp r;
    const char *h[] = {"Content-Type: application/yaml", NULL};
    ck_assert_int_eq(http_request("POST", m->base, "/api/v1/manifests", yaml, h, &r), 0);
    ck_assert_msg(r.status == 200 || r.status == 201, "apply: %ld %s", r.status, r.body);
    http_resp_free(&r);
}

void ship_util_delete_pod(const struct musterd *m, const char *ns, const char *name)
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
json_int_t ship_util_wait_shipped(const struct musterd *m)
{
    for (int i = 0; i < 1200; i++) {
        json_t *h = ship_util_get_json(m, "/healthz"), *a = json_object_get(h, "accounting");
        ck_assert_ptr_nonnull(a);
        json_int_t head = json_integer_value(json_object_get(a, "headSeq"));
        json_int_t shipped = json_integer_value(json_object_get(a, "shippedSeq"));
        json_decref(h);
        if (head && head == shipped) {
            usleep(300000); /* quiet: no cycle wrote since */
            h = ship_util_get_json(m, "/healthz");
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
void ship_util_check_copy(const struct musterd *m, const char *url, const char *cluster)
{
    struct http_resp r;
    char sql[512];
    ck_assert_int_eq(http_request("GET", m->base, "/api/v1/audit", NULL, NULL, &r), 0);
    ck_assert_int_eq(r.status, 200);
    json_t *h = ship_util_get_json(m, "/healthz");
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
json_t *ship_util_export_records(const struct musterd *m)
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

int64_t ship_util_ts_of(json_t *rec)
{
    int64_t ms = 0;
    ck_assert_int_eq(clock_parse_rfc3339(json_string_value(json_object_get(rec, "ts")), &ms, NULL),
                     0);
    return ms;
}

/* The ts of the first record of kind about pod (in "pods" or as "object") */
int64_t ship_util_pod_event(json_t *recs, const char *kind, const char *pod)
{
    json_t *rec, *p;
    size_t i, k;
    json_array_foreach(recs, i, rec)
    {
        if (strcmp(json_string_value(json_object_get(rec, "kind")), kind))
            continue;
        const char *o = json_string_value(json_object_get(json_object_get(rec, "object"), "name"));
        if (o && !strcmp(o, pod))
            return ship_util_ts_of(rec);
        json_array_foreach(json_object_get(rec, "pods"), k, p)
        {
            if (!strcmp(json_string_value(p), pod))
                return ship_util_ts_of(rec);
        }
    }
    ck_abort_msg("no '%s' record of pod %s", kind, pod);
    return 0;
}

const char ship_util_cluster_yaml[] =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
    "status: {allocatable: {cpu: \"16\", memory: 64Gi, pods: \"20\", nvidia.com/gpu: \"8\"}}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: qa}\n"
    "spec: {weight: 1}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: qb}\n"
    "spec: {weight: 1}\n";

/* A gang of n pods of g GPUs and 1 cpu in queue q. */
char *ship_util_gang_yaml(const char *ns, const char *name, int n, int g, const char *q)
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

void ship_util_wait_placed(const struct musterd *m, int pods)
{
    for (int i = 0; i < 600; i++) {
        json_t *j = ship_util_get_json(m, "/api/v1/pods"), *items = json_object_get(j, "items"), *p;
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

json_t *ship_util_row_of(json_t *rows, const char *key)
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

/* single-pod jobs j<from>..j<to-1> of 1 GPU in queue qa */
void ship_util_post_jobs(const struct musterd *m, const char *ns, int from, int to)
{
    for (int i = from; i < to; i++) {
        char name[32];
        snprintf(name, sizeof(name), "j%d", i);
        char *y = ship_util_gang_yaml(ns, name, 1, 1, "qa");
        ship_util_post_yaml(m, y);
        free(y);
    }
}

char *ship_util_verify_db(const char *url, const char *cluster, const char *key, int *status)
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

json_t *ship_util_healthz_acct(const struct musterd *m)
{
    json_t *h = ship_util_get_json(m, "/healthz");
    json_t *a = json_incref(json_object_get(h, "accounting"));
    json_decref(h);
    return a;
}

void ship_util_assert_verified(const char *url, const char *cluster)
{
    int st;
    char *out = ship_util_verify_db(url, cluster, NULL, &st);
    ck_assert_msg(st == 0, "%s", out);
    free(out);
}
