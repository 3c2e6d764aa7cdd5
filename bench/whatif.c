/*
 * whatif.c - what what-ifs cost the live cycle (issue #26): cycle latency with 50 what-ifs
 * a second running beside it, against without, in alternating blocks of one run.
 *
 * The cluster is the Slurm mixed shape (workload.h "slurm-mixed", 1,024 nodes): the first
 * half of its jobs are applied and placed; then every 100 ms a batch of the next jobs is
 * applied and one cycle runs (its durationMs is the latency measured), while in every other
 * block of rounds a thread sends what-ifs open-loop at --rate a second (what-if k is due at
 * start + k / rate; its latency runs from then), each one a new pod of 1 GPU in a queue of
 * its own. Reports the median and p90 cycle latency of each kind of block and their ratio,
 * and the what-ifs' rate and latency.
 *
 *     bench_whatif [--nodes N] [--rate R] [--rounds N] [--block N] [--sync full|meta|none]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "err.h"
#include "scheduler.h"
#include "store.h"
#include "workload.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(double *v, size_t n, double p)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof(*v), cmp_double);
    size_t i = (size_t)(p * (double)(n - 1) + 0.5);
    return v[i];
}

struct prober {
    struct sched *s;
    double rate;
    volatile int on, stop;
    double *lat;
    size_t n, cap;
    long failed;
};

static void sleep_until(int64_t ns)
{
    int64_t now = clock_mono_ns();
    if (ns > now) {
        struct timespec ts = {(ns - now) / 1000000000, (ns - now) % 1000000000};
        nanosleep(&ts, NULL);
    }
}

static void *probe_loop(void *arg)
{
    struct prober *p = arg;
    char doc[512];
    long k = 0;
    int64_t start = 0;
    while (!p->stop) {
        if (!p->on) {
            start = 0;
            usleep(1000);
            continue;
        }
        if (!start) {
            start = clock_mono_ns();
            k = 0;
        }
        int64_t due = start + (int64_t)((double)k * 1e9 / p->rate);
        sleep_until(due);
        if (!p->on || p->stop)
            continue;
        snprintf(doc, sizeof(doc),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"probe-%ld\","
                 "\"namespace\":\"whatif\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
                 "\"x\",\"resources\":{\"requests\":{\"nvidia.com/gpu\":\"1\"}}}]}}",
                 k);
        struct model_manifest m = {0};
        struct err err = ERR_INIT;
        json_t *out = NULL;
        if (model_manifest_parse(doc, strlen(doc), MODEL_FMT_JSON, &m, &err) == 0) {
            struct sched_whatif in = {&m, NULL, 0, NULL, 0};
            if (sched_whatif(p->s, &in, clock_now_ms(), &out, &err) < 0)
                p->failed++;
        }
        json_decref(out);
        model_manifest_free(&m);
        if (p->n == p->cap) {
            p->cap = p->cap ? 2 * p->cap : 1024;
            p->lat = realloc(p->lat, p->cap * sizeof(*p->lat));
        }
        p->lat[p->n++] = (double)(clock_mono_ns() - due) / 1e6;
        k++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    struct err err = ERR_INIT;
    struct workload w;
    struct store *st = NULL;
    struct sched *s = NULL;
    size_t nodes = 1024, rounds = 100, block = 10;
    double rate = 50;
    enum store_sync sync = STORE_SYNC_FULL;
    int rc = 0;
    char dir[] = "/tmp/muster-bench-XXXXXX";
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
            nodes = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--rate") && i + 1 < argc)
            rate = strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
            rounds = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--block") && i + 1 < argc)
            block = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--sync") && i + 1 < argc &&
                 store_sync_parse(argv[++i], &sync, &err) < 0)
            goto fail;
    if (workload_make("slurm-mixed", nodes, &w, &err) < 0 || !mkdtemp(dir))
        goto fail;
    struct store_options so = {.dir = dir, .sync = sync};
    if (store_open(&so, &st, &err) < 0 || sched_open(st, NULL, &s, &err) < 0)
        goto fail;
    size_t njobs = json_array_size(w.jobs), filled = njobs / 2;
    size_t batch = (njobs - filled) / (rounds ? rounds : 1);
    int64_t now = clock_now_ms();
    json_t *infra = json_array();
    json_array_append(infra, w.infra);
    rc = workload_apply(s, infra, 0, 1, now, &err);
    json_decref(infra);
    if (rc < 0 || workload_apply(s, w.jobs, 0, filled, now, &err) < 0 ||
        sched_cycle(s, now, NULL, &err) < 0)
        goto fail;

    struct prober p = {.s = s, .rate = rate};
    pthread_t t;
    pthread_create(&t, NULL, probe_loop, &p);
    double *off = calloc(rounds + 1, sizeof(double)), *on = calloc(rounds + 1, sizeof(double));
    size_t noff = 0, non = 0;
    double on_seconds = 0;
    int64_t block_start = 0;
    for (size_t r = 0; r < rounds; r++) {
        int with = (r / block) % 2 == 1;
        if (with != p.on) {
            if (with) {
                block_start = clock_mono_ns();
            } else {
                on_seconds += (double)(clock_mono_ns() - block_start) / 1e9;
            }
            p.on = with;
        }
        int64_t round_start = clock_mono_ns();
        size_t from = filled + r * batch;
        json_t *sum = NULL;
        now += 100;
        if (workload_apply(s, w.jobs, from, from + batch, now, &err) < 0 ||
            sched_cycle(s, now, &sum, &err) < 0)
            goto fail_stop;
        double ms = json_real_value(json_object_get(sum, "durationMs"));
        json_decref(sum);
        if (with)
            on[non++] = ms;
        else
            off[noff++] = ms;
        sleep_until(round_start + 100 * 1000000LL);
    }
    if (p.on)
        on_seconds += (double)(clock_mono_ns() - block_start) / 1e9;
    p.stop = 1;
    pthread_join(t, NULL);
    double med_off = pct(off, noff, 0.5), med_on = pct(on, non, 0.5);
    printf("workload        slurm-mixed on %zu nodes: %zu jobs placed first, then %zu rounds "
           "(a batch of %zu jobs applied and one cycle, every 100 ms), blocks of %zu rounds "
           "alternating without and with what-ifs (sync %s)\n",
           nodes, filled, rounds, batch, block, store_sync_name(sync));
    printf("cycle latency   without what-ifs: median %.2f ms, p90 %.2f ms (%zu cycles)\n", med_off,
           pct(off, noff, 0.9), noff);
    printf("cycle latency   with %.0f what-ifs/s: median %.2f ms, p90 %.2f ms (%zu cycles)\n", rate,
           med_on, pct(on, non, 0.9), non);
    printf("ratio           %.3f (median with / without)\n", med_off > 0 ? med_on / med_off : 0);
    printf("what-ifs        %zu answered in %.1f s of blocks with them (%.1f/s), %ld failed; "
           "latency from due: median %.1f ms, p99 %.1f ms\n",
           p.n, on_seconds, on_seconds > 0 ? (double)p.n / on_seconds : 0, p.failed,
           pct(p.lat, p.n, 0.5), pct(p.lat, p.n, 0.99));
    free(off);
    free(on);
    free(p.lat);
    goto out;
fail_stop:
    p.stop = 1;
    pthread_join(t, NULL);
fail:
    fprintf(stderr, "bench_whatif: %s\n", err.msg);
    rc = 1;
out:
    sched_close(s);
    store_close(st);
    workload_release(&w);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc ? 1 : 0;
}
