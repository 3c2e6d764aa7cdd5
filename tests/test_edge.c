/*
 * test_edge.c - the hardened HTTP edge of a real musterd, over raw sockets: request
 * smuggling (two Content-Lengths, Content-Length beside Transfer-Encoding, headers civetweb
 * would drop), malformed request lines (absolute-form, "*", bad versions), path tricks (%00,
 * %2F inside a name, encoded dot segments), Host (DNS rebinding) and Origin (cross-site
 * writes), Content-Type on mutations, oversized and slow requests, keep-alive, CORS and
 * the security headers. Every refusal is checked to change nothing: the object the
 * request would have created is absent afterwards.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "check_run.h"
#include "http_client.h"

static struct musterd md;

#define NODE(name) "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\"}}"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void start_with(const char *config)
{
    char path[] = "/tmp/muster-test-edge-XXXXXX";
    int fd = mkstemp(path);

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, config, strlen(config)), (ssize_t)strlen(config));
    close(fd);
    const char *args[] = {"--config", path, NULL};
    ck_assert_msg(musterd_start(&md, NULL, args) == 0, "musterd did not start");
    unlink(path);
}

static void start(void)
{
    start_with("cycle_interval: 0\n");
}

static void stop(void)
{
    musterd_stop(&md);
    musterd_cleanup(&md);
}

static int connect_md(int timeout_s)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)md.port)};
    struct timeval tv = {timeout_s, 0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    ck_assert_int_ge(fd, 0);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

/* Everything the server sends until it closes the connection or stays silent for
 * timeout_s (new, NUL-terminated). *closed says which. */
static char *read_all(int fd, int *closed)
{
    char *buf = NULL;
    size_t n = 0;

    *closed = 0;
    for (;;) {
        buf = realloc(buf, n + 65536 + 1);
        ssize_t got = recv(fd, buf + n, 65536, 0);
        if (got == 0)
            *closed = 1;
        if (got <= 0)
            break;
        n += (size_t)got;
    }
    buf[n] = '\0';
    return buf;
}

/* Sends req and returns all the server answered (new); *closed as read_all. */
static char *exchange(const char *req, size_t len, int timeout_s, int *closed)
{
    int fd = connect_md(timeout_s);
    ck_assert_int_eq(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len);
    char *out = read_all(fd, closed);
    close(fd);
    return out;
}

static int status_of(const char *resp)
{
    int status = -1;
    if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1)
        return -1;
    return status;
}

/* Status lines: "HTTP/1.x " at the start of the reply or of a line. */
static int count_answers(const char *s)
{
    int n = 0;
    for (const char *p = s; *p; p++)
        n += (p == s || p[-1] == '\n') && !strncmp(p, "HTTP/1.", 7);
    return n;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}

/* GET path over libcurl: its status. */
static long get_status(const char *path)
{
    struct http_resp r;
    http_request("GET", md.base, path, NULL, NULL, &r);
    long st = r.status;
    http_resp_free(&r);
    return st;
}

struct edge_case {
    const char *name;
    const char *request; /* "%d" is the port, where a case needs it */
    int status;
    const char *message;   /* a substring of the answer */
    const char *must_miss; /* a node that must not exist afterwards, or NULL */
};

static void run_cases(const struct edge_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct edge_case *c = &cases[i];
        char *req = NULL;
        int closed = 0;
        ck_assert_int_ge(asprintf(&req, c->request, md.port), 0);
        char *resp = exchange(req, strlen(req), 12, &closed);
        ck_assert_msg(status_of(resp) == c->status, "%s: want %d, got: %.600s", c->name, c->status,
                      resp);
        ck_assert_msg(strstr(resp, c->message) != NULL, "%s: no '%s' in: %.600s", c->name,
                      c->message, resp);
        ck_assert_msg(strstr(resp, "Content-Type: application/json") != NULL,
                      "%s: not a JSON error: %.600s", c->name, resp);
        /* a refused request ends its connection: no second answer, whatever followed */
        ck_assert_msg(count_answers(resp) == 1, "%s: more than one answer: %.900s", c->name, resp);
        ck_assert_msg(closed, "%s: the connection stayed open", c->name);
        if (c->must_miss) {
            char *path = NULL;
            ck_assert_int_ge(asprintf(&path, "/api/v1/nodes/%s", c->must_miss), 0);
            ck_assert_msg(get_status(path) == 404, "%s: node '%s' was created", c->name,
                          c->must_miss);
            free(path);
        }
        free(resp);
        free(req);
    }
}

