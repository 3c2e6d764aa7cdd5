/*
 * view.c - the cluster view: resources, nodes, jobs, the topology object; put/delete
 * by name.
 *
 * Slots of deleted objects go on a free list; indexes stay stable while an
 * object lives, so statements can refer to pods and nodes by index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"
#include "view.h"

int sched__slot_pop(struct sv_free *f)
{
    return f->n ? f->ix[--f->n] : -1;
}

void sched__slot_push(struct sv_free *f, int i)
{
    XGROW(f->ix, f->n + 1, f->cap);
    f->ix[f->n++] = i;
}

struct sched_view *sched__view_new(void)
{
    struct sched_view *v = xcalloc(1, sizeof(*v));
    sched__strmap_init(&v->res_ix);
    sched__strmap_init(&v->node_ix);
    sched__strmap_init(&v->pod_ix);
    sched__strmap_init(&v->job_ix);
    sched__strmap_init(&v->shape_ix);
    sched__strmap_init(&v->lab_ix);
    sched__strmap_init(&v->term_ix);
    sched__strmap_init(&v->victims);
    v->epoch = 1;
    v->order_dirty = 1;
    v->nl_dirty = 1;
    /* "pods" is resource 0 so the pod count is an ordinary resource. */
    v->rescap = 8;
    v->res = xcalloc(v->rescap, sizeof(*v->res));
    v->res[0] = xstrdup("pods");
    v->nres = 1;
    sched__strmap_put(&v->res_ix, "pods", 0);
    sched__view_queues_init(v);
    return v;
}

static void job_clear(struct sv_job *j)
{
    free(j->id);
    model_podgroup_release(&j->pg);
    free(j->pods);
    free(j->cleared_by);
    memset(j, 0, sizeof(*j));
}

static void shape_clear(struct sv_shape *sh)
{
    free(sh->req);
    for (size_t i = 0; i < sh->nsel; i++) {
        free(sh->sel[i].key);
        free(sh->sel[i].value);
    }
    free(sh->sel);
    for (size_t i = 0; i < sh->ntol; i++) {
        free(sh->tol[i].key);
        free(sh->tol[i].op);
        free(sh->tol[i].value);
        free(sh->tol[i].effect);
    }
    free(sh->tol);
    free(sh->cand);
    free(sh->heap);
    model_affinity_unref(sh->aff);
}

void sched__view_free(struct sched_view *v)
{
    if (!v)
        return;
    free(v->freed);
    for (size_t i = 0; i < v->nres; i++)
        free(v->res[i]);
    free(v->res);
    for (size_t i = 0; i < v->nnodes; i++) {
        struct sv_node *n = &v->nodes[i];
        free(n->name);
        model_node_release(&n->m);
        free(n->alloc);
        free(n->used);
        free(n->nominated);
        free(n->cyc_pods);
    }
    free(v->nodes);
    free(v->node_order);
    free(v->node_rank);
    free(v->todo);
    free(v->in_todo);
    for (size_t i = 0; i < v->npods; i++) {
        free(v->pods[i].key);
        model_pod_release(&v->pods[i].m);
        free(v->pods[i].req);
    }
    free(v->pods);
    for (size_t i = 0; i < v->njobs; i++)
        job_clear(&v->jobs[i]);
    free(v->jobs);
    for (size_t i = 0; i < v->nshapes; i++)
        shape_clear(&v->shapes[i]);
    free(v->shapes);
    sched__strmap_free(&v->res_ix);
    sched__strmap_free(&v->node_ix);
    sched__strmap_free(&v->pod_ix);
    sched__strmap_free(&v->job_ix);
    sched__strmap_free(&v->shape_ix);
    sched__view_node_labels_free(v);
    sched__strmap_free(&v->lab_ix);
    sched__strmap_free(&v->term_ix);
    sched__strmap_free(&v->victims);
    sched__view_queues_free(v);
    sched__view_pdbs_free(v);
    free(v->victim_prio);
    for (size_t i = 0; i < v->nlists; i++)
        free(v->lists[i].r);
    free(v->lists);
    if (v->has_topology)
        model_topology_release(&v->topo);
    sched__classes_free(&v->classes);
    sched__topo_free(v->tp);
    free(v->binds);
    free(v->scan);
    free(v->rules_mem);
    free(v->fnodes.ix);
    free(v->fpods.ix);
    free(v->fjobs.ix);
    free(v);
}

/* ---- resources ---- */

int sched__view_res(struct sched_view *v, const char *name)
{
    int r = sched__strmap_get(&v->res_ix, name);
    if (r >= 0)
        return r;
    if (v->nres == v->rescap) {
        size_t ncap = v->rescap * 2;
        v->res = xrealloc(v->res, ncap * sizeof(*v->res));
        for (size_t i = 0; i < v->nnodes; i++) {
            struct sv_node *n = &v->nodes[i];
            if (!n->alloc)
                continue;
            n->alloc = xrealloc(n->alloc, ncap * sizeof(int64_t));
            n->used = xrealloc(n->used, ncap * sizeof(int64_t));
            memset(n->alloc + v->rescap, 0, (ncap - v->rescap) * sizeof(int64_t));
            memset(n->used + v->rescap, 0, (ncap - v->rescap) * sizeof(int64_t));
        }
        sched__view_queues_grow(v, v->rescap, ncap);
        v->rescap = ncap;
    }
    v->tp_dirty = 1; /* domain totals are sized by the resource count */
    v->res[v->nres] = xstrdup(name);
    sched__strmap_put(&v->res_ix, name, (int)v->nres);
    return (int)v->nres++;
}

