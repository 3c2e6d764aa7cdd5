/*
 * reads.c - reads under load: an open-loop load generator against a musterd that schedules.
 *
 * For each rate of --rates (requests/s; 0 is the idle baseline) it starts a fresh musterd
 * (build/bin/musterd, or MUSTER_BIN_DIR) on a new store, applies the nodes of Basic-5k (or
 * --nodes) and the first batch of pods, then, while the load generator reads at that
 * rate, applies the rest of the pods in batches of --batch through POST /api/v1/manifests
 * (musterd runs a cycle after each) and waits until every pod is placed.
 *
 * Open loop (common/loadgen.h): request k is due at start + k / rate whatever happened
 * before, and is sent then by one of --threads event loops on any free connection of its
 * share of --conns kept-alive ones; latency runs from the time it was due, so a server that
 * stalls shows as latency (and a client that falls behind as well), never as a lower rate.
 * Requests go round-robin over the paths of --mix (default GET /api/v1/jobs?limit=100,
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
 * longest a stale answer was served before it was remade (muster_read_stale_seconds_max);
 * then the CPU time musterd, its front end's thread and the generator used over the window,
 * per 1,000 requests (from /proc and the generator thread's clock), how many requests were
 * sent over 1 ms late, and the p99 of each part of a request's latency: due to sent (the
 * generator's lag), sent to the answer's last bytes in the generator's socket (musterd's
 * part, loopback included: the kernel's receive timestamp) and from then to read (the
 * generator's wake-up).
 * --repeat N runs the rates N times in turn and ends with the medians (the machine is shared
 * and a run's window is short): each rate's cycle throughput, its ratio to the idle run of
 * the same round, and its p99.
 * --generator-nice N (default -5) is the generator threads' nice value. They stand for clients
 * on other machines, which do not wait for musterd's cores: at -5 a generator thread that
 * wakes is seldom queued behind musterd's cycle for the kernel's next tick (bench/README.md,
 * "Reads under load"). Lowering it takes CAP_SYS_NICE; without it the generator runs at the
 * process's and says so. 0 leaves it there. --generator-fifo runs them SCHED_FIFO instead
 * (CAP_SYS_NICE too): a generator thread that wakes takes a core at once, so its lag is
 * gone from the latency and musterd's part is measured alone; the cycles then pay for the
 * generator on their core (bench/README.md, "Session 18").
 * --front-priority realtime starts musterd with front_priority realtime (its front end a
 * SCHED_FIFO thread: docs/api.md "Configuration"; CAP_SYS_NICE, or musterd refuses to start);
 * normal, the default, with the short time slice.
 * --cycle-cpus LIST and --front-cpus LIST start musterd with cycle_cpus and front_cpus (its
 * cycle's thread, and its front end's thread and read cache's remaker, on those CPUs only:
 * docs/api.md "Configuration"); --generator-cpus LIST runs the generator's threads on those
 * CPUs only. Clients on other machines take none of musterd's cores: with the generator kept
 * off the cycle's CPUs, only musterd's own work for the reads is left beside the cycles
 * (bench/README.md, "Session 25").
 * The applying client's batches are rendered before musterd starts: it stands for a client on
 * another machine, like the generator, and printed is the CPU it used over the window.
 *
 *     bench_reads [--nodes 5000] [--pods 50000] [--batch 1000] [--threads 2] [--conns 16]
 *                 [--rates 0,500,1000,2000,5000] [--repeat 1] [--mix PATH,PATH,...] [--keep]
 *                 [--resource-version 0|none] [--encoding gzip|identity] [--generator-nice N]
 *                 [--generator-fifo] [--front-priority normal|realtime] [--cycle-cpus LIST]
 *                 [--front-cpus LIST] [--generator-cpus LIST]
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "musterd.h"
#include "alloc.h"
#include "cpus.h"
#include "client.h"
#include "clock.h"
#include "err.h"
#include "loadgen.h"
#include "workload.h"

#define MAX_PATHS 64
#define WHY_IDS 200

struct load {
    int conns, threads;
    char *why[WHY_IDS];
    size_t nwhy;
    char **paths; /* the mix */
    size_t npaths;
    const char *encoding;                /* Accept-Encoding, NULL: none */
    int nice;                            /* the generator threads' nice value, 0: the process's */
    int fifo;                            /* they run SCHED_FIFO instead */
    int front_rt;                        /* musterd runs with front_priority realtime */
    const char *cycle_cpus, *front_cpus; /* musterd's cycle_cpus and front_cpus, or NULL */
    struct cpus gen_cpus;                /* the generator threads' CPUs (unset: any) */
};

