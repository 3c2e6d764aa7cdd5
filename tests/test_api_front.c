/*
 * test_api_front.c - reads the front end answers itself from the read cache
 * (web/front_answer.c), against the same reads relayed to civetweb's workers.
 *
 * The API runs in this process on a scheduler of its own (sched_util), so a test can turn
 * the front end's answers off and on (api_front_answers) and read the same answer both
 * ways, hold the scheduler's lock (sched_hold), and plug in an external authenticator.
 * muster_http_front_answers_total (/metrics) says which way each request went. Every
 * refusal is asserted by its status as well as compared, so a rule removed from both
 * paths at once fails too. Nothing here measures time.
 */
#include <check.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
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
static char tokens_path[128];

static const char cluster[] =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n"
    "status: {allocatable: {cpu: '64', memory: 256Gi, pods: '110'}}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w, namespace: t}\n"
    "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n";

static const char *const viewer[] = {"Authorization: Bearer view-tok", NULL};
static const char *const admin[] = {"Authorization: Bearer admin-tok", NULL};
static const char *const ext_viewer[] = {"Authorization: Bearer ext-tok", NULL};
/* the credential /metrics is read with: one no rate limit applies to */
static const char *const *metrics_auth;

/* "ext-tok" is a viewer, anything else is not valid. */
static int external(void *ctx, const char *token, struct api_identity *out, struct err *err)
{
    (void)ctx;
    if (strcmp(token, "ext-tok") != 0)
        return err_set(err, ERR_UNAUTHORIZED, "unknown token");
    snprintf(out->name, sizeof(out->name), "ext");
    snprintf(out->source, sizeof(out->source), "kubernetes");
    out->role = API_ROLE_VIEWER;
    return 0;
}

static void sha_hex(const char *s, char hex[65])
{
    unsigned char sha[32];
    unsigned int n = 0;
    EVP_Digest(s, strlen(s), sha, &n, EVP_sha256(), NULL);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", sha[i]);
}

/* A tokens file with "view-tok" as viewer "vera" and "admin-tok" as admin "ada" (path in
 * tokens_path). */
static void write_tokens(void)
{
    char v[65], a[65];
    sha_hex("view-tok", v);
    sha_hex("admin-tok", a);
    snprintf(tokens_path, sizeof(tokens_path), "%s/tokens.yaml", u.dir);
    FILE *f = fopen(tokens_path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "tokens:\n  - name: vera\n    role: viewer\n    sha256: %s\n"
            "  - name: ada\n    role: admin\n    sha256: %s\n",
            v, a);
    fclose(f);
}

/* auth: 0 open reads; 1 the tokens file with auth_reads and a rate of 2 reads per identity
 * (refilled once in 1,000 s); 2 an external authenticator with auth_reads, and the tokens
 * file too. */
static void start_with(int auth)
{
    struct api_options o = {.listen = "127.0.0.1:0", .cors_origins = "https://ok.example"};
    struct err err = ERR_INIT;
    sched_util_open(&u, NULL);
    metrics_auth = auth == 2 ? ext_viewer : admin;
    if (auth == 1) {
        write_tokens();
        o.tokens_file = tokens_path;
        o.auth_reads = 1;
        o.rate[API_ROLE_VIEWER] = (struct api_rate){0.001, 2};
    } else if (auth == 2) {
        write_tokens();
        o.tokens_file = tokens_path;
        o.authenticate = external;
        o.auth_reads = 1;
    }
    ck_assert_msg(api_start(&o, u.s, u.st, &api, &err) == 0, "%s", err.msg);
    snprintf(base, sizeof(base), "http://127.0.0.1:%d", api_port(api));
    json_decref(sched_util_apply(&u, cluster, 1000));
    json_decref(sched_util_cycle(&u, 2000));
}

static void start(void)
{
    start_with(0);
}

static void start_tokens(void)
{
    start_with(1);
}

static void start_ext(void)
{
    start_with(2);
}

static void stop(void)
{
    api_stop(api);
    sched_util_close(&u);
}

/* muster_http_front_answers_total (read with metrics_auth: /metrics needs a credential when
 * reads do; it is never answered by the front end). */
static long front_answers(void)
{
    struct http_resp r;
    http_request("GET", base, "/metrics", NULL, metrics_auth, &r);
    ck_assert_msg(r.status == 200, "/metrics: %ld %s", r.status, r.body);
    const char *p = strstr(r.body, "\nmuster_http_front_answers_total ");
    ck_assert_ptr_nonnull(p);
    long v = strtol(p + strlen("\nmuster_http_front_answers_total "), NULL, 10);
    http_resp_free(&r);
    return v;
}

