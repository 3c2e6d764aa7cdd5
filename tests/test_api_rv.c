/*
 * test_api_rv.c - ?resourceVersion= on the scheduler's read routes (jobs, a job, why,
 * topology) and their gzip answers (web/reads.c, web/readcache.c).
 *
 * The API runs in this process on a scheduler of its own (sched_util), so a test can hold
 * the scheduler's lock as a long cycle does (sched_hold) and see which reads answer
 * meanwhile: resourceVersion=0 must, with the answer already made; a read without it must
 * not, and answers the newest state once the lock is given back. Nothing here measures
 * time: a read that should answer is waited for (30 s deadline), one that must not is
 * checked to be still unanswered after the reads that must have answered.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "check_run.h"
#include "clock.h"
#include "err.h"
#include "http_client.h"
#include "sched_util.h"

static struct sched_util u;
static struct api *api;
static char base[64];

static const char cluster[] =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n"
    "status: {allocatable: {cpu: '64', memory: 256Gi, pods: '110'}}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w, namespace: t}\n"
    "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n";

static void start(void)
{
    struct api_options o = {.listen = "127.0.0.1:0"};
    struct err err = ERR_INIT;
    sched_util_open(&u, NULL);
    ck_assert_msg(api_start(&o, u.s, u.st, &api, &err) == 0, "%s", err.msg);
    snprintf(base, sizeof(base), "http://127.0.0.1:%d", api_port(api));
    json_decref(sched_util_apply(&u, cluster, 1000));
    json_decref(sched_util_cycle(&u, 2000));
}

static void stop(void)
{
    api_stop(api);
    sched_util_close(&u);
}

/* The store's last committed transaction id. */
static uint64_t store_now(void)
{
    MDB_txn *txn = NULL;
    struct err err = ERR_INIT;
    ck_assert_int_eq(store_txn_begin(u.st, STORE_READ, &txn, &err), 0);
    uint64_t id = store_txn_id(txn);
    store_txn_abort(&txn);
    return id;
}

/* GET path (200 asserted); metadata.resourceVersion of the answer as a number. */
static uint64_t get_rv(const char *path)
{
    struct http_resp r;
    http_request("GET", base, path, NULL, NULL, &r);
    ck_assert_msg(r.status == 200, "GET %s: %ld %s", path, r.status, r.body);
    const char *rv =
        json_string_value(json_object_get(json_object_get(r.json, "metadata"), "resourceVersion"));
    ck_assert_msg(rv && *rv, "GET %s: no metadata.resourceVersion: %s", path, r.body);
    uint64_t v = strtoull(rv, NULL, 10);
    http_resp_free(&r);
    return v;
}

static void apply_pod(const char *name, int64_t now)
{
    char *y = NULL;
    ck_assert_int_gt(asprintf(&y,
                              "apiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: t}\n"
                              "spec: {containers: [{name: c, image: x}]}\n",
                              name),
                     0);
    json_decref(sched_util_apply(&u, y, now));
    free(y);
}

/* A GET on a thread of its own, to wait for with a deadline. */

static uint64_t resp_rv(const struct http_resp *r)
{
    const char *rv =
        json_string_value(json_object_get(json_object_get(r->json, "metadata"), "resourceVersion"));
    return rv ? strtoull(rv, NULL, 10) : 0;
}

START_TEST(test_api_rv_zero_answers_while_the_lock_is_held)
{
    const char *why = "/api/v1/jobs/t/w/why", *why0 = "/api/v1/jobs/t/w/why?resourceVersion=0";
    uint64_t made = get_rv(why);
    get_rv("/api/v1/topology");
    ck_assert_uint_eq(made, store_now());
    apply_pod("x", 3000); /* a commit: the answers above are stale now */
    uint64_t newest = store_now();
    ck_assert_uint_gt(newest, made);

    struct sched_hold *h = sched_hold(u.s);
    struct http_bg dflt, zero, topo;
    http_bg_start(&dflt, base, why);
    http_bg_start(&zero, base, why0);
    http_bg_start(&topo, base, "/api/v1/topology?resourceVersion=0");
    int answered = http_bg_wait(&zero, 30000) && http_bg_wait(&topo, 30000);
    /* the default read needs the lock: it cannot have answered while it is held */
    int dflt_done = atomic_load(&dflt.done);
    sched_hold_release(h);
    ck_assert_msg(answered, "a resourceVersion=0 read waited for the scheduler's lock");
    ck_assert_msg(!dflt_done, "a read without resourceVersion answered while the lock was held");
    ck_assert_int_eq(zero.r.status, 200);
    ck_assert_uint_eq(resp_rv(&zero.r), made); /* the answer already made, stale */
    ck_assert_int_eq(topo.r.status, 200);
    ck_assert_uint_eq(resp_rv(&topo.r), made);

    ck_assert(http_bg_wait(&dflt, 30000));
    ck_assert_int_eq(dflt.r.status, 200);
    ck_assert_uint_ge(resp_rv(&dflt.r), newest); /* the newest state, made after the release */
    http_bg_join(&dflt);
    http_bg_join(&zero);
    http_bg_join(&topo);
}
END_TEST

