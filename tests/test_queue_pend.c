/*
 * test_queue_pend.c - the queues' pending sums (sv_queue.pend, kept by sched__queue_pend)
 * against the scan of every pod they replace (sched__queue_pend_check), after every step of
 * random changes to a view built directly, in a hierarchy of queues:
 *   - pods put new and replaced (bound or not, to a node that exists or not, any phase,
 *     terminating or not, new resources that grow every vector, a queue annotation) and
 *     deleted; bound and unbound (statements); evicted (terminating) and given a phase as
 *     the cycle does;
 *   - PodGroups put with a queue (the job's queue moves) and deleted;
 *   - queues put with a parent (added, re-parented, on a cycle, under a parent that does
 *     not exist) and deleted, the default restored;
 *   - nodes deleted under bound pods and put back (their pods adopted).
 * Every so often the view is rebuilt from the objects as they now are (the order a
 * restart puts them in) and its sums, pending and allocated, equal the live ones; the
 * cycle's request is alloc + pend. A sum changed by hand is caught.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "queue.h"
#include "view.h"

#define NNODES 12
#define NPODS 160 /* pod names: a put of a name in use replaces the pod */
#define NGROUPS 10

static const char *const QUEUES[] = {"default", "a", "b", "c", "a1", "a2", "b1", "a1x"};
#define NQUEUES (sizeof(QUEUES) / sizeof(QUEUES[0]))
/* a queue's parent: none, a queue (itself or one below it too, so parents form cycles, which
 * the view cuts at the member whose name sorts first, as a rebuild does), or one that never
 * exists */
static const char *const PARENTS[] = {NULL, "root", "a", "a", "b", "a1", "a1", "default", "ghost"};

static const char *const PHASES[] = {NULL, "Pending", "Running", "Succeeded", "Failed"};
static const char *const CPUS[] = {"100m", "250m", "1", "2"};

/* The objects as a store would hold them now ({kind: {name: document}}), for rebuilds. */
struct world {
    struct sched_view *v;
    json_t *nodes, *pods, *pgs, *queues;
    unsigned seed;
    int step;
};

static unsigned rnd(struct world *w, unsigned n)
{
    return (unsigned)rand_r(&w->seed) % n;
}

static void put_node_doc(struct sched_view *v, json_t *o)
{
    struct model_node n = {0};
    struct err err = ERR_INIT;
    ck_assert_msg(model_node_decode(o, &n, &err) == 0, "%s", err.msg);
    sched__view_put_node(v, &n);
}

static void put_pod_doc(struct sched_view *v, json_t *o)
{
    struct model_pod p = {0};
    struct err err = ERR_INIT;
    ck_assert_msg(model_pod_decode(o, &p, &err) == 0, "%s", err.msg);
    sched__view_put_pod(v, &p);
}

static void put_pg_doc(struct sched_view *v, json_t *o)
{
    struct model_podgroup g = {0};
    struct err err = ERR_INIT;
    ck_assert_msg(model_podgroup_decode(o, &g, &err) == 0, "%s", err.msg);
    sched__view_put_pg(v, &g);
}

static void put_queue_doc(struct sched_view *v, json_t *o)
{
    struct model_queue q = {0};
    struct err err = ERR_INIT;
    ck_assert_msg(model_queue_decode(o, &q, &err) == 0, "%s", err.msg);
    sched__view_put_queue(v, &q);
}

static void node(struct world *w, int i)
{
    char name[16];
    snprintf(name, sizeof(name), "n-%02d", i);
    json_t *o = json_pack("{s:s,s:s,s:{s:s},s:{s:{s:s,s:s,s:s}}}", "apiVersion", "v1", "kind",
                          "Node", "metadata", "name", name, "status", "allocatable", "cpu", "64",
                          "memory", "256Gi", "pods", "110");
    put_node_doc(w->v, o);
    json_object_set_new(w->nodes, name, o);
}

/* A random pod named p-<i>: in PodGroup g<k> (whose pods agree on a queue annotation, so
 * the job's queue does not depend on their order) or alone with any annotation. */
