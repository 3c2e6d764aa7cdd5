/* test_tls.c - musterd over HTTPS against real sockets: verification by the CLI, expired
 * certificates, downgrades, client certificates, and reloading the certificate. */
#include <check.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_run.h"
#include "cli_support.h"
#include "http_client.h"
#include "tls_support.h"

static struct musterd md;
static char dir[64];      /* certificates */
static char url[96];      /* https://127.0.0.1:PORT */
static char p_ca[128];    /* the CA that signed the server's certificate */
static char p_other[128]; /* a CA that signed nothing of musterd's */
static char p_cert[128];  /* what musterd serves: dir/server.pem, .key */
static char p_key[128];

static const char *path(const char *name, const char *ext)
{
    static char buf[8][160];
    static int i;
    char *p = buf[i++ % 8];
    snprintf(p, sizeof(buf[0]), "%s/%s.%s", dir, name, ext);
    return p;
}

static void setup(void)
{
    signal(SIGPIPE, SIG_IGN); /* a refused connection's write must fail, not kill the test */
    snprintf(dir, sizeof(dir), "/tmp/muster-test-tls-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(tls_make_ca(dir, "ca"), 0);
    ck_assert_int_eq(tls_make_ca(dir, "other"), 0);
    ck_assert_int_eq(tls_make_cert(dir, "musterd-a", "ca", &TLS_VALID), 0);
    ck_assert_int_eq(tls_make_cert(dir, "musterd-b", "ca", &TLS_VALID), 0);
    snprintf(p_ca, sizeof(p_ca), "%s", path("ca", "pem"));
    snprintf(p_other, sizeof(p_other), "%s", path("other", "pem"));
    snprintf(p_cert, sizeof(p_cert), "%s", path("server", "pem"));
    snprintf(p_key, sizeof(p_key), "%s", path("server", "key"));
    ck_assert_int_eq(tls_replace_file(path("musterd-a", "pem"), p_cert), 0);
    ck_assert_int_eq(tls_replace_file(path("musterd-a", "key"), p_key), 0);
}

static void teardown(void)
{
    char cmd[128];
    musterd_cleanup(&md);
    if (dir[0] && !strncmp(dir, "/tmp/muster-test-tls-", 21)) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", dir);
    }
}

