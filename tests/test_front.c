/*
 * test_front.c - the front end ahead of civetweb (web/front*.c), over raw sockets against a
 * real musterd with two civetweb workers and one-second limits: slow clients (a trickled
 * head, a trickled body, a silent TLS client, a client that does not read) are cut without
 * holding a worker, requests arrive whole (pipelined, chunked, kept alive, Expect:
 * 100-continue), and what civetweb's side trusts (X-Muster-Front, the client's address)
 * comes only from the front end. Nothing waits on a fixed sleep: every wait polls for its
 * condition with a 30 s deadline.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check_run.h"
#include "http_client.h"
#include "tls_support.h"

/* A bound for a hang: read_until gives up after this long without a byte. */
#define DEADLINE_MS 30000
#define WORKERS 2

static struct musterd md;
static char dir[] = "/tmp/muster-test-front-XXXXXX";

#define NODE(name) "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\"}}"

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void start_with(const char *extra)
{
    char path[400], config[1024];
    snprintf(path, sizeof(path), "%s/config.yaml", dir);
    snprintf(config, sizeof(config), "cycle_interval: 0\nthreads: %d\n%s", WORKERS,
             extra ? extra : "");
    ck_assert_int_eq(test_write_file(path, config), 0);
    const char *args[] = {"--config", path, NULL};
    ck_assert_msg(musterd_start(&md, NULL, args) == 0, "musterd did not start");
}

/* musterd again with extra config: the one-second limits of the tests that reach them
 * (the others keep the defaults, so a loaded machine cannot make them reach one). */
static void restart_with(const char *extra)
{
    musterd_stop(&md);
    musterd_cleanup(&md);
    start_with(extra);
}

#define SHORT_HEAD "http_head_timeout: 1s\n"

static void setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(dir));
    start_with(NULL);
}

static void teardown(void)
{
    musterd_stop(&md);
    musterd_cleanup(&md);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(dir, sizeof(dir), "/tmp/muster-test-front-XXXXXX");
}

/* A TCP connection to port from the loopback address from (NULL: any), with a receive
 * buffer of rcvbuf bytes (0: the default). */
static int connect_buf(int port, const char *from, int rcvbuf)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    ck_assert_int_ge(fd, 0);
    if (rcvbuf)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
    if (from) {
        struct sockaddr_in b = {.sin_family = AF_INET};
        inet_pton(AF_INET, from, &b.sin_addr);
        ck_assert_int_eq(bind(fd, (struct sockaddr *)&b, sizeof(b)), 0);
    }
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

static int connect_from(int port, const char *from)
{
    return connect_buf(port, from, 0);
}

static void send_all(int fd, const char *s, size_t n)
{
    ck_assert_int_eq(send(fd, s, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* Reads until the text holds `until` (NULL: until the close) or DEADLINE_MS pass without a
 * byte. New. */
static char *read_until(int fd, const char *until, int *closed)
{
    char *buf = calloc(1, 1);
    size_t n = 0;
    long end = now_ms() + DEADLINE_MS;

    *closed = 0;
    while (now_ms() < end && !(until && strstr(buf, until))) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) <= 0)
            continue;
        buf = realloc(buf, n + 65536 + 1);
        ssize_t got = recv(fd, buf + n, 65536, 0);
        if (got <= 0) {
            *closed = 1;
            break;
        }
        n += (size_t)got;
        buf[n] = '\0';
        end = now_ms() + DEADLINE_MS; /* a slow answer that keeps coming is not a hang */
    }
    return buf;
}