#define POST_HEAD "POST /api/v1/manifests HTTP/1.1\r\nHost: 127.0.0.1\r\n"
#define JSON_CT "Content-Type: application/json\r\n"
/* answers that do not end the connection themselves (not a framing refusal) */
#define CLOSE "Connection: close\r\n"
#define POST_HEAD_EVIL                                                                             \
    "POST /api/v1/manifests HTTP/1.1\r\nHost: evil.example\r\n" JSON_CT                            \
    "Content-Length: 59\r\n\r\n" NODE("h-1")

START_TEST(test_edge_smuggling_is_400_and_closes)
{
    static const struct edge_case cases[] = {
        {"two equal Content-Lengths",
         POST_HEAD JSON_CT "Content-Length: 59\r\nContent-Length: 59\r\n\r\n" NODE("s-1"), 400,
         "more than one Content-Length", "s-1"},
        {"conflicting Content-Lengths",
         POST_HEAD JSON_CT "Content-Length: 59\r\nContent-Length: 0\r\n\r\n" NODE("s-2"), 400,
         "more than one Content-Length", "s-2"},
        {"a Content-Length list", POST_HEAD JSON_CT "Content-Length: 59, 54\r\n\r\n" NODE("s-3"),
         400, "is not a single decimal number", "s-3"},
        {"a signed Content-Length", POST_HEAD JSON_CT "Content-Length: +54\r\n\r\n" NODE("s-4"),
         400, "is not a single decimal number", "s-4"},
        /* CL.TE: a front end that reads Content-Length forwards the smuggled GET as body */
        {"Content-Length and Transfer-Encoding",
         POST_HEAD JSON_CT "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
                           "GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
         400, "both Content-Length and Transfer-Encoding", NULL},
        {"Transfer-Encoding and Content-Length",
         POST_HEAD JSON_CT "Transfer-Encoding: chunked\r\nContent-Length: 64\r\n\r\n"
                           "3b\r\n" NODE("s-5") "\r\n0\r\n\r\n",
         400, "both Content-Length and Transfer-Encoding", "s-5"},
        {"two Transfer-Encodings",
         POST_HEAD JSON_CT "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
                           "3b\r\n" NODE("s-6") "\r\n0\r\n\r\n",
         400, "more than one Transfer-Encoding", "s-6"},
        {"Transfer-Encoding other than chunked",
         POST_HEAD JSON_CT
         "Transfer-Encoding: gzip, chunked\r\n\r\n36\r\n" NODE("s-7") "\r\n0\r\n\r\n",
         400, "unsupported Transfer-Encoding", "s-7"},
        {"a space before the colon", POST_HEAD JSON_CT "Content-Length : 54\r\n\r\n" NODE("s-8"),
         400, "has a space before its colon", "s-8"},
        /* civetweb stops reading headers at a folded line: the Content-Length after it
         * would vanish */
        {"a folded header line",
         POST_HEAD "X-A: a\r\n b\r\n" JSON_CT "Content-Length: 59\r\n\r\n" NODE("s-9"), 400,
         "folded continuation line", "s-9"},
        {"two Host headers", "GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil\r\n\r\n",
         400, "more than one Host", NULL},
    };
    run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}
END_TEST

START_TEST(test_edge_header_block_limits)
{
    char *req = NULL, *headers = NULL;
    size_t n = 0;
    int closed = 0;
    FILE *f = open_memstream(&headers, &n);

    /* civetweb keeps 64 headers and drops the rest without a word: 64 is refused */
    for (int i = 0; i < 70; i++)
        fprintf(f, "X-H%d: v\r\n", i);
    fclose(f);
    ck_assert_int_ge(
        asprintf(&req, "GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\n%s\r\n", headers), 0);
    char *resp = exchange(req, strlen(req), 12, &closed);
    ck_assert_msg(status_of(resp) == 431, "%.400s", resp);
    ck_assert_ptr_nonnull(strstr(resp, "at most 63 headers"));
    free(resp);
    free(req);
    free(headers);
    /* a header block past 16 KiB: 431 from the front end (civetweb answered 400) */
    char *big = malloc(20001);
    memset(big, 'a', 20000);
    big[20000] = '\0';
    ck_assert_int_ge(asprintf(&req,
                              "GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
                              "%s\r\n\r\n",
                              big),
                     0);
    resp = exchange(req, strlen(req), 12, &closed);
    ck_assert_msg(status_of(resp) == 431, "%.400s", resp);
    ck_assert_ptr_nonnull(strstr(resp, "over 16384 bytes"));
    ck_assert(closed);
    free(resp);
    free(req);
    free(big);
}
END_TEST

