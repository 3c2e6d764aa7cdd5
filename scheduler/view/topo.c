/*
 * topo.c - the topology model: layers from the ClusterNetworkTopology named
 * 'default', domains from node labels, per-domain totals kept incrementally.
 *
 * Layers are ordered root first by following parentTopologyLayer; layer names
 * match case-insensitively. A node belongs to the domain named by the first of
 * a layer's labelKeys it carries, under its domain of the layer above. A node
 * that lacks a layer's label stops there: it is outside every domain of that
 * layer and of the layers below, so it cannot serve a MustGather there.
 *
 * The tree is rebuilt (O(nodes)) only when nodes or the topology change; usage
 * changes walk up from the node's lowest domain (O(depth x resources)).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "fmt.h"
#include "sat.h"
#include "strmap.h"
#include "topo.h"
#include "view_base.h"

#define NODE_LAYER "NodeTopologyLayer"
#define ROOT_LAYER "ClusterTopologyLayer"

void sched__topo_free(struct sched_topo *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->ndoms; i++) {
        struct tp_dom *d = &t->doms[i];
        free(d->name);
        free(d->kids);
        free(d->nodes);
        free(d->alloc);
        free(d->free);
    }
    if (t->gidx)
        t->gidx_free(t->gidx, t->nlayers + 1);
    free(t->dirty);
    free(t->is_dirty);
    free(t->doms);
    free(t->mult_last);
    for (size_t l = 0; l < t->nlayers; l++)
        free(t->layers[l]);
    free(t->layers);
    free(t->keys);
    free(t->nkeys);
    free(t->node_dom);
    free(t);
}

/* Layers root first; NULL when the spec has no usable layer chain. */
static struct sched_topo *layers_of(const struct model_topology *m)
{
    struct sched_topo *t = xcalloc(1, sizeof(*t));
    size_t n = m->nlayers;
    t->layers = xcalloc(n + 2, sizeof(char *));
    t->keys = xcalloc(n + 2, sizeof(char **));
    t->nkeys = xcalloc(n + 2, sizeof(size_t));
    t->layers[t->nlayers++] = xstrdup(ROOT_LAYER);
    const char *parent = NULL;
    for (size_t step = 0; step < n; step++) {
        const struct model_layer *next = NULL;
        for (size_t i = 0; i < n && !next; i++) {
            const char *p = m->layers[i].parent;
            int is_root = !p || !*p || !strcasecmp(p, ROOT_LAYER);
            if (parent ? (p && !strcasecmp(p, parent)) : is_root)
                next = &m->layers[i];
        }
        if (!next || !strcasecmp(next->name, NODE_LAYER))
            break;
        t->layers[t->nlayers] = xstrdup(next->name);
        t->keys[t->nlayers] = next->label_keys;
        t->nkeys[t->nlayers] = next->nlabel_keys;
        t->nlayers++;
        parent = next->name;
    }
    return t;
}

int sched__topo_layer(const struct sched_topo *t, const char *name)
{
    if (!t || !name)
        return -1;
    if (!strcasecmp(name, NODE_LAYER))
        return (int)t->nlayers;
    for (size_t l = 0; l < t->nlayers; l++)
        if (!strcasecmp(t->layers[l], name))
            return (int)l;
    return -1;
}

const char *sched__topo_layer_name(const struct sched_topo *t, int depth)
{
    return depth >= 0 && (size_t)depth < t->nlayers ? t->layers[depth] : NODE_LAYER;
}

static int dom_new(struct sched_topo *t, const char *name, int depth, int parent)
{
    XGROW(t->doms, t->ndoms + 1, t->capdoms);
    int di = (int)t->ndoms++;
    struct tp_dom *d = &t->doms[di];
    memset(d, 0, sizeof(*d));
    d->name = xstrdup(name);
    d->depth = depth;
    d->parent = parent;
    d->alloc = xcalloc(t->nres + 1, sizeof(int64_t));
    d->free = xcalloc(t->nres + 1, sizeof(int64_t));
    d->c_shape = -1;
    if (parent >= 0) {
        struct tp_dom *p = &t->doms[parent];
        XGROW(p->kids, p->nkids + 1, p->capkids);
        p->kids[p->nkids++] = di;
    }
    return di;
}