static void pod(struct world *w, int i)
{
    char name[16], res[32];
    snprintf(name, sizeof(name), "p-%03d", i);
    json_t *req = json_pack("{s:s,s:s}", "cpu", CPUS[rnd(w, 4)], "memory", "1Gi");
    if (rnd(w, 4) == 0) { /* an extended resource, some new to the view */
        snprintf(res, sizeof(res), "example.com/r%u", rnd(w, 1 + (unsigned)w->step / 200));
        json_object_set_new(req, res, json_string("1"));
    }
    json_t *o = json_pack("{s:s,s:s,s:{s:s,s:s,s:{},s:{}},s:{s:[{s:s,s:s,s:{s:o}}]},s:{}}",
                          "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace",
                          "t", "labels", "annotations", "spec", "containers", "name", "c", "image",
                          "x", "resources", "requests", req, "status");
    json_t *meta = json_object_get(o, "metadata");
    const char *queue = NULL;
    if (rnd(w, 2)) {
        unsigned g = rnd(w, NGROUPS);
        char group[8];
        snprintf(group, sizeof(group), "g%u", g);
        json_object_set_new(json_object_get(meta, "labels"), MODEL_LABEL_POD_GROUP,
                            json_string(group));
        queue = g % 2 ? QUEUES[g % NQUEUES] : NULL;
    } else if (rnd(w, 3)) {
        queue = rnd(w, 8) ? QUEUES[rnd(w, NQUEUES)] : "ghost";
    }
    if (queue)
        json_object_set_new(json_object_get(meta, "annotations"), MODEL_ANN_QUEUE_NAME,
                            json_string(queue));
    unsigned where = rnd(w, 6);
    if (where < 2) { /* bound, now and then to a node that does not exist */
        char nn[16];
        snprintf(nn, sizeof(nn), "n-%02u", rnd(w, NNODES + 2));
        json_object_set_new(json_object_get(o, "spec"), "nodeName", json_string(nn));
    }
    const char *phase = PHASES[rnd(w, 5)];
    if (phase)
        json_object_set_new(json_object_get(o, "status"), "phase", json_string(phase));
    if (rnd(w, 10) == 0)
        json_object_set_new(meta, "deletionTimestamp", json_string("2026-01-01T00:00:00Z"));
    put_pod_doc(w->v, o);
    json_object_set_new(w->pods, name, o);
}

static void podgroup(struct world *w, unsigned g)
{
    char name[8];
    snprintf(name, sizeof(name), "g%u", g);
    json_t *o = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:i}}", "apiVersion",
                          "scheduling.volcano.sh/v1beta1", "kind", "PodGroup", "metadata", "name",
                          name, "namespace", "t", "spec", "minMember", 1);
    if (rnd(w, 4))
        json_object_set_new(json_object_get(o, "spec"), "queue",
                            json_string(rnd(w, 8) ? QUEUES[rnd(w, NQUEUES)] : "ghost"));
    put_pg_doc(w->v, o);
    json_object_set_new(w->pgs, name, o);
}

static void queue(struct world *w, const char *name)
{
    json_t *o =
        json_pack("{s:s,s:s,s:{s:s},s:{s:i}}", "apiVersion", "scheduling.volcano.sh/v1beta1",
                  "kind", "Queue", "metadata", "name", name, "spec", "weight", 1 + (int)rnd(w, 4));
    const char *parent = PARENTS[rnd(w, sizeof(PARENTS) / sizeof(PARENTS[0]))];
    if (parent)
        json_object_set_new(json_object_get(o, "spec"), "parent", json_string(parent));
    if (rnd(w, 3) == 0) { /* a capability in a resource perhaps new to the view */
        char res[32];
        snprintf(res, sizeof(res), "example.com/q%u", rnd(w, 1 + (unsigned)w->step / 100));
        json_object_set_new(json_object_get(o, "spec"), "capability",
                            json_pack("{s:s,s:s}", "cpu", "100", res, "4"));
    }
    put_queue_doc(w->v, o);
    json_object_set_new(w->queues, name, o);
}

/* A live pod slot chosen at random, or -1; ok (may be NULL) filters. */
static int some_pod(struct world *w, int (*ok)(const struct sv_pod *))
{
    for (int tries = 0; tries < 64; tries++) {
        int pi = (int)rnd(w, (unsigned)w->v->npods);
        if (w->v->pods[pi].alive && (!ok || ok(&w->v->pods[pi])))
            return pi;
    }
    return -1;
}

static int pending_not_counted(const struct sv_pod *p)
{
    return !p->counted && sched__pod_pending(p);
}

static int counted(const struct sv_pod *p)
{
    return p->counted;
}

static json_t *pod_doc(struct world *w, int pi)
{
    return json_object_get(w->pods, strchr(w->v->pods[pi].key, '/') + 1);
}