START_TEST(test_edge_request_lines_are_answered)
{
    static const struct edge_case cases[] = {
        {"absolute-form to this server",
         "GET http://127.0.0.1:%d/api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400,
         "is not a path: musterd is not a proxy", NULL},
        {"absolute-form elsewhere",
         "GET http://evil.example/api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400,
         "is not a path", NULL},
        {"absolute-form POST",
         "POST http://127.0.0.1:%d/api/v1/manifests HTTP/1.1\r\n"
         "Host: 127.0.0.1\r\n" JSON_CT "Content-Length: 59\r\n\r\n" NODE("a-1"),
         400, "is not a path", "a-1"},
        {"asterisk-form", "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400,
         "request target '*'", NULL},
        {"HTTP/2.0 on HTTP/1", "GET /healthz HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n", 505,
         "only HTTP/1.0 and HTTP/1.1", NULL},
        {"HTTP/0.9", "GET /healthz\r\n\r\n", 400, "bad request", NULL},
        {"an unknown method", "BREW /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400,
         "unknown method", NULL},
        {"a space in the target", "GET /api/v1/no des HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 400,
         "a request line that is not", NULL},
    };
    run_cases(cases, sizeof(cases) / sizeof(cases[0]));
}
END_TEST

START_TEST(test_edge_path_tricks)
{
    static const struct edge_case cases[] = {
        {"%00 in a name", "GET /api/v1/nodes/a%%00b HTTP/1.1\r\nHost: 127.0.0.1\r\n" CLOSE "\r\n",
         400, "encoded NUL byte (%00)", NULL},
        {"%00 in a literal segment",
         "GET /api/v1/no%%00des HTTP/1.1\r\nHost: 127.0.0.1\r\n" CLOSE "\r\n", 400,
         "encoded NUL byte", NULL},
        {"%2F inside a name",
         "GET /api/v1/pods/team%%2Fx HTTP/1.1\r\nHost: 127.0.0.1\r\n" CLOSE "\r\n", 400,
         "encoded '/' (%2F)", NULL},
        {"%2f inside a delete",
         "DELETE /api/v1/nodes/e-1%%2fx HTTP/1.1\r\nHost: 127.0.0.1\r\n" CLOSE "\r\n", 400,
         "encoded '/'", NULL},
        {"a bad escape", "GET /api/v1/nodes/a%%zz HTTP/1.1\r\nHost: 127.0.0.1\r\n" CLOSE "\r\n",
         400, "not followed by two hex digits", NULL},
        {"an encoded dot-dot",
         "GET /api/v1/%%2e%%2e/%%2e%%2e/etc HTTP/1.1\r\nHost: 127.0.0.1\r\n" CLOSE "\r\n", 400,
         "'.' or '..' segment", NULL},
    };
    struct http_resp r;

    /* the node e-1 exists, so the %2f delete above must leave it */
    http_request("POST", md.base, "/api/v1/manifests", NODE("e-1"), NULL, &r);
    ck_assert_int_eq(r.status, 201);
    http_resp_free(&r);
    run_cases(cases, sizeof(cases) / sizeof(cases[0]));
    ck_assert_int_eq(get_status("/api/v1/nodes/e-1"), 200);
    /* names are decoded after routing: %2D is '-' */
    ck_assert_int_eq(get_status("/api/v1/nodes/e%2D1"), 200);
}
END_TEST

