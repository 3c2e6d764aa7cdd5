/*
 * api_util.c - helpers of the API suites (api_util.h).
 */
#include "api_util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *const api_util_yaml[] = {"Content-Type: application/yaml", NULL};
const char *const api_util_json[] = {"Content-Type: application/json", NULL};

void api_util_start(struct musterd *m, const char *config)
{
    char path[] = "/tmp/muster-test-cfg-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, config, strlen(config)), (ssize_t)strlen(config));
    close(fd);
    const char *args[] = {"--config", path, NULL};
    ck_assert_msg(musterd_start(m, NULL, args) == 0, "musterd did not start");
    unlink(path);
}

json_t *api_util_call(const struct musterd *m, const char *method, const char *path,
                      const char *body, const char *const *headers, long want)
{
    struct http_resp r;

    http_request(method, m->base, path, body, headers, &r);
    ck_assert_msg(r.status == want, "%s %s: status %ld, want %ld: %s", method, path, r.status, want,
                  r.body);
    json_t *j = json_incref(r.json);
    http_resp_free(&r);
    return j;
}

const char *api_util_err_code(json_t *j)
{
    return json_string_value(json_object_get(json_object_get(j, "error"), "code"));
}

const char *api_util_err_msg(json_t *j)
{
    return json_string_value(json_object_get(json_object_get(j, "error"), "message"));
}

char *api_util_case_file(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/tests/data/api/%s", getenv("MUSTER_SOURCE_DIR"), rel);
    char *text = test_read_file(path, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    return text;
}

void api_util_apply_case(const struct musterd *m, const char *rel)
{
    char *text = api_util_case_file(rel);
    json_decref(api_util_call(m, "POST", "/api/v1/manifests", text, api_util_yaml, 201));
    free(text);
}

json_int_t api_util_audit_last(const struct musterd *m, const char *const *headers)
{
    json_t *v = api_util_call(m, "GET", "/api/v1/audit/verify", NULL, headers, 200);
    json_int_t to = json_integer_value(json_object_get(v, "to"));
    json_decref(v);
    return to;
}

json_int_t api_util_settle(const struct musterd *m, const char *const *headers)
{
    json_int_t last = -1, now = api_util_audit_last(m, headers);
    for (int i = 0; i < 50 && now != last; i++) {
        struct timespec ts = {0, 150 * 1000 * 1000};
        nanosleep(&ts, NULL);
        last = now;
        now = api_util_audit_last(m, headers);
    }
    ck_assert_int_eq(now, last);
    return now;
}
