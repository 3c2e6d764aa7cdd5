/*
 * sched_stress.c - see sched_stress.h.
 */
#include "sched_stress.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "model.h"
#include "sched_invariants.h"
#include "scheduler.h"
#include "store.h"
#include "why.h"

struct snap {
    struct stress_check *k;
    uint64_t cycle;
    json_t *pods;    /* key -> stored pod */
    json_t *alloc;   /* node -> {res: allocatable} */
    json_t *groups;  /* "ns/pg" -> [GangGroup member ids] */
    json_t *victims; /* pod key -> ledger entry id */
    char *msg;
    size_t n;
    int bad;
};

static int failf(struct snap *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int failf(struct snap *x, const char *fmt, ...)
{
    va_list ap;
    if (x->bad)
        return -1;
    va_start(ap, fmt);
    vsnprintf(x->msg, x->n, fmt, ap);
    va_end(ap);
    x->bad = 1;
    return -1;
}

void stress_check_init(struct stress_check *k)
{
    memset(k, 0, sizeof(*k));
    k->placed = json_object();
    k->pod_job = json_object();
    k->disturbed = json_object();
}

void stress_check_release(struct stress_check *k)
{
    json_decref(k->placed);
    json_decref(k->cycle_placed);
    json_decref(k->pod_job);
    json_decref(k->disturbed);
    memset(k, 0, sizeof(*k));
}

/* Gangs a test disturbed by hand: a placed pod deleted or re-applied (a phase set),
 * pods failed by a node deletion, a PodGroup deleted. */
static void disturbance(struct stress_check *k, json_t *rec)
{
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    json_t *obj = json_object_get(rec, "object"), *job, *p;
    const char *okind = json_string_value(json_object_get(obj, "kind"));
    const char *name = json_string_value(json_object_get(obj, "name"));
    size_t i;
    if (!okind || !name || (strcmp(kind, "deleted") && strcmp(kind, "applied")))
        return;
    if (!strcmp(okind, "Pod") && (job = json_object_get(k->pod_job, name)))
        json_object_set(k->disturbed, json_string_value(job), json_true());
    if (!strcmp(okind, "PodGroup") && !strcmp(kind, "deleted"))
        json_object_set(k->disturbed, name, json_true());
    json_array_foreach(json_object_get(rec, "failedPods"), i, p)
    {
        if ((job = json_object_get(k->pod_job, json_string_value(p))))
            json_object_set(k->disturbed, json_string_value(job), json_true());
    }
}

static int audit_cb(void *ctx, uint64_t seq, const char *json, size_t len)
{
    struct snap *x = ctx;
    json_t *rec = json_loadb(json, len, 0, NULL);
    x->k->audit_seen = seq;
    if (!rec)
        return failf(x, "audit record %llu is not JSON", (unsigned long long)seq);
    disturbance(x->k, rec);
    if (!strcmp(json_string_value(json_object_get(rec, "kind")), "placed")) {
        json_t *pods = json_object_get(rec, "pods"), *nodes = json_object_get(rec, "nodes");
        int now = (uint64_t)json_integer_value(json_object_get(rec, "cycle")) == x->cycle;
        if (json_array_size(pods) != json_array_size(nodes))
            failf(x, "placed record %llu: %zu pods, %zu nodes", (unsigned long long)seq,
                  json_array_size(pods), json_array_size(nodes));
        for (size_t i = 0; i < json_array_size(pods); i++) {
            const char *pod = json_string_value(json_array_get(pods, i));
            json_object_set(x->k->placed, pod, json_array_get(nodes, i));
            json_object_set(x->k->pod_job, pod, json_object_get(rec, "job"));
            if (now)
                json_array_append(x->k->cycle_placed, json_array_get(pods, i));
        }
    }
    json_decref(rec);
    return 0;
}

static int pod_cb(void *ctx, const char *key, json_t *obj)
{
    json_object_set(((struct snap *)ctx)->pods, key, obj);
    return 0;
}

static int node_cb(void *ctx, const char *key, json_t *obj)
{
    struct snap *x = ctx;
    struct model_node n = {0};
    struct err err = ERR_INIT;
    if (model_node_decode(obj, &n, &err) < 0)
        return failf(x, "node '%s': %s", key, err.msg);
    json_t *a = json_pack("{s:I}", "pods", (json_int_t)110);
    for (size_t i = 0; i < n.nallocatable; i++)
        json_object_set_new(a, n.allocatable[i].name, json_integer(n.allocatable[i].value));
    json_object_set_new(x->alloc, key, a);
    model_node_release(&n);
    return 0;
}

static int pg_cb(void *ctx, const char *key, json_t *obj)
{
    struct snap *x = ctx;
    struct model_podgroup g = {0};
    if (model_podgroup_decode(obj, &g, NULL) < 0)
        return 0;
    json_t *ids = json_array();
    json_array_append_new(ids, json_string(key));
    for (size_t i = 0; i < g.ngroups; i++)
        json_array_append_new(ids, json_string(g.groups[i]));
    json_object_set_new(x->groups, key, ids);
    model_podgroup_release(&g);
    return 0;
}

static int ledger_cb(void *ctx, const char *key, json_t *entry)
{
    struct snap *x = ctx;
    size_t i;
    json_t *v;
    (void)key;
    json_array_foreach(json_object_get(entry, "victims"), i, v) json_object_set(
        x->victims, json_string_value(json_object_get(v, "pod")), json_object_get(entry, "id"));
    return 0;
}

static int disruption_target(json_t *pod)
{
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
    {
        const char *type = json_string_value(json_object_get(c, "type"));
        const char *st = json_string_value(json_object_get(c, "status"));
        if (type && st && !strcmp(type, "DisruptionTarget") && !strcmp(st, "True"))
            return 1;
    }
    return 0;
}

/* Bound pods agree with the audit log; ledger victims are marked or gone and back. */
static void check_pods(struct snap *x)
{
    const char *key;
    json_t *pod, *node;
    json_object_foreach(x->pods, key, pod)
    {
        const char *nn =
            json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
        json_t *placed = json_object_get(x->k->placed, key);
        if (nn && (!placed || strcmp(nn, json_string_value(placed))))
            failf(x, "pod '%s' is bound to '%s' but its last placed record says '%s'", key, nn,
                  placed ? json_string_value(placed) : "(none)");
        int marked = json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp") &&
                     disruption_target(pod);
        if (disruption_target(pod) && !json_object_get(x->victims, key))
            failf(x, "pod '%s' has a DisruptionTarget condition but no ledger entry names it", key);
        if (json_object_get(x->victims, key) && !marked)
            failf(x, "victim '%s' of ledger entry %lld is neither marked nor gone", key,
                  (long long)json_integer_value(json_object_get(x->victims, key)));
        x->k->checked_victims += json_object_get(x->victims, key) != NULL;
    }
    json_object_foreach(x->k->placed, key, node)
    {
        pod = json_object_get(x->pods, key);
        if (pod && !json_object_get(json_object_get(pod, "spec"), "nodeName"))
            failf(x, "pod '%s' was placed on '%s' but is not bound", key, json_string_value(node));
    }
}

/* The ids of the jobs whose nominations do not reserve against pod p: its GangGroup. */
static json_t *own_jobs(struct snap *x, const struct model_pod *p)
{
    char id[512];
    snprintf(id, sizeof(id), "%s/%s", p->ns, p->group ? p->group : p->name);
    json_t *ids = p->group ? json_object_get(x->groups, id) : NULL;
    if (ids)
        return json_incref(ids);
    ids = json_array();
    json_array_append_new(ids, json_string(id));
    return ids;
}

static int in_ids(json_t *ids, const char *id)
{
    size_t i;
    json_t *v;
    json_array_foreach(ids, i, v) if (!strcmp(json_string_value(v), id)) return 1;
    return 0;
}

static int terminal(const struct model_pod *p)
{
    return p->phase && (!strcmp(p->phase, "Succeeded") || !strcmp(p->phase, "Failed"));
}

static void add_requests(json_t *sum, const struct model_pod *p)
{
    int has_pods = 0;
    for (size_t i = 0; i < p->nrequests; i++) {
        const char *r = p->requests[i].name;
        json_int_t was = json_integer_value(json_object_get(sum, r));
        json_object_set_new(sum, r, json_integer(was + p->requests[i].value));
        has_pods |= !strcmp(r, "pods");
    }
    if (!has_pods)
        json_object_set_new(sum, "pods",
                            json_integer(json_integer_value(json_object_get(sum, "pods")) + 1));
}

/* One pod placed this cycle: its node holds the bound pods plus the reservations. */
static void check_reservation(struct snap *x, const char *qkey, const struct model_pod *q)
{
    json_t *sum = json_object(), *ids = own_jobs(x, q), *pod;
    const char *key, *res;
    json_t *v;
    json_object_foreach(x->pods, key, pod)
    {
        struct model_pod p = {0};
        if (model_pod_decode(pod, &p, NULL) < 0)
            continue;
        char id[512];
        snprintf(id, sizeof(id), "%s/%s", p.ns, p.group ? p.group : p.name);
        int counts = !terminal(&p) && !p.deletion_ms;
        if (counts && p.node_name && !strcmp(p.node_name, q->node_name))
            add_requests(sum, &p);
        else if (counts && !p.node_name && p.nominated_node &&
                 !strcmp(p.nominated_node, q->node_name) && p.priority >= q->priority &&
                 !in_ids(ids, id))
            add_requests(sum, &p);
        model_pod_release(&p);
    }
    json_t *alloc = json_object_get(x->alloc, q->node_name);
    json_object_foreach(sum, res, v)
    {
        /* only what Q requests: a higher-priority pod may have used the rest before */
        int asked = !strcmp(res, "pods");
        for (size_t i = 0; i < q->nrequests; i++)
            asked |= !strcmp(q->requests[i].name, res) && q->requests[i].value > 0;
        json_int_t have = json_integer_value(json_object_get(alloc, res));
        if (alloc && asked && json_integer_value(v) > have)
            failf(x,
                  "node '%s' over-committed on '%s' counting reservations of priority >= %d "
                  "(pod '%s' placed this cycle): %lld > %lld",
                  q->node_name, res, (int)q->priority, qkey, (long long)json_integer_value(v),
                  (long long)have);
    }
    x->k->checked_reservations++;
    json_decref(sum);
    json_decref(ids);
}

static void check_reservations(struct snap *x)
{
    size_t i;
    json_t *k;
    json_array_foreach(x->k->cycle_placed, i, k)
    {
        json_t *pod = json_object_get(x->pods, json_string_value(k));
        struct model_pod q = {0};
        if (!pod || model_pod_decode(pod, &q, NULL) < 0)
            continue;
        if (q.node_name && !terminal(&q) && !q.deletion_ms)
            check_reservation(x, json_string_value(k), &q);
        model_pod_release(&q);
    }
}

static int known_code(const char *code)
{
    for (int i = 0; code && i < WHY_CODE_COUNT; i++)
        if (!strcmp(why_code_name(i), code))
            return 1;
    return 0;
}

static void check_whys(struct snap *x, struct store *st, struct sched *s)
{
    json_t *jobs = NULL, *j;
    MDB_txn *txn = NULL;
    size_t i;
    struct err err = ERR_INIT;
    if (sched_jobs(s, NULL, &jobs, &err) < 0 || store_txn_begin(st, STORE_READ, &txn, &err) < 0) {
        failf(x, "jobs: %s", err.msg);
        json_decref(jobs);
        return;
    }
    json_array_foreach(jobs, i, j)
    {
        const char *id = json_string_value(json_object_get(j, "id"));
        const char *state = json_string_value(json_object_get(j, "state"));
        if (strcmp(state, "Pending") && strcmp(state, "Unschedulable") &&
            strcmp(state, "Starving") && strcmp(state, "Pipelined"))
            continue;
        json_t *doc = NULL;
        if (store_doc_get(txn, STORE_DB_WHY, id, &doc, &err) < 0) {
            failf(x, "job '%s' (%s) has no why document: %s", id, state, err.msg);
            err_clear(&err);
            continue;
        }
        const char *code =
            json_string_value(json_object_get(json_object_get(doc, "primary"), "code"));
        if (!known_code(code)) {
            char *d = json_dumps(doc, JSON_COMPACT);
            failf(x, "job '%s' (%s): why primary code '%s' is not one of why.h's: %.600s", id,
                  state, code ? code : "(none)", d);
            free(d);
        }
        x->k->checked_whys++;
        json_decref(doc);
    }
    store_txn_abort(&txn);
    json_decref(jobs);
}

int stress_check_run(struct stress_check *k, struct store *st, struct sched *s, uint64_t cycle,
                     char *msg, size_t n)
{
    struct snap x = {k, cycle, json_object(), json_object(), json_object(), json_object(), msg,
                     n, 0};
    struct err err = ERR_INIT;
    MDB_txn *txn = NULL;
    uint64_t last = 0;
    json_decref(k->cycle_placed);
    k->cycle_placed = json_array();
    int rc = store_txn_begin(st, STORE_READ, &txn, &err);
    if (rc == 0)
        rc = store_audit_last_seq(txn, &last, &err);
    if (rc == 0)
        rc = store_audit_scan(txn, k->audit_seen + 1, 0, audit_cb, &x, &err);
    if (rc == 0)
        rc = store_each(txn, MODEL_POD, NULL, pod_cb, &x, &err);
    if (rc == 0)
        rc = store_each(txn, MODEL_NODE, NULL, node_cb, &x, &err);
    if (rc == 0)
        rc = store_each(txn, MODEL_PODGROUP, NULL, pg_cb, &x, &err);
    if (rc == 0)
        rc = store_doc_each(txn, STORE_DB_PREEMPTIONS, "e:", ledger_cb, &x, &err);
    store_txn_abort(&txn);
    if (rc < 0 && !x.bad)
        failf(&x, "reading the store: %s", err.msg);
    if (!x.bad && sched_invariants_check_ex(st, k->audit_verify, k->disturbed, msg, n) < 0)
        x.bad = 1;
    k->audit_verify = last;
    if (!x.bad)
        check_pods(&x);
    if (!x.bad)
        check_reservations(&x);
    if (!x.bad)
        check_whys(&x, st, s);
    json_decref(x.pods);
    json_decref(x.alloc);
    json_decref(x.groups);
    json_decref(x.victims);
    return x.bad ? -1 : 0;
}