/* The response head without its Date line (the only line that may differ), new. */
static char *head_without_date(const struct http_resp *r)
{
    char *out = calloc(1, strlen(r->headers) + 1);
    size_t n = 0;
    for (const char *l = r->headers; *l;) {
        size_t len = strcspn(l, "\n");
        len += l[len] == '\n';
        if (strncasecmp(l, "Date:", 5) != 0) {
            memcpy(out + n, l, len);
            n += len;
        }
        l += len;
    }
    return out;
}

/* method path with headers, relayed to civetweb (front answers off) then answered by the
 * front end: the same status, head (but Date) and body, and the counter says which way
 * each went when front is 1 (the front end answered the second), 0 (it relayed both).
 * Returns the status. */
static long both_ways(const char *method, const char *path, const char *const *headers, int front)
{
    struct http_resp relayed, direct;
    api_front_answers(api, 0);
    long n0 = front_answers();
    http_request(method, base, path, NULL, headers, &relayed);
    long n1 = front_answers();
    api_front_answers(api, 1);
    http_request(method, base, path, NULL, headers, &direct);
    long n2 = front_answers();
    ck_assert_msg(n1 == n0, "%s %s: answered by the front end while its answers were off", method,
                  path);
    ck_assert_msg(n2 - n1 == front, "%s %s: %s by the front end", method, path,
                  front ? "not answered" : "answered");
    ck_assert_msg(relayed.status == direct.status, "%s %s: %ld relayed, %ld from the front end",
                  method, path, relayed.status, direct.status);
    char *h1 = head_without_date(&relayed), *h2 = head_without_date(&direct);
    ck_assert_msg(!strcmp(h1, h2), "%s %s: heads differ:\n%s---\n%s", method, path, h1, h2);
    ck_assert_msg(relayed.len == direct.len && !memcmp(relayed.body, direct.body, relayed.len),
                  "%s %s: bodies differ (%zu and %zu bytes)", method, path, relayed.len,
                  direct.len);
    free(h1);
    free(h2);
    long status = direct.status;
    http_resp_free(&relayed);
    http_resp_free(&direct);
    return status;
}

/* GET path with headers; the status. */
static long get(const char *path, const char *const *headers)
{
    struct http_resp r;
    http_request("GET", base, path, NULL, headers, &r);
    long status = r.status;
    http_resp_free(&r);
    return status;
}

START_TEST(test_api_front_same_answer_both_ways)
{
    const char *paths[] = {"/api/v1/jobs?resourceVersion=0", "/api/v1/jobs?limit=1",
                           "/api/v1/jobs/t/w?resourceVersion=0", "/api/v1/jobs/t/w/why",
                           "/api/v1/topology?jobs=4&resourceVersion=0"};
    const char *const plain[] = {NULL};
    const char *const gzip[] = {"Accept-Encoding: gzip", NULL};
    const char *const origin[] = {"Origin: https://ok.example", NULL};
    const char *const close[] = {"Connection: close", NULL};
    const char *const *variants[] = {plain, gzip, origin, close};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        for (size_t v = 0; v < sizeof(variants) / sizeof(variants[0]); v++) {
            ck_assert_int_eq(get(paths[i], variants[v]), 200); /* made and cached */
            ck_assert_int_eq(both_ways("GET", paths[i], variants[v], 1), 200);
        }
        ck_assert_int_eq(both_ways("HEAD", paths[i], gzip, 1), 200);
    }
    /* a short audit tail is read on the front end's thread; a long or filtered one is not */
    ck_assert_int_eq(both_ways("GET", "/api/v1/audit?tail=20", NULL, 1), 200);
    ck_assert_int_eq(both_ways("GET", "/api/v1/audit?tail=20", gzip, 1), 200);
    ck_assert_int_eq(both_ways("HEAD", "/api/v1/audit?tail=3", NULL, 1), 200);
    ck_assert_int_eq(both_ways("GET", "/api/v1/audit?tail=101", NULL, 0), 200);
    ck_assert_int_eq(both_ways("GET", "/api/v1/audit?tail=20&kind=cycle", NULL, 0), 200);
    ck_assert_int_eq(both_ways("GET", "/api/v1/audit?tail=0", NULL, 0), 200);
    /* a malformed query parameter: refused, never cached, so always relayed */
    get("/api/v1/jobs?resourceVersion=0&limit=0", NULL);
    ck_assert_int_eq(both_ways("GET", "/api/v1/jobs?resourceVersion=0&limit=0", NULL, 0), 400);
}
END_TEST

/* A GET on a thread of its own, to wait for with a deadline. */

