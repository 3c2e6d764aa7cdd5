/*
 * nodes.c - node usage from the view (sched_node_usage, sched_nodes_usage), the numbers
 * GET /api/v1/nodes serves, and every node's numbers and marks at once (sched_node_map,
 * GET /api/v1/nodemap: the UI's cluster map).
 *
 * The view already holds what a node's usage needs: allocatable as stored, used (the
 * requests of its counted pods: bound and not terminal) and which pods are bound to it.
 * Nothing is read from the store, and the list costs one pass over the pods under one
 * lock, not one store scan per node.
 */
#include <stdlib.h>
#include <string.h>

#include "core.h"

/* Bound pods by node index, then by key (the order of the store's pods-by-node index). */
static int cmp_node_then_key(const void *a, const void *b, void *ctx)
{
    const struct sched_view *v = ctx;
    const struct sv_pod *x = &v->pods[*(const int *)a], *y = &v->pods[*(const int *)b];
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* Live pods bound to node ni, or to any known node when ni < 0, in that order. New. */
static int *bound_pods(const struct sched_view *v, int ni, size_t *n)
{
    int *pods = xcalloc(v->npods + 1, sizeof(int));
    *n = 0;
    for (size_t i = 0; i < v->npods; i++) {
        const struct sv_pod *p = &v->pods[i];
        if (p->alive && p->node >= 0 && (ni < 0 || p->node == ni))
            pods[(*n)++] = (int)i;
    }
    qsort_r(pods, *n, sizeof(int), cmp_node_then_key, (void *)v);
    return pods;
}

static void set_quantity(json_t *obj, const char *res, int64_t value)
{
    char buf[64];
    model_quantity_format(value, model_resource_is_milli(res), buf, sizeof(buf));
    json_object_set_new(obj, res, json_string(buf));
}

static int64_t used_of(const struct sched_view *v, const struct sv_node *n, const char *res)
{
    int r = sched__strmap_get(&v->res_ix, res);
    return r >= 0 ? n->used[r] : 0; /* a resource only ever requested as 0 is not interned */
}

/* The usage document of node n; pods (npods) are the pods bound to it, by key.
 *
 * allocatable: as stored, so a node without allocatable pods shows none (the view's
 * default of 110 is a scheduling rule, not part of the node). requested: every resource
 * a counted pod requests (pods: 1 for each), even at 0, in the order they first appear
 * (pods by key, each pod's requests by name); the sums are the view's used vector. free:
 * per allocatable resource, allocatable - requested, at least 0. */
static json_t *usage_json(const struct sched_view *v, const struct sv_node *n, const int *pods,
                          size_t npods)
{
    json_t *alloc = json_object(), *req = json_object(), *free_ = json_object();
    json_t *keys = json_array();
    for (size_t i = 0; i < npods; i++) {
        const struct sv_pod *p = &v->pods[pods[i]];
        json_array_append_new(keys, json_string(p->key));
        for (size_t k = 0; p->counted && k < p->m.nrequests; k++) {
            const char *res = p->m.requests[k].name;
            if (!json_object_get(req, res))
                set_quantity(req, res, used_of(v, n, res));
        }
    }
    for (size_t i = 0; i < n->m.nallocatable; i++) {
        const struct model_res *a = &n->m.allocatable[i];
        int64_t left = a->value - used_of(v, n, a->name);
        set_quantity(alloc, a->name, a->value);
        set_quantity(free_, a->name, left > 0 ? left : 0);
    }
    return json_pack("{s:o,s:o,s:o,s:o}", "allocatable", alloc, "requested", req, "free", free_,
                     "pods", keys);
}

int sched_node_usage(struct sched *s, const char *name, json_t **out, struct err *err)
{
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    struct sched_view *v = s->v;
    int ni = sched__view_node(v, name);
    if (ni < 0) {
        rc = err_set(err, ERR_NOT_FOUND, "node '%s' not found", name);
    } else {
        size_t n;
        int *pods = bound_pods(v, ni, &n);
        *out = usage_json(v, &v->nodes[ni], pods, n);
        free(pods);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int sched_nodes_usage(struct sched *s, json_t **out, struct err *err)
{
    (void)err;
    pthread_mutex_lock(&s->mu);
    struct sched_view *v = s->v;
    size_t n, at = 0;
    int *pods = bound_pods(v, -1, &n);
    *out = json_object();
    /* pods is grouped by node index: one merge walk hands each node its group */
    for (size_t ni = 0; ni < v->nnodes; ni++) {
        size_t from = at;
        while (at < n && v->pods[pods[at]].node == (int)ni)
            at++;
        if (v->nodes[ni].alive)
            json_object_set_new(*out, v->nodes[ni].name,
                                usage_json(v, &v->nodes[ni], pods + from, at - from));
    }
    pthread_mutex_unlock(&s->mu);
    free(pods);
    return 0;
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