static void die(const char *what)
{
    fprintf(stderr, "bench_reads: %s\n", what);
    exit(1);
}

/* musterd on a new store in dir, with front_priority realtime, cycle_cpus and front_cpus as
 * l asks (else no config: a build from before these settings runs too). */
static pid_t start_musterd(const char *dir, const struct load *l, char *url, size_t url_size)
{
    int port;
    char *cfg = xasprintf("%s/musterd.yml", dir);
    int any = l->front_rt || l->cycle_cpus || l->front_cpus;
    if (any) {
        FILE *f = fopen(cfg, "w");
        if (!f || (l->front_rt && fputs("front_priority: realtime\n", f) < 0) ||
            (l->cycle_cpus && fprintf(f, "cycle_cpus: \"%s\"\n", l->cycle_cpus) < 0) ||
            (l->front_cpus && fprintf(f, "front_cpus: \"%s\"\n", l->front_cpus) < 0) ||
            fclose(f) != 0)
            die("cannot write musterd's config");
    }
    const char *extra[] = {"--config", cfg, NULL};
    pid_t pid = bench_musterd_start(dir, "data", any ? extra : NULL, &port);
    free(cfg);
    snprintf(url, url_size, "http://127.0.0.1:%d", port);
    return pid;
}

/* A kind: List of docs as the body of an apply (new). */
static char *list_body(json_t *docs)
{
    json_t *list = json_pack("{s:s,s:s,s:O}", "apiVersion", "v1", "kind", "List", "items", docs);
    char *body = json_dumps(list, JSON_COMPACT);
    json_decref(list);
    return body;
}

static void post(struct client *c, const char *body)
{
    struct client_response r = CLIENT_RESPONSE_INIT;
    struct err err = ERR_INIT;

    if (client_request(c, "POST", "/api/v1/manifests", body, strlen(body), "application/json", &r,
                       &err) < 0)
        die(err.msg);
    if (r.status != 200 && r.status != 201) {
        fprintf(stderr, "%.500s\n", r.body ? r.body : "");
        die("apply refused");
    }
    client_response_release(&r);
}

/* The jobs of w as the bodies of applies of about batch pods each, up to pods in all
 * (*n of them, with the pods applied once each is, in sent[]); the first batch's jobs are
 * the ones whose why is read (l->why). Made before musterd starts: the applying client
 * stands for one on another machine, and rendering a batch while the clock runs took the
 * cores the reads and the cycles share (bench/README.md, "Session 22"). */
