/*
 * tls.c - read throughput over HTTPS against plain HTTP, same machine, same run.
 *
 * Makes a CA and a server certificate with the openssl CLI (EC P-256, as a deployment
 * would), starts two musterd processes on fresh stores, one plain and one with
 * --tls-cert/--tls-key, applies the same --nodes nodes to both, then alternates --rounds
 * rounds of --seconds seconds of GET --path from --clients threads (one client each,
 * clients/client.c, so libcurl reuses a connection whenever musterd keeps it alive) and
 * reports requests/s, MiB/s and new connections per request for each; medians last.
 *
 *     bench_tls [--nodes 200] [--clients 4] [--seconds 5] [--rounds 3]
 *               [--path /api/v1/nodes]
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <threads.h>
#include <unistd.h>

#include "musterd.h"
#include "alloc.h"
#include "client.h"
#include "clock.h"
#include "err.h"

struct server {
    pid_t pid;
    char url[64];
};

struct run {
    const char *url, *ca, *path;
    int64_t deadline_ns;
    atomic_long requests, bytes, connects, failures;
};

static void die(const char *what)
{
    fprintf(stderr, "bench_tls: %s\n", what);
    exit(1);
}

static void start(const char *dir, const char *name, int tls, struct server *s)
{
    char *cert = xasprintf("%s/server.pem", dir), *key = xasprintf("%s/server.key", dir);
    const char *extra[] = {"--tls-cert", cert, "--tls-key", key, NULL};
    int port;
    s->pid = bench_musterd_start(dir, name, tls ? extra : NULL, &port);
    snprintf(s->url, sizeof(s->url), "%s://127.0.0.1:%d", tls ? "https" : "http", port);
    free(cert), free(key);
}

static void apply_nodes(const char *url, const char *ca, int nodes)
{
    struct client *c = NULL;
    struct client_tls tls = {.ca = ca};
    struct client_response r = CLIENT_RESPONSE_INIT;
    struct err err = ERR_INIT;
    size_t cap = 0, len = 0;
    char *yaml = NULL;

    for (int i = 0; i < nodes; i++) {
        char doc[512];
        int n = snprintf(doc, sizeof(doc),
                         "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%05d\n"
                         "  labels:\n    topology.kubernetes.io/zone: zone-%d\nstatus:\n"
                         "  allocatable:\n    cpu: \"64\"\n    memory: 512Gi\n"
                         "    nvidia.com/gpu: \"8\"\n    pods: \"110\"\n",
                         i, i % 10);
        XGROW(yaml, len + (size_t)n + 1, cap);
        memcpy(yaml + len, doc, (size_t)n + 1);
        len += (size_t)n;
    }
    if (client_open(url, NULL, &c, &err) < 0 || client_set_tls(c, &tls, &err) < 0 ||
        client_request(c, "POST", "/api/v1/manifests", yaml, len, "application/yaml", &r, &err) < 0)
        die(err.msg);
    if (r.status != 201 && r.status != 200)
        die("apply refused");
    client_response_release(&r);
    client_close(c);
    free(yaml);
}

static int reader(void *arg)
{
    struct run *run = arg;
    struct client *c = NULL;
    struct client_tls tls = {.ca = run->ca};
    struct err err = ERR_INIT;

    if (client_open(run->url, NULL, &c, &err) < 0 || client_set_tls(c, &tls, &err) < 0)
        die(err.msg);
    while (clock_mono_ns() < run->deadline_ns) {
        struct client_response r = CLIENT_RESPONSE_INIT;
        if (client_request(c, "GET", run->path, NULL, 0, NULL, &r, &err) < 0 || r.status != 200) {
            atomic_fetch_add(&run->failures, 1);
        } else {
            atomic_fetch_add(&run->requests, 1);
            atomic_fetch_add(&run->bytes, (long)r.len);
        }
        client_response_release(&r);
    }
    atomic_fetch_add(&run->connects, client_connects(c));
    client_close(c);
    return 0;
}

/* One round against url; returns requests/s. */
static double round_of(const char *label, const char *url, const char *ca, const char *path,
                       int clients, int seconds)
{
    struct run run = {.url = url, .ca = ca, .path = path};
    thrd_t t[64];

    run.deadline_ns = clock_mono_ns() + (int64_t)seconds * 1000000000;
    for (int i = 0; i < clients; i++)
        thrd_create(&t[i], reader, &run);
    for (int i = 0; i < clients; i++)
        thrd_join(t[i], NULL);
    double rps = (double)run.requests / seconds;
    printf("  %-5s %8.0f req/s  %7.1f MiB/s  %.2f new connections/request  %ld failed\n", label,
           rps, (double)run.bytes / seconds / (1 << 20),
           run.requests ? (double)run.connects / (double)run.requests : 0.0, (long)run.failures);
    return rps;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int nodes = 200, clients = 4, seconds = 5, rounds = 3;
    const char *path = "/api/v1/nodes";
    char dir[] = "/tmp/muster-bench-tls-XXXXXX", cmd[1024];
    struct server plain, tls;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--nodes"))
            nodes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--clients"))
            clients = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds"))
            rounds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--path"))
            path = argv[i + 1];
        else
            die("unknown option (see the comment at the top of bench/tls.c)");
    }
    if (clients < 1 || clients > 64 || seconds < 1 || rounds < 1 || rounds > 20 || nodes < 0)
        die("--clients 1..64, --seconds >= 1, --rounds 1..20, --nodes >= 0");
    if (!mkdtemp(dir))
        die("cannot make a temporary directory");
    snprintf(cmd, sizeof(cmd),
             "cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
             "-keyout ca.key -out ca.pem -days 2 -subj /CN=bench-ca 2>/dev/null && "
             "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout server.key "
             "-out server.csr -subj /CN=musterd 2>/dev/null && "
             "printf 'subjectAltName=IP:127.0.0.1\\n' > ext && "
             "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
             "-out server.pem -days 1 -extfile ext 2>/dev/null && chmod 600 server.key",
             dir);
    if (system(cmd) != 0)
        die("the openssl CLI could not make the certificates");
    char *ca = xasprintf("%s/ca.pem", dir);
    start(dir, "plain", 0, &plain);
    start(dir, "tls", 1, &tls);
    apply_nodes(plain.url, NULL, nodes);
    apply_nodes(tls.url, ca, nodes);

    printf("GET %s, %d nodes, %d clients, %d s per round\n", path, nodes, clients, seconds);
    double *p = xcalloc((size_t)rounds, sizeof(double)),
           *s = xcalloc((size_t)rounds, sizeof(double));
    for (int r = 0; r < rounds; r++) {
        printf("round %d\n", r + 1);
        p[r] = round_of("http", plain.url, NULL, path, clients, seconds);
        s[r] = round_of("https", tls.url, ca, path, clients, seconds);
    }
    qsort(p, (size_t)rounds, sizeof(double), cmp_double);
    qsort(s, (size_t)rounds, sizeof(double), cmp_double);
    printf("median: http %.0f req/s, https %.0f req/s (https/http %.2f)\n", p[rounds / 2],
           s[rounds / 2], p[rounds / 2] > 0 ? s[rounds / 2] / p[rounds / 2] : 0.0);

    kill(plain.pid, SIGTERM);
    kill(tls.pid, SIGTERM);
    waitpid(plain.pid, NULL, 0);
    waitpid(tls.pid, NULL, 0);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    free(p), free(s), free(ca);
    return 0;
}
