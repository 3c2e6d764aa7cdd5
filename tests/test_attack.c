/*
 * test_attack.c - musterd under attack (issue 29), one test per attack, each against a real
 * musterd on a real port and each asserting the limit that holds it: a TLS session cannot
 * outlive the client CA it was made under; bodies nobody may send take no memory, and all
 * bodies in flight share one budget; slow readers freeze neither /healthz nor the workers,
 * and their answers are bounded; an alias bomb is refused before it grows; an audit record
 * edited before the newest checkpoint is found on start, and `audit verify` agrees; capacity
 * sums do not wrap.
 *
 * MUSTER_BIN_DIR picks the musterd under test, so the same suite runs against an older
 * binary to show what each fix changed (the figures it prints, "attack: ...", are peak RSS
 * and latencies). Every wait polls with a deadline; the suite runs in well under a minute.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "audit_support.h"
#include "check_run.h"
#include "cli_support.h"
#include "http_client.h"
#include "tls_support.h"

#define now_ms test_now_ms
#define nap_ms test_nap_ms

static struct musterd md;
static char dir[64];

static const char *path(const char *name)
{
    static char buf[8][160];
    static int i;
    char *p = buf[i++ % 8];
    snprintf(p, sizeof(buf[0]), "%s/%s", dir, name);
    return p;
}

static void setup(void)
{
    signal(SIGPIPE, SIG_IGN);
    snprintf(dir, sizeof(dir), "/tmp/muster-test-attack-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    musterd_cleanup(&md);
    /* the certificates and config: files only, one level */
    char *names[] = {"ca.pem",      "ca.key",      "other.pem",   "other.key",
                     "server.pem",  "server.key",  "alice.pem",   "alice.key",
                     "clients.pem", "tokens.yaml", "config.yaml", NULL};
    for (int i = 0; names[i]; i++)
        unlink(path(names[i]));
    rmdir(dir);
}

/* musterd with config text (cycle_interval 0 added) and extra args (may be NULL). */
static void start(const char *config, const char *const *extra)
{
#ifdef __SANITIZE_ADDRESS__
    /* ASan keeps freed memory in a quarantine (256 MB by default), so peak RSS would count
     * every allocation ever made; a small one makes it measure what is held at once */
    const char *was = getenv("ASAN_OPTIONS");
    char opts[512];
    snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=1", was ? was : "", was ? ":" : "");
    setenv("ASAN_OPTIONS", opts, 1);
#endif
    char text[4096];
    const char *args[16] = {"--config", path("config.yaml")};
    size_t n = 2;

    snprintf(text, sizeof(text), "cycle_interval: 0\n%s", config ? config : "");
    ck_assert_int_eq(test_write_file(path("config.yaml"), text), 0);
    for (size_t i = 0; extra && extra[i] && n < 15; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    ck_assert_msg(musterd_start(&md, NULL, args) == 0, "musterd did not start");
}

/* A line of musterd's /proc status in kB ("VmHWM:", "VmRSS:"). */
static long status_kb(const char *field)
{
    char file[64], line[256];
    long kb = -1;
    snprintf(file, sizeof(file), "/proc/%d/status", (int)md.pid);
    FILE *f = fopen(file, "r");
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, field, strlen(field)))
            kb = atol(line + strlen(field));
    if (f)
        fclose(f);
    return kb;
}

static int wait_log(const char *needle, int n)
{
    for (long end = now_ms() + 30000; now_ms() < end; nap_ms(50))
        if (test_count_in_file(md.log_file, needle) >= n)
            return 1;
    return 0;
}

/* A plain TCP connection to musterd, non-blocking. */
static int dial(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)md.port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
    return fd;
}

/* The status of the answer waiting on fd, 0 when none (yet), -1 when closed without one. */
static int status_of(int fd)
{
    char buf[256];
    int status = 0;
    ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_PEEK);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
        return -1;
    if (n < 12)
        return 0;
    buf[n] = '\0';
    return sscanf(buf, "HTTP/1.%*d %d", &status) == 1 ? status : -1;
}

/* ---- 1. a revoked client certificate resumes its session ---- */

