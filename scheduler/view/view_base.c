/*
 * view_base.c - the view's slots and lookups (view_base.h): free lists, the interned
 * resources, nodes in name order, pods and jobs by name, a job's slot, and the small facts
 * of a pod or a job every part asks.
 *
 * Slots of deleted objects go on a free list; indexes stay stable while an object lives,
 * so statements can refer to pods and nodes by index.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "strmap.h"
#include "view_base.h"

int sched__slot_pop(struct sv_free *f)
{
    return f->n ? f->ix[--f->n] : -1;
}

void sched__slot_push(struct sv_free *f, int i)
{
    XGROW(f->ix, f->n + 1, f->cap);
    f->ix[f->n++] = i;
}

/* ---- resources ---- */

/* Every vector sized by the resource count grows with it: the nodes' and the queues'
 * (view_queue.c fills them). */
static void queues_grow(struct sched_view *v, size_t oldcap, size_t newcap)
{
    for (size_t i = 0; i < v->nqueues; i++) {
        struct sv_queue *q = &v->queues[i];
        int64_t **all[] = {&q->cap,     &q->guar,     &q->alloc,  &q->pend,
                           &q->request, &q->deserved, &q->realcap};
        for (size_t k = 0; q->alive && k < sizeof(all) / sizeof(all[0]); k++) {
            *all[k] = xrealloc(*all[k], newcap * sizeof(int64_t));
            int64_t fill = all[k] == &q->cap || all[k] == &q->realcap ? -1 : 0;
            for (size_t r = oldcap; r < newcap; r++)
                (*all[k])[r] = fill;
        }
    }
}

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
        queues_grow(v, v->rescap, ncap);
        v->rescap = ncap;
    }
    v->tp_dirty = 1; /* domain totals are sized by the resource count */
    v->res[v->nres] = xstrdup(name);
    sched__strmap_put(&v->res_ix, name, (int)v->nres);
    return (int)v->nres++;
}

/* ---- nodes and pods ---- */

int sched__view_node(const struct sched_view *v, const char *name)
{
    return sched__strmap_get(&v->node_ix, name);
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

int sched__view_pod(const struct sched_view *v, const char *key)
{
    return sched__strmap_get(&v->pod_ix, key);
}

int sched__pod_pending(const struct sv_pod *p)
{
    return model_pod_is_pending(&p->m);
}

/* ---- jobs ---- */

void sched__job_clear(struct sv_job *j)
{
    free(j->key);
    model_podgroup_release(&j->pg);
    free(j->pods);
    free(j->cleared_by);
    memset(j, 0, sizeof(*j));
}

/* "g:<id>" or "p:<id>" into buf (512 bytes). */
void sched__view_job_key(char buf[512], const char *id, int gang)
{
    sched__str_join_to(buf, 512, gang ? "g" : "p", ':', id);
}

int sched__view_gang_job(const struct sched_view *v, const char *id)
{
    char buf[512];
    sched__view_job_key(buf, id, 1);
    return sched__strmap_get(&v->job_ix, buf);
}

int sched__view_job(const struct sched_view *v, const char *id)
{
    int j = sched__view_gang_job(v, id);
    if (j >= 0)
        return j;
    char buf[512];
    sched__view_job_key(buf, id, 0);
    return sched__strmap_get(&v->job_ix, buf);
}

/* A new job of key (taken) and hash h, not in the map yet: its index. */
static int job_new(struct sched_view *v, char *key, uint32_t h)
{
    int ji = sched__slot_pop(&v->fjobs);
    if (ji < 0) {
        XGROW(v->jobs, v->njobs + 1, v->capjobs);
        ji = (int)v->njobs++;
    }
    struct sv_job *j = &v->jobs[ji];
    memset(j, 0, sizeof(*j));
    j->key = key;
    j->id = key + 2;
    j->gang = key[0] == 'g';
    j->alive = 1;
    j->serial = ++v->job_serial;
    j->queue = -1;
    sched__strmap_put_h(&v->job_ix, j->key, h, ji);
    return ji;
}

int sched__view_job_get(struct sched_view *v, const char *id, int gang)
{
    char buf[512];
    sched__view_job_key(buf, id, gang);
    uint32_t h = sched__strmap_hash(buf);
    int ji = sched__strmap_get_h(&v->job_ix, buf, h);
    return ji >= 0 ? ji : job_new(v, xstrdup(buf), h);
}

int sched__view_job_take(struct sched_view *v, char *key, uint32_t h)
{
    int ji = sched__strmap_get_h(&v->job_ix, key, h);
    if (ji < 0)
        return job_new(v, key, h);
    free(key);
    return ji;
}

void sched__view_job_maybe_free(struct sched_view *v, int ji)
{
    struct sv_job *j = &v->jobs[ji];
    if (j->has_pg || j->npods || j->held)
        return;
    sched__strmap_del(&v->job_ix, j->key);
    sched__job_clear(j);
    sched__slot_push(&v->fjobs, ji);
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