/* 1 when the server has neither answered nor closed fd: nothing to read now. */
static int still_open(int fd)
{
    char c;
    ssize_t got = recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
    return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

static int status_of(const char *resp)
{
    int status = -1;
    return sscanf(resp, "HTTP/1.%*d %d", &status) == 1 ? status : -1;
}

static long get_status(const char *path)
{
    struct http_resp r;
    http_request("GET", md.base, path, NULL, NULL, &r);
    long st = r.status;
    http_resp_free(&r);
    return st;
}

START_TEST(test_front_slowloris_holds_no_worker)
{
    enum { SLOW = 3 * WORKERS + 2 };
    int fds[SLOW];
    const char *head = "GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";

    /* each sends part of a head and then a byte now and then, well inside the limit */
    for (int i = 0; i < SLOW; i++) {
        fds[i] = connect_from(md.port, NULL);
        send_all(fds[i], head, strlen(head));
    }
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < SLOW; i++)
            send_all(fds[i], "a", 1);
        /* with a worker per connection this would wait for the slow ones' timeouts */
        ck_assert_int_eq(get_status("/healthz"), 200);
    }
    for (int i = 0; i < SLOW; i++)
        ck_assert_msg(still_open(fds[i]), "slow connection %d was answered or closed", i);
    for (int i = 0; i < SLOW; i++)
        close(fds[i]);
}
END_TEST

START_TEST(test_front_head_limit_is_408)
{
    int closed = 0;
    restart_with(SHORT_HEAD);
    int fd = connect_from(md.port, NULL);

    const char *part = "GET /api/v1/nodes HTTP/1.1\r\nHost: 12";
    send_all(fd, part, strlen(part));
    char *resp = read_until(fd, NULL, &closed);
    ck_assert_msg(status_of(resp) == 408, "%.400s", resp);
    ck_assert_ptr_nonnull(strstr(resp, "\"code\":\"RequestTimeout\""));
    ck_assert_ptr_nonnull(strstr(resp, "request head was not complete"));
    ck_assert(closed);
    free(resp);
    close(fd);
}
END_TEST

START_TEST(test_front_trickled_body_is_cut_at_its_total_limit)
{
    const char *head = "POST /api/v1/manifests HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                       "application/json\r\nContent-Length: 100000\r\n\r\n";
    restart_with("http_body_timeout: 1s\n");
    int fd = connect_from(md.port, NULL), sent = 0, closed = 0;
    long end = now_ms() + DEADLINE_MS;

    send_all(fd, head, strlen(head));
    /* a byte every 100 ms: never silent for long, yet the body's whole time runs out */
    while (now_ms() < end) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 100) > 0)
            break;
        if (send(fd, "{", 1, MSG_NOSIGNAL) != 1)
            break;
        sent++;
    }
    char *resp = read_until(fd, NULL, &closed);
    ck_assert_msg(status_of(resp) == 408, "after %d bytes: %.400s", sent, resp);
    ck_assert_ptr_nonnull(strstr(resp, "request body was not complete"));
    ck_assert_int_lt(sent, 100000);
    free(resp);
    close(fd);
}
END_TEST

START_TEST(test_front_pipelined_requests_answer_in_order)
{
    const char *three =
        "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        "GET /api/v1/nodes/none HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        "POST /api/v1/manifests HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
        "application/json\r\nContent-Length: 59\r\nConnection: close\r\n\r\n" NODE("p-1");
    int fd = connect_from(md.port, NULL), closed = 0;

    send_all(fd, three, strlen(three));
    char *resp = read_until(fd, NULL, &closed);
    ck_assert(closed);
    char *a = strstr(resp, "HTTP/1.1 200"), *b = strstr(resp, "HTTP/1.1 404"),
         *c = strstr(resp, "HTTP/1.1 201");
    ck_assert_msg(a && b && c && a < b && b < c, "%.3000s", resp);
    free(resp);
    close(fd);
    ck_assert_int_eq(get_status("/api/v1/nodes/p-1"), 200);
}
END_TEST

/* A JSON array of the nodes big-FROM .. big-(TO - 1), new; *len its length. */
static char *nodes_body(int from, int to, size_t *len)
{
    size_t cap = (size_t)(to - from) * 80 + 8, n = 0;
    char *b = malloc(cap);
    b[n++] = '[';
    for (int i = from; i < to; i++)
        n += (size_t)snprintf(b + n, cap - n, "%s" NODE("big-%05d"), i > from ? "," : "", i);
    b[n++] = ']';
    *len = n;
    return b;
}

/* A POST of body (n bytes) to /api/v1/manifests written at msg + *m: with its length, or
 * chunked in one chunk. */