#define CYCLE                                                                                      \
    "POST /api/v1/cycles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"        \
    "Content-Length: 0\r\n\r\n"

/* A cycle over c, kept alive; its status. With TLS 1.3 the tickets come with the answer. */
static int tls_cycle(struct tls_conn *c)
{
    char out[4096];
    size_t got = 0;
    int k, status = -1;

    if (SSL_write(c->ssl, CYCLE, (int)strlen(CYCLE)) <= 0)
        return -1;
    while (got + 1 < sizeof(out) && !strstr(out, "\r\n\r\n") &&
           (k = SSL_read(c->ssl, out + got, (int)(sizeof(out) - 1 - got))) > 0) {
        got += (size_t)k;
        out[got] = '\0';
    }
    out[got] = '\0';
    return sscanf(out, "HTTP/1.%*d %d", &status) == 1 ? status : -1;
}

START_TEST(test_attack_resumed_session_after_the_ca_is_replaced)
{
    char tokens[256];
    struct tls_conn c, kept;

    ck_assert_int_eq(tls_make_ca(dir, "ca"), 0);
    ck_assert_int_eq(tls_make_ca(dir, "other"), 0);
    ck_assert_int_eq(tls_make_cert(dir, "server", "ca", &TLS_VALID), 0);
    ck_assert_int_eq(tls_make_cert(dir, "alice", "ca", &TLS_CLIENT), 0);
    ck_assert_int_eq(tls_replace_file(path("ca.pem"), path("clients.pem")), 0);
    snprintf(tokens, sizeof(tokens),
             "tokens:\n  - {name: alice-robot, role: operator, subject: CN=alice}\n");
    ck_assert_int_eq(test_write_file(path("tokens.yaml"), tokens), 0);
    start(NULL, (const char *[]){"--tls-cert", path("server.pem"), "--tls-key", path("server.key"),
                                 "--tls-client-ca", path("clients.pem"), "--tokens-file",
                                 path("tokens.yaml"), NULL});
    struct tls_client alice = {.ca = path("ca.pem"),
                               .cert = path("alice.pem"),
                               .key = path("alice.key"),
                               .min_version = TLS1_3_VERSION};
    ck_assert_msg(tls_connect(md.port, &alice, &c) == 0, "%s", c.error);
    ck_assert_int_eq(tls_cycle(&c), 200);
    void *sess = tls_session(&c);
    ck_assert_ptr_nonnull(sess);
    tls_close(&c);
    /* while the CA stands, the session resumes without a certificate: resumption works */
    struct tls_client thief = {
        .ca = path("ca.pem"), .min_version = TLS1_3_VERSION, .session = sess};
    ck_assert_msg(tls_connect(md.port, &thief, &c) == 0, "%s", c.error);
    ck_assert_int_eq(tls_resumed(&c), 1);
    ck_assert_int_eq(tls_cycle(&c), 200);
    tls_close(&c);
    ck_assert_msg(tls_connect(md.port, &alice, &kept) == 0, "%s", kept.error);
    ck_assert_int_eq(tls_cycle(&kept), 200);

    /* alice is revoked: the client CA is replaced by one that never signed her */
    ck_assert_int_eq(tls_replace_file(path("other.pem"), path("clients.pem")), 0);
    kill(md.pid, SIGHUP);
    ck_assert(wait_log("TLS reloaded", 1));
    /* the old session is not resumed, and without a certificate there is no handshake */
    int refused = 0, resumed = 0, status = -1;
    if (tls_connect(md.port, &thief, &c) == 0) {
        resumed = tls_resumed(&c);
        status = tls_cycle(&c); /* TLS 1.3: a missing certificate is refused after Finished */
        refused = status != 200;
        tls_close(&c);
    } else {
        refused = 1;
    }
    fprintf(stderr, "attack: session resumed after the CA was replaced: %s, cycle %d\n",
            resumed ? "yes" : "no", status);
    ck_assert_msg(refused && !resumed, "a session of the replaced CA resumed (cycle %d)", status);
    /* nor does her certificate make a new handshake */
    if (tls_connect(md.port, &alice, &c) == 0) {
        ck_assert_int_ne(tls_cycle(&c), 200);
        tls_close(&c);
    }
    /* and a connection kept alive from before is closed at its next request */
    ck_assert_int_ne(tls_cycle(&kept), 200);
    tls_close(&kept);
    tls_session_free(sess);
}
END_TEST