/* musterd serving dir/server.{pem,key}, with extra args (NULL-terminated, may be NULL). */
static void start(const char *const *extra)
{
    const char *args[16] = {"--tls-cert", p_cert, "--tls-key", p_key};
    size_t n = 4;
    for (size_t i = 0; extra && extra[i] && n < 15; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    ck_assert_int_eq(musterd_start(&md, NULL, args), 0);
    snprintf(url, sizeof(url), "https://127.0.0.1:%d", md.port);
}

/* Runs `muster --server URL args...` and returns its exit status; stderr in *err (new). */
static int cli(const char *const *args, char **err)
{
    const char *argv[16] = {"--server", url};
    size_t n = 2;
    struct cli_result r;
    for (size_t i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    cli_run(NULL, NULL, argv, &r);
    int status = r.status;
    if (err)
        *err = strdup(r.err);
    cli_result_release(&r);
    return status;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The CN a new, verified connection sees, polled until it is want (30 s at most). */
static int wait_for_cn(const char *want)
{
    struct tls_client o = {.ca = p_ca};
    for (int i = 0; i < 300; i++) {
        struct tls_conn c;
        if (tls_connect(md.port, &o, &c) == 0) {
            int same = !strcmp(tls_peer_cn(&c), want);
            tls_close(&c);
            if (same)
                return 1;
        }
        sleep_ms(100);
    }
    return 0;
}

static int log_count(const char *needle)
{
    char *log = test_read_file(md.log_file, NULL);
    int n = 0;
    for (const char *p = log; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    free(log);
    return n;
}

START_TEST(test_tls_https_with_the_right_ca)
{
    char *err = NULL;

    start(NULL);
    ck_assert_msg(cli((const char *[]){"--ca", p_ca, "get", "nodes", NULL}, &err) == 0,
                  "muster --ca: %s", err);
    free(err);
    /* MUSTER_CA works as --ca does */
    char env_ca[160], env_server[128];
    snprintf(env_ca, sizeof(env_ca), "MUSTER_CA=%s", p_ca);
    snprintf(env_server, sizeof(env_server), "MUSTER_SERVER=%s", url);
    struct cli_result r;
    cli_run((const char *[]){env_ca, env_server, NULL}, NULL, (const char *[]){"cycle", NULL}, &r);
    ck_assert_msg(r.status == 0, "MUSTER_CA: %s", r.err);
    cli_result_release(&r);
    /* the port speaks TLS only: plain HTTP gets no answer */
    struct http_resp h;
    http_request("GET", md.base, "/healthz", NULL, NULL, &h);
    ck_assert_int_eq(h.status, -1);
    http_resp_free(&h);
    char plain[96];
    snprintf(plain, sizeof(plain), "http://127.0.0.1:%d", md.port);
    cli_run(NULL, NULL, (const char *[]){"--server", plain, "get", "nodes", NULL}, &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "use https://"), "%s", r.err);
    cli_result_release(&r);
    /* what a client negotiates by default: TLS 1.3 */
    struct tls_client o = {.ca = p_ca};
    struct tls_conn c;
    ck_assert_msg(tls_connect(md.port, &o, &c) == 0, "%s", c.error);
    ck_assert_str_eq(tls_version(&c), "TLSv1.3");
    ck_assert_int_eq(tls_get(&c, "/healthz"), 200);
    tls_close(&c);
    /* over HTTPS, and only there, answers carry HSTS (test_edge: none over HTTP) */
    char head[4096];
    ck_assert_msg(tls_connect(md.port, &o, &c) == 0, "%s", c.error);
    ck_assert_int_gt(tls_get_head(&c, "/api/v1/nodes", head, sizeof(head)), 0);
    ck_assert_msg(strstr(head, "Strict-Transport-Security: max-age=31536000\r\n"), "%s", head);
    ck_assert_int_gt(tls_get_head(&c, "/index.html", head, sizeof(head)), 0);
    ck_assert_msg(strstr(head, "Strict-Transport-Security: max-age="), "%s", head);
    tls_close(&c);
    ck_assert_int_ge(log_count("listening on https://127.0.0.1:"), 1);
}
END_TEST

START_TEST(test_tls_wrong_ca_refused_by_the_cli)
{
    char *err = NULL;

    start(NULL);
    ck_assert_int_eq(cli((const char *[]){"--ca", p_other, "get", "nodes", NULL}, &err), 1);
    ck_assert_msg(strstr(err, "certificate does not verify") && strstr(err, "--ca"), "%s", err);
    free(err);
    /* without --ca the system's CAs are used, and none of them signed a test CA */
    ck_assert_int_eq(cli((const char *[]){"get", "nodes", NULL}, &err), 1);
    ck_assert_msg(strstr(err, "certificate does not verify"), "%s", err);
    free(err);
    /* a CA file that does not exist is named */
    ck_assert_int_eq(
        cli((const char *[]){"--ca", "/nonexistent/ca.pem", "get", "nodes", NULL}, &err), 1);
    ck_assert_msg(strstr(err, "CA file '/nonexistent/ca.pem' cannot be read"), "%s", err);
    free(err);
}
END_TEST

START_TEST(test_tls_expired_certificate_refused)
{
    char *err = NULL;

    ck_assert_int_eq(tls_make_cert(dir, "expired", "ca", &TLS_EXPIRED), 0);
    ck_assert_int_eq(tls_replace_file(path("expired", "pem"), p_cert), 0);
    ck_assert_int_eq(tls_replace_file(path("expired", "key"), p_key), 0);
    start(NULL);
    ck_assert_int_eq(log_count("has expired"), 1);
    ck_assert_int_eq(cli((const char *[]){"--ca", p_ca, "get", "nodes", NULL}, &err), 1);
    ck_assert_msg(strstr(err, "does not verify") && strstr(err, "expired"), "%s", err);
    free(err);
    /* the same CA with a valid certificate is accepted: the refusal is about the date */
    ck_assert_int_eq(tls_replace_file(path("musterd-a", "pem"), p_cert), 0);
    ck_assert_int_eq(tls_replace_file(path("musterd-a", "key"), p_key), 0);
    kill(md.pid, SIGHUP);
    ck_assert(wait_for_cn("musterd-a"));
    ck_assert_msg(cli((const char *[]){"--ca", p_ca, "get", "nodes", NULL}, &err) == 0, "%s", err);
    free(err);
}
END_TEST

START_TEST(test_tls_old_versions_and_weak_ciphers_refused)
{
    static const struct {
        int version;
        const char *name;
    } old[] = {{TLS1_VERSION, "TLS 1.0"}, {TLS1_1_VERSION, "TLS 1.1"}};
    struct tls_conn c;

    start(NULL);
    for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
        struct tls_client o = {.min_version = old[i].version, .max_version = old[i].version};
        ck_assert_msg(tls_connect(md.port, &o, &c) < 0, "%s accepted", old[i].name);
        ck_assert_msg(strstr(c.error, "protocol version"), "%s: %s", old[i].name, c.error);
    }
    /* raw hellos, as an SSLv3-only client (which OpenSSL 3 cannot be) would send them */
    ck_assert_int_ne(tls_raw_hello(md.port, 0x0300), 22);
    ck_assert_int_ne(tls_raw_hello(md.port, 0x0301), 22);
    ck_assert_int_ne(tls_raw_hello(md.port, 0x0302), 22);
    /* TLS 1.2 without forward secrecy or without AEAD: no shared cipher */
    struct tls_client weak = {.max_version = TLS1_2_VERSION,
                              .ciphers = "AES128-GCM-SHA256:AES256-SHA:ECDHE-ECDSA-AES128-SHA"};
    ck_assert_msg(tls_connect(md.port, &weak, &c) < 0, "weak TLS 1.2 ciphers accepted");
    /* the same client code does get through at 1.2 and 1.3 with modern ciphers */
    struct tls_client v12 = {
        .ca = p_ca, .min_version = TLS1_2_VERSION, .max_version = TLS1_2_VERSION};
    ck_assert_msg(tls_connect(md.port, &v12, &c) == 0, "TLS 1.2: %s", c.error);
    ck_assert_str_eq(tls_version(&c), "TLSv1.2");
    ck_assert_int_eq(tls_get(&c, "/healthz"), 200);
    tls_close(&c);
    struct tls_client v13 = {.ca = p_ca, .min_version = TLS1_3_VERSION};
    ck_assert_msg(tls_connect(md.port, &v13, &c) == 0, "TLS 1.3: %s", c.error);
    tls_close(&c);
}
END_TEST

START_TEST(test_tls_client_certificates)
{
    char *err = NULL;

    ck_assert_int_eq(tls_make_cert(dir, "alice", "ca", &TLS_CLIENT), 0);
    ck_assert_int_eq(tls_make_cert(dir, "mallory", "other", &TLS_CLIENT), 0);
    start((const char *[]){"--tls-client-ca", p_ca, NULL});
    /* no client certificate */
    ck_assert_int_eq(cli((const char *[]){"--ca", p_ca, "get", "nodes", NULL}, &err), 1);
    ck_assert_msg(strstr(err, "pass one with --cert and --key"), "%s", err);
    free(err);
    /* one signed by another CA */
    ck_assert_int_ne(cli((const char *[]){"--ca", p_ca, "--cert", path("mallory", "pem"), "--key",
                                          path("mallory", "key"), "get", "nodes", NULL},
                         &err),
                     0);
    ck_assert_msg(strstr(err, "cannot reach musterd"), "%s", err);
    free(err);
    /* one signed by tls_client_ca */
    ck_assert_msg(cli((const char *[]){"--ca", p_ca, "--cert", path("alice", "pem"), "--key",
                                       path("alice", "key"), "get", "nodes", NULL},
                      &err) == 0,
                  "alice: %s", err);
    free(err);
    /* the same with the raw client: a request without a certificate gets no answer */
    struct tls_client anon = {.ca = p_ca};
    struct tls_conn c;
    if (tls_connect(md.port, &anon, &c) == 0) { /* TLS 1.3 refuses after the handshake */
        ck_assert_int_eq(tls_get(&c, "/healthz"), -1);
        tls_close(&c);
    }
    struct tls_client alice = {
        .ca = p_ca, .cert = path("alice", "pem"), .key = path("alice", "key")};
    ck_assert_msg(tls_connect(md.port, &alice, &c) == 0, "%s", c.error);
    ck_assert_int_eq(tls_get(&c, "/healthz"), 200);
    tls_close(&c);
}
END_TEST

/* One request over a new connection as the client o: the status, the answer in out. */
static int tls_call(const struct tls_client *o, const char *req, char *out, size_t n)
{
    struct tls_conn c;
    ck_assert_msg(tls_connect(md.port, o, &c) == 0, "%s", c.error);
    int status = tls_exchange(&c, req, out, n);
    tls_close(&c);
    return status;
}

#define CYCLE(auth)                                                                                \
    "POST /api/v1/cycles HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"        \
    "Content-Length: 0\r\n" auth "Connection: close\r\n\r\n"
#define LAST_CYCLE                                                                                 \
    "GET /api/v1/audit?kind=cycle&tail=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"

START_TEST(test_tls_client_certificate_is_an_identity)
{
    char tokens[200], text[512], out[8192];

    ck_assert_int_eq(tls_make_cert(dir, "alice", "ca", &TLS_CLIENT), 0);
    ck_assert_int_eq(tls_make_cert(dir, "bob", "ca", &TLS_CLIENT), 0);
    snprintf(tokens, sizeof(tokens), "%s", path("tokens", "yaml"));
    snprintf(text, sizeof(text),
             "tokens:\n  - {name: alice-robot, role: operator, subject: CN=alice}\n"
             "  - {name: ada, role: admin, sha256: "
             "fd31e09e2f8a2d8b4a0abc727de9e123352c6839ac4ae08577223addfe7cc132}\n");
    ck_assert_int_eq(test_write_file(tokens, text), 0);
    start((const char *[]){"--tls-client-ca", p_ca, "--tokens-file", tokens, NULL});
    struct tls_client alice = {
        .ca = p_ca, .cert = path("alice", "pem"), .key = path("alice", "key")};
    struct tls_client bob = {.ca = p_ca, .cert = path("bob", "pem"), .key = path("bob", "key")};
    /* alice's certificate is listed: she may run a cycle, and the audit names her by it */
    ck_assert_int_eq(tls_call(&alice, CYCLE(""), out, sizeof(out)), 200);
    ck_assert_int_eq(tls_call(&alice, LAST_CYCLE, out, sizeof(out)), 200);
    ck_assert_msg(strstr(out, "\"name\":\"alice-robot\"") &&
                      strstr(out, "\"source\":\"client-cert\""),
                  "%s", out);
    /* bob's is valid but not listed: no identity */
    ck_assert_int_eq(tls_call(&bob, CYCLE(""), out, sizeof(out)), 401);
    /* a bearer token wins over the certificate */
    ck_assert_int_eq(
        tls_call(&alice, CYCLE("Authorization: Bearer admin-tok\r\n"), out, sizeof(out)), 200);
    ck_assert_int_eq(tls_call(&alice, LAST_CYCLE, out, sizeof(out)), 200);
    ck_assert_msg(strstr(out, "\"name\":\"ada\"") && strstr(out, "\"source\":\"tokens-file\""),
                  "%s", out);
    ck_assert_int_eq(tls_call(&alice, CYCLE("Authorization: Bearer wrong\r\n"), out, sizeof(out)),
                     401);
}
END_TEST

/* The certificate swapped under a running musterd: a connection opened before the swap
 * keeps working, new ones get the new certificate, on the same listening port. */
static void check_swap(int by_signal)
{
    struct tls_client o = {.ca = p_ca};
    struct tls_conn before;

    start(NULL);
    ck_assert_msg(tls_connect(md.port, &o, &before) == 0, "%s", before.error);
    ck_assert_str_eq(tls_peer_cn(&before), "musterd-a");
    int reloads = log_count("TLS reloaded");
    ck_assert_int_eq(tls_replace_file(path("musterd-b", "key"), p_key), 0);
    ck_assert_int_eq(tls_replace_file(path("musterd-b", "pem"), p_cert), 0);
    if (by_signal)
        kill(md.pid, SIGHUP);
    ck_assert_msg(wait_for_cn("musterd-b"), "new connections still get musterd-a");
    ck_assert_int_ge(log_count("TLS reloaded"), reloads + 1);
    ck_assert_int_eq(tls_get(&before, "/healthz"), 200);
    ck_assert_str_eq(tls_peer_cn(&before), "musterd-a");
    tls_close(&before);
    /* the CLI verifies the new certificate through the same port */
    char *err = NULL;
    ck_assert_msg(cli((const char *[]){"--ca", p_ca, "get", "nodes", NULL}, &err) == 0, "%s", err);
    free(err);
}

START_TEST(test_tls_reload_on_sighup)
{
    check_swap(1);
    /* SIGHUP reads the files even when they did not change */
    int reloads = log_count("TLS reloaded");
    kill(md.pid, SIGHUP);
    for (int i = 0; i < 300 && log_count("TLS reloaded") == reloads; i++)
        sleep_ms(100);
    ck_assert_int_eq(log_count("TLS reloaded"), reloads + 1);
}
END_TEST

START_TEST(test_tls_reload_on_file_change)
{
    check_swap(0);
}
END_TEST

START_TEST(test_tls_bad_reload_keeps_the_old_certificate)
{
    start(NULL);
    /* a key that does not match: half of a rotation */
    ck_assert_int_eq(tls_replace_file(path("musterd-b", "key"), p_key), 0);
    kill(md.pid, SIGHUP);
    for (int i = 0; i < 300 && !log_count("does not match the certificate"); i++)
        sleep_ms(100);
    ck_assert_int_ge(log_count("still serving the previous certificate"), 1);
    ck_assert(wait_for_cn("musterd-a"));
    /* garbage where the certificate was */
    ck_assert_int_eq(test_write_file(p_cert, "not a certificate\n"), 0);
    kill(md.pid, SIGHUP);
    for (int i = 0; i < 300 && !log_count("holds no PEM certificate"); i++)
        sleep_ms(100);
    ck_assert_int_ge(log_count("holds no PEM certificate"), 1);
    ck_assert(wait_for_cn("musterd-a"));
    /* the rotation completes: the new pair is served */
    ck_assert_int_eq(tls_replace_file(path("musterd-b", "pem"), p_cert), 0);
    ck_assert(wait_for_cn("musterd-b"));
}
END_TEST

START_TEST(test_tls_config_errors_name_the_file)
{
    char *err = NULL;
    char cfg[200], text[1024];

    ck_assert_int_eq(musterd_run((const char *[]){"--tls-cert", p_cert, NULL}, &err), 2);
    ck_assert_msg(strstr(err, "'tls_cert' is set but 'tls_key' is not"), "%s", err);
    free(err);
    ck_assert_int_eq(musterd_run((const char *[]){"--tls-client-ca", p_ca, NULL}, &err), 2);
    ck_assert_msg(strstr(err, "'tls_client_ca' needs HTTPS"), "%s", err);
    free(err);
    const char *missing[] = {"--data-dir", path("data", "d"),   "--listen",  "127.0.0.1:0",
                             "--tls-cert", path("nope", "pem"), "--tls-key", p_key,
                             NULL};
    ck_assert_int_eq(musterd_run(missing, &err), 1);
    ck_assert_msg(strstr(err, "tls_cert '") && strstr(err, "nope.pem' cannot be read"), "%s", err);
    free(err);
    const char *mismatch[] = {
        "--data-dir", path("data", "d"),        "--listen", "127.0.0.1:0", "--tls-cert", p_cert,
        "--tls-key",  path("musterd-b", "key"), NULL};
    ck_assert_int_eq(musterd_run(mismatch, &err), 1);
    ck_assert_msg(strstr(err, "does not match the certificate"), "%s", err);
    free(err);
    /* the config file's keys, with a client CA that is not a certificate */
    snprintf(cfg, sizeof(cfg), "%s/musterd.yaml", dir);
    snprintf(text, sizeof(text),
             "listen: 127.0.0.1:0\ndata_dir: %s/data\ntls_cert: %s\n"
             "tls_key: %s\ntls_client_ca: %s\n",
             dir, p_cert, p_key, p_key);
    ck_assert_int_eq(test_write_file(cfg, text), 0);
    ck_assert_int_eq(musterd_run((const char *[]){"--config", cfg, NULL}, &err), 1);
    ck_assert_msg(strstr(err, "tls_client_ca '") && strstr(err, "holds no PEM CA certificate"),
                  "%s", err);
    free(err);
}
END_TEST

START_TEST(test_tls_config_file_keys)
{
    char cfg[200], text[1024];
    struct tls_conn c;

    ck_assert_int_eq(tls_make_cert(dir, "alice", "other", &TLS_CLIENT), 0);
    snprintf(cfg, sizeof(cfg), "%s/musterd.yaml", dir);
    snprintf(text, sizeof(text), "tls_cert: %s\ntls_key: %s\ntls_client_ca: %s\n", p_cert, p_key,
             p_other);
    ck_assert_int_eq(test_write_file(cfg, text), 0);
    ck_assert_int_eq(musterd_start(&md, NULL, (const char *[]){"--config", cfg, NULL}), 0);
    struct tls_client alice = {
        .ca = p_ca, .cert = path("alice", "pem"), .key = path("alice", "key")};
    ck_assert_msg(tls_connect(md.port, &alice, &c) == 0, "%s", c.error);
    ck_assert_str_eq(tls_peer_cn(&c), "musterd-a");
    ck_assert_int_eq(tls_get(&c, "/healthz"), 200);
    tls_close(&c);
    struct tls_client anon = {.ca = p_ca};
    if (tls_connect(md.port, &anon, &c) == 0) {
        ck_assert_int_eq(tls_get(&c, "/healthz"), -1);
        tls_close(&c);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("tls");
    TCase *tc = tcase_create("tls");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_tls_https_with_the_right_ca);
    tcase_add_test(tc, test_tls_wrong_ca_refused_by_the_cli);
    tcase_add_test(tc, test_tls_expired_certificate_refused);
    tcase_add_test(tc, test_tls_old_versions_and_weak_ciphers_refused);
    tcase_add_test(tc, test_tls_client_certificates);
    tcase_add_test(tc, test_tls_client_certificate_is_an_identity);
    tcase_add_test(tc, test_tls_reload_on_sighup);
    tcase_add_test(tc, test_tls_reload_on_file_change);
    tcase_add_test(tc, test_tls_bad_reload_keeps_the_old_certificate);
    tcase_add_test(tc, test_tls_config_errors_name_the_file);
    tcase_add_test(tc, test_tls_config_file_keys);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