START_TEST(test_api_front_answers_while_the_lock_is_held)
{
    const char *path = "/api/v1/jobs/t/w/why?resourceVersion=0";
    ck_assert_int_eq(get(path, NULL), 200);
    long n0 = front_answers();
    struct sched_hold *h = sched_hold(u.s);
    struct http_bg g;
    http_bg_start(&g, base, path);
    int answered = http_bg_wait(&g, 30000);
    sched_hold_release(h);
    http_bg_wait(&g, 30000);
    long status = g.r.status;
    http_bg_join(&g);
    ck_assert_msg(answered, "a cached read waited for the scheduler's lock");
    ck_assert_int_eq(status, 200);
    ck_assert_int_eq(front_answers(), n0 + 1);
}
END_TEST

START_TEST(test_api_front_miss_is_relayed)
{
    /* never read: nothing cached, made on civetweb's side and cached there */
    long n0 = front_answers();
    ck_assert_int_eq(get("/api/v1/jobs/t/w?resourceVersion=0", NULL), 200);
    ck_assert_int_eq(front_answers(), n0);
    /* stored now, but not gzipped yet: relayed (gzipping a tree is not for this thread) */
    const char *const gzip[] = {"Accept-Encoding: gzip", NULL};
    ck_assert_int_eq(get("/api/v1/jobs/t/w?resourceVersion=0", gzip), 200);
    ck_assert_int_eq(front_answers(), n0);
    ck_assert_int_eq(get("/api/v1/jobs/t/w?resourceVersion=0", gzip), 200);
    ck_assert_int_eq(front_answers(), n0 + 1);
    /* an unknown job: an error, never cached, always relayed */
    ck_assert_int_eq(both_ways("GET", "/api/v1/jobs/t/nope/why?resourceVersion=0", NULL, 0), 404);
    /* routes the cache does not hold */
    ck_assert_int_eq(both_ways("GET", "/api/v1/nodes", NULL, 0), 200);
    /* the probes are always answered by the front end, the same way */
    ck_assert_int_eq(both_ways("GET", "/healthz", NULL, 1), 200);
    ck_assert_int_eq(both_ways("GET", "/readyz", NULL, 1), 200);
}
END_TEST

START_TEST(test_api_front_host_and_origin_refused)
{
    const char *path = "/api/v1/jobs?resourceVersion=0";
    const char *const bad_host[] = {"Host: evil.example", NULL};
    const char *const cross[] = {"Origin: https://evil.example", NULL};
    ck_assert_int_eq(get(path, NULL), 200);
    ck_assert_int_eq(both_ways("GET", path, bad_host, 1), 421);
    ck_assert_int_eq(both_ways("GET", path, cross, 1), 403);
}
END_TEST

START_TEST(test_api_front_identity_and_rate)
{
    const char *path = "/api/v1/jobs?resourceVersion=0";
    const char *const bad[] = {"Authorization: Bearer nope", NULL};
    /* the cache is warmed by the viewer: its first read is made on civetweb's side (one
     * token of its 2), and the front end does not take a second for the same request */
    long n0 = front_answers();
    ck_assert_int_eq(get(path, viewer), 200);
    ck_assert_int_eq(front_answers(), n0);
    ck_assert_int_eq(both_ways("GET", path, NULL, 1), 401);
    ck_assert_int_eq(both_ways("GET", path, bad, 1), 401);
    /* the viewer's second token, answered by the front end; then its rate is spent */
    n0 = front_answers();
    ck_assert_int_eq(get(path, viewer), 200);
    ck_assert_int_eq(front_answers(), n0 + 1);
    ck_assert_int_eq(both_ways("GET", path, viewer, 1), 429);
}
END_TEST

/* Pipelined cached reads from a client that reads nothing until it has sent them all: the
 * front end answers in order and stops reading while FRONT_RELAY_CAP bytes of answers
 * wait (front_conn.c), then reads on as the client takes them; every answer arrives. */
START_TEST(test_api_front_pipelined_answers_wait_for_the_reader)
{
    const char *path = "/api/v1/jobs/t/w/why?resourceVersion=0";
    enum { N = 1500 };
    ck_assert_int_eq(get(path, NULL), 200);
    long n0 = front_answers();
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)api_port(api)),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM, 0), small = 4096;
    /* a small receive buffer: the answers back up into the front end's output at once */
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    char req[256];
    int len = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n", path);
    for (int i = 0; i < N; i++) /* 90 KB: the kernel's buffers take what is not read yet */
        ck_assert_int_eq(write(fd, req, (size_t)len), len);
    size_t cap = (size_t)N * 4096, got = 0, seen = 0, scanned = 0;
    char *all = malloc(cap + 1);
    for (int64_t end = clock_mono_ms() + 30000; got < cap && clock_mono_ms() < end;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 1000) <= 0)
            continue;
        ssize_t n = recv(fd, all + got, cap - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
        all[got] = '\0';
        /* count the status lines that are whole now, from where the last count stopped */
        const char *at = all + scanned;
        for (; (at = strstr(at, "HTTP/1.1 200 OK\r\n")); at += 17)
            seen++;
        scanned = got > 16 ? got - 16 : 0;
        if (seen == N)
            break;
    }
    close(fd);
    free(all);
    ck_assert_uint_eq(seen, N);
    ck_assert_int_eq(front_answers(), n0 + N);
}
END_TEST

