/*
 * view_load.c - the view rebuilt from the store, and its deterministic dump (tests:
 * a view rebuilt from the store equals the live one).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prefault.h"
#include "view.h"

/* ---- rebuild ---- */

static int load_obj(void *ctx, const char *key, json_t *obj, enum model_kind kind)
{
    struct sched_view *v = ctx;
    struct err err = ERR_INIT;
    int rc = 0;
    if (kind == MODEL_PODGROUP) {
        struct model_podgroup g = {0};
        if ((rc = model_podgroup_decode(obj, &g, &err)) == 0)
            sched__view_put_pg(v, &g);
    } else if (kind == MODEL_PRIORITYCLASS) {
        struct model_priorityclass pc = {0};
        if ((rc = model_priorityclass_decode(obj, &pc, &err)) == 0)
            sched__view_put_class(v, &pc);
    } else if (kind == MODEL_QUEUE) {
        struct model_queue q = {0};
        if ((rc = model_queue_decode(obj, &q, &err)) == 0)
            sched__view_put_queue(v, &q);
    } else if (kind == MODEL_PDB) {
        struct model_pdb b = {0};
        if ((rc = model_pdb_decode(obj, &b, &err)) == 0)
            sched__view_put_pdb(v, &b);
    } else {
        struct model_topology t = {0};
        if ((rc = model_topology_decode(obj, &t, &err)) == 0)
            sched__view_put_topo(v, &t);
    }
    /* A stored object that no longer decodes is skipped, not fatal: the store
     * accepted it once and the view must still come up. */
    if (rc < 0)
        fprintf(stderr, "muster: skipping stored %s '%s': %s\n", model_kind_name(kind), key,
                err.msg);
    return 0;
}

/* Pods, the bulk of a store, are parsed and decoded, and their keys made, on several
 * threads (store_each_par), and put into the view in key order on this one, as load_obj
 * would. */
struct decoded_pod {
    int rc;
    struct model_pod p;
    struct sv_pod_keys k; /* when rc == 0 */
    char *msg; /* the error's, when rc < 0 (not a buffer in each of half a million results) */
};

static void *decode_pod(void *ctx, const char *key, json_t *obj)
{
    struct decoded_pod *d = xmalloc(sizeof(*d));
    struct err err = ERR_INIT;
    d->msg = NULL;
    if ((d->rc = model_pod_decode(obj, &d->p, &err)) < 0)
        d->msg = xstrdup(err.msg);
    else
        sched__pod_keys(&d->p, &d->k);
    return d;
}

/* Most stored pods are bound and plain: read from their bytes (model_pod_decode_stored),
 * the others parsed and decoded in full by decode_pod. */
static int decode_pod_raw(void *ctx, const char *key, const char *json, size_t len,
                          const char *bind_node, const char *bind_ts, void **res)
{
    struct decoded_pod *d = xmalloc(sizeof(*d));
    (void)ctx;
    (void)key;
    d->rc = 0;
    d->msg = NULL;
    if (!model_pod_decode_stored(json, len, bind_node, bind_ts, &d->p)) {
        free(d);
        return 0;
    }
    sched__pod_keys(&d->p, &d->k);
    *res = d;
    return 1;
}

static int put_pod(void *ctx, const char *key, void *res)
{
    struct decoded_pod *d = res;
    if (d && d->rc == 0 && key) {
        sched__view_put_pod_keyed(ctx, &d->p, &d->k);
    } else if (d && d->rc == 0) {
        model_pod_release(&d->p);
        sched__pod_keys_release(&d->k);
    } else if (d && key) /* as load_obj: skipped, not fatal */
        fprintf(stderr, "muster: skipping stored Pod '%s': %s\n", key, d->msg);
    if (d)
        free(d->msg);
    free(d);
    return 0;
}

static void pod_ahead(void *ctx, const char *key, const void *res)
{
    const struct decoded_pod *d = res;
    (void)key;
    if (d && d->rc == 0)
        sched__view_pod_ahead(ctx, &d->k);
}

/* Nodes likewise: decoded on several threads, put in key order on this one. */
struct decoded_node {
    int rc;
    struct model_node n;
    char *msg;
};

static void *decode_node(void *ctx, const char *key, json_t *obj)
{
    struct decoded_node *d = xmalloc(sizeof(*d));
    struct err err = ERR_INIT;
    (void)ctx;
    (void)key;
    d->msg = NULL;
    if ((d->rc = model_node_decode(obj, &d->n, &err)) < 0)
        d->msg = xstrdup(err.msg);
    return d;
}

/* Stored nodes read from their bytes (model_node_decode_stored), the others parsed and
 * decoded in full by decode_node. */