/* ---- 2. bodies held by clients who may not send them ---- */

#define FLOOD_CONNS 40
#define FLOOD_BODY (16 * 1000 * 1000)

/* FLOOD_CONNS connections each send a head with auth (a header line or "") and all of a
 * FLOOD_BODY-byte body but its last byte, and hold it. Counts the answers by status in
 * got[0] (401), got[1] (503), got[2] (none: the body is held); the peak RSS growth in MB. */
static long flood(const char *auth, int got[3])
{
    static char chunk[256 * 1024];
    int fd[FLOOD_CONNS];
    size_t sent[FLOOD_CONNS] = {0}, head_len;
    char head[512];
    long before = status_kb("VmHWM:");

    memset(chunk, '{', sizeof(chunk));
    head_len = (size_t)snprintf(head, sizeof(head),
                                "POST /api/v1/manifests HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                "Content-Type: application/json\r\n%sContent-Length: %d\r\n\r\n",
                                auth, FLOOD_BODY);
    for (int i = 0; i < FLOOD_CONNS; i++) {
        fd[i] = dial();
        ck_assert_int_eq(send(fd[i], head, head_len, MSG_NOSIGNAL), (ssize_t)head_len);
    }
    /* push the bodies round-robin until each is sent (but a byte) or refused */
    for (long end = now_ms() + 20000, busy = 1; busy && now_ms() < end;) {
        busy = 0;
        for (int i = 0; i < FLOOD_CONNS; i++) {
            if (sent[i] >= FLOOD_BODY - 1 || fd[i] < 0 || status_of(fd[i]) != 0)
                continue;
            size_t n = FLOOD_BODY - 1 - sent[i];
            ssize_t k = send(fd[i], chunk, n < sizeof(chunk) ? n : sizeof(chunk),
                             MSG_NOSIGNAL | MSG_DONTWAIT);
            if (k > 0)
                sent[i] += (size_t)k;
            else if (errno != EAGAIN && errno != EWOULDBLOCK)
                sent[i] = FLOOD_BODY; /* refused and reset */
            busy = 1;
        }
        if (busy)
            poll(NULL, 0, 1);
    }
    nap_ms(300);
    long grew = (status_kb("VmHWM:") - before) / 1024;
    got[0] = got[1] = got[2] = 0;
    for (int i = 0; i < FLOOD_CONNS; i++) {
        int st = status_of(fd[i]);
        got[st == 401 ? 0 : st == 503 ? 1 : 2]++;
        close(fd[i]);
    }
    return grew;
}

START_TEST(test_attack_bodies_without_a_credential)
{
    int got[3];

    start("token: s3cret\n", NULL);
    long grew = flood("", got);
    fprintf(stderr,
            "attack: %d unauthenticated 16 MB bodies: %d answered 401, %d held; peak RSS +%ld "
            "MB\n",
            FLOOD_CONNS, got[0], got[2], grew);
    /* refused from the head: no body is read, none is held */
    ck_assert_int_eq(got[0], FLOOD_CONNS);
    ck_assert_msg(grew < 32, "peak RSS grew by %ld MB", grew);
}
END_TEST

