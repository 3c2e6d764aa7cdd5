/*
 * reads.c - reads under load: an open-loop load generator against a musterd that schedules.
 *
 * For each rate of --rates (requests/s; 0 is the idle baseline) it starts a fresh musterd
 * (build/bin/musterd, or MUSTER_BIN_DIR) on a new store, applies the nodes of Basic-5k (or
 * --nodes) and the first batch of pods, then, while --threads client threads read at that
 * rate, applies the rest of the pods in batches of --batch through POST /api/v1/manifests
 * (musterd runs a cycle after each) and waits until every pod is placed.
 *
 * Open loop: request k is due at start + k / rate whatever happened before; each thread
 * sends the requests k = thread (mod threads) in order on one kept-alive connection and
 * measures latency from the time a request was due, so a server that stalls shows as
 * latency (and a client that falls behind as well), never as a lower rate. Requests go
 * round-robin over the paths of --mix (default GET /api/v1/jobs?limit=100,
 * /api/v1/jobs/{why}/why, /api/v1/topology?jobs=4 (four jobs per domain, as the UI asks),
 * /api/v1/audit?tail=20; {why} is each job of
 * the first batch in turn; each path is read once before the clock starts). --resource-version 0
 * (the default, as the UI polls) adds resourceVersion=0 to the paths of jobs and topology: answered
 * from musterd's cache without waiting for its lock (docs/api.md); --resource-version none reads
 * the newest state. --encoding gzip (the default, as browsers ask) sends "Accept-Encoding: gzip"
 * and keeps what comes back compressed: the clients share the 2 cores with musterd, and
 * inflating 2.5 MB topology trees a thousand times a second would measure them instead.
 *
 * Printed per rate: requests sent and their rate, non-200 answers, latency p50 / p99 /
 * max (and the p99 of each path of the mix on a second line), and the cycle throughput (pods placed
 * / cycle seconds, from /metrics) over the reading window, with its ratio to the idle run, and the
 * longest a stale answer was served before it was remade (muster_read_stale_seconds_max).
 *
 *     bench_reads [--nodes 5000] [--pods 50000] [--batch 1000] [--threads 16]
 *                 [--rates 0,500,1000,2000,5000] [--mix PATH,PATH,...] [--keep]
 *                 [--resource-version 0|none] [--encoding gzip|identity]
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "musterd.h"
#include "alloc.h"
#include "client.h"
#include "clock.h"
#include "err.h"
#include "workload.h"

#define MAX_THREADS 64
#define WHY_IDS 200

struct load {
    const char *url;
    double rate;
    int threads;
    int64_t start_ns;
    atomic_int stop;
    char *why[WHY_IDS];
    size_t nwhy;
    char **paths; /* the mix */
    size_t npaths;
    const char *encoding; /* Accept-Encoding, NULL: none */
};

struct reader {
    struct load *load;
    int index;
    double *lat_ms; /* latencies of the answered requests */
    int *path;      /* the mix index of each */
    size_t n, cap, pcap;
    long bad; /* non-200 answers and transport failures */
};

static void die(const char *what)
{
    fprintf(stderr, "bench_reads: %s\n", what);
    exit(1);
}

static pid_t start_musterd(const char *dir, char *url, size_t url_size)
{
    int port;
    pid_t pid = bench_musterd_start(dir, "data", NULL, &port);
    snprintf(url, url_size, "http://127.0.0.1:%d", port);
    return pid;
}

static void post(struct client *c, json_t *docs)
{
    struct client_response r = CLIENT_RESPONSE_INIT;
    struct err err = ERR_INIT;
    json_t *list = json_pack("{s:s,s:s,s:O}", "apiVersion", "v1", "kind", "List", "items", docs);
    char *body = json_dumps(list, JSON_COMPACT);

    if (client_request(c, "POST", "/api/v1/manifests", body, strlen(body), "application/json", &r,
                       &err) < 0)
        die(err.msg);
    if (r.status != 200 && r.status != 201) {
        fprintf(stderr, "%.500s\n", r.body ? r.body : "");
        die("apply refused");
    }
    client_response_release(&r);
    free(body);
    json_decref(list);
}

