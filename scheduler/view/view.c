/*
 * view.c - the cluster view: its creation and release (each part's init and free), and the
 * nodes, PodGroups and the topology object put and deleted by name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prefault.h"
#include "topo.h"
#include "view.h"

struct sched_view *sched__view_new(void)
{
    struct sched_view *v = xcalloc(1, sizeof(*v));
    sched__strmap_init(&v->res_ix);
    sched__strmap_init(&v->node_ix);
    sched__strmap_init_borrowed(&v->pod_ix); /* the pods' keys */
    sched__strmap_init_borrowed(&v->job_ix); /* the jobs' */
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

/* Fewer pods than this are put faster than a thread starts. */
#define PREFAULT_PODS 8192

struct prefault *sched__view_reserve(struct sched_view *v, size_t pods, size_t jobs)
{
    const char *const *pod_keys = (const char *const *)v->pod_ix.keys;
    const char *const *job_keys = (const char *const *)v->job_ix.keys;
    sched__strmap_reserve(&v->pod_ix, v->pod_ix.count + pods);
    sched__strmap_reserve(&v->job_ix, v->job_ix.count + jobs);
    XGROW(v->pods, v->npods + pods, v->cappods);
    XGROW(v->jobs, v->njobs + jobs, v->capjobs);
    if (pods < PREFAULT_PODS)
        return NULL;
    /* the slots the pods and jobs will take, and the maps' tables when made anew (probed
     * anywhere) */
    void *at[8] = {v->pods + v->npods, v->jobs + v->njobs};
    size_t len[8] = {(v->cappods - v->npods) * sizeof(*v->pods),
                     (v->capjobs - v->njobs) * sizeof(*v->jobs)};
    size_t n = 2;
    const struct sched_strmap *maps[] = {&v->pod_ix, &v->job_ix};
    const char *const *before[] = {pod_keys, job_keys};
    for (size_t i = 0; i < 2; i++) {
        const struct sched_strmap *m = maps[i];
        if ((const char *const *)m->keys == before[i])
            continue;
        at[n] = m->hashes, len[n++] = m->cap * sizeof(*m->hashes);
        at[n] = m->keys, len[n++] = m->cap * sizeof(*m->keys);
        at[n] = m->vals, len[n++] = m->cap * sizeof(*m->vals);
    }
    return prefault_start(at, len, n);
}

void sched__view_free(struct sched_view *v)
{
    if (!v)
        return;
    free(v->freed);
    sched__view_resv_free(v);
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
        sched__job_clear(&v->jobs[i]);
    free(v->jobs);
    sched__view_shapes_free(v);
    sched__strmap_free(&v->res_ix);
    sched__strmap_free(&v->node_ix);
    sched__strmap_free(&v->pod_ix);
    sched__strmap_free(&v->job_ix);
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

/* ---- nodes ---- */

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

/* ---- jobs ---- */

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