static char **batches(const struct workload *w, size_t batch, size_t pods, struct load *l,
                      size_t **sent, size_t *n)
{
    size_t j = 0, njobs = json_array_size(w->jobs), total = 0, cap = 0;
    char **bodies = NULL;
    *sent = NULL;
    *n = 0;
    while (j < njobs && total < pods) {
        json_t *docs = json_array();
        for (size_t in_batch = 0; j < njobs && in_batch < batch && total < pods; j++) {
            json_t *job = json_array_get(w->jobs, j);
            json_array_extend(docs, job);
            in_batch += json_array_size(job), total += json_array_size(job);
            json_t *md = json_object_get(json_array_get(job, 0), "metadata");
            if (*n == 0 && l->nwhy < WHY_IDS)
                l->why[l->nwhy++] =
                    xasprintf("%s/%s", json_string_value(json_object_get(md, "namespace")),
                              json_string_value(json_object_get(md, "name")));
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            bodies = xrealloc(bodies, cap * sizeof(*bodies));
            *sent = xrealloc(*sent, cap * sizeof(**sent));
        }
        bodies[*n] = list_body(docs);
        (*sent)[(*n)++] = total;
        json_decref(docs);
    }
    return bodies;
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

/* The path of request k: the mix's paths in turn, "{why}" replaced by a job id
 * (loadgen_path_fn). */
static const char *path_of(void *ctx, long k, char *buf, size_t n)
{
    const struct load *l = ctx;
    const char *p = l->paths[(size_t)k % l->npaths];
    const char *at = strstr(p, "{why}");
    if (!at)
        return p;
    snprintf(buf, n, "%.*s%s%s", (int)(at - p), p, l->why[(size_t)(k / (long)l->npaths) % l->nwhy],
             at + 5);
    return buf;
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

/* The CPU time of task (a thread id, or "" for the whole process) of process pid, in
 * seconds (utime + stime of its stat). */
static double task_cpu(pid_t pid, const char *task)
{
    char path[64], buf[1024];
    unsigned long ut = 0, st = 0;
    if (*task)
        snprintf(path, sizeof(path), "/proc/%d/task/%.16s/stat", (int)pid, task);
    else
        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')'); /* the command may hold spaces */
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
        die("cannot read /proc/PID/stat");
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The CPU time process pid has used, in seconds. */
static double proc_cpu(pid_t pid)
{
    return task_cpu(pid, "");
}

/* Into sched[0] and sched[1], the seconds task (a thread id) of process pid has run and has
 * waited runnable for a core (its schedstat, in ns, not ticks). */
static void task_sched(pid_t pid, const char *task, double sched[2])
{
    char path[64];
    unsigned long long run = 0, wait = 0;
    snprintf(path, sizeof(path), "/proc/%d/task/%.16s/schedstat", (int)pid, task);
    FILE *f = fopen(path, "r");
    if (f && fscanf(f, "%llu %llu", &run, &wait) != 2)
        run = wait = 0;
    if (f)
        fclose(f);
    sched[0] += (double)run / 1e9;
    sched[1] += (double)wait / 1e9;
}

/* The CPU time of process pid's threads named name, in seconds (0 when it has none); with
 * sched set, instead their schedstat's run and wait times summed into sched[0] and [1]. */
static double threads_time(pid_t pid, const char *name, double sched[2])
{
    char path[64], comm[64];
    double sum = 0;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%.16s/comm", (int)pid, e->d_name);
        FILE *f = fopen(path, "r");
        int same = f && fgets(comm, sizeof(comm), f) && !strncmp(comm, name, strlen(name)) &&
                   comm[strlen(name)] == '\n';
        if (f)
            fclose(f);
        if (same && sched)
            task_sched(pid, e->d_name, sched);
        else if (same)
            sum += task_cpu(pid, e->d_name);
    }
    if (d)
        closedir(d);
    return sum;
}

static double threads_cpu(pid_t pid, const char *name)
{
    return threads_time(pid, name, NULL);
}

/* The CPU time the calling thread has used, in seconds. */
static double thread_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Prints the latencies of r: all, and the p99 of each path of the mix. Returns the p99 of
 * all (r's latencies end up sorted, no longer beside r->k). */
static double print_latency(const struct load *l, struct loadgen_result *r, double window)
{
    double *by[MAX_PATHS] = {0};
    size_t nby[MAX_PATHS] = {0}, capby[MAX_PATHS] = {0};
    for (size_t i = 0; i < r->n; i++) {
        size_t p = (size_t)r->k[i] % l->npaths;
        XGROW(by[p], nby[p] + 1, capby[p]);
        by[p][nby[p]++] = r->lat_ms[i];
    }
    /* the parts: the generator's own lag (due to sent), the server's (sent to the answer's
     * last bytes in the client's socket), the generator's wake-up (from then to read) */
    double *lag = xcalloc(r->n + 1, sizeof(double)), *wire = xcalloc(r->n + 1, sizeof(double)),
           *wake = xcalloc(r->n + 1, sizeof(double));
    for (size_t i = 0; i < r->n; i++) {
        lag[i] = r->sent_ms[i];
        wire[i] = r->wire_ms[i];
        wake[i] = r->lat_ms[i] - r->sent_ms[i] - r->wire_ms[i];
    }
    qsort(lag, r->n, sizeof(double), cmp_double);
    qsort(wire, r->n, sizeof(double), cmp_double);
    qsort(wake, r->n, sizeof(double), cmp_double);
    qsort(r->lat_ms, r->n, sizeof(double), cmp_double);
    printf("sent %7zu (%6.0f/s)  non-200 %ld  p50 %7.2f ms  p99 %7.2f ms  max %8.2f ms",
           r->n + (size_t)r->bad, (double)(r->n + (size_t)r->bad) / window, r->bad,
           pct(r->lat_ms, r->n, 0.5), pct(r->lat_ms, r->n, 0.99), r->n ? r->lat_ms[r->n - 1] : 0.0);
    for (size_t p = 0; p < l->npaths; p++) {
        qsort(by[p], nby[p], sizeof(double), cmp_double);
        printf("%s%s p99 %.2f ms", p ? "," : "\n        by path:", l->paths[p],
               pct(by[p], nby[p], 0.99));
        free(by[p]);
    }
    printf("\n        p99 of the parts: due to sent %.2f ms (the generator's lag), sent to "
           "arrived %.2f ms (musterd and loopback), arrived to read %.2f ms (the generator's "
           "wake-up)",
           pct(lag, r->n, 0.99), pct(wire, r->n, 0.99), pct(wake, r->n, 0.99));
    free(lag);
    free(wire);
    free(wake);
    return pct(r->lat_ms, r->n, 0.99);
}

/* The median of v[0], v[stride], ... (n of them); sorts a copy. */
static double median_of(const double *v, size_t n, size_t stride)
{
    double *c = xcalloc(n, sizeof(double));
    for (size_t i = 0; i < n; i++)
        c[i] = v[i * stride];
    qsort(c, n, sizeof(double), cmp_double);
    double m = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
    free(c);
    return m;
}

/* What a run measured. */
struct run {
    double tput; /* cycle throughput, pods/s */
    double cpu;  /* musterd's CPU seconds over the window */
    double p99;  /* ms */
};

/* What musterd and the bench had done at a moment: cycles, placements, CPU. */
struct gauges {
    double placed, secs; /* pods placed, seconds of cycles (musterd's /metrics) */
    double cpu, front;   /* musterd's CPU, its front end thread's */
    double cyc[2];       /* the cycle thread's run and wait for a core (threads_time) */
    double self;         /* this thread's CPU: the applying client's */
    int64_t ns;
};

static void gauges_read(struct client *c, pid_t pid, struct gauges *g)
{
    *g = (struct gauges){.placed = metric(c, "muster_pods_placed_total"),
                         .secs = metric(c, "muster_cycle_duration_seconds_sum"),
                         .cpu = proc_cpu(pid),
                         .front = threads_cpu(pid, "musterd-front"),
                         .self = thread_cpu(),
                         .ns = clock_mono_ns()};
    threads_time(pid, "musterd-cycle", g->cyc);
}

/* Prints a run's line from its gauges at the start (a) and end (b) of the reading window and
 * the generator's result r; returns what the run measured. */
static struct run print_run(struct client *c, const struct load *l, double rate,
                            const struct gauges *a, const struct gauges *b,
                            struct loadgen_result *r, struct run idle)
{
    double window = (double)(b->ns - a->ns) / 1e9, cpu = b->cpu - a->cpu;
    double secs = b->secs - a->secs, placed = b->placed - a->placed;
    double tput = secs > 0 ? placed / secs : 0, p99 = 0;
    printf("%6.0f req/s  cycles %6.0f pods/s", rate, tput);
    if (idle.tput > 0)
        printf(" (%.2f of idle)", tput / idle.tput);
    printf("  musterd CPU %.2f s  [%.1f s]  applying client %.2f s", cpu, window,
           b->self - a->self);
    if (rate > 0) {
        size_t asked = r->n + (size_t)r->bad;
        double per = asked ? 1e6 / (double)asked : 0; /* ms per 1,000 requests, per second */
        printf("  generator CPU %.2f s%s%s\n        per 1,000 requests:", r->cpu_s,
               r->nice_refused ? " (its nice value or policy refused: not root?)" : "",
               r->pin_refused ? " (its CPUs refused)" : "");
        if (idle.tput > 0)
            printf(" musterd %.0f ms of CPU more than the idle run's,", (cpu - idle.cpu) * per);
        printf(" front end's thread %.0f ms, generator %.0f ms; %ld sent over 1 ms late\n        ",
               (b->front - a->front) * per, r->cpu_s * per, r->late);
        p99 = print_latency(l, r, window);
        printf("\n        stale max %.0f ms (%.0f remakes, %.2f s CPU)",
               metric(c, "muster_read_stale_seconds_max") * 1e3,
               metric(c, "muster_read_remakes_total"),
               metric(c, "muster_read_remake_cpu_seconds_total"));
    }
    printf("\n        the cycle thread: ran %.3f s, waited for a core %.3f s; cycles %.3f s\n",
           b->cyc[0] - a->cyc[0], b->cyc[1] - a->cyc[1], secs);
    fflush(stdout);
    return (struct run){tput, cpu, p99};
}

/* One run at rate (0: no reads); idle is the run without reads (all zero: none yet). */
static struct run run_rate(const struct workload *w, struct load *mix, double rate, size_t batch,
                           size_t pods, struct run idle, int keep)
{
    char dir[] = "/tmp/muster-bench-reads-XXXXXX", url[64];
    struct load l = {.paths = mix->paths, .npaths = mix->npaths, .encoding = mix->encoding};
    struct loadgen *gen = NULL;
    struct client *c = NULL;
    struct err err = ERR_INIT;
    struct gauges a = {0}, b = {0};

    if (!mkdtemp(dir))
        die("mkdtemp failed");
    size_t nbodies, *sent_after;
    char *infra = list_body(w->infra),
         **bodies = batches(w, batch, pods, &l, &sent_after, &nbodies);
    pid_t pid = start_musterd(dir, mix, url, sizeof(url));
    if (client_open(url, NULL, &c, &err) < 0)
        die(err.msg);
    post(c, infra);
    /* the first batch before reading starts */
    for (size_t k = 0; k < nbodies; k++) {
        post(c, bodies[k]);
        if (k > 0)
            continue;
        while (metric(c, "muster_pods_placed_total") < (double)sent_after[0])
            usleep(10000);
        if (rate > 0)
            prime(c, &l);
        gauges_read(c, pid, &a);
        if (rate > 0)
            gen = loadgen_start(
                &(struct loadgen_options){.url = url,
                                          .rate = rate,
                                          .conns = mix->conns,
                                          .threads = mix->threads,
                                          .encoding = l.encoding,
                                          .path = path_of,
                                          .nice = mix->nice,
                                          .fifo = mix->fifo,
                                          .cpus = mix->gen_cpus.set ? &mix->gen_cpus : NULL,
                                          .ctx = &l});
    }
    while (nbodies && metric(c, "muster_pods_placed_total") < (double)sent_after[nbodies - 1])
        usleep(10000);
    struct loadgen_result r = {0};
    if (gen)
        loadgen_stop(gen, &r);
    gauges_read(c, pid, &b);
    struct run run = print_run(c, &l, rate, &a, &b, &r, idle);
    loadgen_result_release(&r);
    for (size_t i = 0; i < l.nwhy; i++)
        free(l.why[i]);
    for (size_t k = 0; k < nbodies; k++)
        free(bodies[k]);
    free(bodies);
    free(sent_after);
    free(infra);
    client_close(c);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    if (!keep) {
        char *cmd = xasprintf("rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "bench_reads: could not remove %s\n", dir);
        free(cmd);
    }
    return run;
}

/* One line per rate over the rounds: the medians, and each round's ratio to its own idle run. */
static void summarise(const double *rate_of, size_t nrates, const struct run *runs,
                      const double *ratio, int repeat)
{
    printf("medians over %d rounds (each ratio is to the idle run of its own round):\n", repeat);
    for (size_t i = 0; i < nrates; i++) {
        double tput[99], p99[99];
        for (int r = 0; r < repeat; r++) {
            tput[r] = runs[(size_t)r * nrates + i].tput;
            p99[r] = runs[(size_t)r * nrates + i].p99;
        }
        printf("%6.0f req/s  cycles %6.0f pods/s", rate_of[i], median_of(tput, (size_t)repeat, 1));
        if (ratio[i] > 0) {
            printf("  of idle %.2f (", median_of(ratio + i, (size_t)repeat, nrates));
            for (int r = 0; r < repeat; r++)
                printf("%s%.2f", r ? " " : "", ratio[(size_t)r * nrates + i]);
            printf(")");
        }
        if (rate_of[i] > 0)
            printf("  p99 %.2f ms", median_of(p99, (size_t)repeat, 1));
        printf("\n");
    }
}

/* mix->paths from the comma-separated mix_arg, resourceVersion=rv added to the routes that
 * take it (docs/api.md) unless rv is "none". */
static void mix_paths(struct load *mix, const char *mix_arg, const char *rv)
{
    size_t cap = 0;
    for (const char *p = mix_arg; *p;) {
        size_t len = strcspn(p, ",");
        char *path = xstrndup(p, len);
        if (strcmp(rv, "none") != 0 &&
            (!strncmp(path, "/api/v1/jobs", 12) || !strncmp(path, "/api/v1/topology", 16))) {
            char *with =
                xasprintf("%s%cresourceVersion=%s", path, strchr(path, '?') ? '&' : '?', rv);
            free(path);
            path = with;
        }
        XGROW(mix->paths, mix->npaths + 1, cap);
        mix->paths[mix->npaths++] = path;
        p += len + (p[len] == ',');
    }
    if (!mix->npaths || mix->npaths > MAX_PATHS)
        die("--mix names no path, or more than 64");
}

/* What every run of the rounds shares. */
struct round_opts {
    const struct workload *w;
    struct load *mix;
    size_t batch, pods;
    int keep, repeat;
};

/* The rates of rate_of, each in turn, o->repeat rounds, then the medians when more than one. */
static void run_rounds(const struct round_opts *o, const double *rate_of, size_t nrates)
{
    /* runs[round * nrates + i]; each round's idle run is the first rate of 0 in it */
    struct run *runs = xcalloc((size_t)o->repeat * nrates, sizeof(*runs));
    double *ratio = xcalloc((size_t)o->repeat * nrates, sizeof(double));
    for (int round = 0; round < o->repeat; round++) {
        struct run idle = {0};
        if (o->repeat > 1)
            printf("round %d of %d\n", round + 1, o->repeat);
        for (size_t i = 0; i < nrates; i++) {
            struct run *run = &runs[(size_t)round * nrates + i];
            *run = run_rate(o->w, o->mix, rate_of[i], o->batch, o->pods, idle, o->keep);
            if (rate_of[i] == 0 && idle.tput == 0)
                idle = *run;
            ratio[(size_t)round * nrates + i] = idle.tput > 0 ? run->tput / idle.tput : 0;
        }
    }
    if (o->repeat > 1)
        summarise(rate_of, nrates, runs, ratio, o->repeat);
    free(runs);
    free(ratio);
}

/* The command line. */
struct opts {
    size_t nodes, pods, batch;
    int conns, threads, keep, repeat, gen_nice, fifo, front_rt;
    const char *rates, *rv, *encoding, *mix_arg, *cycle_cpus, *front_cpus, *gen_cpus;
};

static void parse_args(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.nodes = 5000,
                       .pods = 50000,
                       .batch = 1000,
                       .conns = 16,
                       .threads = 2,
                       .repeat = 1,
                       .gen_nice = -5,
                       .rates = "0,500,1000,2000,5000",
                       .rv = "0",
                       .encoding = "gzip",
                       .mix_arg = "/api/v1/jobs?limit=100,/api/v1/jobs/{why}/why,"
                                  "/api/v1/topology?jobs=4,/api/v1/audit?tail=20"};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--keep")) {
            o->keep = 1;
            continue;
        }
        if (!strcmp(a, "--generator-fifo")) {
            o->fifo = 1;
            continue;
        }
        if (!v)
            die("usage: bench_reads [--nodes N] [--pods N] [--batch N] [--threads N] [--conns N] "
                "[--rates R,R,...] [--repeat N] [--mix PATH,...] [--keep] [--resource-version "
                "0|none] [--encoding gzip|identity] [--generator-nice N] [--generator-fifo] "
                "[--front-priority normal|realtime] [--cycle-cpus LIST] [--front-cpus LIST] "
                "[--generator-cpus LIST]");
        /* the options whose value is kept as given */
        const struct {
            const char *name;
            const char **to;
        } texts[] = {{"--rates", &o->rates},
                     {"--mix", &o->mix_arg},
                     {"--resource-version", &o->rv},
                     {"--encoding", &o->encoding},
                     {"--cycle-cpus", &o->cycle_cpus},
                     {"--front-cpus", &o->front_cpus},
                     {"--generator-cpus", &o->gen_cpus}};
        size_t t = 0;
        while (t < sizeof(texts) / sizeof(texts[0]) && strcmp(a, texts[t].name))
            t++;
        if (t < sizeof(texts) / sizeof(texts[0]))
            *texts[t].to = v;
        else if (!strcmp(a, "--nodes"))
            o->nodes = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--pods"))
            o->pods = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--batch"))
            o->batch = strtoul(v, NULL, 10);
        else if (!strcmp(a, "--repeat"))
            o->repeat = atoi(v);
        else if (!strcmp(a, "--threads"))
            o->threads = atoi(v);
        else if (!strcmp(a, "--conns"))
            o->conns = atoi(v);
        else if (!strcmp(a, "--generator-nice"))
            o->gen_nice = atoi(v);
        else if (!strcmp(a, "--front-priority") && strcmp(v, "normal") && strcmp(v, "realtime"))
            die("--front-priority must be normal or realtime");
        else if (!strcmp(a, "--front-priority"))
            o->front_rt = !strcmp(v, "realtime");
        else
            die("unknown option");
        i++;
    }
    if (o->threads < 1 || o->threads > 64 || o->conns < o->threads || o->conns > 1024 ||
        o->repeat < 1 || o->repeat > 99 || !o->nodes || !o->batch || o->gen_nice < -20 ||
        o->gen_nice > 19)
        die("--threads must be 1..64, --conns threads..1024, --repeat 1..99, --nodes and --batch "
            "above 0, --generator-nice -20..19");
    if (strcmp(o->rv, "none") != 0 && strspn(o->rv, "0123456789") != strlen(o->rv))
        die("--resource-version must be a number or none");
    if (strcmp(o->encoding, "gzip") != 0 && strcmp(o->encoding, "identity") != 0)
        die("--encoding must be gzip or identity");
}