/* muster_read_remakes_total from /metrics. */
static double remakes(void)
{
    struct http_resp r;
    http_request("GET", base, "/metrics", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    const char *p = strstr(r.body, "\nmuster_read_remakes_total ");
    ck_assert_ptr_nonnull(p);
    double v = strtod(p + strlen("\nmuster_read_remakes_total "), NULL);
    http_resp_free(&r);
    return v;
}

/* path with resourceVersion=rv added (new). */
static char *with_rv(const char *path, uint64_t rv)
{
    char *p = NULL;
    ck_assert_int_gt(asprintf(&p, "%s%cresourceVersion=%llu", path, strchr(path, '?') ? '&' : '?',
                              (unsigned long long)rv),
                     0);
    return p;
}

START_TEST(test_api_rv_stale_answer_is_remade)
{
    const char *paths[] = {"/api/v1/jobs", "/api/v1/jobs/t/w", "/api/v1/jobs/t/w/why",
                           "/api/v1/topology?pod_cpu=1"};
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
            char *zero = with_rv(paths[i], 0);
            uint64_t before = get_rv(paths[i]); /* the newest state, made now */
            ck_assert_uint_eq(before, store_now());
            apply_pod(round ? "y" : "x", 3000 + round);
            json_decref(sched_util_cycle(&u, 4000 + round));
            uint64_t newest = store_now();
            ck_assert_uint_gt(newest, before);
            double made = remakes();
            /* served stale at once, then remade by the background thread alone: only
             * resourceVersion=0 reads of it are sent meanwhile */
            ck_assert_uint_eq(get_rv(zero), before);
            uint64_t rv = before;
            for (int64_t end = clock_mono_ms() + 30000; rv < newest && clock_mono_ms() < end;)
                if ((rv = get_rv(zero)) < newest)
                    usleep(2000);
            ck_assert_msg(rv >= newest, "%s: still at %llu, the store at %llu", zero,
                          (unsigned long long)rv, (unsigned long long)newest);
            ck_assert(remakes() > made);
            /* a read asking for at least that state takes it; one for an older state too */
            char *at = with_rv(paths[i], newest), *older = with_rv(paths[i], before);
            ck_assert_uint_ge(get_rv(at), newest);
            ck_assert_uint_ge(get_rv(older), newest);
            free(at);
            free(older);
            free(zero);
            struct http_resp r;
            http_request("DELETE", base, round ? "/api/v1/pods/t/y" : "/api/v1/pods/t/x", NULL,
                         NULL, &r);
            ck_assert_int_eq(r.status, 200);
            http_resp_free(&r);
        }
    }
}
END_TEST