START_TEST(test_edge_host_must_be_served)
{
    static const struct edge_case cases[] = {
        {"DNS rebinding", "GET /api/v1/nodes HTTP/1.1\r\nHost: evil.example:%d\r\n\r\n", 421,
         "Host 'evil.example", NULL},
        {"rebinding a write", POST_HEAD_EVIL, 421, "is not served here", "h-1"},
        {"no Host", "GET /api/v1/nodes HTTP/1.1\r\n\r\n", 400, "no Host header", NULL},
        {"HTTP/1.0 without Host", "GET /api/v1/nodes HTTP/1.0\r\n\r\n", 400, "no Host header",
         NULL},
        {"a Host that is no name", "GET /api/v1/nodes HTTP/1.1\r\nHost: a/b\r\n\r\n", 400,
         "is not a host name", NULL},
    };
    run_cases(cases, sizeof(cases) / sizeof(cases[0]));
    /* the loopback names are served */
    const char *names[] = {"127.0.0.1", "localhost", "LOCALHOST", "[::1]"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char *req = NULL;
        int closed = 0;
        ck_assert_int_ge(asprintf(&req,
                                  "GET /healthz HTTP/1.1\r\nHost: %s:%d\r\nConnection: "
                                  "close\r\n\r\n",
                                  names[i], md.port),
                         0);
        char *resp = exchange(req, strlen(req), 12, &closed);
        ck_assert_msg(status_of(resp) == 200, "%s: %.300s", names[i], resp);
        free(resp);
        free(req);
    }
}
END_TEST

START_TEST(test_edge_allowed_hosts_config)
{
    int closed = 0;

    start_with("cycle_interval: 0\nallowed_hosts: [muster.example, 10.0.0.7]\n");
    const char *named =
        "GET /api/v1/nodes HTTP/1.1\r\nHost: muster.example\r\nConnection: close\r\n\r\n";
    char *resp = exchange(named, strlen(named), 12, &closed);
    ck_assert_msg(status_of(resp) == 200, "%.300s", resp);
    free(resp);
    /* the list replaces the defaults; a liveness probe to any name is answered */
    const char *probe = "GET /healthz HTTP/1.1\r\nHost: 10.1.2.3:8080\r\nConnection: close\r\n\r\n";
    resp = exchange(probe, strlen(probe), 12, &closed);
    ck_assert_msg(status_of(resp) == 200, "%.300s", resp);
    free(resp);
    const char *lo_nodes =
        "GET /api/v1/nodes HTTP/1.1\r\nHost: 10.1.2.3\r\nConnection: close\r\n\r\n";
    resp = exchange(lo_nodes, strlen(lo_nodes), 12, &closed);
    ck_assert_msg(status_of(resp) == 421, "%.300s", resp);
    free(resp);
    const char *lo = "GET /api/v1/nodes HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    resp = exchange(lo, strlen(lo), 12, &closed);
    ck_assert_msg(status_of(resp) == 421, "%.300s", resp);
    free(resp);
    stop();
}
END_TEST