int main(int argc, char **argv)
{
    struct load mix = {0};
    struct workload w;
    struct err err = ERR_INIT;
    struct opts o;

    parse_args(argc, argv, &o);
    mix.fifo = o.fifo;
    mix.front_rt = o.front_rt;
    mix.cycle_cpus = o.cycle_cpus;
    mix.front_cpus = o.front_cpus;
    struct cpus check;
    if ((o.cycle_cpus && cpus_parse(o.cycle_cpus, &check, &err) < 0) ||
        (o.front_cpus && cpus_parse(o.front_cpus, &check, &err) < 0) ||
        (o.gen_cpus && (cpus_parse(o.gen_cpus, &mix.gen_cpus, &err) < 0 ||
                        cpus_allowed(&mix.gen_cpus, &err) < 0)))
        die(err.msg);
    signal(SIGPIPE, SIG_IGN);
    mix.conns = o.conns;
    mix.threads = o.threads;
    mix.encoding = strcmp(o.encoding, "identity") ? o.encoding : NULL;
    mix.nice = o.gen_nice;
    mix_paths(&mix, o.mix_arg, o.rv);
    if (workload_make("basic", o.nodes, &w, &err) < 0)
        die(err.msg);
    char policy[32];
    snprintf(policy, sizeof(policy), mix.fifo ? "SCHED_FIFO" : "nice %d", o.gen_nice);
    printf("Basic: %zu nodes, %zu pods in batches of %zu; %d generator threads at %s on CPUs %s, "
           "at most %d connections; resourceVersion %s, encoding %s; musterd's front_priority "
           "%s, cycle_cpus %s, front_cpus %s\n",
           o.nodes, o.pods < w.pods ? o.pods : w.pods, o.batch, o.threads, policy,
           o.gen_cpus ? o.gen_cpus : "any", o.conns, o.rv, o.encoding,
           mix.front_rt ? "realtime" : "normal", o.cycle_cpus ? o.cycle_cpus : "any",
           o.front_cpus ? o.front_cpus : "any");
    size_t nrates = 0;
    double rate_of[32];
    for (const char *p = o.rates; *p && nrates < 32; nrates++) {
        rate_of[nrates] = strtod(p, NULL);
        p += strcspn(p, ",");
        p += *p == ',';
    }
    struct round_opts ro = {&w, &mix, o.batch, o.pods, o.keep, o.repeat};
    run_rounds(&ro, rate_of, nrates);
    workload_release(&w);
    for (size_t i = 0; i < mix.npaths; i++)
        free(mix.paths[i]);
    free(mix.paths);
    return 0;
}