static int decode_node_raw(void *ctx, const char *key, const char *json, size_t len,
                           const char *bind_node, const char *bind_ts, void **res)
{
    struct decoded_node *d = xmalloc(sizeof(*d));
    (void)ctx;
    (void)key;
    (void)bind_node;
    (void)bind_ts;
    d->rc = 0;
    d->msg = NULL;
    if (!model_node_decode_stored(json, len, &d->n)) {
        free(d);
        return 0;
    }
    *res = d;
    return 1;
}

static int put_node(void *ctx, const char *key, void *res)
{
    struct decoded_node *d = res;
    if (d && d->rc == 0 && key)
        sched__view_put_node(ctx, &d->n);
    else if (d && d->rc == 0)
        model_node_release(&d->n);
    else if (d && key) /* as load_obj: skipped, not fatal */
        fprintf(stderr, "muster: skipping stored Node '%s': %s\n", key, d->msg);
    if (d)
        free(d->msg);
    free(d);
    return 0;
}
static int load_pg(void *c, const char *k, json_t *o)
{
    return load_obj(c, k, o, MODEL_PODGROUP);
}
static int load_topo(void *c, const char *k, json_t *o)
{
    return load_obj(c, k, o, MODEL_TOPOLOGY);
}
static int load_class(void *c, const char *k, json_t *o)
{
    return load_obj(c, k, o, MODEL_PRIORITYCLASS);
}
static int load_queue(void *c, const char *k, json_t *o)
{
    return load_obj(c, k, o, MODEL_QUEUE);
}
static int load_pdb(void *c, const char *k, json_t *o)
{
    return load_obj(c, k, o, MODEL_PDB);
}

/* The ledger's victim records (record/ledger.c, "v:<job>"). A record written before
 * victims were kept ({"id", "preemptor", "cycle", "ts"} only) is history, not a victim. */
static int load_victim(void *ctx, const char *key, json_t *rec)
{
    struct sched_view *v = ctx;
    if (!json_is_array(json_object_get(rec, "preemptors")))
        return 0;
    sched__view_victim_put(v, key + 2,
                           (int32_t)json_integer_value(json_object_get(rec, "priority")));
    return 0;
}

static int load_resv(void *ctx, const char *key, json_t *doc)
{
    (void)key;
    return sched__view_resv_load(ctx, doc);
}

int sched__view_load(struct sched_view *v, MDB_txn *txn, struct err *err)
{
    int rc;
    /* Classes first: a PodGroup's pods take its class's priority as they arrive. */
    if ((rc = store_each(txn, MODEL_PRIORITYCLASS, NULL, load_class, v, err)) < 0)
        return rc;
    if ((rc = store_each(txn, MODEL_QUEUE, NULL, load_queue, v, err)) < 0)
        return rc;
    if ((rc = store_each(txn, MODEL_PDB, NULL, load_pdb, v, err)) < 0)
        return rc;
    static const struct store_par_fns nodes = {decode_node_raw, decode_node, put_node, NULL};
    static const struct store_par_fns pods = {decode_pod_raw, decode_pod, put_pod, pod_ahead};
    if ((rc = store_each_par(txn, MODEL_NODE, NULL, 0, &nodes, v, err)) < 0)
        return rc;
    uint64_t npods = 0, npgs = 0, ngroups = 0, ngrouped = 0;
    if ((rc = store_count(txn, MODEL_POD, &npods, err)) < 0 ||
        (rc = store_count(txn, MODEL_PODGROUP, &npgs, err)) < 0 ||
        (rc = store_pod_groups_count(txn, &ngroups, &ngrouped, err)) < 0)
        return rc;
    /* sized once from the store's counts: no rehash or copy while the pods arrive. A job is
     * a lone pod or a group (named by pods, or a PodGroup with none): at most this many,
     * where a gang's PodGroup and its pods' group count twice (not one slot a pod: a gang
     * workload's job map was eight times the size it needed, and a hash map's pages are all
     * touched) */
    uint64_t njobs = (npods > ngrouped ? npods - ngrouped : 0) + ngroups + npgs;
    struct prefault *pf = sched__view_reserve(v, npods, njobs);
    rc = store_each_par(txn, MODEL_POD, NULL, 0, &pods, v, err);
    prefault_join(pf);
    if (rc < 0)
        return rc;
    if ((rc = store_each(txn, MODEL_PODGROUP, NULL, load_pg, v, err)) < 0)
        return rc;
    if ((rc = store_doc_each(txn, STORE_DB_PREEMPTIONS, "v:", load_victim, v, err)) < 0)
        return rc;
    if ((rc = store_doc_each(txn, STORE_DB_RESERVATIONS, NULL, load_resv, v, err)) < 0)
        return rc;
    return store_each(txn, MODEL_TOPOLOGY, NULL, load_topo, v, err);
}

