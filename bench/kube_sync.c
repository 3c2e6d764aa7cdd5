/*
 * kube_sync.c - how fast the Kubernetes mirror follows a large cluster.
 *
 * Starts tests/kubeapi/server.py, fills it with --nodes nodes and --pods pods
 * (bound round-robin), mirrors it into a fresh store through the scheduler, and
 * reports the initial sync time; then the server modifies pods at increasing
 * rates (--rates, events/s, each for --seconds) and the bench reports, per rate,
 * how long after the churn stopped the mirror had applied the server's last
 * resourceVersion (lag) and the applied event rate. A rate is "kept up with"
 * when the lag stays under one second.
 *
 *     bench_kube_sync [--nodes 5000] [--pods 50000] [--rates 1000,2000,4000]
 *                     [--seconds 10] [--sync none|meta|full] [--batch 500]
 *                     [--bind N [--bind-delay MS]]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "kube.h"
#include "kube_internal.h"
#include "log.h"
#include "scheduler.h"
#include "store.h"

static json_t *control(struct kube_http *h, const char *what, json_t *body)
{
    struct kube_resp r = {0};
    struct err err = ERR_INIT;
    char *path = xasprintf("/control/%s", what), *text = json_dumps(body, JSON_COMPACT);
    if (kube__http_request(h, body ? "POST" : "GET", path, NULL, body ? text : NULL, 0, &r, &err) <
            0 ||
        r.status != 200) {
        fprintf(stderr, "control %s failed: %s (HTTP %ld)\n", what, err.msg, r.status);
        exit(1);
    }
    json_t *doc = json_loadb(r.body, r.len, 0, NULL);
    kube__resp_release(&r);
    free(path);
    free(text);
    return doc;
}

static pid_t start_server(const char *dir, int *port)
{
    char *port_file = xasprintf("%s/port", dir);
    char *script = xasprintf("%s/tests/kubeapi/server.py", MUSTER_SOURCE_DIR);
    pid_t pid = fork();
    if (pid == 0) {
        execlp("python3", "python3", script, "--port-file", port_file, "--history", "1000000",
               (char *)NULL);
        _exit(127);
    }
    *port = 0;
    for (int i = 0; i < 500 && !*port; i++) {
        FILE *f = fopen(port_file, "r");
        if (f) {
            if (fscanf(f, "%d", port) != 1)
                *port = 0;
            fclose(f);
        }
        usleep(20000);
    }
    free(port_file);
    free(script);
    return pid;
}

static long long applied_rv(struct kube *k, const char *resource)
{
    json_t *doc = kube_sources_json(k), *e;
    size_t i;
    long long rv = 0;
    json_array_foreach(json_object_get(doc, "sources"), i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "resource")), resource))
            rv = atoll(json_string_value(json_object_get(e, "resourceVersion")));
    }
    json_decref(doc);
    return rv;
}

static json_int_t counter(struct kube *k, const char *name)
{
    json_t *doc = kube_sources_json(k);
    json_int_t v = json_integer_value(json_object_get(json_object_get(doc, "counters"), name));
    json_decref(doc);
    return v;
}

/* Cycles until n pending pods are placed, then waits for the write-back. */
static void bind_phase(struct kube *k, struct sched *s, int n)
{
    struct err err = ERR_INIT;
    json_int_t b0 = counter(k, "bindings"), e0 = counter(k, "eventsWritten");
    int64_t t0 = clock_mono_ms();
    double cycles_ms = 0;
    long placed = 0;
    while (placed < n && clock_mono_ms() - t0 < 600000) {
        json_t *sum = NULL;
        if (sched_cycle(s, clock_now_ms(), &sum, &err) < 0) {
            fprintf(stderr, "cycle: %s\n", err.msg);
            exit(1);
        }
        placed += (long)json_integer_value(json_object_get(sum, "placed"));
        cycles_ms += json_real_value(json_object_get(sum, "durationMs"));
        json_decref(sum);
    }
    int64_t t1 = clock_mono_ms();
    while (counter(k, "bindings") - b0 < n && clock_mono_ms() - t1 < 600000)
        usleep(5000);
    int64_t t2 = clock_mono_ms();
    /* each pod's Scheduled Event follows its binding: read the count once all are written */
    if (kube_wait_writeback(k, 600000, &err) < 0)
        fprintf(stderr, "write-back: %s\n", err.msg);
    json_int_t bound = counter(k, "bindings") - b0, events = counter(k, "eventsWritten") - e0;
    printf("bind %d pending pods: placed %ld in %.0f ms of cycles; %lld bindings acknowledged "
           "%.2f s after the first cycle (%.0f bindings/s), %lld Events written\n",
           n, placed, cycles_ms, (long long)bound, (t2 - t0) / 1000.0,
           bound * 1000.0 / (double)(t2 - t0 > 0 ? t2 - t0 : 1), (long long)events);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int nodes = 5000, pods = 50000, seconds = 10, batch = 500, bind = 0, bind_delay = 0;
    const char *rates = "1000,2000,4000", *sync = "none";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--nodes"))
            nodes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--pods"))
            pods = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rates"))
            rates = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--sync"))
            sync = argv[i + 1];
        else if (!strcmp(argv[i], "--batch"))
            batch = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--bind"))
            bind = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--bind-delay"))
            bind_delay = atoi(argv[i + 1]);
    }
    log_set_level(getenv("BENCH_DEBUG") ? LOG_DEBUG : LOG_WARN);
    char dir[] = "/tmp/bench-kube-XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    int port;
    pid_t pid = start_server(dir, &port);
    if (!port) {
        fprintf(stderr, "test API server did not start\n");
        return 1;
    }
    struct kube_conn cc = {0};
    cc.server = xasprintf("http://127.0.0.1:%d", port);
    struct kube_http *h = kube__http_new(&cc, NULL);
    int64_t t = clock_mono_ms();
    json_decref(control(h, "generate",
                        json_pack("{s:i,s:i,s:i}", "nodes", nodes, "pods", pods, "pending", bind)));
    printf("server filled: %d nodes, %d pods in %.1f s\n", nodes, pods,
           (clock_mono_ms() - t) / 1000.0);
    if (bind_delay) /* each binding answered that much later: an API server's latency */
        json_decref(control(h, "binding-delay", json_pack("{s:i}", "ms", bind_delay)));
    char *kc = xasprintf("%s/kubeconfig", dir);
    FILE *f = fopen(kc, "w");
    fprintf(f,
            "apiVersion: v1\nkind: Config\ncurrent-context: b\nclusters:\n- name: b\n  cluster:\n"
            "    server: %s\ncontexts:\n- name: b\n  context: {cluster: b, user: u}\nusers:\n"
            "- name: u\n  user: {}\n",
            cc.server);
    fclose(f);

    struct err err = ERR_INIT;
    struct store_options so = {.dir = dir, .map_size = 1UL << 30};
    struct store *st = NULL;
    struct sched *s = NULL;
    struct kube *k = NULL;
    if (store_sync_parse(sync, &so.sync, &err) < 0 || store_open(&so, &st, &err) < 0 ||
        sched_open(st, NULL, &s, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    struct kube_options o = KUBE_OPTIONS_INIT;
    o.kubeconfig = kc;
    o.batch_max = batch;
    o.scheduler_name = bind ? "muster" : NULL;
    t = clock_mono_ms();
    if (kube_open(s, st, &o, &k, &err) < 0 || kube_start(k, &err) < 0 ||
        kube_wait_synced(k, 1800000, &err) < 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    double sync_s = (clock_mono_ms() - t) / 1000.0;
    printf("initial sync: %.2f s (%.0f objects/s), sync=%s, batch=%d\n", sync_s,
           (nodes + pods) / sync_s, sync, batch);

    if (bind)
        bind_phase(k, s, bind);
    char *list = xstrdup(bind ? "" : rates), *save = NULL;
    for (char *r = strtok_r(list, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
        json_t *before = kube_sources_json(k);
        json_int_t ev0 =
            json_integer_value(json_object_get(json_object_get(before, "counters"), "events"));
        json_decref(before);
        int64_t t0 = clock_mono_ms();
        json_t *res =
            control(h, "churn", json_pack("{s:f,s:i}", "rate", atof(r), "seconds", seconds));
        int64_t t1 = clock_mono_ms();
        long long target = json_integer_value(json_object_get(res, "rv"));
        json_int_t sent = json_integer_value(json_object_get(res, "events"));
        while (applied_rv(k, "pods") < target && clock_mono_ms() - t1 < 600000)
            usleep(10000);
        int64_t t2 = clock_mono_ms();
        json_t *after = kube_sources_json(k);
        json_int_t ev1 =
            json_integer_value(json_object_get(json_object_get(after, "counters"), "events"));
        json_decref(after);
        printf("rate %s/s: server sent %lld events in %.1f s, mirror applied %lld; lag after "
               "churn %.2f s; applied %.0f events/s -> %s\n",
               r, (long long)sent, (t1 - t0) / 1000.0, (long long)(ev1 - ev0), (t2 - t1) / 1000.0,
               (ev1 - ev0) * 1000.0 / (double)(t2 - t0),
               t2 - t1 < 1000 ? "kept up" : "fell behind");
        fflush(stdout);
        json_decref(res);
    }
    free(list);
    kube_close(k);
    sched_close(s);
    store_close(st);
    kube__http_free(h);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    char *cmd = xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    free(cmd);
    free(kc);
    free(cc.server);
    return 0;
}