/* One random change. Returns what it did, for the messages. */
static const char *step(struct world *w)
{
    struct sched_view *v = w->v;
    unsigned op = rnd(w, 100);
    int pi;
    char name[16];
    if (op < 30) {
        pod(w, (int)rnd(w, NPODS));
        return "pod put";
    } else if (op < 38) {
        snprintf(name, sizeof(name), "t/p-%03u", rnd(w, NPODS));
        sched__view_del_pod(v, name);
        json_object_del(w->pods, name + 2);
        return "pod deleted";
    } else if (op < 50 && (pi = some_pod(w, pending_not_counted)) >= 0) {
        char nn[16];
        snprintf(nn, sizeof(nn), "n-%02u", rnd(w, NNODES));
        int ni = sched__view_node(v, nn);
        if (ni < 0)
            return "nothing";
        sched__view_bind(v, pi, ni);
        json_object_set_new(json_object_get(pod_doc(w, pi), "spec"), "nodeName",
                            json_string(v->nodes[ni].name));
        return "bind";
    } else if (op < 58 && (pi = some_pod(w, counted)) >= 0) {
        sched__view_unbind(v, pi);
        json_object_del(json_object_get(pod_doc(w, pi), "spec"), "nodeName");
        return "unbind";
    } else if (op < 64 && (pi = some_pod(w, NULL)) >= 0) {
        sched__view_pod_terminating(v, pi, 1000 + w->step);
        json_object_set_new(json_object_get(pod_doc(w, pi), "metadata"), "deletionTimestamp",
                            json_string("2026-01-01T00:00:01Z"));
        return "terminating";
    } else if (op < 70 && (pi = some_pod(w, NULL)) >= 0) {
        const char *phase = PHASES[rnd(w, 5)];
        sched__view_pod_phase(v, pi, phase);
        json_t *st = json_object_get(pod_doc(w, pi), "status");
        if (phase)
            json_object_set_new(st, "phase", json_string(phase));
        else
            json_object_del(st, "phase");
        return "phase";
    } else if (op < 78) {
        podgroup(w, rnd(w, NGROUPS));
        return "podgroup put";
    } else if (op < 82) {
        snprintf(name, sizeof(name), "t/g%u", rnd(w, NGROUPS));
        sched__view_del_pg(v, name);
        json_object_del(w->pgs, name + 2);
        return "podgroup deleted";
    } else if (op < 90) {
        queue(w, QUEUES[rnd(w, NQUEUES)]);
        return "queue put";
    } else if (op < 94) {
        const char *q = QUEUES[rnd(w, NQUEUES)];
        sched__view_del_queue(v, q);
        json_object_del(w->queues, q);
        return "queue deleted";
    } else {
        int i = (int)rnd(w, NNODES);
        snprintf(name, sizeof(name), "n-%02d", i);
        if (sched__view_node(v, name) >= 0) {
            sched__view_del_node(v, name);
            json_object_del(w->nodes, name);
            return "node deleted";
        }
        node(w, i);
        return "node put";
    }
}

/* Each queue's sums in w->v and in a view rebuilt from the objects as a restart would put
 * them (queues, nodes, pods, PodGroups) are equal. */
static void rebuilt_equal(struct world *w)
{
    struct sched_view *r = sched__view_new();
    json_t *kinds[] = {w->queues, w->nodes, w->pods, w->pgs};
    void (*put[])(struct sched_view *, json_t *) = {put_queue_doc, put_node_doc, put_pod_doc,
                                                    put_pg_doc};
    for (size_t k = 0; k < 4; k++) {
        const char *key;
        json_t *o;
        json_object_foreach(kinds[k], key, o)
        {
            json_t *copy = json_deep_copy(o);
            put[k](r, copy);
            json_decref(copy);
        }
    }
    char msg[256];
    ck_assert_msg(sched__queue_pend_check(r, msg, sizeof(msg)) == 0, "rebuilt: %s", msg);
    for (size_t i = 0; i < w->v->nqueues; i++) {
        const struct sv_queue *q = &w->v->queues[i];
        if (!q->alive)
            continue;
        int ri = sched__view_queue(r, q->m.name);
        ck_assert_int_ge(ri, 0);
        for (size_t res = 0; res < w->v->nres; res++) {
            int rr = sched__strmap_get(&r->res_ix, w->v->res[res]);
            int64_t got = rr >= 0 ? r->queues[ri].pend[rr] : 0;
            ck_assert_msg(got == q->pend[res], "step %d: queue %s %s: live %lld, rebuilt %lld",
                          w->step, q->m.name, w->v->res[res], (long long)q->pend[res],
                          (long long)got);
            got = rr >= 0 ? r->queues[ri].alloc[rr] : 0;
            ck_assert_msg(got == q->alloc[res],
                          "step %d: queue %s %s allocated: live %lld, rebuilt %lld", w->step,
                          q->m.name, w->v->res[res], (long long)q->alloc[res], (long long)got);
        }
    }
    sched__view_free(r);
}

