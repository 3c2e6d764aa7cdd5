/*
 * timeseries.c - the compact time series of the cluster (sched_sample, sched_timeseries):
 * one flat sample of named numbers per interval, stored in the store's time series
 * database keyed by its time, the oldest dropped past the retention.
 *
 * A sample is made under the scheduler's lock from what the view and the counters already
 * hold (node usage, queue allocation, the topology's per-domain totals, job states, the
 * cycle counters): one pass over nodes, jobs and top-level domains, no store read. It is
 * written afterwards in a write transaction of its own, never inside a cycle's. Counters
 * (placements, preemptions, cycles, cycle time) are stored as what happened since the
 * previous sample, so a sample reads alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "topo.h"

/* Keys sort as times: the time in ms, zero-padded. */
#define KEY_FMT "%016lld"

static void put_num(json_t *v, const char *name, double x)
{
    json_object_set_new(v, name,
                        x == (double)(json_int_t)x ? json_integer((json_int_t)x) : json_real(x));
}

/* A resource amount in the unit people read: cores for cpu, whole units otherwise. */
static double amount(const char *res, int64_t value)
{
    return model_resource_is_milli(res) ? (double)value / 1000.0 : (double)value;
}

/* a.b.c = x */
static void put_series(json_t *v, const char *a, const char *b, const char *c, double x)
{
    char name[512];
    snprintf(name, sizeof(name), "%s.%s.%s", a, b, c);
    put_num(v, name, x);
}

/* cluster.{allocatable,used,free}.<res> over schedulable and cordoned nodes alike. */
static void sample_cluster(const struct sched_view *v, json_t *out)
{
    int64_t *alloc = xcalloc(v->nres + 1, sizeof(int64_t)),
            *used = xcalloc(v->nres + 1, sizeof(int64_t));
    for (size_t i = 0; i < v->nnodes; i++) {
        const struct sv_node *n = &v->nodes[i];
        if (!n->alive)
            continue;
        for (size_t k = 0; k < n->m.nallocatable; k++) {
            int r = sched__strmap_get(&v->res_ix, n->m.allocatable[k].name);
            if (r >= 0) {
                alloc[r] += n->m.allocatable[k].value;
                used[r] += n->used[r];
            }
        }
    }
    for (size_t r = 0; r < v->nres; r++) {
        if (!alloc[r])
            continue;
        put_series(out, "cluster", "allocatable", v->res[r], amount(v->res[r], alloc[r]));
        put_series(out, "cluster", "used", v->res[r], amount(v->res[r], used[r]));
        put_series(out, "cluster", "free", v->res[r],
                   amount(v->res[r], alloc[r] > used[r] ? alloc[r] - used[r] : 0));
    }
    free(alloc);
    free(used);
}

/* domain.<name>.{used,free}.<res> for the domains of the topology's first layer. */
static void sample_domains(struct sched_view *v, json_t *out)
{
    struct sched_topo *t = sched__topo_get(v);
    if (!t)
        return;
    for (size_t d = 0; d < t->ndoms; d++) {
        const struct tp_dom *dom = &t->doms[d];
        if (dom->depth != 1)
            continue;
        for (size_t r = 0; r < t->nres && r < v->nres; r++) {
            if (!dom->alloc[r])
                continue;
            char name[512];
            snprintf(name, sizeof(name), "domain.%s.used.%s", dom->name, v->res[r]);
            put_num(out, name, amount(v->res[r], dom->alloc[r] - dom->free[r]));
            snprintf(name, sizeof(name), "domain.%s.free.%s", dom->name, v->res[r]);
            put_num(out, name, amount(v->res[r], dom->free[r]));
        }
    }
}

/* namespace.<ns>.used.<res>: the requests of the pods that use nodes (bound, not terminal),
 * summed per namespace (Slurm's sshare by account). One pass over the pods. */
