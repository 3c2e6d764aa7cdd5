/*
 * test_api_front_tls.c - reads the front end answers itself (web/front_answer.c) over
 * HTTPS, with client certificates as identities: the same bytes (but Date) as the relayed
 * answer for a listed certificate (200) and for a valid certificate that names no identity
 * (401), and muster_http_front_answers_total says which way each went. The API runs in
 * this process (sched_util) so the test can turn the front end's answers off and on.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "check_run.h"
#include "err.h"
#include "sched_util.h"
#include "tls_support.h"

static struct sched_util u;
static struct api *api;

static const char cluster[] =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n"
    "status: {allocatable: {cpu: '64', memory: 256Gi, pods: '110'}}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: w, namespace: t}\n"
    "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n";

static void stop(void)
{
    api_stop(api);
    sched_util_close(&u);
}

static char tls_dir[128];
static struct tls_client alice_cert, bob_cert;

/* TLS with tls_client_ca (every client shows a certificate), a tokens file naming CN=alice
 * a viewer, reads needing a credential. */
static void start_tls(void)
{
    struct err err = ERR_INIT;
    static char ca[160], srv[160], srv_key[160], tokens[160], a[2][160], b[2][160];
    sched_util_open(&u, NULL);
    snprintf(tls_dir, sizeof(tls_dir), "%s", u.dir);
    ck_assert_int_eq(tls_make_ca(tls_dir, "ca"), 0);
    ck_assert_int_eq(tls_make_cert(tls_dir, "srv", "ca", &TLS_VALID), 0);
    ck_assert_int_eq(tls_make_cert(tls_dir, "alice", "ca", &TLS_CLIENT), 0);
    ck_assert_int_eq(tls_make_cert(tls_dir, "bob", "ca", &TLS_CLIENT), 0);
    snprintf(ca, sizeof(ca), "%s/ca.pem", tls_dir);
    snprintf(srv, sizeof(srv), "%s/srv.pem", tls_dir);
    snprintf(srv_key, sizeof(srv_key), "%s/srv.key", tls_dir);
    snprintf(a[0], sizeof(a[0]), "%s/alice.pem", tls_dir);
    snprintf(a[1], sizeof(a[1]), "%s/alice.key", tls_dir);
    snprintf(b[0], sizeof(b[0]), "%s/bob.pem", tls_dir);
    snprintf(b[1], sizeof(b[1]), "%s/bob.key", tls_dir);
    snprintf(tokens, sizeof(tokens), "%s/tokens.yaml", tls_dir);
    FILE *f = fopen(tokens, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "tokens:\n  - {name: alice-robot, role: viewer, subject: CN=alice}\n");
    fclose(f);
    alice_cert = (struct tls_client){.ca = ca, .cert = a[0], .key = a[1]};
    bob_cert = (struct tls_client){.ca = ca, .cert = b[0], .key = b[1]};
    struct api_options o = {.listen = "127.0.0.1:0",
                            .tls_cert = srv,
                            .tls_key = srv_key,
                            .tls_client_ca = ca,
                            .tokens_file = tokens,
                            .auth_reads = 1};
    ck_assert_msg(api_start(&o, u.s, u.st, &api, &err) == 0, "%s", err.msg);
    json_decref(sched_util_apply(&u, cluster, 1000));
    json_decref(sched_util_cycle(&u, 2000));
}

/* GET path over a new TLS connection as who, "Connection: close": the whole answer without
 * its Date line into out; the status. */
static int tls_read(const struct tls_client *who, const char *path, char *out, size_t n)
{
    struct tls_conn c;
    char req[512];
    ck_assert_msg(tls_connect(api_port(api), who, &c) == 0, "%s", c.error);
    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
             path);
    int status = tls_exchange(&c, req, out, n);
    tls_close(&c);
    char *date = strstr(out, "\r\nDate: ");
    if (date) {
        char *eol = strstr(date + 2, "\r\n");
        memmove(date, eol, strlen(eol) + 1);
    }
    return status;
}

static long tls_front_answers(void)
{
    static char out[65536];
    ck_assert_int_eq(tls_read(&alice_cert, "/metrics", out, sizeof(out)), 200);
    const char *p = strstr(out, "\nmuster_http_front_answers_total ");
    ck_assert_ptr_nonnull(p);
    return strtol(p + strlen("\nmuster_http_front_answers_total "), NULL, 10);
}

START_TEST(test_api_front_tls_client_certificate)
{
    static char relayed[65536], direct[65536];
    const char *path = "/api/v1/jobs?resourceVersion=0";
    const struct tls_client *who[] = {&alice_cert, &bob_cert};
    const int want[] = {200, 401}; /* bob's certificate is valid but names no identity */
    ck_assert_int_eq(tls_read(&alice_cert, path, direct, sizeof(direct)), 200);
    for (int i = 0; i < 2; i++) {
        api_front_answers(api, 0);
        long n0 = tls_front_answers();
        ck_assert_int_eq(tls_read(who[i], path, relayed, sizeof(relayed)), want[i]);
        long n1 = tls_front_answers();
        api_front_answers(api, 1);
        ck_assert_int_eq(tls_read(who[i], path, direct, sizeof(direct)), want[i]);
        ck_assert_int_eq(n1, n0);
        ck_assert_int_eq(tls_front_answers(), n1 + 1);
        ck_assert_msg(!strcmp(relayed, direct), "relayed\n%s\n---\nfront end\n%s", relayed, direct);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("api_front_tls");
    TCase *tc = tcase_create("tls");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, start_tls, stop);
    tcase_add_test(tc, test_api_front_tls_client_certificate);
    suite_add_tcase(s, tc);
    return check_run(s);
}