START_TEST(test_queue_pend_equals_scan)
{
    struct world w = {sched__view_new(),
                      json_object(),
                      json_object(),
                      json_object(),
                      json_object(),
                      11 + (unsigned)_i,
                      0};
    for (int i = 0; i < NNODES; i++)
        node(&w, i);
    for (size_t i = 1; i < NQUEUES; i++)
        queue(&w, QUEUES[i]);
    for (int i = 0; i < NPODS / 2; i++)
        pod(&w, i);
    int64_t total[64];
    int nonzero = 0, deep = 0;
    for (w.step = 0; w.step < 3000; w.step++) {
        const char *what = step(&w);
        char msg[256];
        ck_assert_msg(sched__queue_pend_check(w.v, msg, sizeof(msg)) == 0,
                      "seed %u step %d (%s): %s", 11 + (unsigned)_i, w.step, what, msg);
        for (size_t i = 1; i < w.v->nqueues; i++) {
            nonzero += w.v->queues[i].alive && w.v->queues[i].pend[SV_RES_PODS] > 0;
            deep += w.v->queues[i].alive && w.v->queues[i].depth >= 2 &&
                    w.v->queues[i].pend[SV_RES_PODS] > 0;
        }
        if (w.step % 100 == 99) {
            rebuilt_equal(&w);
            ck_assert_uint_le(w.v->nres, sizeof(total) / sizeof(total[0]));
            for (size_t r = 0; r < w.v->nres; r++)
                total[r] = 1000000;
            sched__queue_shares(w.v, total, (uint64_t)w.step);
            for (size_t i = 0; i < w.v->nqueues; i++)
                for (size_t r = 0; w.v->queues[i].alive && r < w.v->nres; r++)
                    ck_assert(w.v->queues[i].request[r] ==
                              w.v->queues[i].alloc[r] + w.v->queues[i].pend[r]);
        }
    }
    /* the sums were exercised: pending pods in the queues below default, two levels deep
     * too, and the vectors grew */
    ck_assert_int_gt(nonzero, 1000);
    ck_assert_int_gt(deep, 100);
    ck_assert_uint_gt(w.v->rescap, 8);
    sched__view_free(w.v);
    json_decref(w.nodes);
    json_decref(w.pods);
    json_decref(w.pgs);
    json_decref(w.queues);
}
END_TEST

/* The check can fail: a sum changed by hand is named. */
START_TEST(test_queue_pend_check_catches)
{
    struct world w = {
        sched__view_new(), json_object(), json_object(), json_object(), json_object(), 3, 0};
    node(&w, 0);
    json_t *o = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s}},s:{s:[{s:s,s:s,s:{s:{s:s}}}]}}",
                          "apiVersion", "v1", "kind", "Pod", "metadata", "name", "p", "namespace",
                          "t", "annotations", MODEL_ANN_QUEUE_NAME, "default", "spec", "containers",
                          "name", "c", "image", "x", "resources", "requests", "cpu", "2");
    put_pod_doc(w.v, o);
    json_decref(o);
    char msg[256];
    ck_assert_int_eq(sched__queue_pend_check(w.v, msg, sizeof(msg)), 0);
    int cpu = sched__strmap_get(&w.v->res_ix, "cpu");
    ck_assert_int_eq(w.v->queues[0].pend[cpu], 2000);
    w.v->queues[0].pend[cpu]--;
    ck_assert_int_eq(sched__queue_pend_check(w.v, msg, sizeof(msg)), -1);
    ck_assert_str_eq(msg, "queue 'default' pending cpu: kept 1999, scan 2000");
    w.v->queues[0].pend[cpu]++;
    sched__view_bind(w.v, 0, 0); /* bound: no longer pending */
    ck_assert_int_eq(w.v->queues[0].pend[cpu], 0);
    ck_assert_int_eq(sched__queue_pend_check(w.v, msg, sizeof(msg)), 0);
    sched__view_free(w.v);
    json_decref(w.nodes);
    json_decref(w.pods);
    json_decref(w.pgs);
    json_decref(w.queues);
}
END_TEST

static Suite *queue_pend_suite(void)
{
    Suite *s = suite_create("queue_pend");
    TCase *tc = tcase_create("core");
    tcase_add_loop_test(tc, test_queue_pend_equals_scan, 0, 4);
    tcase_add_test(tc, test_queue_pend_check_catches);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(queue_pend_suite());
}
