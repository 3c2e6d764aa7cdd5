/*
 * nodes.c - node usage from the view (sched_node_usage, sched_nodes_usage), the numbers
 * GET /api/v1/nodes serves, and every node's numbers and marks at once (sched_node_map,
 * GET /api/v1/nodemap: the UI's cluster map).
 *
 * The view already holds what a node's usage needs: allocatable as stored, used (the
 * requests of its counted pods: bound and not terminal) and which pods are bound to it.
 * Nothing is read from the store, and the list costs one pass over the pods under one
 * lock, not one store scan per node; the JSON is made after the lock.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "strpool.h"

/* ---- usage: copied from the view under its lock, made into JSON after it ----
 *
 * Every node's usage of 50,000 bound pods took about 40 ms of the scheduler's lock as JSON
 * (the pods sorted by key, a string per pod, an object per node). Under the lock only the
 * names and numbers are copied; the sort and the objects come after. */

struct uval { /* a resource: a request (a: the node's used), or allocatable (a, b: used) */
    size_t name;
    int64_t a, b;
};

struct upod { /* a live pod bound to one of the nodes: its requests if counted */
    size_t node, key, req, nreq;
};

struct unode {
    size_t name, alloc, nalloc;
};

struct usage {
    struct strpool s;
    struct uval *vals;
    struct upod *pods;
    struct unode *nodes;
    size_t nvals, capvals, npods, cappods, nnodes;
};

static void add_val(struct usage *u, const char *name, int64_t a, int64_t b)
{
    XGROW(u->vals, u->nvals + 1, u->capvals);
    u->vals[u->nvals++] = (struct uval){strpool_add(&u->s, name), a, b};
}

static int64_t used_of(const struct sched_view *v, const struct sv_node *n, const char *res)
{
    int r = sched__strmap_get(&v->res_ix, res);
    return r >= 0 ? n->used[r] : 0; /* a resource only ever requested as 0 is not interned */
}

/* Under the lock: node ni's, or every live node's when ni < 0, with the pods bound to them. */
static void usage_copy(const struct sched_view *v, int ni, struct usage *u)
{
    int *at = xcalloc(v->nnodes + 1, sizeof(int)); /* the view's node -> u->nodes index + 1 */
    u->nodes = xcalloc(v->nnodes + 1, sizeof(*u->nodes));
    for (size_t i = 0; i < v->nnodes; i++) {
        const struct sv_node *n = &v->nodes[i];
        if (ni >= 0 ? (int)i != ni : !n->alive)
            continue;
        struct unode *un = &u->nodes[u->nnodes];
        *un = (struct unode){strpool_add(&u->s, n->name), u->nvals, n->m.nallocatable};
        for (size_t k = 0; k < n->m.nallocatable; k++) {
            const struct model_res *a = &n->m.allocatable[k];
            add_val(u, a->name, a->value, used_of(v, n, a->name));
        }
        at[i] = (int)++u->nnodes;
    }
    for (size_t i = 0; i < v->npods; i++) {
        const struct sv_pod *p = &v->pods[i];
        if (!p->alive || p->node < 0 || !at[p->node])
            continue;
        XGROW(u->pods, u->npods + 1, u->cappods);
        struct upod *up = &u->pods[u->npods++];
        *up = (struct upod){(size_t)at[p->node] - 1, strpool_add(&u->s, p->key), u->nvals, 0};
        for (size_t k = 0; p->counted && k < p->m.nrequests; k++, up->nreq++)
            add_val(u, p->m.requests[k].name, used_of(v, &v->nodes[p->node], p->m.requests[k].name),
                    0);
    }
    free(at);
}

static void usage_release(struct usage *u)
{
    strpool_release(&u->s);
    free(u->vals);
    free(u->pods);
    free(u->nodes);
}

/* Bound pods by node (the view's order), then by key (the store's pods-by-node index's). */
static int cmp_node_then_key(const void *a, const void *b, void *ctx)
{
    const struct usage *u = ctx;
    const struct upod *x = a, *y = b;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return strcmp(strpool_get(&u->s, x->key), strpool_get(&u->s, y->key));
}

static void set_quantity(json_t *obj, const char *res, int64_t value)
{
    char buf[64];
    model_quantity_format(value, model_resource_is_milli(res), buf, sizeof(buf));
    json_object_set_new(obj, res, json_string(buf));
}

/* The usage document of node n; pods (npods) are the pods bound to it, by key.
 *
 * allocatable: as stored, so a node without allocatable pods shows none (the view's
 * default of 110 is a scheduling rule, not part of the node). requested: every resource
 * a counted pod requests (pods: 1 for each), even at 0, in the order they first appear
 * (pods by key, each pod's requests by name); the sums are the view's used vector. free:
 * per allocatable resource, allocatable - requested, at least 0. */