START_TEST(test_api_rv_gzip_is_the_plain_answer)
{
    const char *gz[] = {"Accept-Encoding: gzip, deflate", NULL},
               *no[] = {"Accept-Encoding: gzip;q=0, identity", NULL};
    const char *paths[] = {"/api/v1/topology", "/api/v1/jobs", "/api/v1/jobs/t/w/why"};
    for (size_t i = 0; i < 3; i++) {
        struct http_resp plain, z, refused;
        http_request("GET", base, paths[i], NULL, NULL, &plain);
        http_request("GET", base, paths[i], NULL, gz, &z);
        http_request("GET", base, paths[i], NULL, no, &refused);
        ck_assert_int_eq(plain.status, 200);
        ck_assert_int_eq(z.status, 200);
        char *enc = http_resp_header(&z, "Content-Encoding"), *vary = http_resp_header(&z, "Vary");
        ck_assert_str_eq(enc, "gzip");
        ck_assert_str_eq(vary, "Accept-Encoding");
        free(enc);
        free(vary);
        size_t len;
        char *text = http_gunzip(z.body, z.len, &len);
        ck_assert_uint_eq(len, plain.len);
        ck_assert_mem_eq(text, plain.body, len);
        free(text);
        ck_assert_ptr_null(http_resp_header(&plain, "Content-Encoding"));
        ck_assert_ptr_null(http_resp_header(&refused, "Content-Encoding"));
        ck_assert_str_eq(refused.body, plain.body);
        http_resp_free(&plain);
        http_resp_free(&z);
        http_resp_free(&refused);
    }
}
END_TEST

START_TEST(test_api_rv_malformed_or_too_large)
{
    const char *bad[] = {"abc", "-1", "1.5", "%2B3", "18446744073709551616"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char path[128];
        snprintf(path, sizeof(path), "/api/v1/jobs/t/w/why?resourceVersion=%s", bad[i]);
        struct http_resp r;
        http_request("GET", base, path, NULL, NULL, &r);
        ck_assert_msg(r.status == 400, "%s: %ld", path, r.status);
        json_t *e = json_object_get(r.json, "error");
        ck_assert_str_eq(json_string_value(json_object_get(e, "field")), "resourceVersion");
        ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(e, "message")),
                                     "query parameter 'resourceVersion'"));
        http_resp_free(&r);
    }
    /* a version the store has not reached: 504, as kube-apiserver answers it */
    char path[128];
    snprintf(path, sizeof(path), "/api/v1/topology?resourceVersion=%llu",
             (unsigned long long)store_now() + 1000);
    struct http_resp r;
    http_request("GET", base, path, NULL, NULL, &r);
    ck_assert_int_eq(r.status, 504);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r.json, "error"), "code")),
                     "Timeout");
    http_resp_free(&r);
}
END_TEST

/* Reads of KEPT different answers, each once; then with resourceVersion=0 (answered without
 * the lock only when it is still kept). */
#define KEPT 500

static void *read_many(void *arg)
{
    struct http_bg *g = arg;
    for (int k = 1; k <= KEPT; k++) {
        char path[96];
        snprintf(path, sizeof(path), "/api/v1/topology?pod_cpu=%dm%s", k, g->path);
        struct http_resp r;
        http_request("GET", base, path, NULL, NULL, &r);
        if (r.status != 200)
            g->r.status = r.status;
        http_resp_free(&r);
    }
    atomic_store(&g->done, 1);
    return NULL;
}

START_TEST(test_api_rv_many_answers_are_kept)
{
    struct http_bg made = {.path = "", .r.status = 200},
                   zero = {.path = "&resourceVersion=0", .r.status = 200};
    atomic_init(&made.done, 0);
    atomic_init(&zero.done, 0);
    read_many(&made);
    ck_assert_int_eq(made.r.status, 200);
    /* none of them evicted another: every one answers while the lock is held */
    struct sched_hold *h = sched_hold(u.s);
    ck_assert_int_eq(pthread_create(&zero.t, NULL, read_many, &zero), 0);
    int answered = http_bg_wait(&zero, 30000);
    sched_hold_release(h);
    pthread_join(zero.t, NULL);
    ck_assert_msg(answered, "a kept answer was evicted: its read waited for the lock");
    ck_assert_int_eq(zero.r.status, 200);
}
END_TEST

