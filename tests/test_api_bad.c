/*
 * test_api_bad.c - bad input of every kind at the REST API of a real musterd: the right
 * 4xx status, a JSON error naming what is wrong and where, and nothing changed (the audit
 * log's last sequence number is the same after the request as before).
 *
 * Most cases are folders under tests/data/api/bad/<case>/:
 *   request   first line "METHOD PATH" (PATH sent as written, %xx and all), then header
 *             lines; "Authorization: Bearer <token>" is added unless the case has an
 *             Authorization line (a bare "Authorization:" line means: send none)
 *   body      optional, raw bytes; sent with a Content-Length unless a header sets one
 *   status    the expected HTTP status
 *   message   a substring the response body must contain
 * Requests go over a raw socket, so paths, headers and bodies are exactly what the case
 * says (libcurl would normalize some of them). Cases that need generated bodies (deep
 * nesting, oversized heads) or timing (disconnects) are tests below.
 */
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "check_run.h"
#include "api_util.h"

#define TOKEN "s3cret-token"

static struct musterd md;

struct raw_resp {
    int status;
    char *head; /* status line and headers */
    char *body; /* NUL-terminated; may hold a chunked body verbatim */
    size_t body_len;
};

static int connect_md(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)md.port)};
    struct timeval tv = {10, 0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    ck_assert_int_ge(fd, 0);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

/* Sends req (len bytes) and reads until the server closes; status -1 on no reply. */
static void raw_request(const char *req, size_t len, struct raw_resp *out)
{
    int fd = connect_md();
    size_t n = 0, cap = 65536;
    char *buf = malloc(cap + 1);

    for (size_t off = 0; off < len;) {
        ssize_t w = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (w <= 0)
            break; /* the server may answer (413, 400) before reading everything */
        off += (size_t)w;
    }
    for (;;) {
        if (n == cap)
            buf = realloc(buf, (cap *= 2) + 1);
        ssize_t got = recv(fd, buf + n, cap - n, 0);
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    buf[n] = '\0';
    memset(out, 0, sizeof(*out));
    out->status = -1;
    char *sep = strstr(buf, "\r\n\r\n");
    if (sep && sscanf(buf, "HTTP/1.%*d %d", &out->status) == 1) {
        out->head = strndup(buf, (size_t)(sep - buf));
        out->body_len = n - (size_t)(sep + 4 - buf);
        out->body = malloc(out->body_len + 1);
        memcpy(out->body, sep + 4, out->body_len);
        out->body[out->body_len] = '\0';
    } else {
        out->head = strdup("");
        out->body = strdup(buf);
    }
    free(buf);
}

static void raw_free(struct raw_resp *r)
{
    free(r->head);
    free(r->body);
}

static char *source_path(const char *rel)
{
    char *p = NULL;
    ck_assert_int_ge(asprintf(&p, "%s/tests/data/api/%s", getenv("MUSTER_SOURCE_DIR"), rel), 0);
    return p;
}

static const char *const token_auth[] = {"Authorization: Bearer " TOKEN, NULL};

static json_int_t audit_last(void)
{
    return api_util_audit_last(&md, token_auth);
}

/* Waits until the cycle an apply woke is done: the audit log stops growing. */
static void settle(void)
{
    api_util_settle(&md, token_auth);
}

static void start(void)
{
    /* the raw requests below name their Host "musterd" or "m" */
    api_util_start(&md,
                   "cycle_interval: 0\ntoken: " TOKEN "\nallowed_hosts: [musterd, m, 127.0.0.1]\n");
}

static void stop(void)
{
    musterd_cleanup(&md);
}

/* The HTTP request of a case folder (new), its length in *len. */
static char *case_request(const char *dir, size_t *len)
{
    char *path = NULL, *head, *body = NULL, *req = NULL;
    size_t body_len = 0, n = 0;
    FILE *f;

    ck_assert_int_ge(asprintf(&path, "%s/request", dir), 0);
    head = test_read_file(path, NULL);
    ck_assert_msg(head != NULL, "cannot read %s", path);
    free(path);
    ck_assert_int_ge(asprintf(&path, "%s/body", dir), 0);
    body = test_read_file(path, &body_len);
    free(path);

    f = open_memstream(&req, &n);
    char *save = NULL, *line = strtok_r(head, "\n", &save);
    int has_auth = 0, has_length = 0;
    fprintf(f, "%s HTTP/1.1\r\nHost: musterd\r\nConnection: close\r\n", line);
    while ((line = strtok_r(NULL, "\n", &save)) != NULL) {
        if (!strncasecmp(line, "Authorization:", 14)) {
            has_auth = 1;
            if (!line[14])
                continue; /* "send no Authorization header" */
        }
        has_length |= !strncasecmp(line, "Content-Length:", 15) ||
                      !strncasecmp(line, "Transfer-Encoding:", 18);
        fprintf(f, "%s\r\n", line);
    }
    if (!has_auth)
        fprintf(f, "Authorization: Bearer %s\r\n", TOKEN);
    if (body && !has_length)
        fprintf(f, "Content-Length: %zu\r\n", body_len);
    fputs("\r\n", f);
    if (body)
        fwrite(body, 1, body_len, f);
    fclose(f);
    free(head);
    free(body);
    *len = n;
    return req;
}

static char *case_text(const char *dir, const char *name)
{
    char *path = NULL;
    ck_assert_int_ge(asprintf(&path, "%s/%s", dir, name), 0);
    char *text = test_read_file(path, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", path);
    free(path);
    text[strcspn(text, "\n")] = '\0';
    return text;
}

/* The response is a JSON error object: {"error": {"code": "...", "message": "..."}}. */
static void assert_json_error(const char *name, const struct raw_resp *r)
{
    json_error_t jerr;
    json_t *j = json_loads(r->body, 0, &jerr);

    ck_assert_msg(j != NULL, "%s: body is not JSON (%s): %s", name, jerr.text, r->body);
    json_t *e = json_object_get(j, "error");
    ck_assert_msg(json_is_string(json_object_get(e, "code")), "%s: no error.code: %s", name,
                  r->body);
    ck_assert_msg(json_is_string(json_object_get(e, "message")), "%s: no error.message: %s", name,
                  r->body);
    ck_assert_msg(strstr(r->head, "Content-Type: application/json") != NULL,
                  "%s: not application/json: %s", name, r->head);
    json_decref(j);
}

static void run_case(const char *dir, const char *name)
{
    size_t len = 0;
    char *req = case_request(dir, &len);
    char *status = case_text(dir, "status"), *message = case_text(dir, "message");
    struct raw_resp r;
    json_int_t before = audit_last();

    raw_request(req, len, &r);
    ck_assert_msg(r.status == atoi(status), "%s: status %d, want %s: %s", name, r.status, status,
                  r.body);
    assert_json_error(name, &r);
    ck_assert_msg(strstr(r.body, message) != NULL, "%s: body lacks '%s': %s", name, message,
                  r.body);
    ck_assert_msg(audit_last() == before, "%s: the audit log changed", name);
    raw_free(&r);
    free(req);
    free(status);
    free(message);
}

START_TEST(test_api_bad_cases_from_folders)
{
    char *base = source_path("bad");
    struct dirent **names = NULL;
    int n = scandir(base, &names, NULL, alphasort), ran = 0;

    ck_assert_msg(n > 0, "no cases in %s", base);
    for (int i = 0; i < n; i++) {
        if (names[i]->d_name[0] != '.') {
            char *dir = NULL;
            ck_assert_int_ge(asprintf(&dir, "%s/%s", base, names[i]->d_name), 0);
            run_case(dir, names[i]->d_name);
            free(dir);
            ran++;
        }
        free(names[i]);
    }
    free(names);
    free(base);
    ck_assert_int_ge(ran, 50);
    /* and musterd is still there */
    struct http_resp h;
    http_request("GET", md.base, "/healthz", NULL, NULL, &h);
    ck_assert_int_eq(h.status, 200);
    http_resp_free(&h);
}
END_TEST

/* POSTs body as a manifest over the raw socket. */
static void post_manifest(const char *ctype, const char *body, size_t len, struct raw_resp *r)
{
    char *req = NULL;
    int n = asprintf(&req,
                     "POST /api/v1/manifests HTTP/1.1\r\nHost: musterd\r\nConnection: close\r\n"
                     "Authorization: Bearer " TOKEN "\r\nContent-Type: %s\r\n"
                     "Content-Length: %zu\r\n\r\n",
                     ctype, len);
    ck_assert_int_ge(n, 0);
    req = realloc(req, (size_t)n + len);
    memcpy(req + n, body, len);
    raw_request(req, (size_t)n + len, r);
    free(req);
}

static char *repeat(const char *a, int times, const char *mid, const char *b)
{
    size_t la = strlen(a), lm = strlen(mid), lb = strlen(b);
    char *s = malloc((la + lb) * (size_t)times + lm + 1), *p = s;
    for (int i = 0; i < times; i++, p += la)
        memcpy(p, a, la);
    memcpy(p, mid, lm);
    p += lm;
    for (int i = 0; i < times; i++, p += lb)
        memcpy(p, b, lb);
    *p = '\0';
    return s;
}

/* These crashed musterd: civetweb's workers have ~100 KiB stacks and the parsers recurse. */
START_TEST(test_api_bad_deep_documents_are_400_not_a_crash)
{
    struct {
        const char *ctype;
        char *body;
        const char *message;
    } cases[] = {
        {"application/json", repeat("[", 3000, "", "]"), "maximum parsing depth"},
        {"application/json", repeat("{\"a\":", 1500, "1", "}"), "nested more than 64 levels"},
        {"application/yaml", repeat("[", 10000, "", "]"), "nested too deeply"},
        {"application/json", repeat("{\"a\":", 70, "1", "}"),
         "nested more than 64 levels deep at 'a.a.a"},
        {"application/yaml", NULL, "nested more than 64 levels deep at 'a0.a1.a2"},
    };
    /* a block mapping 100 levels deep: 98 levels killed musterd */
    char *yaml = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&yaml, &n);
    for (int i = 0; i < 100; i++)
        fprintf(f, "%*sa%d:\n", 2 * i, "", i);
    fprintf(f, "%*sx: 1\n", 200, "");
    fclose(f);
    cases[4].body = yaml;

    json_int_t before = audit_last();
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct raw_resp r;
        post_manifest(cases[i].ctype, cases[i].body, strlen(cases[i].body), &r);
        ck_assert_msg(r.status == 400, "case %zu: status %d: %.300s", i, r.status, r.body);
        ck_assert_msg(strstr(r.body, cases[i].message), "case %zu: %.300s", i, r.body);
        raw_free(&r);
        free(cases[i].body);
    }
    ck_assert_int_eq(audit_last(), before);
}
END_TEST

START_TEST(test_api_bad_oversized_request_head_is_json_431)
{
    char *path = repeat("a", 20000, "", "");
    char *req = NULL;
    struct raw_resp r;

    /* a 20,000-byte URL */
    ck_assert_int_ge(asprintf(&req, "GET /api/v1/nodes/%s HTTP/1.1\r\nHost: m\r\n\r\n", path), 0);
    raw_request(req, strlen(req), &r);
    ck_assert_int_eq(r.status, 431); /* the front end's: Request Header Fields Too Large */
    assert_json_error("long url", &r);
    ck_assert_ptr_nonnull(strstr(r.body, "over 16384 bytes"));
    raw_free(&r);
    free(req);
    /* a 20,000-byte header */
    ck_assert_int_ge(
        asprintf(&req, "GET /api/v1/nodes HTTP/1.1\r\nHost: m\r\nX-Big: %s\r\n\r\n", path), 0);
    raw_request(req, strlen(req), &r);
    ck_assert_int_eq(r.status, 431);
    assert_json_error("long header", &r);
    raw_free(&r);
    free(req);
    free(path);
}
END_TEST

START_TEST(test_api_bad_disconnects_mid_body_and_mid_stream)
{
    json_int_t before = audit_last();
    struct timespec pause = {0, 100 * 1000 * 1000};

    for (int i = 0; i < 5; i++) {
        /* promises 1,000 bytes, sends 40, goes away */
        int fd = connect_md();
        const char *part = "POST /api/v1/manifests HTTP/1.1\r\nHost: m\r\n"
                           "Authorization: Bearer " TOKEN "\r\nContent-Type: application/json\r\n"
                           "Content-Length: 1000\r\n\r\n{\"apiVersion\":\"v1\",\"kind\":\"Node\",";
        ck_assert_int_gt(send(fd, part, strlen(part), MSG_NOSIGNAL), 0);
        close(fd);
        /* asks for the NDJSON export and goes away before reading it */
        fd = connect_md();
        const char *get = "GET /api/v1/audit HTTP/1.1\r\nHost: m\r\n"
                          "Authorization: Bearer " TOKEN "\r\n\r\n";
        ck_assert_int_gt(send(fd, get, strlen(get), MSG_NOSIGNAL), 0);
        close(fd);
    }
    nanosleep(&pause, NULL);
    struct http_resp h;
    http_request("GET", md.base, "/healthz", NULL, NULL, &h);
    ck_assert_int_eq(h.status, 200);
    http_resp_free(&h);
    ck_assert_int_eq(audit_last(), before);
}
END_TEST

START_TEST(test_api_bad_lenient_forms_that_must_work)
{
    const char *node = "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"cs\"}}";
    const char *charset[] = {"Content-Type: application/json; charset=utf-8",
                             "Authorization: Bearer " TOKEN, NULL};
    const char *upper[] = {"Content-Type: Application/JSON;charset=UTF-8",
                           "Authorization: bearer   " TOKEN "  ", NULL};
    struct http_resp r;

    http_request("POST", md.base, "/api/v1/manifests", node, charset, &r);
    ck_assert_msg(r.status == 201, "charset: %ld %s", r.status, r.body);
    http_resp_free(&r);
    http_request("POST", md.base, "/api/v1/manifests", node, upper, &r);
    ck_assert_msg(r.status == 200, "case-insensitive type and scheme: %ld %s", r.status, r.body);
    http_resp_free(&r);
    /* HEAD on the NDJSON export: headers, no body */
    struct raw_resp raw;
    const char *head = "HEAD /api/v1/audit HTTP/1.1\r\nHost: m\r\nConnection: close\r\n\r\n";
    raw_request(head, strlen(head), &raw);
    ck_assert_int_eq(raw.status, 200);
    ck_assert_uint_eq(raw.body_len, 0);
    raw_free(&raw);
}
END_TEST

/* A cycle closed by a second apply (a -> b stored, then a re-applied naming b) is a 400
 * naming spec.parent and the cycle, and nothing of that manifest is written (its pod is
 * absent, a keeps its parent, the audit log is unchanged). source: volcano's queue webhook
 * (pkg/webhooks/admission/queues/validate) checks the parent on every update that changes
 * it; muster also refuses the cycle that Volcano's tree of names would not notice. */
START_TEST(test_api_bad_queue_cycle_across_applies)
{
    const char *tree = "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: "
                       "a}\n---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
                       "metadata: {name: b}\nspec: {parent: a}\n";
    const char *cycle = "apiVersion: v1\nkind: Pod\nmetadata: {name: cycle-marker}\nspec: "
                        "{containers: [{name: c}]}\n---\napiVersion: scheduling.volcano.sh/"
                        "v1beta1\nkind: Queue\nmetadata: {name: a}\nspec: {parent: b}\n";
    const char *auth[] = {"Authorization: Bearer " TOKEN, NULL};
    struct raw_resp r;
    struct http_resp h;

    post_manifest("application/yaml", tree, strlen(tree), &r);
    ck_assert_msg(r.status == 201, "status %d: %s", r.status, r.body);
    raw_free(&r);
    settle();
    json_int_t before = audit_last();
    post_manifest("application/yaml", cycle, strlen(cycle), &r);
    ck_assert_msg(r.status == 400, "status %d: %s", r.status, r.body);
    json_t *j = json_loads(r.body, 0, NULL), *e = json_object_get(j, "error");
    ck_assert_str_eq(json_string_value(json_object_get(e, "field")), "spec.parent");
    ck_assert_str_eq(json_string_value(json_object_get(e, "message")),
                     "document 2 (Queue a): spec.parent: the queues would form a cycle (a -> b -> "
                     "a): a queue cannot be its own ancestor");
    json_decref(j);
    raw_free(&r);
    ck_assert_int_eq(audit_last(), before);
    http_request("GET", md.base, "/api/v1/pods/default/cycle-marker", NULL, auth, &h);
    ck_assert_int_eq(h.status, 404);
    http_resp_free(&h);
}
END_TEST

static void *cycles_loop(void *arg)
{
    const char *auth[] = {"Authorization: Bearer " TOKEN, NULL};
    for (int i = 0; i < 20; i++) {
        struct http_resp r;
        http_request("POST", md.base, "/api/v1/cycles", "", auth, &r);
        if (r.status != 200)
            *(int *)arg = (int)r.status;
        http_resp_free(&r);
    }
    return NULL;
}

START_TEST(test_api_bad_input_while_cycles_run)
{
    pthread_t t;
    int cycle_failed = 0;
    const char *bad = "apiVersion: v1\nkind: Node\nmetadata:\n  name: Upper\n";

    ck_assert_int_eq(pthread_create(&t, NULL, cycles_loop, &cycle_failed), 0);
    for (int i = 0; i < 20; i++) {
        struct raw_resp r;
        post_manifest("application/yaml", bad, strlen(bad), &r);
        ck_assert_msg(r.status == 400, "status %d: %s", r.status, r.body);
        ck_assert_ptr_nonnull(strstr(r.body, "invalid name 'Upper'"));
        raw_free(&r);
    }
    pthread_join(t, NULL);
    ck_assert_int_eq(cycle_failed, 0);
    struct http_resp r;
    const char *auth[] = {"Authorization: Bearer " TOKEN, NULL};
    http_request("GET", md.base, "/api/v1/nodes/upper", NULL, auth, &r);
    ck_assert_int_eq(r.status, 404);
    http_resp_free(&r);
}
END_TEST

static Suite *api_bad_suite(void)
{
    Suite *s = suite_create("api_bad");
    TCase *tc = tcase_create("bad");
    tcase_add_checked_fixture(tc, start, stop);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_api_bad_cases_from_folders);
    tcase_add_test(tc, test_api_bad_deep_documents_are_400_not_a_crash);
    tcase_add_test(tc, test_api_bad_oversized_request_head_is_json_431);
    tcase_add_test(tc, test_api_bad_disconnects_mid_body_and_mid_stream);
    tcase_add_test(tc, test_api_bad_lenient_forms_that_must_work);
    tcase_add_test(tc, test_api_bad_input_while_cycles_run);
    tcase_add_test(tc, test_api_bad_queue_cycle_across_applies);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(api_bad_suite());
}
