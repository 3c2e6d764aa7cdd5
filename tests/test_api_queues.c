/*
 * test_api_queues.c - queues over HTTP on a real musterd (port 0, fresh data dir): the list,
 * one queue with its jobs, 404, DELETE (200, and 409 for a queue with jobs or children,
 * changing nothing), and the queue gauges of /metrics against the API's own numbers.
 *
 * The cluster (tests/data/api/queues/manifest.yaml): 4 nodes of 8 GPUs; queue alpha (weight
 * 1, not reclaimable) runs team-a/train (3 x 8 GPUs), queue beta (weight 3, capability 24
 * GPUs) waits with team-b/tune (2 x 8 GPUs, which does not fit the 8 free GPUs); spare is
 * empty with one child, spare-child.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "check_run.h"
#include "api_util.h"

static struct musterd md;

/* No timer: cycles run after an apply or delete and on POST /api/v1/cycles. */
static void start(void)
{
    api_util_start(&md, "cycle_interval: 0\nmark_running: true\n");
}

static void stop(void)
{
    musterd_cleanup(&md);
}

/* method path, asserting the status; returns the parsed JSON body (new) or NULL. */
static json_t *call(const char *method, const char *path, const char *body, long want)
{
    return api_util_call(&md, method, path, body, body ? api_util_yaml : NULL, want);
}

/* Applies the two-queue cluster and runs a cycle, so that deserved shares are computed; the
 * cycle the apply woke is done first, and any the cycle's own changes wake after it, so that
 * nothing changes the queues under a test that compares them (a refused delete). */
static void apply_queues(void)
{
    api_util_apply_case(&md, "queues/manifest.yaml");
    api_util_settle(&md, NULL);
    json_decref(call("POST", "/api/v1/cycles", NULL, 200));
    api_util_settle(&md, NULL);
}

/* The queue of this name in a QueueList (borrowed), failing the test when absent. */
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

/* resources.<res>.<what> of a queue document, as an integer (model units). */
static json_int_t num(json_t *q, const char *res, const char *what)
{
    json_t *v = json_object_get(json_object_get(json_object_get(q, "resources"), res), what);
    ck_assert_msg(json_is_integer(v), "%s resources.%s.%s is not a number",
                  json_string_value(json_object_get(q, "name")), res, what);
    return json_integer_value(v);
}

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

START_TEST(test_api_queues_list)
{
    apply_queues();
    json_t *list = call("GET", "/api/v1/queues", NULL, 200);
    ck_assert_str_eq(str(list, "kind"), "QueueList");
    /* every stored queue plus the built-in default, sorted by name */
    const char *want[] = {"alpha", "beta", "default", "spare", "spare-child"};
    json_t *items = json_object_get(list, "items");
    ck_assert_int_eq(json_array_size(items), 5);
    for (size_t i = 0; i < 5; i++)
        ck_assert_str_eq(str(json_array_get(items, i), "name"), want[i]);

    json_t *def = queue_in(list, "default");
    ck_assert(json_is_true(json_object_get(def, "builtin")));
    ck_assert_int_eq(json_integer_value(json_object_get(def, "weight")), 1);
    json_t *alpha = queue_in(list, "alpha");
    ck_assert(json_is_false(json_object_get(alpha, "builtin")));
    ck_assert(json_is_false(json_object_get(alpha, "reclaimable")));
    ck_assert(json_is_null(json_object_get(alpha, "parent")));
    ck_assert_int_eq(json_integer_value(json_object_get(queue_in(list, "beta"), "weight")), 3);
    ck_assert_str_eq(str(queue_in(list, "spare-child"), "parent"), "spare");
    json_t *kids = json_object_get(queue_in(list, "spare"), "children");
    ck_assert_int_eq(json_array_size(kids), 1);
    ck_assert_str_eq(json_string_value(json_array_get(kids, 0)), "spare-child");

    /* allocation as it is now: alpha's three bound pods, nothing of beta */
    ck_assert_int_eq(num(alpha, "nvidia.com/gpu", "allocated"), 24);
    ck_assert_int_eq(num(alpha, "cpu", "allocated"), 12000);
    ck_assert_str_eq(str(json_object_get(alpha, "allocated"), "memory"), "48Gi");
    json_t *beta = queue_in(list, "beta");
    ck_assert_int_eq(num(beta, "nvidia.com/gpu", "allocated"), 0);
    ck_assert_int_eq(num(beta, "nvidia.com/gpu", "request"), 16);
    ck_assert_int_eq(num(beta, "nvidia.com/gpu", "capability"), 24);
    ck_assert(json_is_null(json_object_get(
        json_object_get(json_object_get(alpha, "resources"), "nvidia.com/gpu"), "capability")));
    ck_assert_str_eq(str(json_object_get(beta, "capability"), "nvidia.com/gpu"), "24");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(alpha, "jobs"), "running")),
                     1);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(beta, "jobs"), "pending")),
                     1);

    /* fair share: beta deserves its request (16 GPUs), alpha the rest (16) and so borrows 8;
     * borrowed is always what is allocated above deserved */
    ck_assert_int_eq(num(beta, "nvidia.com/gpu", "deserved"), 16);
    ck_assert_int_eq(num(alpha, "nvidia.com/gpu", "deserved"), 16);
    ck_assert_int_eq(num(alpha, "nvidia.com/gpu", "borrowed"), 8);
    ck_assert_str_eq(str(json_object_get(alpha, "borrowed"), "nvidia.com/gpu"), "8");
    ck_assert_int_eq(num(beta, "nvidia.com/gpu", "borrowed"), 0);
    ck_assert(json_number_value(json_object_get(alpha, "share")) > 1.0);
    ck_assert_str_eq(str(alpha, "dominantResource"), "nvidia.com/gpu");
    /* the list carries no job ids (GET /api/v1/queues/{name} does) */
    ck_assert_ptr_null(json_object_get(alpha, "pendingJobs"));
    json_decref(list);
}
END_TEST