static void add_post(char *msg, size_t *m, const char *body, size_t n, int chunked)
{
    *m += (size_t)sprintf(msg + *m, "POST /api/v1/manifests HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                    "Content-Type: application/json\r\n");
    *m += (size_t)(chunked ? sprintf(msg + *m, "Transfer-Encoding: chunked\r\n\r\n%zx\r\n", n)
                           : sprintf(msg + *m, "Content-Length: %zu\r\n\r\n", n));
    memcpy(msg + *m, body, n);
    *m += n;
    if (chunked)
        *m += (size_t)sprintf(msg + *m, "\r\n0\r\n\r\n");
}

/* Bodies of several hundred KiB, each sent with its head in one write, and the next
 * request right after the last one's last byte: the front end reads such a body straight
 * from the socket in big reads once its head is handled (body_direct), and the bytes that
 * came with a body's tail are the next request's. A Content-Length body, then a chunked
 * one, then a GET, on one connection, closed by the GET. */
START_TEST(test_front_big_body_then_pipelined_request)
{
    size_t n1, n2, m = 0;
    char *b1 = nodes_body(0, 5000, &n1), *b2 = nodes_body(5000, 10000, &n2);
    char *msg = malloc(n1 + n2 + 4096);
    const char *get =
        "GET /api/v1/nodes/big-09999 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";

    ck_assert_uint_gt(n1, (size_t)256 << 10); /* more than one of the front end's reads */
    add_post(msg, &m, b1, n1, 0);
    add_post(msg, &m, b2, n2, 1);
    m += (size_t)sprintf(msg + m, "%s", get);

    int fd = connect_from(md.port, NULL), closed = 0;
    send_all(fd, msg, m);
    char *resp = read_until(fd, NULL, &closed);
    char *a = strstr(resp, "HTTP/1.1 201"), *b = a ? strstr(a + 1, "HTTP/1.1 201") : NULL,
         *c = b ? strstr(b + 1, "HTTP/1.1 200") : NULL;
    ck_assert_msg(a && b && c, "%.600s", resp);
    ck_assert_ptr_nonnull(strstr(a, "\"big-00000\""));
    ck_assert_ptr_nonnull(strstr(b, "\"big-05000\""));
    ck_assert_ptr_nonnull(strstr(c, "\"big-09999\""));
    ck_assert(closed);
    free(resp);
    close(fd);
    ck_assert_int_eq(get_status("/api/v1/nodes/big-04999"), 200);
    free(msg);
    free(b1);
    free(b2);
}
END_TEST

START_TEST(test_front_chunked_body_and_keep_alive)
{
    const char *post = "POST /api/v1/manifests HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                       "application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    int fd = connect_from(md.port, NULL), closed = 0;

    const char *node = NODE("k-1");
    char chunk[128];
    send_all(fd, post, strlen(post));
    /* the body in two chunks, sent apart, then the last chunk */
    int len = snprintf(chunk, sizeof(chunk), "%x\r\n%.20s\r\n", 20, node);
    send_all(fd, chunk, (size_t)len);
    len = snprintf(chunk, sizeof(chunk), "%zx\r\n%s\r\n0\r\n\r\n", strlen(node) - 20, node + 20);
    send_all(fd, chunk, (size_t)len);
    char *resp = read_until(fd, "\"k-1\"", &closed);
    ck_assert_msg(status_of(resp) == 201, "%.600s", resp);
    ck_assert(!closed);
    free(resp);
    /* the same connection serves the next request */
    const char *get = "GET /api/v1/nodes/k-1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    send_all(fd, get, strlen(get));
    resp = read_until(fd, "}\n", &closed);
    ck_assert_msg(status_of(resp) == 200, "%.600s", resp);
    ck_assert_ptr_nonnull(strstr(resp, "Connection: keep-alive"));
    free(resp);
    close(fd);
}
END_TEST

/* Found by fuzz/fuzz_front.c: a chunked body's trailer fields were forwarded as headers,
 * after the Content-Length the front end writes. */
START_TEST(test_front_trailers_are_not_forwarded)
{
    const char *post = "POST /api/v1/manifests HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                       "application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                       "3b\r\n" NODE("t-1") "\r\n0\r\nHost: evil.example\r\n"
                                            "X-Muster-Front: forged\r\n\r\n";
    int fd = connect_from(md.port, NULL), closed = 0;

    send_all(fd, post, strlen(post));
    char *resp = read_until(fd, NULL, &closed);
    ck_assert_msg(status_of(resp) == 201, "%.600s", resp);
    free(resp);
    close(fd);
}
END_TEST

/* Header bytes http-parser reads differently by where they are cut, or lets through. */
START_TEST(test_front_bare_cr_and_nul_are_refused)
{
    const char *reqs[] = {
        "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\rb\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: \0b\r\n\r\n",
        "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-EncodingX: a\r\n\r\n",
    };
    const size_t lens[] = {strlen(reqs[0]), 51, strlen(reqs[2])};
    const char *why[] = {"CR that does not end a line", "NUL byte", "begins like a framing"};

    for (size_t i = 0; i < 3; i++) {
        int fd = connect_from(md.port, NULL), closed = 0;
        send_all(fd, reqs[i], lens[i]);
        char *resp = read_until(fd, NULL, &closed);
        ck_assert_msg(status_of(resp) == 400 && strstr(resp, why[i]), "%zu: %.600s", i, resp);
        free(resp);
        close(fd);
    }
}
END_TEST

START_TEST(test_front_expect_100_continue)
{
    const char *head = "POST /api/v1/manifests HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                       "application/json\r\nContent-Length: 59\r\nExpect: 100-continue\r\n\r\n";
    int fd = connect_from(md.port, NULL), closed = 0;

    send_all(fd, head, strlen(head));
    char *resp = read_until(fd, "\r\n\r\n", &closed);
    ck_assert_msg(!strcmp(resp, "HTTP/1.1 100 Continue\r\n\r\n"), "%.400s", resp);
    free(resp);
    send_all(fd, NODE("c-1"), 59);
    resp = read_until(fd, "\"c-1\"", &closed);
    ck_assert_msg(status_of(resp) == 201, "%.600s", resp);
    /* one interim answer, civetweb sent none of its own */
    ck_assert_ptr_null(strstr(resp, "100 Continue"));
    free(resp);
    close(fd);
}
END_TEST

START_TEST(test_front_forged_header_and_backend_port_are_refused)
{
    int closed = 0, port = 0;
    const char *forged = "GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Muster-Front: "
                         "00;addr=10.0.0.1;tls=1;cert=CN=admin\r\n\r\n";
    int fd = connect_from(md.port, NULL);

    send_all(fd, forged, strlen(forged));
    char *resp = read_until(fd, NULL, &closed);
    ck_assert_msg(status_of(resp) == 400, "%.400s", resp);
    ck_assert_ptr_nonnull(strstr(resp, "set only by musterd's front end"));
    free(resp);
    close(fd);
    /* civetweb's own port, named in the log, answers nothing without the secret */
    char *log = test_read_file(md.log_file, NULL);
    const char *at = log ? strstr(log, "civetweb behind it on 127.0.0.1:") : NULL;
    ck_assert_ptr_nonnull(at);
    port = atoi(at + strlen("civetweb behind it on 127.0.0.1:"));
    free(log);
    ck_assert_int_gt(port, 0);
    const char *reqs[] = {
        "GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Muster-Front: "
        "0000000000000000000000000000000000000000000000000000000000000000;addr=1.2.3.4;tls=0;"
        "cert=\r\n\r\n",
    };
    for (size_t i = 0; i < 2; i++) {
        fd = connect_from(port, NULL);
        send_all(fd, reqs[i], strlen(reqs[i]));
        resp = read_until(fd, NULL, &closed);
        ck_assert_msg(status_of(resp) == 403, "%zu: %.400s", i, resp);
        ck_assert_ptr_nonnull(strstr(resp, "connect through musterd's listener"));
        free(resp);
        close(fd);
    }
}
END_TEST

START_TEST(test_front_audit_names_the_real_client_address)
{
    int closed = 0;
    const char *post =
        "POST /api/v1/manifests HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
        "application/json\r\nContent-Length: 59\r\nConnection: close\r\n\r\n" NODE("a-1");
    /* from 127.0.0.2: civetweb's peer is always 127.0.0.1, the front end */
    int fd = connect_from(md.port, "127.0.0.2");

    send_all(fd, post, strlen(post));
    char *resp = read_until(fd, NULL, &closed);
    ck_assert_msg(status_of(resp) == 201, "%.400s", resp);
    free(resp);
    close(fd);
    struct http_resp r;
    http_request("GET", md.base, "/api/v1/audit?kind=applied&tail=1", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    json_t *rec = json_loads(r.body, JSON_DISABLE_EOF_CHECK, NULL);
    ck_assert_ptr_nonnull(rec);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(rec, "by"), "address")),
                     "127.0.0.2");
    json_decref(rec);
    http_resp_free(&r);
}
END_TEST