START_TEST(test_attack_bodies_share_one_budget)
{
    int got[3];

    start(NULL, NULL); /* http_body_memory: 64Mi, the default */
    long grew = flood("", got);
    fprintf(stderr,
            "attack: %d anonymous 16 MB bodies held (no auth): %d answered 503, %d held; peak RSS "
            "+%ld MB\n",
            FLOOD_CONNS, got[1], got[2], grew);
    /* at most 64 MiB of bodies: four of 16 MB, the rest refused at their head */
    ck_assert_int_le(got[2], 4);
    ck_assert_int_ge(got[1], FLOOD_CONNS - 4);
    ck_assert_msg(grew < 64 + 48, "peak RSS grew by %ld MB", grew);
    /* and a small request still gets through once they are gone */
    struct http_resp r;
    http_request("GET", md.base, "/healthz", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    http_resp_free(&r);
}
END_TEST

/* ---- 3. slow readers ---- */

#define SLOW_READERS 12

/* A request that lasts ms milliseconds at most: its status, its time in *ms. */
static long timed(const char *method, const char *path, long *ms)
{
    struct http_resp r;
    const char *hdr[] = {"Content-Type: application/json", NULL};
    long t0 = now_ms();
    http_request(method, md.base, path, !strcmp(method, "POST") ? "{}" : NULL, hdr, &r);
    *ms = now_ms() - t0;
    long status = r.status;
    http_resp_free(&r);
    return status;
}

START_TEST(test_attack_slow_readers_of_a_big_list)
{
    const int pods = 150, note = 64 * 1024;
    size_t cap = (size_t)pods * (note + 256) + 64, n = 0;
    char *body = malloc(cap), *big = malloc((size_t)note + 1);
    int fd[SLOW_READERS];

    memset(big, 'x', (size_t)note);
    big[note] = '\0';
    for (int i = 0; i < pods; i++)
        n += (size_t)snprintf(body + n, cap - n,
                              "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d, "
                              "annotations: {a: %s}}\nspec: {containers: [{name: c}]}\n",
                              i, big);
    start("threads: 4\nhttp_write_timeout: 20s\n", NULL);
    struct http_resp r;
    const char *hdr[] = {"Content-Type: application/yaml", NULL};
    http_request_len("POST", md.base, "/api/v1/manifests", body, n, hdr, &r);
    ck_assert_msg(r.status == 201, "%ld %s", r.status, r.body);
    http_resp_free(&r);
    long before = status_kb("VmHWM:");
    /* readers of a 10 MB list that never read a byte */
    const char *req = "GET /api/v1/pods HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    for (int i = 0; i < SLOW_READERS; i++) {
        int small = 4096;
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)md.port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fd[i] = socket(AF_INET, SOCK_STREAM, 0);
        setsockopt(fd[i], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
        ck_assert_int_eq(connect(fd[i], (struct sockaddr *)&a, sizeof(a)), 0);
        ck_assert_int_eq(send(fd[i], req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    }
    nap_ms(1000);
    long health_ms = 0, cycle_ms = 0;
    long health = timed("GET", "/healthz", &health_ms);
    long cycle = timed("POST", "/api/v1/cycles", &cycle_ms);
    long grew = (status_kb("VmHWM:") - before) / 1024;
    fprintf(stderr,
            "attack: %d slow readers of a %zu MB list, 4 workers: /healthz %ld in %ld ms, "
            "a cycle %ld in %ld ms; peak RSS +%ld MB\n",
            SLOW_READERS, n >> 20, health, health_ms, cycle, cycle_ms, grew);
    ck_assert_int_eq(health, 200);
    ck_assert_msg(health_ms < 1000, "/healthz took %ld ms", health_ms);
    ck_assert_int_eq(cycle, 200);
    /* a liveness bound, not a timing: the slow readers must not hold the cycle (it took 1.7 s
     * on a quiet 2-core machine, 5.2 s once at a load average of 10) */
    ck_assert_msg(cycle_ms < 15000, "a cycle took %ld ms", cycle_ms);
    ck_assert_msg(grew < 256, "peak RSS grew by %ld MB", grew);
    for (int i = 0; i < SLOW_READERS; i++)
        close(fd[i]);
    free(big);
    free(body);
}
END_TEST

/* ---- 4. an alias bomb of bytes, not of nodes ---- */

START_TEST(test_attack_alias_bomb_of_a_big_string)
{
    const size_t str = 1024 * 1024, aliases = 2000;
    size_t cap = str + aliases * 4 + 256, n = 0;
    char *body = malloc(cap);

    n += (size_t)snprintf(body + n, cap - n,
                          "apiVersion: v1\nkind: Node\nmetadata:\n  name: bomb\n  annotations:\n"
                          "    a: &s \"");
    memset(body + n, 'x', str);
    n += str;
    n += (size_t)snprintf(body + n, cap - n, "\"\n    b: [*s");
    for (size_t i = 1; i < aliases; i++)
        n += (size_t)snprintf(body + n, cap - n, ",*s");
    n += (size_t)snprintf(body + n, cap - n, "]\n");
    start(NULL, NULL);
    long before = status_kb("VmHWM:");
    long t0 = now_ms();
    struct http_resp r;
    const char *hdr[] = {"Content-Type: application/yaml", NULL};
    http_request_len("POST", md.base, "/api/v1/manifests", body, n, hdr, &r);
    long ms = now_ms() - t0, grew = status_kb("VmHWM:") - before;
    fprintf(stderr,
            "attack: alias bomb (%zu bytes, %zu aliases of 1 MiB): %ld in %ld ms, peak RSS "
            "+%ld MB\n",
            n, aliases, r.status, ms, grew / 1024);
    ck_assert_int_eq(r.status, 400);
    ck_assert_msg(strstr(r.body, "alias bomb") && strstr(r.body, "'*s'"), "%s", r.body);
    ck_assert_msg(grew < 64 * 1024, "peak RSS grew by %ld MB", grew / 1024);
    http_resp_free(&r);
    free(body);
}
END_TEST

/* ---- 6. capacity sums that wrap ---- */

START_TEST(test_attack_capacity_sums_do_not_wrap)
{
    /* 1Pi is the most a node may claim; 8,200 such nodes pass INT64_MAX bytes in all */
    const int nodes = 8200;
    size_t cap = (size_t)nodes * 128 + 1024, n = 0;
    char *body = malloc(cap);
    struct http_resp r;
    const char *hdr[] = {"Content-Type: application/yaml", NULL};

    start(NULL, NULL);
    /* more than a node may claim is refused, naming the field */
    const char *huge = "apiVersion: v1\nkind: Node\nmetadata: {name: huge}\n"
                       "status: {allocatable: {cpu: '4', memory: 7Ei}}\n";
    http_request("POST", md.base, "/api/v1/manifests", huge, hdr, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_msg(strstr(r.body, "status.allocatable.memory") && strstr(r.body, "1Pi"), "%s",
                  r.body);
    http_resp_free(&r);
    for (int i = 0; i < nodes; i++)
        n += (size_t)snprintf(body + n, cap - n,
                              "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%d}\n"
                              "status: {allocatable: {cpu: '64', memory: 1Pi, pods: '110'}}\n",
                              i);
    n +=
        (size_t)snprintf(body + n, cap - n,
                         "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
                         "spec: {containers: [{name: c, resources: {requests: {memory: 1Gi}}}]}\n");
    http_request_len("POST", md.base, "/api/v1/manifests", body, n, hdr, &r);
    ck_assert_msg(r.status == 201, "%ld %s", r.status, r.body);
    http_resp_free(&r);
    http_request("POST", md.base, "/api/v1/cycles", "{}",
                 (const char *[]){"Content-Type: application/json", NULL}, &r);
    ck_assert_int_eq(r.status, 200);
    http_resp_free(&r);
    http_request("GET", md.base, "/api/v1/pods/default/p", NULL, NULL, &r);
    const char *node =
        json_string_value(json_object_get(json_object_get(r.json, "spec"), "nodeName"));
    fprintf(stderr, "attack: %d nodes of 1Pi memory: a 1Gi pod placed on %s\n", nodes,
            node ? node : "nothing");
    ck_assert_msg(node, "the 1Gi pod was not placed: %s", r.body);
    http_resp_free(&r);
    free(body);
}
END_TEST

/* ---- 5. an audit record edited before the newest checkpoint, a tail cut ---- */

/* `muster audit verify` against e's musterd: its exit status, stdout in out (new). */
static int cli_verify(struct audit_env *e, char **out)
{
    struct cli_result r;
    cli_run(NULL, NULL,
            (const char *[]){"--server", e->m.base, "--token", "s3cret", "audit", "verify", NULL},
            &r);
    int status = r.status;
    *out = xasprintf("%s%s", r.out, r.err);
    cli_result_release(&r);
    return status;
}

/* The audit member of /api/v1/health once it says broken, within 30 s; NULL if never. */
static json_t *wait_broken(struct audit_env *e)
{
    for (long end = now_ms() + 30000; now_ms() < end; nap_ms(50)) {
        json_t *h = audit_env_health(e);
        if (json_is_false(json_object_get(h, "ok")))
            return h;
        json_decref(h);
    }
    return NULL;
}

/* A stopped musterd's log of about 2 records per node, checkpointed and witnessed, that
 * the attacker changed: record 5's text (cut 0) or the tail cut 3 records below the
 * witness's checkpoint (cut 1). Returns the seq the witness signs. */
static uint64_t tampered(struct audit_env *e, int nodes, int cut)
{
    audit_env_init(e);
    audit_env_run_and_stop(e, nodes);
    uint64_t signed_seq = audit_env_witness_seq(e);
    struct store *st = audit_env_open_store(e);
    if (cut)
        audit_truncate(st, signed_seq - 3);
    else
        audit_edit_text(st, 5); /* its hash is kept: record 6 on still fits */
    store_close(st);
    return signed_seq;
}

START_TEST(test_attack_audit_record_edited_before_the_checkpoint)
{
    struct audit_env e;
    char *out = NULL;

    uint64_t signed_seq = tampered(&e, 12, 0);
    ck_assert_uint_gt(signed_seq, 20);
    long t0 = now_ms();
    audit_env_start(&e);
    json_t *h = wait_broken(&e);
    long ms = now_ms() - t0;
    fprintf(stderr, "attack: record 5 of %llu edited: %s after %ld ms\n",
            (unsigned long long)signed_seq, h ? "read-only" : "not found", ms);
    ck_assert_msg(h, "musterd stays writable with record 5 edited");
    ck_assert_msg(strstr(json_string_value(json_object_get(h, "reason")), "record 5"), "%s",
                  json_string_value(json_object_get(h, "reason")));
    json_decref(h);
    ck_assert_int_eq(audit_env_post(&e, "/api/v1/cycles", NULL, NULL), 503);
    ck_assert_int_eq(cli_verify(&e, &out), 1);
    ck_assert_msg(strstr(out, "record 5"), "%s", out);
    free(out);
    musterd_cleanup(&e.m);
}
END_TEST

START_TEST(test_attack_audit_tail_cut_below_the_witness)
{
    struct audit_env e;
    char *out = NULL;

    uint64_t signed_seq = tampered(&e, 6, 1);
    audit_env_start(&e);
    json_t *h = wait_broken(&e);
    ck_assert_ptr_nonnull(h);
    json_decref(h);
    /* the verification the CLI asks for agrees with the start-up check */
    int status = cli_verify(&e, &out);
    fprintf(stderr, "attack: tail cut below the witness's record %llu: audit verify exits %d\n",
            (unsigned long long)signed_seq, status);
    ck_assert_msg(status == 1 && strstr(out, "witness"), "audit verify: %d %s", status, out);
    free(out);
    musterd_cleanup(&e.m);
}
END_TEST

/* ---- the lesser ones ---- */

/* Sends raw on a new connection and reads the answer until the close (3 s at most). */
static void exchange(const char *raw, char *out, size_t n)
{
    int fd = dial();
    size_t got = 0;
    ck_assert_int_eq(send(fd, raw, strlen(raw), MSG_NOSIGNAL), (ssize_t)strlen(raw));
    for (long end = now_ms() + 3000; got + 1 < n && now_ms() < end;) {
        ssize_t k = recv(fd, out + got, n - 1 - got, 0);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
            break;
        if (k > 0)
            got += (size_t)k;
        else
            poll(NULL, 0, 5);
    }
    out[got] = '\0';
    close(fd);
}

START_TEST(test_attack_lesser_answers)
{
    char out[4096];
    struct http_resp r;

    start(NULL, NULL);
    /* a WebSocket upgrade gets an answer, not an empty reply */
    exchange("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
             "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nConnection: close\r\n\r\n",
             out, sizeof(out));
    ck_assert_msg(!strncmp(out, "HTTP/1.1 200", 12), "%s", out);
    exchange("GET /api/v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\n"
             "Upgrade: websocket\r\nSec-WebSocket-Version: 13\r\n"
             "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
             out, sizeof(out));
    ck_assert_msg(!strncmp(out, "HTTP/1.1 200", 12), "%s", out);
    /* a chunk size past 2^64 is named as such */
    exchange("POST /api/v1/manifests HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
             "10000000000000002\r\nx\r\n",
             out, sizeof(out));
    ck_assert_msg(strstr(out, "HTTP/1.1 400") && strstr(out, "chunk size") &&
                      !strstr(out, "Content-Length '"),
                  "%s", out);
    /* a preemption id past 2^64 is refused as given */
    http_request("GET", md.base, "/api/v1/preemptions/99999999999999999999999", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 400);
    ck_assert_msg(strstr(r.body, "'99999999999999999999999'"), "%s", r.body);
    http_resp_free(&r);
}
END_TEST

/* A full disk answers 507 StoreFull (docs/api.md), not 500: the store's data directory is a
 * 4 MiB tmpfs that applies fill until a write fails with ENOSPC; musterd still answers. */
START_TEST(test_attack_full_disk_answers_507)
{
    char root[] = "/tmp/muster-test-full-XXXXXX", data[320], cfg[320];
    ck_assert_ptr_nonnull(mkdtemp(root));
    snprintf(data, sizeof(data), "%s/data", root);
    ck_assert_int_eq(mkdir(data, 0700), 0);
    if (mount("tmpfs", data, "tmpfs", 0, "size=4m") < 0) {
        int e = errno;
        rmdir(data);
        rmdir(root);
        /* only a machine that forbids mounts (no CAP_SYS_ADMIN) skips; anything else fails */
        ck_assert_msg(e == EPERM, "mount a 4 MiB tmpfs: %s", strerror(e));
        fprintf(stderr, "attack: full disk SKIPPED: mounting a tmpfs is not permitted here\n");
        return;
    }
    snprintf(cfg, sizeof(cfg), "%s/config.yaml", root);
    ck_assert_int_eq(test_write_file(cfg, "cycle_interval: 0\n"), 0);
    const char *args[] = {"--config", cfg, NULL};
    ck_assert_msg(musterd_start(&md, root, args) == 0, "musterd did not start");
    const char *hdr[] = {"Content-Type: application/yaml", NULL};
    size_t cap = 64 * 5000 + 4096;
    char *body = malloc(cap), note[4001];
    memset(note, 'x', 4000);
    note[4000] = '\0';
    long status = 0;
    struct http_resp r = {0};
    for (int b = 0; b < 200 && (status == 0 || status == 201); b++) {
        size_t n = 0;
        for (int i = 0; i < 50; i++)
            n += (size_t)snprintf(body + n, cap - n,
                                  "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d-%d, "
                                  "annotations: {note: %s}}\nspec: {containers: [{name: c}]}\n",
                                  b, i, note);
        http_resp_free(&r);
        http_request_len("POST", md.base, "/api/v1/manifests", body, n, hdr, &r);
        status = r.status;
    }
    fprintf(stderr, "attack: full disk: %ld %s\n", status, r.body ? r.body : "");
    ck_assert_msg(status == 507 && r.body && strstr(r.body, "StoreFull"), "%ld %s", status,
                  r.body ? r.body : "");
    http_resp_free(&r);
    http_request("GET", md.base, "/healthz", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    http_resp_free(&r);
    free(body);
    musterd_stop(&md);
    ck_assert_int_eq(umount(data), 0);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_attack_resumed_session_after_the_ca_is_replaced,
                            test_attack_bodies_without_a_credential,
                            test_attack_bodies_share_one_budget,
                            test_attack_slow_readers_of_a_big_list,
                            test_attack_alias_bomb_of_a_big_string,
                            test_attack_capacity_sums_do_not_wrap,
                            test_attack_audit_record_edited_before_the_checkpoint,
                            test_attack_audit_tail_cut_below_the_witness,
                            test_attack_lesser_answers,
                            test_attack_full_disk_answers_507,
                            NULL};
    return check_run(check_suite("attack", setup, teardown, tests));
}