static const char *label_of(const struct model_node *n, char **keys, size_t nkeys)
{
    for (size_t k = 0; k < nkeys; k++)
        for (size_t i = 0; i < n->nlabels; i++)
            if (!strcmp(n->labels[i].key, keys[k]))
                return n->labels[i].value ? n->labels[i].value : "";
    return NULL;
}

/* Lowest domain of node n, creating domains on the way (map: "parent\x1fname" -> dom). */
static int place_node(struct sched_topo *t, struct sched_strmap *map, const struct model_node *n)
{
    int dom = 0;
    for (size_t l = 1; l < t->nlayers; l++) {
        const char *val = label_of(n, t->keys[l], t->nkeys[l]);
        if (!val)
            break;
        char buf[256], *key = buf;
        if ((size_t)fmt_snprintf(buf, sizeof(buf), "%d\x1f%s", dom, val) >= sizeof(buf))
            key = xasprintf("%d\x1f%s", dom, val);
        int child = sched__strmap_get(map, key);
        if (child < 0) {
            child = dom_new(t, val, (int)l, dom);
            sched__strmap_put(map, key, child);
        }
        if (key != buf)
            free(key);
        dom = child;
    }
    return dom;
}

static int cmp_dom_name(const void *a, const void *b, void *ctx)
{
    const struct sched_topo *t = ctx;
    return strcmp(t->doms[*(const int *)a].name, t->doms[*(const int *)b].name);
}

static struct sched_topo *build(struct sched_view *v)
{
    struct sched_topo *t = layers_of(&v->topo);
    struct sched_strmap map;
    sched__strmap_init(&map);
    t->nres = v->rescap;
    dom_new(t, "", 0, -1);
    t->nnode_dom = v->nnodes;
    t->node_dom = xcalloc(v->nnodes + 1, sizeof(int));
    size_t n;
    const int *order = sched__view_node_order(v, &n);
    for (size_t i = 0; i < v->nnodes; i++)
        t->node_dom[i] = -1;
    for (size_t i = 0; i < n; i++) {
        const struct sv_node *nd = &v->nodes[order[i]];
        int di = place_node(t, &map, &nd->m);
        t->node_dom[order[i]] = di;
        struct tp_dom *d = &t->doms[di];
        XGROW(d->nodes, d->nnodes + 1, d->capnodes);
        d->nodes[d->nnodes++] = order[i];
        for (; di >= 0; di = t->doms[di].parent) {
            d = &t->doms[di];
            d->nodenum++;
            for (size_t r = 0; r < v->nres; r++) {
                d->alloc[r] = sat_add_i64(d->alloc[r], nd->alloc[r]);
                d->free[r] = sat_add_i64(d->free[r], sat_sub_i64(nd->alloc[r], nd->used[r]));
            }
        }
    }
    for (size_t i = 0; i < t->ndoms; i++)
        if (t->doms[i].nkids > 1) /* qsort(NULL, 0) is undefined */
            qsort_r(t->doms[i].kids, t->doms[i].nkids, sizeof(int), cmp_dom_name, t);
    sched__strmap_free(&map);
    return t;
}

struct sched_topo *sched__topo_get(struct sched_view *v)
{
    if (!v->has_topology || !v->topo.name || strcmp(v->topo.name, "default")) {
        sched__topo_free(v->tp);
        v->tp = NULL;
        v->tp_dirty = 0;
        return NULL;
    }
    if (!v->tp || v->tp_dirty) {
        sched__topo_free(v->tp);
        v->tp = build(v);
        v->tp_dirty = 0;
    }
    return v->tp;
}