/* 1 once the log holds needle, 0 at the deadline. */
static int log_shows(const char *needle)
{
    for (long end = now_ms() + DEADLINE_MS; now_ms() < end; nap_ms(50)) {
        char *log = test_read_file(md.log_file, NULL);
        int found = log && strstr(log, needle);
        free(log);
        if (found)
            return 1;
    }
    return 0;
}

/* Applies n nodes (big-0000, ...), each padded with an annotation of pad digits, as NDJSON:
 * answers that take many writes to send. */
static void apply_big_nodes(int n, int pad)
{
    char *body = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&body, &len);

    for (int i = 0; i < n; i++)
        fprintf(f,
                "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"big-%04d\","
                "\"annotations\":{\"pad\":\"%0*d\"}}}\n",
                i, pad, i);
    fclose(f);
    const char *hdr[] = {"Content-Type: application/x-ndjson", NULL};
    struct http_resp r;
    http_request_len("POST", md.base, "/api/v1/manifests", body, len, hdr, &r);
    ck_assert_msg(r.status == 201 || r.status == 200, "%ld %.300s", r.status, r.body);
    http_resp_free(&r);
    free(body);
}

START_TEST(test_front_client_that_does_not_read_is_cut)
{
    restart_with("http_write_timeout: 1s\n");
    apply_big_nodes(1000, 60);
    /* many big answers asked for, none read, a small receive buffer */
    int fd = connect_buf(md.port, NULL, 4096);
    const char *get = "GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    for (int i = 0; i < 40; i++)
        send_all(fd, get, strlen(get));
    /* others are answered meanwhile, and the reader that reads nothing is cut */
    for (int i = 0; i < 2 * WORKERS + 1; i++)
        ck_assert_int_eq(get_status("/healthz"), 200);
    ck_assert_msg(log_shows("does not read its answer"), "the slow reader was never cut");
    ck_assert_int_eq(get_status("/api/v1/nodes/big-0001"), 200);
    close(fd);
    /* the same big list, streamed chunked through the relay, arrives whole to a reader */
    struct http_resp all;
    http_request("GET", md.base, "/api/v1/nodes", NULL, NULL, &all);
    ck_assert_int_eq(all.status, 200);
    ck_assert_ptr_nonnull(all.json);
    ck_assert_int_eq(json_array_size(json_object_get(all.json, "items")), 1000);
    ck_assert_int_gt(all.len, 65536);
    http_resp_free(&all);
}
END_TEST