/* ---- dump ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted JSON array of the keys of pods idx[0..n). New. */
static json_t *sorted_keys(struct sched_view *v, const int *idx, size_t n)
{
    const char **keys = xcalloc(n + 1, sizeof(*keys));
    for (size_t i = 0; i < n; i++)
        keys[i] = v->pods[idx[i]].key;
    qsort(keys, n, sizeof(*keys), cmp_str);
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, json_string(keys[i]));
    free(keys);
    return a;
}

static json_t *res_obj(struct sched_view *v, const int64_t *vec)
{
    json_t *o = json_object();
    for (size_t r = 0; r < v->nres; r++)
        if (vec[r])
            json_object_set_new(o, v->res[r], json_integer(vec[r]));
    return o;
}

json_t *sched__view_dump(struct sched_view *v)
{
    json_t *nodes = json_object(), *pods = json_object(), *jobs = json_object();
    json_t *classes = json_object();
    for (size_t i = 0; i < v->classes.n; i++) {
        const struct model_priorityclass *pc = &v->classes.c[i];
        json_object_set_new(classes, pc->name,
                            json_pack("{s:i,s:b,s:b}", "value", (int)pc->value, "globalDefault",
                                      pc->global_default, "never", pc->preempt_never));
    }
    for (size_t i = 0; i < v->nnodes; i++) {
        struct sv_node *n = &v->nodes[i];
        if (!n->alive)
            continue;
        json_t *nom = sorted_keys(v, n->nominated, n->nnom);
        json_object_set_new(nodes, n->name,
                            json_pack("{s:o,s:o,s:b,s:o}", "allocatable", res_obj(v, n->alloc),
                                      "requested", res_obj(v, n->used), "unschedulable",
                                      n->m.unschedulable, "nominated", nom));
    }
    for (size_t i = 0; i < v->npods; i++) {
        struct sv_pod *p = &v->pods[i];
        if (!p->alive)
            continue;
        json_t *req = json_object();
        for (int k = 0; k < p->nreq; k++)
            json_object_set_new(req, v->res[p->req[k].res], json_integer(p->req[k].v));
        json_object_set_new(pods, p->key,
                            json_pack("{s:s?,s:s?,s:s?,s:s,s:b,s:i,s:o}", "node", p->m.node_name,
                                      "nominated", p->m.nominated_node, "phase", p->m.phase, "job",
                                      v->jobs[p->job].id, "counted", p->counted, "priority",
                                      (int)p->prio, "requests", req));
        json_object_set_new(json_object_get(pods, p->key), "never", json_boolean(p->never));
    }
    for (size_t i = 0; i < v->njobs; i++) {
        struct sv_job *j = &v->jobs[i];
        if (!j->alive)
            continue;
        json_t *members = sorted_keys(v, j->pods, j->npods);
        char key[512];
        snprintf(key, sizeof(key), "%s:%s", j->gang ? "g" : "p", j->id);
        json_object_set_new(jobs, key,
                            json_pack("{s:b,s:b,s:i,s:o,s:s?}", "gang", j->gang, "podGroup",
                                      j->has_pg, "minMember", sched__job_min(j), "pods", members,
                                      "queue", j->queue >= 0 ? v->queues[j->queue].m.name : NULL));
    }
    json_t *queues = json_object();
    for (size_t i = 0; i < v->nqueues; i++) {
        const struct sv_queue *q = &v->queues[i];
        if (q->alive)
            json_object_set_new(queues, q->m.name,
                                json_pack("{s:s?,s:i,s:b,s:o,s:o}", "parent",
                                          q->parent >= 0 ? v->queues[q->parent].m.name : NULL,
                                          "weight", (int)q->m.weight, "stored", q->stored,
                                          "allocated", res_obj(v, q->alloc), "pending",
                                          res_obj(v, q->pend)));
    }
    json_t *victims = json_object();
    for (size_t i = sched__strmap_next(&v->victims, 0); i < v->victims.cap;
         i = sched__strmap_next(&v->victims, i + 1))
        json_object_set_new(victims, v->victims.keys[i],
                            json_integer(v->victim_prio[v->victims.vals[i]]));
    json_t *pdbs = json_object();
    for (size_t i = 0; i < v->pdbs.n; i++) {
        const struct sv_pdb *b = &v->pdbs.b[i];
        if (b->alive)
            json_object_set_new(pdbs, b->key,
                                json_pack("{s:b,s:i,s:i}", "status", b->m.has_status, "allowed",
                                          (int)b->m.disruptions_allowed, "disrupted",
                                          (int)b->m.ndisrupted));
    }
    return json_pack("{s:o,s:o,s:o,s:s?,s:o,s:o,s:o,s:o,s:o}", "nodes", nodes, "pods", pods, "jobs",
                     jobs, "topology", v->has_topology ? v->topo.name : NULL, "priorityClasses",
                     classes, "victims", victims, "queues", queues, "pdbs", pdbs, "reservations",
                     sched__view_resv_dump(v));
}