static void sample_namespaces(const struct sched_view *v, json_t *out)
{
    json_t *sums = json_object(); /* "ns\x1fres" -> integer, model units */
    for (size_t i = 0; i < v->npods; i++) {
        const struct sv_pod *p = &v->pods[i];
        if (!p->alive || !p->counted || p->node < 0)
            continue;
        for (size_t k = 0; k < p->m.nrequests; k++) {
            char key[512];
            snprintf(key, sizeof(key), "%s\x1f%s", p->m.ns, p->m.requests[k].name);
            json_t *x = json_object_get(sums, key);
            json_object_set_new(sums, key,
                                json_integer(json_integer_value(x) + p->m.requests[k].value));
        }
    }
    const char *key;
    json_t *x;
    json_object_foreach(sums, key, x)
    {
        const char *sep = strchr(key, '\x1f');
        char name[600];
        snprintf(name, sizeof(name), "namespace.%.*s.used.%s", (int)(sep - key), key, sep + 1);
        put_num(out, name, amount(sep + 1, json_integer_value(x)));
    }
    json_decref(sums);
}

/* queue.<name>.allocated.<res> from the queues document (model units). */
static void sample_queues(struct sched *s, json_t *out)
{
    json_t *queues = sched__queues_json(s), *q, *r;
    size_t i;
    const char *res;
    json_array_foreach(queues, i, q)
    {
        const char *name = json_string_value(json_object_get(q, "name"));
        json_object_foreach(json_object_get(q, "resources"), res, r)
        {
            json_t *a = json_object_get(r, "allocated");
            char key[512];
            snprintf(key, sizeof(key), "queue.%s.allocated.%s", name, res);
            put_num(out, key, amount(res, json_integer_value(a)));
        }
    }
    json_decref(queues);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* jobs.<State> and wait.{count,p50,max} (seconds the jobs not placed yet have waited
 * since their first pod was created). */
static void sample_jobs(struct sched_view *v, int64_t now_ms, json_t *out)
{
    uint64_t counts[SCHED_JOB_STATE_COUNT] = {0};
    double *waits = xcalloc(v->njobs + 1, sizeof(double));
    size_t nw = 0;
    for (size_t i = 0; i < v->njobs; i++) {
        const struct sv_job *j = &v->jobs[i];
        if (!j->alive)
            continue;
        enum sched_job_state st = sched__job_state(v, j);
        counts[st]++;
        if (st != SCHED_JOB_PENDING && st != SCHED_JOB_UNSCHEDULABLE && st != SCHED_JOB_STARVING &&
            st != SCHED_JOB_PIPELINED && st != SCHED_JOB_TIMED_OUT)
            continue;
        int64_t first = 0;
        for (size_t k = 0; k < j->npods; k++) {
            int64_t c = v->pods[j->pods[k]].m.creation_ms;
            if (c && (!first || c < first))
                first = c;
        }
        if (first && now_ms > first)
            waits[nw++] = (double)((now_ms - first) / 1000); /* whole seconds */
    }
    for (int k = 0; k < SCHED_JOB_STATE_COUNT; k++) {
        char name[64];
        snprintf(name, sizeof(name), "jobs.%s", sched_job_state_name(k));
        put_num(out, name, (double)counts[k]);
    }
    qsort(waits, nw, sizeof(double), cmp_double);
    put_num(out, "wait.count", (double)nw);
    put_num(out, "wait.p50", nw ? waits[nw / 2] : 0);
    put_num(out, "wait.max", nw ? waits[nw - 1] : 0);
    free(waits);
}

/* placements, preemptions, cycles and cycle.us (their mean duration, microseconds) since the
 * previous sample. */
static void sample_counters(struct sched *s, json_t *out)
{
    const struct sched_metrics *m = &s->met;
    struct sched_ts_prev *p = &s->ts_prev;
    uint64_t cycles = m->cycles - p->cycles;
    put_num(out, "placements", (double)(m->pods_placed - p->pods_placed));
    put_num(out, "preemptions", (double)(m->preemptions - p->preemptions));
    put_num(out, "cycles", (double)cycles);
    if (cycles) /* no cycle, no time: a gap, not 0 */
        put_num(out, "cycle.us",
                (double)(int64_t)((m->duration_sum - p->duration_sum) * 1e6 / (double)cycles));
    p->cycles = m->cycles;
    p->pods_placed = m->pods_placed;
    p->preemptions = m->preemptions;
    p->duration_sum = m->duration_sum;
}

static json_t *sample_make(struct sched *s, int64_t now_ms)
{
    json_t *v = json_object();
    pthread_mutex_lock(&s->mu);
    sample_cluster(s->v, v);
    sample_domains(s->v, v);
    sample_queues(s, v);
    sample_namespaces(s->v, v);
    sample_jobs(s->v, now_ms, v);
    sample_counters(s, v);
    pthread_mutex_unlock(&s->mu);
    return json_pack("{s:I, s:o}", "t", (json_int_t)now_ms, "v", v);
}

struct prune {
    int64_t before;
    json_t *keys;
};

static int collect_old(void *ctx, const char *key, json_t *obj)
{
    struct prune *p = ctx;
    if (json_integer_value(json_object_get(obj, "t")) >= p->before)
        return 1; /* keys sort as times: the rest are newer */
    json_array_append_new(p->keys, json_string(key));
    return 0;
}

struct put_ctx {
    json_t *sample;
    int64_t before;
};

static int put_and_prune(MDB_txn *txn, void *ctx, struct err *err)
{
    struct put_ctx *pc = ctx;
    char key[32];
    struct prune p = {.before = pc->before, .keys = json_array()};
    json_t *k;
    size_t i;
    snprintf(key, sizeof(key), KEY_FMT,
             (long long)json_integer_value(json_object_get(pc->sample, "t")));
    int rc = store_doc_put(txn, STORE_DB_TIMESERIES, key, pc->sample, err);
    if (rc == 0)
        rc = store_doc_each(txn, STORE_DB_TIMESERIES, NULL, collect_old, &p, err);
    json_array_foreach(p.keys, i, k)
    {
        if (rc < 0)
            break;
        rc = store_doc_delete(txn, STORE_DB_TIMESERIES, json_string_value(k), err);
    }
    json_decref(p.keys);
    return rc;
}

int sched_sample(struct sched *s, int64_t now_ms, int64_t retention_ms, struct err *err)
{
    struct put_ctx pc = {.sample = sample_make(s, now_ms), .before = now_ms - retention_ms};
    int rc = store_write(s->st, put_and_prune, &pc, err);
    json_decref(pc.sample);
    return rc;
}

struct read_ctx {
    int64_t from, to;
    json_t *times, *series; /* series: name -> array of values, null where a sample lacks it */
    size_t n;
    const char *const *prefixes;
    size_t nprefixes;
};

static int wanted(const struct read_ctx *rc, const char *name)
{
    if (!rc->nprefixes)
        return 1;
    for (size_t i = 0; i < rc->nprefixes; i++)
        if (strncmp(name, rc->prefixes[i], strlen(rc->prefixes[i])) == 0)
            return 1;
    return 0;
}

static int read_one(void *ctx, const char *key, json_t *obj)
{
    struct read_ctx *rc = ctx;
    (void)key;
    json_int_t t = json_integer_value(json_object_get(obj, "t"));
    if (t < rc->from)
        return 0;
    if (rc->to && t > rc->to)
        return 1;
    json_array_append_new(rc->times, json_integer(t));
    const char *name;
    json_t *x, *col;
    json_object_foreach(json_object_get(obj, "v"), name, x)
    {
        if (!wanted(rc, name))
            continue;
        if (!(col = json_object_get(rc->series, name))) {
            col = json_array();
            for (size_t i = 0; i < rc->n; i++)
                json_array_append_new(col, json_null());
            json_object_set_new(rc->series, name, col);
        }
        json_array_append(col, x);
    }
    rc->n++;
    json_object_foreach(rc->series, name, col) if (json_array_size(col) < rc->n)
        json_array_append_new(col, json_null());
    return 0;
}

int sched_timeseries(struct sched *s, int64_t from_ms, int64_t to_ms, const char *const *prefixes,
                     size_t nprefixes, json_t **out, struct err *err)
{
    struct read_ctx rc = {.from = from_ms,
                          .to = to_ms,
                          .times = json_array(),
                          .series = json_object(),
                          .prefixes = prefixes,
                          .nprefixes = nprefixes};
    MDB_txn *txn = NULL;
    char after[32];
    snprintf(after, sizeof(after), KEY_FMT, (long long)(from_ms > 0 ? from_ms - 1 : 0));
    int r = store_txn_begin(s->st, STORE_READ, &txn, err);
    if (r == 0)
        r = store_doc_each_after(txn, STORE_DB_TIMESERIES, from_ms > 0 ? after : NULL, read_one,
                                 &rc, err);
    store_txn_abort(&txn);
    if (r < 0) {
        json_decref(rc.times);
        json_decref(rc.series);
        return r;
    }
    *out = json_pack("{s:o, s:o}", "times", rc.times, "series", rc.series);
    return 0;
}