/* The remaker makes why documents in one sched_whys: each the document sched_why makes. */
START_TEST(test_api_rv_whys_in_one_go_equal_each)
{
    json_decref(sched_util_apply(&u,
                                 "apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: t}\n"
                                 "spec: {containers: [{name: c, image: x, resources: {requests: "
                                 "{cpu: '100'}}}]}\n",
                                 3000));
    json_decref(sched_util_cycle(&u, 4000));
    apply_pod("fresh", 5000); /* never tried */
    const char *ids[] = {"t/w", "t/big", "t/fresh", "t/ghost"};
    json_t *many[4];
    sched_whys(u.s, 4, ids, many);
    for (size_t i = 0; i < 4; i++) {
        json_t *one = NULL;
        struct err err = ERR_INIT;
        int rc = sched_why(u.s, ids[i], &one, &err);
        if (rc < 0) {
            ck_assert_int_eq(rc, ERR_NOT_FOUND);
            ck_assert_ptr_null(many[i]);
            continue;
        }
        ck_assert_msg(many[i] && json_equal(one, many[i]), "%s differs", ids[i]);
        json_decref(one);
        json_decref(many[i]);
    }
    /* the documents compared are real ones: big can never fit, fresh was never tried */
    json_t *big = sched_util_why(&u, "t/big"), *fresh = sched_util_why(&u, "t/fresh");
    ck_assert_str_eq(sched_util_str2(big, "primary", "class"), "NEVER");
    ck_assert_str_eq(sched_util_str2(fresh, "primary", "code"), "NotTried");
    json_decref(big);
    json_decref(fresh);
}
END_TEST

/* The API stops however soon after it starts: the front end's loop may not have started
 * yet, and a stop then must not be lost (a loopbreak before the loop is; this hung). */
START_TEST(test_api_rv_stops_at_once_after_start)
{
    for (int i = 0; i < 100; i++) {
        struct api_options o = {.listen = "127.0.0.1:0"};
        struct api *a = NULL;
        struct err err = ERR_INIT;
        ck_assert_msg(api_start(&o, u.s, u.st, &a, &err) == 0, "%s", err.msg);
        api_stop(a);
    }
}
END_TEST

/* ?jobs=N: each domain lists the first N of its jobs; jobCount says how many it has. */
START_TEST(test_api_rv_topology_jobs_capped)
{
    apply_pod("x", 3000);
    apply_pod("y", 3000);
    json_decref(sched_util_cycle(&u, 4000));
    struct http_resp all, one, none, bad;
    http_request("GET", base, "/api/v1/topology", NULL, NULL, &all);
    http_request("GET", base, "/api/v1/topology?jobs=1", NULL, NULL, &one);
    http_request("GET", base, "/api/v1/topology?jobs=0&resourceVersion=0", NULL, NULL, &none);
    http_request("GET", base, "/api/v1/topology?jobs=-1", NULL, NULL, &bad);
    ck_assert_int_eq(all.status, 200);
    ck_assert_int_eq(one.status, 200);
    ck_assert_int_eq(none.status, 200);
    json_t *jobs = json_object_get(json_object_get(all.json, "root"), "jobs");
    ck_assert_int_eq(json_array_size(jobs), 3); /* t/w, t/x, t/y */
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(all.json, "root"), "jobCount")), 3);
    json_t *root1 = json_object_get(one.json, "root"), *root0 = json_object_get(none.json, "root");
    ck_assert_int_eq(json_array_size(json_object_get(root1, "jobs")), 1);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(root1, "jobs"), 0)),
                     json_string_value(json_array_get(jobs, 0)));
    ck_assert_int_eq(json_integer_value(json_object_get(root1, "jobCount")), 3);
    ck_assert_int_eq(json_array_size(json_object_get(root0, "jobs")), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(root0, "jobCount")), 3);
    ck_assert_int_eq(bad.status, 400);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(bad.json, "error"), "field")), "jobs");
    http_resp_free(&all);
    http_resp_free(&one);
    http_resp_free(&none);
    http_resp_free(&bad);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_rv");
    TCase *tc = tcase_create("rv");
    tcase_add_checked_fixture(tc, start, stop);
    tcase_add_test(tc, test_api_rv_zero_answers_while_the_lock_is_held);
    tcase_add_test(tc, test_api_rv_stale_answer_is_remade);
    tcase_add_test(tc, test_api_rv_gzip_is_the_plain_answer);
    tcase_add_test(tc, test_api_rv_malformed_or_too_large);
    tcase_add_test(tc, test_api_rv_whys_in_one_go_equal_each);
    tcase_add_test(tc, test_api_rv_many_answers_are_kept);
    tcase_add_test(tc, test_api_rv_topology_jobs_capped);
    tcase_add_test(tc, test_api_rv_stops_at_once_after_start);
    suite_add_tcase(s, tc);
    return check_run(s);
}
