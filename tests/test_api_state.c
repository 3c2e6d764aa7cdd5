/* test_api_state.c - time travel on a real musterd: GET /api/v1/state?at=|seq= and
 * GET /api/v1/jobs/{ns}/{name}/why?at=|seq= answer as the cluster was then, and refuse
 * bad times and records with a 400 naming the parameter. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "check_run.h"

static struct musterd md;

static void start(void)
{
    api_util_start(&md, "cycle_interval: 0\n");
    api_util_apply_case(&md, "cluster/manifest.yaml");
}

static void stop(void)
{
    musterd_cleanup(&md);
}

static json_t *get(const char *path, long want)
{
    return api_util_call(&md, "GET", path, NULL, NULL, want);
}

/* The entry of array part (of doc) whose key is val, or NULL. */
static json_t *find(json_t *doc, const char *part, const char *key, const char *val)
{
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(doc, part), i, x)
    {
        const char *s = json_string_value(json_object_get(x, key));
        if (s && !strcmp(s, val))
            return x;
    }
    return NULL;
}

static json_t *state_at_seq(json_int_t seq)
{
    char path[128];
    snprintf(path, sizeof(path), "/api/v1/state?seq=%lld", (long long)seq);
    json_t *doc = get(path, 200);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(doc, "asOf"), "seq")), seq);
    return doc;
}

START_TEST(test_api_state_as_it_was)
{
    json_int_t before = api_util_settle(&md, NULL);
    json_t *then = state_at_seq(before);
    ck_assert_ptr_nonnull(find(then, "nodes", "name", "n2"));
    json_t *web = find(then, "pods", "name", "web");
    ck_assert_ptr_nonnull(web);
    ck_assert_str_eq(json_string_value(json_object_get(web, "node")), "n1");
    json_t *n1 = find(then, "nodes", "name", "n1");
    ck_assert_int_eq(json_array_size(json_object_get(n1, "pods")), 1);
    json_t *train = find(then, "jobs", "id", "team/train");
    ck_assert_ptr_nonnull(train);
    ck_assert_str_eq(json_string_value(json_object_get(train, "state")), "Unschedulable");
    ck_assert_int_eq(json_integer_value(json_object_get(train, "minMember")), 2);

    /* n2 goes; the past keeps it, the present does not */
    json_decref(api_util_call(&md, "DELETE", "/api/v1/nodes/n2", NULL, NULL, 200));
    json_int_t after = api_util_settle(&md, NULL);
    ck_assert_int_gt(after, before);
    json_t *again = state_at_seq(before);
    ck_assert_msg(json_equal(again, then), "the past changed when the present did");
    json_t *now = get("/api/v1/state", 200);
    ck_assert_ptr_null(find(now, "nodes", "name", "n2"));
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(now, "asOf"), "seq")),
                     after);

    /* ?at= names the last record at or before it: the asOf record's own time answers
     * with that record or a later one of the same millisecond */
    const char *ts = json_string_value(json_object_get(json_object_get(then, "asOf"), "ts"));
    char path[160];
    snprintf(path, sizeof(path), "/api/v1/state?at=%s", ts);
    json_t *by_time = get(path, 200);
    json_int_t got = json_integer_value(json_object_get(json_object_get(by_time, "asOf"), "seq"));
    ck_assert_int_ge(got, before);
    ck_assert_str_eq(
        json_string_value(json_object_get(json_object_get(by_time, "asOf"), "requested")), ts);
    json_decref(by_time);
    json_decref(again);
    json_decref(now);
    json_decref(then);
}
END_TEST

START_TEST(test_api_state_why_as_it_was)
{
    json_int_t seq = api_util_settle(&md, NULL);
    char path[160];
    snprintf(path, sizeof(path), "/api/v1/jobs/team/train/why?seq=%lld", (long long)seq);
    json_t *why = get(path, 200);
    ck_assert_str_eq(json_string_value(json_object_get(why, "job")), "team/train");
    ck_assert_ptr_nonnull(json_object_get(json_object_get(why, "primary"), "code"));
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(why, "asOf"), "seq")), seq);
    json_t *live = get("/api/v1/jobs/team/train/why", 200);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(why, "primary"), "code")),
                     json_string_value(json_object_get(json_object_get(live, "primary"), "code")));
    json_decref(live);
    json_decref(why);
    /* before its objects were applied: not a job then */
    json_t *none = get("/api/v1/jobs/team/train/why?seq=1", 404);
    ck_assert_ptr_nonnull(strstr(api_util_err_msg(none), "did not exist at record 1"));
    json_decref(none);
    /* default/web was bound when applied: no cycle wrote its why, and the answer says so */
    snprintf(path, sizeof(path), "/api/v1/jobs/default/web/why?seq=%lld", (long long)seq);
    why = get(path, 200);
    ck_assert(json_is_null(json_object_get(why, "primary")));
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(why, "note")), "no cycle"));
    json_decref(why);
}
END_TEST

