/*
 * test_api_timeseries.c - the time series on a real musterd sampling every 0.2 s: after the
 * demo cluster is scheduled (one cycle, then none), the samples say what the API says
 * (cluster capacity and use summed from the node map, jobs by state from the jobs list, the
 * placements and preemptions of all samples adding up to /metrics' placed pods and the
 * ledger's entries, a queue's allocation, a spine's use), series= filters by name prefix,
 * old samples leave past timeseries_retention, the Grafana JSON data source routes answer
 * in Grafana's shape, and bad queries are 400 naming the parameter.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_util.h"
#include "check_run.h"

static struct musterd md;

static const char *const json_ct[] = {"Content-Type: application/json", NULL};

static void start(void)
{
    api_util_start(&md, "cycle_interval: 0\ntimeseries_interval: 0.2\ntimeseries_retention: 1h\n");
}

static void start_short(void)
{
    api_util_start(&md, "cycle_interval: 0\ntimeseries_interval: 0.2\ntimeseries_retention: 2\n");
}

static void stop(void)
{
    musterd_cleanup(&md);
}

static void apply_demo(void)
{
    char *src = getenv("MUSTER_SOURCE_DIR"), path[4096];
    static char buf[1 << 20];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/examples/demo/%s", src ? src : ".",
                 i ? "workloads.yaml" : "cluster.yaml");
        FILE *f = fopen(path, "rb");
        ck_assert_ptr_nonnull(f);
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        json_decref(api_util_call(&md, "POST", "/api/v1/manifests", buf, api_util_yaml, 201));
    }
}

/* The samples of path once at least want samples taken after after_ms are in (polls; the
 * test's own timeout bounds it). New. */
static json_t *samples_after(const char *path, json_int_t after_ms, size_t want)
{
    for (;;) {
        json_t *doc = api_util_call(&md, "GET", path, NULL, NULL, 200), *t;
        size_t i, n = 0;
        json_array_foreach(json_object_get(doc, "times"), i, t) n +=
            json_integer_value(t) > after_ms;
        if (n >= want)
            return doc;
        json_decref(doc);
        usleep(50000);
    }
}

static json_t *last(json_t *doc, const char *series)
{
    json_t *col = json_object_get(json_object_get(doc, "series"), series);
    ck_assert_msg(col != NULL, "series '%s' missing", series);
    return json_array_get(col, json_array_size(col) - 1);
}

static json_int_t sum(json_t *doc, const char *series)
{
    json_t *col = json_object_get(json_object_get(doc, "series"), series), *x;
    size_t i;
    json_int_t s = 0;
    json_array_foreach(col, i, x) s += json_integer_value(x);
    return s;
}

/* The newest sample's time: the samples after it are taken once the cycle is done. */
static json_int_t now_sample(void)
{
    json_t *doc = samples_after("/api/v1/timeseries?series=cycles", 0, 1);
    json_t *times = json_object_get(doc, "times");
    json_int_t t = json_integer_value(json_array_get(times, json_array_size(times) - 1));
    json_decref(doc);
    return t;
}