START_TEST(test_api_queue_one_with_its_jobs_and_404)
{
    apply_queues();
    json_t *list = call("GET", "/api/v1/queues", NULL, 200);
    json_t *alpha = call("GET", "/api/v1/queues/alpha", NULL, 200);
    json_t *beta = call("GET", "/api/v1/queues/beta", NULL, 200);
    ck_assert_str_eq(str(alpha, "name"), "alpha");
    ck_assert_int_eq(json_array_size(json_object_get(alpha, "pendingJobs")), 0);
    ck_assert_int_eq(json_array_size(json_object_get(alpha, "runningJobs")), 1);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(alpha, "runningJobs"), 0)),
                     "team-a/train");
    ck_assert_int_eq(json_array_size(json_object_get(beta, "pendingJobs")), 1);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(beta, "pendingJobs"), 0)),
                     "team-b/tune");
    /* the same numbers as the list: one queue is the list's entry plus its job ids */
    json_object_del(alpha, "pendingJobs");
    json_object_del(alpha, "runningJobs");
    ck_assert(json_equal(alpha, queue_in(list, "alpha")));
    json_decref(alpha);
    json_decref(beta);
    json_decref(list);

    json_t *def = call("GET", "/api/v1/queues/default", NULL, 200);
    ck_assert(json_is_true(json_object_get(def, "builtin")));
    json_decref(def);
    json_t *j = call("GET", "/api/v1/queues/nope", NULL, 404);
    ck_assert_str_eq(api_util_err_code(j), "NotFound");
    ck_assert_ptr_nonnull(strstr(api_util_err_msg(j), "'nope'"));
    json_decref(j);
    j = call("PUT", "/api/v1/queues/alpha", "{}", 405);
    ck_assert_str_eq(api_util_err_code(j), "MethodNotAllowed");
    json_decref(j);
    j = call("GET", "/api/v1/queues?weight=1", NULL, 400);
    ck_assert_ptr_nonnull(strstr(api_util_err_msg(j), "'weight'"));
    json_decref(j);
}
END_TEST

START_TEST(test_api_queue_delete_409_with_jobs_or_children_then_200)
{
    apply_queues();
    json_t *before = call("GET", "/api/v1/queues", NULL, 200);
    /* alpha has a running job, beta a pending one: both refused, naming the job */
    json_t *j = call("DELETE", "/api/v1/queues/alpha", NULL, 409);
    ck_assert_str_eq(api_util_err_code(j), "Conflict");
    ck_assert_msg(strstr(api_util_err_msg(j), "team-a/train") != NULL, "%s", api_util_err_msg(j));
    json_decref(j);
    j = call("DELETE", "/api/v1/queues/beta", NULL, 409);
    ck_assert_msg(strstr(api_util_err_msg(j), "team-b/tune") != NULL, "%s", api_util_err_msg(j));
    json_decref(j);
    /* spare has a child queue: refused, naming it */
    j = call("DELETE", "/api/v1/queues/spare", NULL, 409);
    ck_assert_str_eq(api_util_err_code(j), "Conflict");
    ck_assert_msg(strstr(api_util_err_msg(j), "spare-child") != NULL, "%s", api_util_err_msg(j));
    json_decref(j);
    /* the refusals changed nothing */
    json_t *after = call("GET", "/api/v1/queues", NULL, 200);
    ck_assert(json_equal(before, after));
    json_decref(after);
    json_decref(before);

    /* an empty leaf goes (200 and the generic delete reply), then its parent */
    j = call("DELETE", "/api/v1/queues/spare-child", NULL, 200);
    ck_assert_str_eq(str(j, "kind"), "Queue");
    ck_assert_str_eq(str(j, "name"), "spare-child");
    ck_assert_str_eq(str(j, "action"), "deleted");
    json_decref(j);
    json_decref(call("GET", "/api/v1/queues/spare-child", NULL, 404));
    json_decref(call("DELETE", "/api/v1/queues/spare-child", NULL, 404));
    json_decref(call("DELETE", "/api/v1/queues/spare", NULL, 200));
    j = call("GET", "/api/v1/queues", NULL, 200);
    ck_assert_int_eq(json_array_size(json_object_get(j, "items")), 3);
    json_decref(j);
}
END_TEST