/* ---- pod classification ---- */

int sched__pod_pending(const struct sv_pod *p)
{
    return model_pod_is_pending(&p->m);
}

void sched__view_usage(struct sched_view *v, struct sv_pod *p, int sign)
{
    struct sv_node *n = &v->nodes[p->node];
    for (int i = 0; i < p->nreq; i++)
        n->used[p->req[i].res] += sign * p->req[i].v;
    if (sign > 0) { /* the picks re-score nodes whose usage grew (place_heap.c) */
        if (v->log_epoch != v->epoch) {
            v->nbinds = 0;
            v->log_epoch = v->epoch;
        }
        XGROW(v->binds, v->nbinds + 1, v->capbinds);
        v->binds[v->nbinds++] = p->node;
    }
    sched__queue_usage(v, p, sign);
    if (v->tp && !v->tp_dirty)
        sched__topo_usage(v, p->node, p, sign);
}

/* ---- nodes ---- */

int sched__view_node(const struct sched_view *v, const char *name)
{
    return sched__strmap_get(&v->node_ix, name);
}

static void node_set_alloc(struct sched_view *v, struct sv_node *n)
{
    int has_pods = 0;
    memset(n->alloc, 0, v->rescap * sizeof(int64_t));
    for (size_t i = 0; i < n->m.nallocatable; i++) {
        int r = sched__view_res(v, n->m.allocatable[i].name);
        n->alloc[r] = n->m.allocatable[i].value;
        has_pods |= r == SV_RES_PODS;
    }
    if (!has_pods)
        n->alloc[SV_RES_PODS] = SV_DEFAULT_MAX_PODS;
}

void sched__view_put_node(struct sched_view *v, struct model_node *m)
{
    int ni = sched__view_node(v, m->name);
    struct sv_node *n;
    if (ni >= 0) {
        n = &v->nodes[ni];
        if (model_node_same(&n->m, m)) { /* a heartbeat: nothing the scheduler reads */
            model_node_release(m);
            return;
        }
        model_node_release(&n->m);
    } else {
        ni = sched__slot_pop(&v->fnodes);
        if (ni < 0) {
            XGROW(v->nodes, v->nnodes + 1, v->capnodes);
            ni = (int)v->nnodes++;
        }
        n = &v->nodes[ni];
        memset(n, 0, sizeof(*n));
        n->name = xstrdup(m->name);
        n->alive = 1;
        /* Interning below may grow rescap; size the vectors first. */
        n->alloc = xcalloc(v->rescap, sizeof(int64_t));
        n->used = xcalloc(v->rescap, sizeof(int64_t));
        sched__strmap_put(&v->node_ix, n->name, ni);
    }
    n->m = *m;
    memset(m, 0, sizeof(*m));
    node_set_alloc(v, &v->nodes[ni]);
    if (v->orphans)
        sched__view_adopt(v, ni);
    sched__wait_freed(v, ni); /* new room, or labels, taints, cordon changed */
    v->order_dirty = 1;
    v->nl_dirty = 1;
    v->tp_dirty = 1;
    v->epoch++;
}

void sched__view_del_node(struct sched_view *v, const char *name)
{
    int ni = sched__view_node(v, name);
    if (ni < 0)
        return;
    sched__wait_event(v, SV_EV_CAPACITY); /* its pods fail: rules against them go too */
    for (size_t i = 0; i < v->npods; i++) {
        struct sv_pod *p = &v->pods[i];
        if (p->alive && p->nominated == ni) {
            p->nominated = -1;
            v->orphans++;
        }
        if (!p->alive || p->node != ni)
            continue;
        sched__queue_pend(v, p, -1);
        if (p->counted) /* off its queue's allocation, as a rebuilt view has it */
            sched__queue_usage(v, p, -1);
        p->node = -1;
        p->counted = 0;
        sched__queue_pend(v, p, 1);
        v->orphans++;
    }
    struct sv_node *n = &v->nodes[ni];
    sched__strmap_del(&v->node_ix, name);
    free(n->name);
    model_node_release(&n->m);
    free(n->alloc);
    free(n->used);
    free(n->nominated);
    free(n->cyc_pods);
    memset(n, 0, sizeof(*n));
    sched__slot_push(&v->fnodes, ni);
    v->order_dirty = 1;
    v->nl_dirty = 1;
    v->tp_dirty = 1;
    v->epoch++;
}

static int cmp_node_name(const void *a, const void *b, void *ctx)
{
    const struct sched_view *v = ctx;
    return strcmp(v->nodes[*(const int *)a].name, v->nodes[*(const int *)b].name);
}