START_TEST(test_front_silent_tls_client_holds_no_worker)
{
    char cert[400], key[400], ca[400], extra[1400];

    musterd_stop(&md);
    musterd_cleanup(&md);
    ck_assert_int_eq(tls_make_ca(dir, "ca"), 0);
    ck_assert_int_eq(tls_make_cert(dir, "srv", "ca", &TLS_VALID), 0);
    snprintf(cert, sizeof(cert), "%s/srv.pem", dir);
    snprintf(key, sizeof(key), "%s/srv.key", dir);
    snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
    snprintf(extra, sizeof(extra), "tls_cert: %s\ntls_key: %s\n" SHORT_HEAD, cert, key);
    start_with(extra);
    enum { SILENT = 3 * WORKERS };
    int fds[SILENT], closed = 0;
    for (int i = 0; i < SILENT; i++)
        fds[i] = connect_from(md.port, NULL);
    /* a real client gets through while they sit in their handshakes */
    struct tls_client o = {.ca = ca};
    struct tls_conn c;
    ck_assert_msg(tls_connect(md.port, &o, &c) == 0, "%s", c.error);
    ck_assert_int_eq(tls_get(&c, "/healthz"), 200);
    tls_close(&c);
    /* and the silent ones are cut at the head limit */
    for (int i = 0; i < SILENT; i++) {
        char *rest = read_until(fds[i], NULL, &closed);
        ck_assert_msg(closed, "silent TLS connection %d is still open", i);
        free(rest);
        close(fds[i]);
    }
}
END_TEST