/* The value of the sample `name{labels}` in a Prometheus text body; fails when absent. */
static double sample(const char *body, const char *series)
{
    char *want = xasprintf("\n%s ", series);
    const char *p = strstr(body, want);
    ck_assert_msg(p != NULL, "no sample %s in /metrics", series);
    double v = strtod(p + strlen(want), NULL);
    free(want);
    return v;
}

static int has_series(const char *body, const char *series)
{
    char *want = xasprintf("\n%s ", series);
    int found = strstr(body, want) != NULL;
    free(want);
    return found;
}

START_TEST(test_api_queue_metrics_follow_the_api)
{
    apply_queues();
    json_t *list = call("GET", "/api/v1/queues", NULL, 200);
    struct http_resp r;
    http_request("GET", md.base, "/metrics", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    const char *m = r.body;
    static const char *const gauges[] = {"allocated", "deserved", "capability", "share", "jobs"};
    for (size_t i = 0; i < 5; i++) {
        char *t = xasprintf("# TYPE muster_queue_%s gauge\n", gauges[i]);
        ck_assert_msg(strstr(m, t) != NULL, "missing %s", t);
        free(t);
        t = xasprintf("# HELP muster_queue_%s ", gauges[i]);
        ck_assert_msg(strstr(m, t) != NULL, "missing %s", t);
        free(t);
    }
    /* the numbers the cluster makes: cpu in cores, the rest in units */
    ck_assert_double_eq(
        sample(m, "muster_queue_allocated{queue=\"alpha\",resource=\"nvidia.com/gpu\"}"), 24);
    ck_assert_double_eq(sample(m, "muster_queue_allocated{queue=\"alpha\",resource=\"cpu\"}"), 12);
    ck_assert_double_eq(sample(m, "muster_queue_allocated{queue=\"alpha\",resource=\"memory\"}"),
                        48.0 * 1024 * 1024 * 1024);
    ck_assert_double_eq(
        sample(m, "muster_queue_capability{queue=\"beta\",resource=\"nvidia.com/gpu\"}"), 24);
    ck_assert(
        !has_series(m, "muster_queue_capability{queue=\"alpha\",resource=\"nvidia.com/gpu\"}"));
    ck_assert(!has_series(m, "muster_queue_capability{queue=\"beta\",resource=\"cpu\"}"));
    ck_assert_double_eq(sample(m, "muster_queue_jobs{queue=\"alpha\",state=\"running\"}"), 1);
    ck_assert_double_eq(sample(m, "muster_queue_jobs{queue=\"alpha\",state=\"pending\"}"), 0);
    ck_assert_double_eq(sample(m, "muster_queue_jobs{queue=\"beta\",state=\"pending\"}"), 1);
    /* every queue and resource of the API is a sample with the API's value */
    size_t i;
    json_t *q;
    json_array_foreach(json_object_get(list, "items"), i, q)
    {
        const char *name = str(q, "name");
        char *s = xasprintf("muster_queue_share{queue=\"%s\"}", name);
        ck_assert_double_eq_tol(sample(m, s), json_number_value(json_object_get(q, "share")), 1e-5);
        free(s);
        const char *res;
        json_t *v;
        json_object_foreach(json_object_get(q, "resources"), res, v)
        {
            double div = strcmp(res, "cpu") ? 1 : 1000;
            s = xasprintf("muster_queue_deserved{queue=\"%s\",resource=\"%s\"}", name, res);
            ck_assert_double_eq(sample(m, s),
                                (double)json_integer_value(json_object_get(v, "deserved")) / div);
            free(s);
            s = xasprintf("muster_queue_allocated{queue=\"%s\",resource=\"%s\"}", name, res);
            ck_assert_double_eq(sample(m, s),
                                (double)json_integer_value(json_object_get(v, "allocated")) / div);
            free(s);
        }
    }
    http_resp_free(&r);
    json_decref(list);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_queues");
    TCase *tc = tcase_create("queues");
    tcase_set_timeout(tc, 60);
    tcase_add_checked_fixture(tc, start, stop);
    tcase_add_test(tc, test_api_queues_list);
    tcase_add_test(tc, test_api_queue_one_with_its_jobs_and_404);
    tcase_add_test(tc, test_api_queue_delete_409_with_jobs_or_children_then_200);
    tcase_add_test(tc, test_api_queue_metrics_follow_the_api);
    suite_add_tcase(s, tc);
    return check_run(s);
}