/* Domain di's offers may have changed: its version grows and it is logged for the index. */
static void dom_changed(struct sched_topo *t, int di)
{
    t->doms[di].ver++;
    if (!t->is_dirty) {
        t->is_dirty = xcalloc(t->ndoms + 1, 1);
        t->dirty = xcalloc(t->ndoms + 1, sizeof(int));
    }
    if (!t->is_dirty[di]) { /* logged once until the index looks */
        t->is_dirty[di] = 1;
        t->dirty[t->ndirty++] = di;
    }
}

void sched__topo_usage(struct sched_view *v, int ni, const struct sv_pod *p, int sign)
{
    struct sched_topo *t = v->tp;
    if (ni < 0 || (size_t)ni >= t->nnode_dom) {
        v->tp_dirty = 1;
        return;
    }
    for (int di = t->node_dom[ni]; di >= 0; di = t->doms[di].parent) {
        struct tp_dom *d = &t->doms[di];
        for (int i = 0; i < p->nreq; i++)
            d->free[p->req[i].res] -= sign * p->req[i].v;
        dom_changed(t, di);
    }
}

void sched__topo_touch(struct sched_view *v, int ni)
{
    struct sched_topo *t = v->tp;
    if (!t || v->tp_dirty)
        return; /* the tree is made afresh */
    if (ni < 0 || (size_t)ni >= t->nnode_dom) {
        v->tp_dirty = 1;
        return;
    }
    for (int di = t->node_dom[ni]; di >= 0; di = t->doms[di].parent)
        dom_changed(t, di);
}

/* ---- status.detailStatus ---- */

static json_t *info(const struct sched_topo *t, const struct tp_dom *d)
{
    return json_pack("{s:s,s:s}", "topologyLayer", t->layers[d->depth], "topologyName", d->name);
}

/* Koordinator's makeStatus: pre-order, children by name, the root entry named "" in
 * ClusterTopologyLayer, childTopologyNames left out when the children are nodes. */
static void detail(const struct sched_topo *t, int di, json_t *out)
{
    const struct tp_dom *d = &t->doms[di];
    json_t *e = json_pack("{s:o}", "topologyInfo", info(t, d));
    if (d->parent >= 0)
        json_object_set_new(e, "parentTopologyInfo", info(t, &t->doms[d->parent]));
    if (d->nkids) {
        json_t *names = json_array();
        for (size_t i = 0; i < d->nkids; i++)
            json_array_append_new(names, json_string(t->doms[d->kids[i]].name));
        json_object_set_new(e, "childTopologyLayer",
                            json_string(t->layers[t->doms[d->kids[0]].depth]));
        json_object_set_new(e, "childTopologyNames", names);
    } else if (d->nnodes) {
        json_object_set_new(e, "childTopologyLayer", json_string(NODE_LAYER));
    }
    json_object_set_new(e, "nodeNum", json_integer(d->nodenum));
    json_array_append_new(out, e);
    for (size_t i = 0; i < d->nkids; i++)
        detail(t, d->kids[i], out);
}

json_t *sched__topo_detail(const struct model_topology *m, const struct model_node *nodes, size_t n)
{
    struct sched_topo *t = layers_of(m);
    struct sched_strmap map;
    sched__strmap_init(&map);
    dom_new(t, "", 0, -1);
    for (size_t i = 0; i < n; i++) {
        int di = place_node(t, &map, &nodes[i]);
        struct tp_dom *d = &t->doms[di];
        d->nnodes++;
        for (; di >= 0; di = t->doms[di].parent)
            t->doms[di].nodenum++;
    }
    for (size_t i = 0; i < t->ndoms; i++)
        if (t->doms[i].nkids > 1) /* qsort(NULL, 0) is undefined */
            qsort_r(t->doms[i].kids, t->doms[i].nkids, sizeof(int), cmp_dom_name, t);
    json_t *out = json_array();
    detail(t, 0, out);
    sched__strmap_free(&map);
    sched__topo_free(t);
    return out;
}