/* A client that stops reading a big answer for longer than civetweb's own 10 s write
 * limit, and well inside http_write_timeout, still gets all of it. */
START_TEST(test_front_slow_but_alive_reader_gets_the_whole_answer)
{
    int closed = 0;

    apply_big_nodes(5000, 2000);
    int fd = connect_buf(md.port, NULL, 4096);
    const char *get = "GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    send_all(fd, get, strlen(get));
    nap_ms(12000); /* the stall itself is what is tested */
    char *resp = read_until(fd, NULL, &closed);
    ck_assert_msg(status_of(resp) == 200, "%.300s", resp);
    ck_assert_msg(strstr(resp, "big-4999") && strstr(resp, "\r\n0\r\n\r\n"),
                  "the answer was cut after %zu bytes", strlen(resp));
    free(resp);
    close(fd);
}
END_TEST

/* One GET /healthz on fd, kept alive: 1 when answered 200. */
static int healthz_on(int fd)
{
    const char *get = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    int closed = 0;
    if (send(fd, get, strlen(get), MSG_NOSIGNAL) != (ssize_t)strlen(get))
        return 0;
    char *resp = read_until(fd, "}\n", &closed);
    int ok = status_of(resp) == 200;
    free(resp);
    return ok;
}

START_TEST(test_front_connection_cap)
{
    enum { CAP = 4 };
    int fds[CAP];

    musterd_stop(&md);
    musterd_cleanup(&md);
    start_with("http_head_timeout: 30s\nhttp_idle_timeout: 30s\nhttp_max_connections: 4\n");
    for (int i = 0; i < CAP; i++) {
        fds[i] = connect_from(md.port, NULL);
        ck_assert_msg(healthz_on(fds[i]), "connection %d", i);
    }
    /* one more is closed at accept: its request gets no answer */
    int extra = connect_from(md.port, NULL);
    ck_assert_msg(!healthz_on(extra), "a connection over the cap was answered");
    close(extra);
    ck_assert_int_ge(log_shows("connections open (config http_max_connections)"), 1);
    /* one closed: room for a new one */
    close(fds[0]);
    int ok = 0;
    for (long end = now_ms() + DEADLINE_MS; !ok && now_ms() < end; nap_ms(50)) {
        int fd = connect_from(md.port, NULL);
        ok = healthz_on(fd);
        close(fd);
    }
    ck_assert_msg(ok, "no connection was accepted after one closed");
    for (int i = 1; i < CAP; i++)
        close(fds[i]);
}
END_TEST

static Suite *front_suite(void)
{
    Suite *s = suite_create("front");
    TCase *tc = tcase_create("front");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_front_slowloris_holds_no_worker);
    tcase_add_test(tc, test_front_head_limit_is_408);
    tcase_add_test(tc, test_front_trickled_body_is_cut_at_its_total_limit);
    tcase_add_test(tc, test_front_pipelined_requests_answer_in_order);
    tcase_add_test(tc, test_front_chunked_body_and_keep_alive);
    tcase_add_test(tc, test_front_big_body_then_pipelined_request);
    tcase_add_test(tc, test_front_trailers_are_not_forwarded);
    tcase_add_test(tc, test_front_bare_cr_and_nul_are_refused);
    tcase_add_test(tc, test_front_expect_100_continue);
    tcase_add_test(tc, test_front_forged_header_and_backend_port_are_refused);
    tcase_add_test(tc, test_front_audit_names_the_real_client_address);
    tcase_add_test(tc, test_front_client_that_does_not_read_is_cut);
    tcase_add_test(tc, test_front_silent_tls_client_holds_no_worker);
    tcase_add_test(tc, test_front_connection_cap);
    tcase_add_test(tc, test_front_slow_but_alive_reader_gets_the_whole_answer);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(front_suite());
}