/* Sends request on a new connection and returns all that comes back until the server
 * closes it (new), with the Date line taken out. */
static char *raw_exchange(const char *request)
{
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons((uint16_t)api_port(api)),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    ck_assert_int_eq(write(fd, request, strlen(request)), (ssize_t)strlen(request));
    size_t cap = 1 << 20, got = 0;
    char *all = calloc(1, cap + 1);
    for (int64_t end = clock_mono_ms() + 30000; got < cap && clock_mono_ms() < end;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 1000) <= 0)
            continue;
        ssize_t n = recv(fd, all + got, cap - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fd);
    char *date = strstr(all, "\r\nDate: ");
    if (date) {
        char *eol = strstr(date + 2, "\r\n");
        memmove(date, eol, strlen(eol) + 1);
    }
    return all;
}

/* HTTP/1.0, without and with keep-alive: the same bytes both ways, and the connection
 * closes after the answer (the Connection header says so) unless kept alive. */
START_TEST(test_api_front_http10_same_both_ways)
{
    const char *reqs[] = {
        "GET /api/v1/jobs?resourceVersion=0 HTTP/1.0\r\nHost: localhost\r\n\r\n",
        "GET /api/v1/jobs?resourceVersion=0 HTTP/1.1\r\nHost: localhost\r\n"
        "Connection: close\r\n\r\n",
        "GET /api/v1/jobs?resourceVersion=0 HTTP/1.0\r\nHost: evil.example\r\n\r\n",
    };
    ck_assert_int_eq(get("/api/v1/jobs?resourceVersion=0", NULL), 200);
    for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
        api_front_answers(api, 0);
        long n0 = front_answers();
        char *relayed = raw_exchange(reqs[i]);
        api_front_answers(api, 1);
        long n1 = front_answers();
        char *direct = raw_exchange(reqs[i]);
        ck_assert_int_eq(front_answers(), n1 + 1);
        ck_assert_int_eq(n1, n0);
        ck_assert_msg(!strcmp(relayed, direct), "%s: relayed\n%s\n---\nfront end\n%s", reqs[i],
                      relayed, direct);
        ck_assert_ptr_nonnull(strstr(direct, "Connection: close\r\n"));
        free(relayed);
        free(direct);
    }
}
END_TEST

START_TEST(test_api_front_external_authenticator_relays)
{
    const char *path = "/api/v1/jobs?resourceVersion=0";
    ck_assert_int_eq(get(path, ext_viewer), 200);
    ck_assert_int_eq(both_ways("GET", path, ext_viewer, 0), 200);
    /* a token the tokens file knows needs no authenticator: answered on the front end */
    ck_assert_int_eq(both_ways("GET", path, viewer, 1), 200);
    /* one nobody knows is the authenticator's to refuse, on civetweb's side */
    static const char *const unknown[] = {"Authorization: Bearer nobody-tok", NULL};
    ck_assert_int_eq(both_ways("GET", path, unknown, 0), 401);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_front");
    TCase *tc = tcase_create("open");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, start, stop);
    tcase_add_test(tc, test_api_front_same_answer_both_ways);
    tcase_add_test(tc, test_api_front_answers_while_the_lock_is_held);
    tcase_add_test(tc, test_api_front_miss_is_relayed);
    tcase_add_test(tc, test_api_front_host_and_origin_refused);
    tcase_add_test(tc, test_api_front_pipelined_answers_wait_for_the_reader);
    tcase_add_test(tc, test_api_front_http10_same_both_ways);
    suite_add_tcase(s, tc);
    TCase *auth = tcase_create("auth");
    tcase_set_timeout(auth, 120);
    tcase_add_checked_fixture(auth, start_tokens, stop);
    tcase_add_test(auth, test_api_front_identity_and_rate);
    suite_add_tcase(s, auth);
    TCase *ext = tcase_create("external");
    tcase_set_timeout(ext, 120);
    tcase_add_checked_fixture(ext, start_ext, stop);
    tcase_add_test(ext, test_api_front_external_authenticator_relays);
    suite_add_tcase(s, ext);
    return check_run(s);
}