static json_t *usage_json(const struct usage *u, const struct unode *n, const struct upod *pods,
                          size_t npods)
{
    json_t *alloc = json_object(), *req = json_object(), *free_ = json_object();
    json_t *keys = json_array();
    for (size_t i = 0; i < npods; i++) {
        json_array_append_new(keys, json_string(strpool_get(&u->s, pods[i].key)));
        for (size_t k = 0; k < pods[i].nreq; k++) {
            const struct uval *r = &u->vals[pods[i].req + k];
            const char *res = strpool_get(&u->s, r->name);
            if (!json_object_get(req, res))
                set_quantity(req, res, r->a);
        }
    }
    for (size_t i = 0; i < n->nalloc; i++) {
        const struct uval *a = &u->vals[n->alloc + i];
        const char *res = strpool_get(&u->s, a->name);
        set_quantity(alloc, res, a->a);
        set_quantity(free_, res, a->a - a->b > 0 ? a->a - a->b : 0);
    }
    return json_pack("{s:o,s:o,s:o,s:o}", "allocatable", alloc, "requested", req, "free", free_,
                     "pods", keys);
}

/* Node name's usage, or every live node's by name when name is NULL: the numbers copied
 * under the lock, the document made after it. */
static int usage_read(struct sched *s, const char *name, json_t **out, struct err *err)
{
    struct usage u = {0};
    pthread_mutex_lock(&s->mu);
    int ni = name ? sched__view_node(s->v, name) : -1;
    if (name && ni < 0) {
        pthread_mutex_unlock(&s->mu);
        return err_set(err, ERR_NOT_FOUND, "node '%s' not found", name);
    }
    usage_copy(s->v, ni, &u);
    pthread_mutex_unlock(&s->mu);
    if (u.npods > 1) /* u.pods is NULL without pods */
        qsort_r(u.pods, u.npods, sizeof(*u.pods), cmp_node_then_key, &u);
    *out = name ? NULL : json_object();
    for (size_t k = 0, at = 0; k < u.nnodes; k++) {
        size_t from = at; /* the pods are grouped by node: each node takes its group */
        while (at < u.npods && u.pods[at].node == k)
            at++;
        json_t *doc = usage_json(&u, &u.nodes[k], u.pods + from, at - from);
        if (name)
            *out = doc;
        else
            json_object_set_new(*out, strpool_get(&u.s, u.nodes[k].name), doc);
    }
    usage_release(&u);
    return 0;
}

int sched_node_usage(struct sched *s, const char *name, json_t **out, struct err *err)
{
    return usage_read(s, name, out, err);
}

int sched_nodes_usage(struct sched *s, json_t **out, struct err *err)
{
    return usage_read(s, NULL, out, err);
}

/* A resource amount as a JSON number in the unit people read: cores for cpu (a real when
 * fractional), whole units for everything else. */
static json_t *amount_json(const char *res, int64_t value)
{
    if (model_resource_is_milli(res))
        return value % 1000 ? json_real((double)value / 1000.0) : json_integer(value / 1000);
    return json_integer(value);
}

/* One node of the map: see scheduler.h. */
static json_t *map_node(const struct sched_view *v, const struct sv_node *n, int pods, int noms)
{
    json_t *alloc = json_object(), *used = json_object(), *taints = json_array();
    for (size_t i = 0; i < n->m.nallocatable; i++) {
        const struct model_res *a = &n->m.allocatable[i];
        json_object_set_new(alloc, a->name, amount_json(a->name, a->value));
        json_object_set_new(used, a->name, amount_json(a->name, used_of(v, n, a->name)));
    }
    for (size_t i = 0; i < n->m.ntaints; i++) {
        const struct model_taint *t = &n->m.taints[i];
        json_array_append_new(taints, json_pack("{s:s, s:s, s:s}", "key", t->key, "value", t->value,
                                                "effect", t->effect));
    }
    return json_pack("{s:s, s:o, s:o, s:b, s:b, s:o, s:i, s:i}", "name", n->name, "allocatable",
                     alloc, "used", used, "unschedulable", n->m.unschedulable, "notReady",
                     n->m.not_ready, "taints", taints, "pods", pods, "nominated", noms);
}

int sched_node_map(struct sched *s, json_t **out, struct err *err)
{
    (void)err;
    pthread_mutex_lock(&s->mu);
    struct sched_view *v = s->v;
    int *pods = xcalloc(v->nnodes + 1, sizeof(int)), *noms = xcalloc(v->nnodes + 1, sizeof(int));
    for (size_t i = 0; i < v->npods; i++) {
        const struct sv_pod *p = &v->pods[i];
        if (!p->alive)
            continue;
        if (p->node >= 0 && p->counted)
            pods[p->node]++;
        if (p->nominated >= 0 && p->node < 0)
            noms[p->nominated]++;
    }
    size_t n;
    const int *order = sched__view_node_order(v, &n);
    json_t *items = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(items,
                              map_node(v, &v->nodes[order[i]], pods[order[i]], noms[order[i]]));
    pthread_mutex_unlock(&s->mu);
    *out = json_pack("{s:o}", "items", items);
    free(pods);
    free(noms);
    return 0;
}