START_TEST(test_api_timeseries_samples_say_what_the_api_says)
{
    apply_demo();
    json_decref(api_util_call(&md, "POST", "/api/v1/cycles", NULL, NULL, 200));
    /* quiet: the newest two samples saw no cycle (the apply's own wake-up included) */
    json_t *doc;
    for (;;) {
        doc = samples_after("/api/v1/timeseries?from=1970-01-01T00:00:00Z", now_sample(), 2);
        json_t *c = json_object_get(json_object_get(doc, "series"), "cycles");
        size_t n = json_array_size(c);
        if (json_integer_value(json_array_get(c, n - 1)) == 0 &&
            json_integer_value(json_array_get(c, n - 2)) == 0)
            break;
        json_decref(doc);
    }
    ck_assert(json_real_value(json_object_get(doc, "interval")) == 0.2);

    /* cluster capacity and use: the node map summed */
    json_t *map = api_util_call(&md, "GET", "/api/v1/nodemap", NULL, NULL, 200), *n;
    json_int_t gpu_alloc = 0, gpu_used = 0;
    size_t i;
    json_array_foreach(json_object_get(map, "items"), i, n)
    {
        gpu_alloc += json_integer_value(
            json_object_get(json_object_get(n, "allocatable"), "nvidia.com/gpu"));
        gpu_used +=
            json_integer_value(json_object_get(json_object_get(n, "used"), "nvidia.com/gpu"));
    }
    ck_assert_int_eq(json_integer_value(last(doc, "cluster.allocatable.nvidia.com/gpu")),
                     gpu_alloc);
    ck_assert_int_eq(json_integer_value(last(doc, "cluster.used.nvidia.com/gpu")), gpu_used);
    ck_assert_int_eq(json_integer_value(last(doc, "cluster.free.nvidia.com/gpu")),
                     gpu_alloc - gpu_used);

    /* jobs by state: the jobs list counted */
    json_t *jobs = api_util_call(&md, "GET", "/api/v1/jobs", NULL, NULL, 200), *j;
    json_int_t running = 0, unsched = 0;
    json_array_foreach(json_object_get(jobs, "items"), i, j)
    {
        const char *st = json_string_value(json_object_get(j, "state"));
        running += strcmp(st, "Running") == 0;
        unsched += strcmp(st, "Unschedulable") == 0;
    }
    ck_assert_int_gt(running, 0);
    ck_assert_int_eq(json_integer_value(last(doc, "jobs.Running")), running);
    ck_assert_int_eq(json_integer_value(last(doc, "jobs.Unschedulable")), unsched);

    /* counters: every placement and preemption once, in the sample after it */
    json_t *ledger = api_util_call(&md, "GET", "/api/v1/preemptions", NULL, NULL, 200);
    ck_assert_uint_gt(json_array_size(json_object_get(ledger, "items")), 0);
    ck_assert_int_eq(sum(doc, "preemptions"),
                     (json_int_t)json_array_size(json_object_get(ledger, "items")));
    struct http_resp r;
    http_request("GET", md.base, "/metrics", NULL, NULL, &r);
    const char *cy = strstr(r.body, "\nmuster_cycle ");
    ck_assert_ptr_nonnull(cy);
    ck_assert_int_eq(sum(doc, "cycles"), atoll(cy + strlen("\nmuster_cycle ")));
    const char *m = strstr(r.body, "\nmuster_pods_placed_total ");
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(sum(doc, "placements"), atoll(m + strlen("\nmuster_pods_placed_total ")));
    ck_assert_int_gt(sum(doc, "placements"), 0);
    http_resp_free(&r);

    /* a queue's allocation and a spine's use, as their own answers say */
    json_t *q = api_util_call(&md, "GET", "/api/v1/queues/research-interactive", NULL, NULL, 200);
    ck_assert_int_eq(
        json_integer_value(last(doc, "queue.research-interactive.allocated.nvidia.com/gpu")),
        json_integer_value(json_object_get(
            json_object_get(json_object_get(q, "resources"), "nvidia.com/gpu"), "allocated")));
    json_t *topo = api_util_call(&md, "GET", "/api/v1/topology", NULL, NULL, 200), *sp;
    json_array_foreach(json_object_get(json_object_get(topo, "root"), "children"), i, sp)
    {
        char name[256];
        snprintf(name, sizeof(name), "domain.%s.used.nvidia.com/gpu",
                 json_string_value(json_object_get(sp, "name")));
        ck_assert_int_eq(json_integer_value(last(doc, name)),
                         atoll(json_string_value(
                             json_object_get(json_object_get(sp, "used"), "nvidia.com/gpu"))));
    }
    /* a namespace's use: the GPU requests of its pods bound to nodes */
    json_t *pods = api_util_call(&md, "GET", "/api/v1/pods?namespace=training", NULL, NULL, 200),
           *p;
    json_int_t gpus = 0;
    json_array_foreach(json_object_get(pods, "items"), i, p)
    {
        const char *phase =
            json_string_value(json_object_get(json_object_get(p, "status"), "phase"));
        if (!json_string_value(json_object_get(json_object_get(p, "spec"), "nodeName")) ||
            (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))))
            continue;
        json_t *c;
        size_t k;
        json_array_foreach(json_object_get(json_object_get(p, "spec"), "containers"), k, c) gpus +=
            atoll(
                json_string_value(json_object_get(
                    json_object_get(json_object_get(c, "resources"), "requests"), "nvidia.com/gpu"))
                    ?: "0");
    }
    ck_assert_int_gt(gpus, 0);
    ck_assert_int_eq(json_integer_value(last(doc, "namespace.training.used.nvidia.com/gpu")), gpus);
    json_decref(pods);
    json_decref(topo);
    json_decref(q);
    json_decref(ledger);
    json_decref(jobs);
    json_decref(map);
    json_decref(doc);

    /* series= keeps the names with those prefixes only */
    doc = api_util_call(&md, "GET", "/api/v1/timeseries?series=jobs.,placements", NULL, NULL, 200);
    const char *name;
    json_t *col;
    size_t k = 0;
    json_object_foreach(json_object_get(doc, "series"), name, col)
    {
        ck_assert_msg(strncmp(name, "jobs.", 5) == 0 || strcmp(name, "placements") == 0, "%s",
                      name);
        ck_assert_uint_eq(json_array_size(col), json_array_size(json_object_get(doc, "times")));
        k++;
    }
    ck_assert_uint_eq(k, 10); /* nine job states and placements */
    json_decref(doc);
}
END_TEST