/* POST /api/v1/manifests from raw headers: the status, and whether node name exists. */
static int post_node(const char *name, const char *headers, int *created)
{
    char *body = NULL, *req = NULL, *path = NULL;
    int closed = 0;

    ck_assert_int_ge(asprintf(&body,
                              "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":"
                              "{\"name\":\"%s\"}}",
                              name),
                     0);
    ck_assert_int_ge(asprintf(&req,
                              "POST /api/v1/manifests HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n%s"
                              "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                              md.port, headers, strlen(body), body),
                     0);
    char *resp = exchange(req, strlen(req), 12, &closed);
    int status = status_of(resp);
    ck_assert_int_ge(asprintf(&path, "/api/v1/nodes/%s", name), 0);
    *created = get_status(path) == 200;
    free(path);
    free(resp);
    free(req);
    free(body);
    return status;
}

START_TEST(test_edge_no_cross_site_writes)
{
    char own[128];
    int created = 0;

    /* what a cross-site page can send without a preflight: no type, text/plain, a form */
    ck_assert_int_eq(post_node("x-1", "", &created), 415);
    ck_assert(!created);
    ck_assert_int_eq(post_node("x-2", "Content-Type: text/plain\r\n", &created), 415);
    ck_assert(!created);
    ck_assert_int_eq(
        post_node("x-3", "Content-Type: application/x-www-form-urlencoded\r\n", &created), 415);
    ck_assert(!created);
    /* a foreign Origin, even with a JSON type */
    ck_assert_int_eq(post_node("x-4", "Origin: http://127.0.0.1:1\r\n" JSON_CT, &created), 403);
    ck_assert(!created);
    ck_assert_int_eq(post_node("x-5", "Origin: null\r\n" JSON_CT, &created), 403);
    ck_assert(!created);
    /* POST /api/v1/cycles with no body needs the type too; reads from a foreign origin
     * are refused */
    char *resp = NULL;
    int closed = 0;
    const char *cyc = "POST /api/v1/cycles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
                      "0\r\nConnection: close\r\n\r\n";
    resp = exchange(cyc, strlen(cyc), 12, &closed);
    ck_assert_msg(status_of(resp) == 415, "%.300s", resp);
    free(resp);
    const char *read = "GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: "
                       "http://evil.example\r\nConnection: close\r\n\r\n";
    resp = exchange(read, strlen(read), 12, &closed);
    ck_assert_msg(status_of(resp) == 403, "%.300s", resp);
    ck_assert_ptr_null(strstr(resp, "Access-Control-Allow-Origin"));
    ck_assert_ptr_null(strstr(resp, "Strict-Transport-Security")); /* HTTP: no HSTS */
    free(resp);
    /* its own origin and a JSON type: created */
    snprintf(own, sizeof(own), "Origin: http://127.0.0.1:%d\r\n" JSON_CT, md.port);
    ck_assert_int_eq(post_node("x-6", own, &created), 201);
    ck_assert(created);
    /* a DELETE without a body needs no type (a browser cannot send one cross-site without
     * a preflight); with a foreign Origin it is refused */
    const char *del_evil = "DELETE /api/v1/nodes/x-6 HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: "
                           "http://evil.example\r\nConnection: close\r\n\r\n";
    resp = exchange(del_evil, strlen(del_evil), 12, &closed);
    ck_assert_msg(status_of(resp) == 403, "%.300s", resp);
    free(resp);
    ck_assert_int_eq(get_status("/api/v1/nodes/x-6"), 200);
    const char *del = "DELETE /api/v1/nodes/x-6 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
                      "close\r\n\r\n";
    resp = exchange(del, strlen(del), 12, &closed);
    ck_assert_msg(status_of(resp) == 200, "%.300s", resp);
    free(resp);
    /* no CORS unless configured: a preflight is not answered with CORS headers */
    const char *pre = "OPTIONS /api/v1/manifests HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: "
                      "http://evil.example\r\nAccess-Control-Request-Method: POST\r\n"
                      "Connection: close\r\n\r\n";
    resp = exchange(pre, strlen(pre), 12, &closed);
    ck_assert_msg(status_of(resp) == 403, "%.300s", resp);
    ck_assert_ptr_null(strstr(resp, "Access-Control-Allow"));
    free(resp);
}
END_TEST

START_TEST(test_edge_cors_when_configured)
{
    int closed = 0, created = 0;

    start_with("cycle_interval: 0\ncors_origins: https://ui.example\n");
    const char *pre = "OPTIONS /api/v1/manifests HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: "
                      "https://ui.example\r\nAccess-Control-Request-Method: POST\r\n"
                      "Access-Control-Request-Headers: content-type\r\nConnection: close\r\n\r\n";
    char *resp = exchange(pre, strlen(pre), 12, &closed);
    ck_assert_msg(status_of(resp) == 204, "%.400s", resp);
    ck_assert_ptr_nonnull(strstr(resp, "Access-Control-Allow-Origin: https://ui.example"));
    ck_assert_ptr_nonnull(strstr(resp, "Access-Control-Allow-Methods: POST"));
    free(resp);
    ck_assert_int_eq(post_node("c-1", "Origin: https://ui.example\r\n" JSON_CT, &created), 201);
    ck_assert(created);
    ck_assert_int_eq(post_node("c-2", "Origin: https://other.example\r\n" JSON_CT, &created), 403);
    ck_assert(!created);
    stop();
}
END_TEST

START_TEST(test_edge_keep_alive_and_security_headers)
{
    int closed = 0;
    /* a header with an empty value is fine */
    const char *two = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Empty:\r\n\r\n"
                      "GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                      "GET /api/v1/nodes/none HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
                      "close\r\n\r\n";
    char *resp = exchange(two, strlen(two), 12, &closed);

    /* three answers on one connection: the first two keep it alive */
    ck_assert_msg(count_answers(resp) == 3, "%.2000s", resp);
    ck_assert_int_eq(count(resp, "Connection: keep-alive"), 2);
    ck_assert(closed);
    /* every answer (API, UI file, error) carries the security headers */
    ck_assert_int_eq(count(resp, "X-Content-Type-Options: nosniff"), 3);
    ck_assert_int_eq(count(resp, "frame-ancestors 'none'"), 3);
    ck_assert_int_eq(count(resp, "Referrer-Policy: no-referrer"), 3);
    ck_assert_int_eq(count(resp, "script-src 'self';"), 3);
    ck_assert_ptr_null(strstr(resp, "Access-Control-Allow-Origin"));
    free(resp);
    /* and civetweb's own refusals */
    const char *v2 = "GET /healthz HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n";
    resp = exchange(v2, strlen(v2), 12, &closed);
    ck_assert_ptr_nonnull(strstr(resp, "X-Content-Type-Options: nosniff"));
    free(resp);
}
END_TEST

START_TEST(test_edge_oversized_body_is_413)
{
    int closed = 0;

    start_with("cycle_interval: 0\nbody_limit: 1Ki\n");
    char *req = NULL;
    ck_assert_int_ge(asprintf(&req, POST_HEAD JSON_CT "Content-Length: 100000\r\n\r\n{"), 0);
    /* the client never sends the rest: read the answer, not wait for the close */
    char *resp = exchange(req, strlen(req), 2, &closed);
    ck_assert_msg(status_of(resp) == 413, "%.400s", resp);
    ck_assert_ptr_nonnull(strstr(resp, "exceeds the limit of 1024 bytes"));
    free(resp);
    free(req);
    stop();
}
END_TEST

/* A slowloris client: sends the request head one byte every 2 seconds, never finishing.
 * musterd cuts it off after request_timeout_ms (10 s) counted from the request's start,
 * however steadily it trickles; the time is printed, and bounded loosely. */
START_TEST(test_edge_slowloris_is_cut_off)
{
    const char *head = "GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaa";
    int fd = connect_md(1);
    double t0 = now_s(), cut = -1;

    for (size_t i = 0; head[i] && now_s() - t0 < 40; i++) {
        if (send(fd, head + i, 1, MSG_NOSIGNAL) != 1) {
            cut = now_s() - t0;
            break;
        }
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 2000) > 0) { /* the server answered or closed */
            cut = now_s() - t0;
            break;
        }
    }
    close(fd);
    printf("slowloris: cut off after %.1f s\n", cut);
    ck_assert_msg(cut > 0, "a client trickling its head was never cut off");
    ck_assert_msg(cut < 20, "cut off only after %.1f s", cut);
    ck_assert_int_eq(get_status("/healthz"), 200);
}
END_TEST

static Suite *edge_suite(void)
{
    Suite *s = suite_create("edge");
    TCase *tc = tcase_create("edge");
    tcase_add_checked_fixture(tc, start, stop);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_edge_smuggling_is_400_and_closes);
    tcase_add_test(tc, test_edge_header_block_limits);
    tcase_add_test(tc, test_edge_request_lines_are_answered);
    tcase_add_test(tc, test_edge_path_tricks);
    tcase_add_test(tc, test_edge_host_must_be_served);
    tcase_add_test(tc, test_edge_no_cross_site_writes);
    tcase_add_test(tc, test_edge_keep_alive_and_security_headers);
    tcase_add_test(tc, test_edge_slowloris_is_cut_off);
    suite_add_tcase(s, tc);
    TCase *cfg = tcase_create("config");
    tcase_set_timeout(cfg, 120);
    tcase_add_test(cfg, test_edge_allowed_hosts_config);
    tcase_add_test(cfg, test_edge_cors_when_configured);
    tcase_add_test(cfg, test_edge_oversized_body_is_413);
    suite_add_tcase(s, cfg);
    return s;
}

int main(void)
{
    return check_run(edge_suite());
}
