/* test_api_audit.c - the audit routes on a real musterd: the NDJSON export and its
 * filters, tail, and chain verification. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"
#include "check_run.h"

static struct musterd md;

/* No timer: cycles run only after an apply, so a test can wait for the log to settle. */
static void start(void)
{
    api_util_start(&md, "cycle_interval: 0\n");
    api_util_apply_case(&md, "cluster/manifest.yaml");
}

static void stop(void)
{
    musterd_cleanup(&md);
}

static json_t *call(const char *method, const char *path, const char *body,
                    const char *const *headers, long want)
{
    return api_util_call(&md, method, path, body, headers, want);
}

static json_int_t settle(void)
{
    return api_util_settle(&md, NULL);
}

START_TEST(test_api_audit_export_ndjson_with_filters)
{
    json_int_t total = settle();
    struct http_resp r;
    http_request("GET", md.base, "/api/v1/audit", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    char *ct = http_resp_header(&r, "Content-Type");
    ck_assert_str_eq(ct, "application/x-ndjson");
    free(ct);
    char *te = http_resp_header(&r, "Transfer-Encoding");
    ck_assert_ptr_nonnull(te);
    ck_assert_str_eq(te, "chunked");
    free(te);
    int lines = 0;
    json_int_t prev = 0;
    for (char *line = strtok(r.body, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *rec = json_loads(line, 0, NULL);
        ck_assert_msg(rec != NULL, "not JSON: %s", line);
        json_int_t seq = json_integer_value(json_object_get(rec, "seq"));
        ck_assert_int_eq(seq, prev + 1);
        prev = seq;
        json_decref(rec);
        lines++;
    }
    ck_assert_int_eq(lines, total);
    http_resp_free(&r);

    http_request("GET", md.base, "/api/v1/audit?kind=applied", NULL, NULL, &r);
    lines = 0;
    for (char *p = r.body; (p = strchr(p, '\n')); p++)
        lines++;
    ck_assert_int_eq(lines, 7); /* one per document */
    http_resp_free(&r);

    http_request("GET", md.base, "/api/v1/audit?job=team%2Ftrain&kind=applied", NULL, NULL, &r);
    lines = 0;
    for (char *line = strtok(r.body, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *rec = json_loads(line, 0, NULL);
        ck_assert_str_eq(json_string_value(json_object_get(rec, "job")), "team/train");
        ck_assert_str_eq(json_string_value(json_object_get(rec, "kind")), "applied");
        json_decref(rec);
        lines++;
    }
    ck_assert_int_eq(lines, 3); /* the PodGroup and its two pods */
    http_resp_free(&r);

    http_request("GET", md.base, "/api/v1/audit?from=2&limit=3", NULL, NULL, &r);
    ck_assert_ptr_nonnull(strstr(r.body, "\"seq\":2,"));
    lines = 0;
    for (char *p = r.body; (p = strchr(p, '\n')); p++)
        lines++;
    ck_assert_int_eq(lines, 3);
    http_resp_free(&r);

    http_request("GET", md.base,
                 "/api/v1/audit?since=2000-01-01T00:00:00Z&until=2000-01-02T00:00:00Z", NULL, NULL,
                 &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_int_eq(r.len, 0);
    http_resp_free(&r);
}
END_TEST

/* tail=N returns the newest N matching records, oldest first */
START_TEST(test_api_audit_tail)
{
    json_int_t total = settle();
    struct http_resp r;
    http_request("GET", md.base, "/api/v1/audit?tail=3", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    json_int_t want = total - 2;
    for (char *line = strtok(r.body, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *rec = json_loads(line, 0, NULL);
        ck_assert_int_eq(json_integer_value(json_object_get(rec, "seq")), want++);
        json_decref(rec);
    }
    ck_assert_int_eq(want, total + 1);
    http_resp_free(&r);

    /* filtered: the same as the last two lines of the full kind=applied export */
    struct http_resp full;
    http_request("GET", md.base, "/api/v1/audit?kind=applied", NULL, NULL, &full);
    ck_assert_int_eq(full.status, 200);
    char *end = full.body + full.len - 1; /* the final '\n' */
    int nl = 0;
    while (end > full.body && nl < 2)
        if (*--end == '\n')
            nl++;
    const char *last_two = nl == 2 ? end + 1 : full.body;
    http_request("GET", md.base, "/api/v1/audit?kind=applied&tail=2", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_str_eq(r.body, last_two);
    http_resp_free(&full);
    http_resp_free(&r);

    json_t *j = call("GET", "/api/v1/audit?tail=2&from=1", NULL, NULL, 400);
    ck_assert_ptr_nonnull(strstr(api_util_err_msg(j), "'tail'"));
    json_decref(j);
}
END_TEST

/* The records of an NDJSON body: how many, and the seq of the last (0: none). */
static int last_seq(const char *body, json_int_t *seq)
{
    int n = 0;
    *seq = 0;
    for (const char *line = body; line && *line; line = strchr(line, '\n'), line += !!line) {
        json_t *rec = json_loads(line, JSON_DISABLE_EOF_CHECK, NULL);
        ck_assert_msg(rec != NULL, "not JSON: %.80s", line);
        *seq = json_integer_value(json_object_get(rec, "seq"));
        json_decref(rec);
        n++;
    }
    return n;
}

/* GET /api/v1/audit?tail=3, plain and gzipped: the two say the same; the plain body (new). */
static char *tail3(void)
{
    const char *const gz[] = {"Accept-Encoding: gzip", NULL};
    struct http_resp plain, z;
    http_request("GET", md.base, "/api/v1/audit?tail=3", NULL, NULL, &plain);
    http_request("GET", md.base, "/api/v1/audit?tail=3", NULL, gz, &z);
    ck_assert_int_eq(plain.status, 200);
    ck_assert_int_eq(z.status, 200);
    char *enc = http_resp_header(&z, "Content-Encoding"), *vary = http_resp_header(&z, "Vary");
    ck_assert_str_eq(enc, "gzip");
    ck_assert_str_eq(vary, "Accept-Encoding");
    ck_assert_ptr_null(http_resp_header(&plain, "Content-Encoding"));
    size_t len;
    char *text = http_gunzip(z.body, z.len, &len);
    ck_assert_str_eq(text, plain.body);
    free(text);
    free(enc);
    free(vary);
    char *body = strdup(plain.body);
    http_resp_free(&plain);
    http_resp_free(&z);
    return body;
}

/* A short tail of the whole log is kept from one commit to the next (audit.c): a read
 * after a commit has that commit's records, gzipped or not. */
START_TEST(test_api_audit_tail_after_a_commit)
{
    json_int_t total = settle(), seq;
    char *before = tail3(), *again = tail3();
    ck_assert_int_eq(last_seq(before, &seq), 3);
    ck_assert_int_eq(seq, total);
    ck_assert_str_eq(again, before);
    json_decref(call("POST", "/api/v1/manifests",
                     "apiVersion: v1\nkind: Node\nmetadata:\n  name: late\nstatus:\n"
                     "  allocatable:\n    cpu: \"1\"\n",
                     api_util_yaml, 201));
    json_int_t after_total = settle();
    ck_assert_int_gt(after_total, total);
    char *after = tail3();
    ck_assert_int_eq(last_seq(after, &seq), 3);
    ck_assert_int_eq(seq, after_total);
    ck_assert_ptr_nonnull(strstr(after, "\"late\""));
    free(before);
    free(again);
    free(after);
}
END_TEST

START_TEST(test_api_audit_verify)
{
    json_int_t total = settle();
    json_t *j = call("GET", "/api/v1/audit/verify", NULL, NULL, 200);
    ck_assert(json_is_true(json_object_get(j, "ok")));
    ck_assert_int_ge(total, 7);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "checked")), total);
    json_decref(j);
    j = call("GET", "/api/v1/audit/verify?from=2&to=4", NULL, NULL, 200);
    ck_assert(json_is_true(json_object_get(j, "ok")));
    ck_assert_int_eq(json_integer_value(json_object_get(j, "checked")), 3);
    json_decref(j);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_audit");
    TCase *tc = tcase_create("audit");
    tcase_add_checked_fixture(tc, start, stop);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_api_audit_export_ndjson_with_filters);
    tcase_add_test(tc, test_api_audit_tail);
    tcase_add_test(tc, test_api_audit_tail_after_a_commit);
    tcase_add_test(tc, test_api_audit_verify);
    suite_add_tcase(s, tc);
    return check_run(s);
}