/* Jobs failing alike share one stored why (a class record, why_class.c): the why of one of
 * them at a record is its whole document then, equal to the live one while nothing changed. */
START_TEST(test_api_state_why_of_a_class_record)
{
    api_util_settle(&md, NULL);
    char body[2048];
    int n = 0;
    for (int i = 0; i < 4; i++)
        n += snprintf(body + n, sizeof(body) - (size_t)n,
                      "%s{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"big-%d\","
                      "\"namespace\":\"team\"},\"spec\":{\"containers\":[{\"name\":\"m\","
                      "\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"16\"}}}]}}",
                      i ? "," : "[", i);
    snprintf(body + n, sizeof(body) - (size_t)n, "]");
    json_decref(api_util_call(&md, "POST", "/api/v1/manifests", body, api_util_json, 201));
    json_int_t seq = api_util_settle(&md, NULL);
    json_decref(api_util_call(&md, "POST", "/api/v1/cycles", "{}", api_util_json, 200));
    char path[160];
    int shared = 0;
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "/api/v1/jobs/team/big-%d/why?seq=%lld", i, (long long)seq);
        json_t *then = get(path, 200);
        snprintf(path, sizeof(path), "/api/v1/jobs/team/big-%d/why", i);
        json_t *now = get(path, 200);
        ck_assert_ptr_null(json_object_get(then, "classRecord")); /* completed */
        json_t *tp = json_object_get(then, "primary"), *np = json_object_get(now, "primary");
        ck_assert_str_eq(json_string_value(json_object_get(tp, "code")),
                         json_string_value(json_object_get(np, "code")));
        ck_assert_str_eq(json_string_value(json_object_get(tp, "message")),
                         json_string_value(json_object_get(np, "message")));
        char want[32];
        snprintf(want, sizeof(want), "team/big-%d", i);
        ck_assert_str_eq(json_string_value(json_object_get(then, "job")), want);
        ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(tp, "message")), "nodes"));
        json_decref(then);
        json_decref(now);
        shared++;
    }
    ck_assert_int_eq(shared, 4);
}
END_TEST

static void bad(const char *path, const char *field, const char *words)
{
    json_t *e = get(path, 400);
    ck_assert_str_eq(api_util_err_code(e), "Invalid");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(e, "error"), "field")),
                     field);
    ck_assert_msg(strstr(api_util_err_msg(e), words), "%s: '%s' lacks '%s'", path,
                  api_util_err_msg(e), words);
    json_decref(e);
}

START_TEST(test_api_state_bad_times)
{
    api_util_settle(&md, NULL);
    bad("/api/v1/state?at=yesterday", "at", "not an RFC 3339 time");
    bad("/api/v1/state?at=2999-01-01T00:00:00Z", "at", "is in the future");
    bad("/api/v1/state?at=2001-01-01T00:00:00Z", "at", "before the first record kept");
    bad("/api/v1/state?at=2001-01-01T00:00:00Z&seq=2", "at", "give one");
    bad("/api/v1/state?seq=0", "seq", "before the first record kept");
    bad("/api/v1/state?seq=99999999", "seq", "is in the future");
    bad("/api/v1/state?seq=12a", "seq", "not a record number");
    bad("/api/v1/jobs/team/train/why?at=noon", "at", "not an RFC 3339 time");
    bad("/api/v1/jobs/team/train/why?seq=99999999", "seq", "is in the future");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_state");
    TCase *tc = tcase_create("state");
    tcase_add_checked_fixture(tc, start, stop);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_api_state_as_it_was);
    tcase_add_test(tc, test_api_state_why_as_it_was);
    tcase_add_test(tc, test_api_state_bad_times);
    tcase_add_test(tc, test_api_state_why_of_a_class_record);
    suite_add_tcase(s, tc);
    return check_run(s);
}