const int *sched__view_node_order(struct sched_view *v, size_t *n)
{
    if (v->order_dirty) {
        free(v->node_order);
        v->node_order = xcalloc(v->nnodes + 1, sizeof(int));
        v->norder = 0;
        for (size_t i = 0; i < v->nnodes; i++)
            if (v->nodes[i].alive)
                v->node_order[v->norder++] = (int)i;
        qsort_r(v->node_order, v->norder, sizeof(int), cmp_node_name, v);
        free(v->node_rank);
        v->node_rank = xcalloc(v->nnodes + 1, sizeof(int));
        for (size_t i = 0; i < v->norder; i++)
            v->node_rank[v->node_order[i]] = (int)i;
        v->order_dirty = 0;
    }
    *n = v->norder;
    return v->node_order;
}

/* ---- jobs ---- */

/* "g:<id>" or "p:<id>" into buf (512 bytes). */
static void job_key(char buf[512], const char *id, int gang)
{
    sched__str_join_to(buf, 512, gang ? "g" : "p", ':', id);
}

int sched__view_gang_job(const struct sched_view *v, const char *id)
{
    char buf[512];
    job_key(buf, id, 1);
    return sched__strmap_get(&v->job_ix, buf);
}

int sched__view_job(const struct sched_view *v, const char *id)
{
    int j = sched__view_gang_job(v, id);
    if (j >= 0)
        return j;
    char buf[512];
    job_key(buf, id, 0);
    return sched__strmap_get(&v->job_ix, buf);
}

int sched__view_job_get(struct sched_view *v, const char *id, int gang)
{
    char buf[512];
    job_key(buf, id, gang);
    int ji = sched__strmap_get(&v->job_ix, buf);
    if (ji >= 0)
        return ji;
    ji = sched__slot_pop(&v->fjobs);
    if (ji < 0) {
        XGROW(v->jobs, v->njobs + 1, v->capjobs);
        ji = (int)v->njobs++;
    }
    struct sv_job *j = &v->jobs[ji];
    memset(j, 0, sizeof(*j));
    j->id = xstrdup(id);
    j->gang = gang;
    j->alive = 1;
    j->serial = ++v->job_serial;
    j->queue = -1;
    sched__strmap_put(&v->job_ix, buf, ji);
    return ji;
}

void sched__view_job_maybe_free(struct sched_view *v, int ji)
{
    struct sv_job *j = &v->jobs[ji];
    if (j->has_pg || j->npods)
        return;
    char buf[512];
    job_key(buf, j->id, j->gang);
    sched__strmap_del(&v->job_ix, buf);
    job_clear(j);
    sched__slot_push(&v->fjobs, ji);
}

void sched__view_put_pg(struct sched_view *v, struct model_podgroup *g)
{
    char *id = sched__str_join(g->ns, '/', g->name);
    int ji = sched__view_job_get(v, id, 1);
    free(id);
    struct sv_job *j = &v->jobs[ji];
    model_podgroup_release(&j->pg);
    j->pg = *g;
    j->has_pg = 1;
    memset(g, 0, sizeof(*g));
    sched__view_prio_sync(v, ji);
    sched__view_job_requeue(v, ji);
    sched__wait_wake(v, ji);
    sched__wait_event(v, SV_EV_GROUP);
}

void sched__view_del_pg(struct sched_view *v, const char *key)
{
    int ji = sched__view_gang_job(v, key);
    if (ji < 0)
        return;
    sched__wait_wake(v, ji);
    sched__wait_event(v, SV_EV_GROUP);
    model_podgroup_release(&v->jobs[ji].pg);
    v->jobs[ji].has_pg = 0;
    sched__view_prio_sync(v, ji);
    sched__view_job_requeue(v, ji);
    sched__view_job_maybe_free(v, ji);
}

int64_t sched__job_creation(const struct sched_view *v, const struct sv_job *j)
{
    if (j->has_pg && j->pg.creation_ms)
        return j->pg.creation_ms;
    int64_t c = INT64_MAX;
    for (size_t i = 0; i < j->npods; i++)
        if (v->pods[j->pods[i]].m.creation_ms < c)
            c = v->pods[j->pods[i]].m.creation_ms;
    return j->npods ? c : 0;
}

int sched__job_min(const struct sv_job *j)
{
    return j->gang && j->has_pg ? j->pg.min_member : 1;
}

/* ---- topology ---- */

void sched__view_put_topo(struct sched_view *v, struct model_topology *t)
{
    sched__wait_event(v, SV_EV_TOPOLOGY);
    if (v->has_topology)
        model_topology_release(&v->topo);
    v->topo = *t;
    v->has_topology = 1;
    v->tp_dirty = 1;
    v->epoch++;
    memset(t, 0, sizeof(*t));
}

void sched__view_del_topo(struct sched_view *v)
{
    sched__wait_event(v, SV_EV_TOPOLOGY);
    if (v->has_topology)
        model_topology_release(&v->topo);
    memset(&v->topo, 0, sizeof(v->topo));
    v->has_topology = 0;
    v->tp_dirty = 1;
    v->epoch++;
}