START_TEST(test_api_timeseries_retention_drops_old_samples)
{
    json_int_t t0 = now_sample();
    /* past the retention (2 s) of the first sample seen: it is gone, and nothing older
     * than the newest sample's time minus the retention is kept */
    json_t *doc = samples_after("/api/v1/timeseries?series=cycles", t0 + 3000, 1), *t;
    json_t *times = json_object_get(doc, "times");
    json_int_t newest = json_integer_value(json_array_get(times, json_array_size(times) - 1));
    size_t i;
    json_array_foreach(times, i, t)
    {
        ck_assert_int_gt(json_integer_value(t), t0);
        ck_assert_int_ge(json_integer_value(t), newest - 2000);
    }
    json_decref(doc);
}
END_TEST

START_TEST(test_api_timeseries_grafana_shape)
{
    (void)now_sample();
    json_decref(api_util_call(&md, "GET", "/api/v1/grafana", NULL, NULL, 200));
    json_t *names =
        api_util_call(&md, "POST", "/api/v1/grafana/search", "{\"target\": \"\"}", json_ct, 200);
    int has = 0;
    json_t *x;
    size_t i;
    json_array_foreach(names, i, x) has |= strcmp(json_string_value(x), "jobs.Running") == 0;
    ck_assert(has);
    json_decref(names);
    json_t *ans = api_util_call(
        &md, "POST", "/api/v1/grafana/query",
        "{\"targets\": [{\"target\": \"jobs.Running\"}, {\"target\": \"nope\"}],"
        " \"range\": {\"from\": \"1970-01-01T00:00:00Z\", \"to\": \"2999-01-01T00:00:00Z\"}}",
        json_ct, 200);
    json_t *ts =
        api_util_call(&md, "GET", "/api/v1/timeseries?series=jobs.Running", NULL, NULL, 200);
    json_t *a = json_array_get(ans, 0);
    ck_assert_str_eq(json_string_value(json_object_get(a, "target")), "jobs.Running");
    json_t *pts = json_object_get(a, "datapoints");
    ck_assert_uint_ge(json_array_size(pts), 1);
    /* each point is [value, time ms] of a stored sample */
    json_t *p0 = json_array_get(pts, 0);
    ck_assert_int_eq(json_integer_value(json_array_get(p0, 1)),
                     json_integer_value(json_array_get(json_object_get(ts, "times"), 0)));
    ck_assert_uint_eq(json_array_size(json_object_get(json_array_get(ans, 1), "datapoints")), 0);
    json_decref(ts);
    json_decref(ans);
}
END_TEST

START_TEST(test_api_timeseries_bad_queries)
{
    json_t *e = api_util_call(&md, "GET", "/api/v1/timeseries?since=soon", NULL, NULL, 400);
    ck_assert_str_eq(api_util_err_msg(e), "query parameter 'since': 'soon' is not a duration "
                                          "(\"90s\", \"15m\", \"6h\", \"2d\" or seconds)");
    json_decref(e);
    e = api_util_call(&md, "GET", "/api/v1/timeseries?from=yesterday", NULL, NULL, 400);
    ck_assert_str_eq(api_util_err_msg(e),
                     "query parameter 'from': 'yesterday' is not an RFC 3339 time");
    json_decref(e);
    e = api_util_call(&md, "GET",
                      "/api/v1/timeseries?from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z", NULL,
                      NULL, 400);
    ck_assert_str_eq(api_util_err_msg(e), "query parameter 'from' is after 'to'");
    json_decref(e);
    e = api_util_call(&md, "POST", "/api/v1/grafana/query", "{\"range\": {}}", json_ct, 400);
    ck_assert_ptr_nonnull(strstr(api_util_err_msg(e), "a query needs {\"targets\""));
    json_decref(e);
    e = api_util_call(&md, "POST", "/api/v1/grafana/query",
                      "{\"targets\": [], \"range\": {\"from\": \"noon\"}}", json_ct, 400);
    ck_assert_str_eq(api_util_err_msg(e), "range.from: 'noon' is not an RFC 3339 time");
    json_decref(e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_timeseries");
    TCase *tc = tcase_create("api_timeseries");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, start, stop);
    tcase_add_test(tc, test_api_timeseries_samples_say_what_the_api_says);
    tcase_add_test(tc, test_api_timeseries_grafana_shape);
    tcase_add_test(tc, test_api_timeseries_bad_queries);
    suite_add_tcase(s, tc);
    TCase *ret = tcase_create("retention");
    tcase_set_timeout(ret, 120);
    tcase_add_checked_fixture(ret, start_short, stop);
    tcase_add_test(ret, test_api_timeseries_retention_drops_old_samples);
    suite_add_tcase(s, ret);
    return check_run(s);
}