/* The value of the Prometheus sample named exactly name in /metrics. */
static double metric(struct client *c, const char *name)
{
    struct client_response r = CLIENT_RESPONSE_INIT;
    struct err err = ERR_INIT;
    double v = 0;

    if (client_request(c, "GET", "/metrics", NULL, 0, NULL, &r, &err) < 0 || r.status != 200)
        die("GET /metrics failed");
    size_t n = strlen(name);
    for (const char *p = r.body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, name, n) && p[n] == ' ') {
            v = strtod(p + n + 1, NULL);
            break;
        }
    client_response_release(&r);
    return v;
}

/* The path of request k: the mix's paths in turn, "{why}" replaced by a job id. */
static const char *path_of(struct load *l, long k, char *buf, size_t n)
{
    const char *p = l->paths[(size_t)k % l->npaths];
    const char *at = strstr(p, "{why}");
    if (!at)
        return p;
    snprintf(buf, n, "%.*s%s%s", (int)(at - p), p, l->why[(size_t)(k / (long)l->npaths) % l->nwhy],
             at + 5);
    return buf;
}

static int read_main(void *arg)
{
    struct reader *rd = arg;
    struct load *l = rd->load;
    struct client *c = NULL;
    struct err err = ERR_INIT;
    char buf[256];

    if (client_open(l->url, NULL, &c, &err) < 0)
        die(err.msg);
    client_set_encoding(c, l->encoding, 0);
    for (long k = rd->index; !atomic_load(&l->stop); k += l->threads) {
        int64_t due = l->start_ns + (int64_t)((double)k * 1e9 / l->rate);
        int64_t now = clock_mono_ns();
        if (due > now) {
            struct timespec ts = {(time_t)((due - now) / 1000000000),
                                  (long)((due - now) % 1000000000)};
            nanosleep(&ts, NULL);
        }
        if (atomic_load(&l->stop))
            break;
        struct client_response r = CLIENT_RESPONSE_INIT;
        int rc = client_request(c, "GET", path_of(l, k, buf, sizeof(buf)), NULL, 0, NULL, &r, &err);
        double ms = (double)(clock_mono_ns() - due) / 1e6;
        if (rc < 0 || r.status != 200) {
            rd->bad++;
        } else {
            XGROW(rd->lat_ms, rd->n + 1, rd->cap);
            XGROW(rd->path, rd->n + 1, rd->pcap);
            rd->path[rd->n] = (int)((size_t)k % l->npaths);
            rd->lat_ms[rd->n++] = ms;
        }
        client_response_release(&r);
    }
    client_close(c);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(const double *v, size_t n, double p)
{
    return n ? v[(size_t)((double)(n - 1) * p)] : 0.0;
}

/* Reads every path of the mix once ({why} with each job) before the clock starts, so that
 * the run measures reads of answers musterd has made before (the UI's polls after its
 * first load), not the first read of each of them. */
static void prime(struct client *c, struct load *l)
{
    char buf[256];
    client_set_encoding(c, l->encoding, 0);
    for (long k = 0; k < (long)(l->npaths * (l->nwhy ? l->nwhy : 1)); k++) {
        struct client_response r = CLIENT_RESPONSE_INIT;
        struct err err = ERR_INIT;
        if (client_request(c, "GET", path_of(l, k, buf, sizeof(buf)), NULL, 0, NULL, &r, &err) < 0)
            die(err.msg);
        client_response_release(&r);
    }
}

/* One run at rate (0: no reads). Returns the cycle throughput in pods/s. */
static double run_rate(const struct workload *w, struct load *mix, double rate, size_t batch,
                       size_t pods, double idle, int keep)
{
    char dir[] = "/tmp/muster-bench-reads-XXXXXX", url[64];
    struct load l = {.url = url,
                     .rate = rate,
                     .threads = mix->threads,
                     .paths = mix->paths,
                     .npaths = mix->npaths,
                     .encoding = mix->encoding};
    int threads = mix->threads;
    struct reader rd[MAX_THREADS];
    thrd_t t[MAX_THREADS];
    struct client *c = NULL;
    struct err err = ERR_INIT;

    if (!mkdtemp(dir))
        die("mkdtemp failed");
    pid_t pid = start_musterd(dir, url, sizeof(url));
    if (client_open(url, NULL, &c, &err) < 0)
        die(err.msg);
    post(c, w->infra);
    /* the jobs in batches of about `batch` pods; the first before reading starts */
    size_t j = 0, njobs = json_array_size(w->jobs), sent = 0, first = 1;
    double placed0 = 0, secs0 = 0;
    while (j < njobs && sent < pods) {
        json_t *docs = json_array();
        for (size_t in_batch = 0; j < njobs && in_batch < batch && sent < pods; j++) {
            json_t *job = json_array_get(w->jobs, j);
            json_array_extend(docs, job);
            in_batch += json_array_size(job), sent += json_array_size(job);
            json_t *md = json_object_get(json_array_get(job, 0), "metadata");
            if (first && l.nwhy < WHY_IDS)
                l.why[l.nwhy++] =
                    xasprintf("%s/%s", json_string_value(json_object_get(md, "namespace")),
                              json_string_value(json_object_get(md, "name")));
        }
        post(c, docs);
        json_decref(docs);
        if (first) {
            while (metric(c, "muster_pods_placed_total") < (double)sent)
                usleep(10000);
            if (rate > 0)
                prime(c, &l);
            placed0 = metric(c, "muster_pods_placed_total");
            secs0 = metric(c, "muster_cycle_duration_seconds_sum");
            l.start_ns = clock_mono_ns();
            for (int i = 0; rate > 0 && i < threads; i++) {
                rd[i] = (struct reader){.load = &l, .index = i};
                thrd_create(&t[i], read_main, &rd[i]);
            }
            first = 0;
        }
    }
    while (metric(c, "muster_pods_placed_total") < (double)sent)
        usleep(10000);
    int64_t end_ns = clock_mono_ns();
    double placed = metric(c, "muster_pods_placed_total") - placed0;
    double secs = metric(c, "muster_cycle_duration_seconds_sum") - secs0;
    double stale = metric(c, "muster_read_stale_seconds_max");
    double remakes = metric(c, "muster_read_remakes_total");
    double remake_cpu = metric(c, "muster_read_remake_cpu_seconds_total");
    atomic_store(&l.stop, 1);
    double *all = NULL;
    size_t n = 0, cap = 0;
    long bad = 0;
    double *by[64] = {0};
    size_t nby[64] = {0}, capby[64] = {0};
    for (int i = 0; rate > 0 && i < threads; i++) {
        thrd_join(t[i], NULL);
        XGROW(all, n + rd[i].n + 1, cap);
        memcpy(all + n, rd[i].lat_ms, rd[i].n * sizeof(double));
        for (size_t k = 0; k < rd[i].n; k++) {
            int p = rd[i].path[k] < 64 ? rd[i].path[k] : 63;
            XGROW(by[p], nby[p] + 1, capby[p]);
            by[p][nby[p]++] = rd[i].lat_ms[k];
        }
        n += rd[i].n, bad += rd[i].bad;
        free(rd[i].lat_ms);
        free(rd[i].path);
    }
    qsort(all, n, sizeof(double), cmp_double);
    double window = (double)(end_ns - l.start_ns) / 1e9, tput = secs > 0 ? placed / secs : 0;
    printf("%6.0f req/s  sent %7zu (%6.0f/s)  non-200 %ld  p50 %7.2f ms  p99 %7.2f ms  max %8.2f "
           "ms  cycles %6.0f pods/s",
           rate, n + (size_t)bad, (double)(n + (size_t)bad) / window, bad, pct(all, n, 0.5),
           pct(all, n, 0.99), n ? all[n - 1] : 0.0, tput);
    if (idle > 0)
        printf(" (%.2f of idle)", tput / idle);
    printf("  stale max %.0f ms (%.0f remakes, %.2f s CPU)  [%.1f s]\n", stale * 1e3, remakes,
           remake_cpu, window);
    for (size_t p = 0; p < l.npaths && p < 64 && rate > 0; p++) {
        qsort(by[p], nby[p], sizeof(double), cmp_double);
        printf("%s%s p99 %.2f ms", p ? "," : "        by path:", l.paths[p],
               pct(by[p], nby[p], 0.99));
        free(by[p]);
    }
    if (rate > 0)
        printf("\n");
    fflush(stdout);
    free(all);
    for (size_t i = 0; i < l.nwhy; i++)
        free(l.why[i]);
    client_close(c);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    if (!keep) {
        char *cmd = xasprintf("rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_reads: could not remove %s\n", dir);
        free(cmd);
    }
    return tput;
}

int main(int argc, char **argv)
{
    size_t nodes = 5000, pods = 50000, batch = 1000;
    int threads = 16, keep = 0;
    size_t cap = 0;
    const char *rates = "0,500,1000,2000,5000", *rv = "0", *encoding = "gzip";
    const char *mix_arg = "/api/v1/jobs?limit=100,/api/v1/jobs/{why}/why,/api/v1/topology?jobs=4,"
                          "/api/v1/audit?tail=20";
    struct load mix = {0};
    struct workload w;
    struct err err = ERR_INIT;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--keep")) {
            keep = 1;
            continue;
        }
        if (!v)
            die("usage: bench_reads [--nodes N] [--pods N] [--batch N] [--threads N] "
                "[--rates R,R,...] [--mix PATH,...] [--keep] [--resource-version 0|none] "
                "[--encoding gzip|identity]");
        if (!strcmp(a, "--nodes"))
            nodes = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--pods"))
            pods = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--batch"))
            batch = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--threads"))
            threads = atoi(v);
        else if (!strcmp(a, "--rates"))
            rates = v;
        else if (!strcmp(a, "--mix"))
            mix_arg = v;
        else if (!strcmp(a, "--resource-version"))
            rv = v;
        else if (!strcmp(a, "--encoding"))
            encoding = v;
        else
            die("unknown option");
        i++;
    }
    if (threads < 1 || threads > MAX_THREADS || !nodes || !batch)
        die("--threads must be 1..64, --nodes and --batch above 0");
    if (strcmp(rv, "none") != 0 && strspn(rv, "0123456789") != strlen(rv))
        die("--resource-version must be a number or none");
    if (strcmp(encoding, "gzip") != 0 && strcmp(encoding, "identity") != 0)
        die("--encoding must be gzip or identity");
    signal(SIGPIPE, SIG_IGN);
    mix.threads = threads;
    mix.encoding = strcmp(encoding, "identity") ? encoding : NULL;
    for (const char *p = mix_arg; *p;) {
        size_t len = strcspn(p, ",");
        char *path = xstrndup(p, len);
        /* the routes that take resourceVersion (docs/api.md) */
        if (strcmp(rv, "none") != 0 &&
            (!strncmp(path, "/api/v1/jobs", 12) || !strncmp(path, "/api/v1/topology", 16))) {
            char *with =
                xasprintf("%s%cresourceVersion=%s", path, strchr(path, '?') ? '&' : '?', rv);
            free(path);
            path = with;
        }
        XGROW(mix.paths, mix.npaths + 1, cap);
        mix.paths[mix.npaths++] = path;
        p += len + (p[len] == ',');
    }
    if (!mix.npaths)
        die("--mix names no path");
    if (workload_make("basic", nodes, &w, &err) < 0)
        die(err.msg);
    printf("Basic: %zu nodes, %zu pods in batches of %zu; %d reader threads; resourceVersion %s, "
           "encoding %s\n",
           nodes, pods < w.pods ? pods : w.pods, batch, threads, rv, encoding);
    double idle = 0;
    for (const char *p = rates; *p;) {
        double rate = strtod(p, NULL);
        double tput = run_rate(&w, &mix, rate, batch, pods, idle, keep);
        if (rate == 0 && idle == 0)
            idle = tput;
        p += strcspn(p, ",");
        p += *p == ',';
    }
    workload_release(&w);
    for (size_t i = 0; i < mix.npaths; i++)
        free(mix.paths[i]);
    free(mix.paths);
    return 0;
}
