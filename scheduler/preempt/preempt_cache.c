/*
 * preempt_cache.c - the storage of what preemption remembers within a cycle
 * (preempt_cache.h): created on first use, freed by the cycle.
 */
#include <stdlib.h>
#include <string.h>

#include "preempt_cache.h"

static void qcache_free(struct sched_qcache *k)
{
    if (!k)
        return;
    free(k->term);
    free(k->hold);
    free(k->off);
    free(k->order);
    free(k);
}

static void memo_free(struct sched_preempt_cache *pc)
{
    for (size_t i = 0; i < pc->nmemo; i++) {
        free(pc->memo[i].asked);
        json_decref(pc->memo[i].verdict.detail);
    }
    free(pc->memo);
}

/* The bound pods by node as of the first search of the cycle (struct
 * sched_preempt_cache), built on first use. */
static void pods_by_node(struct sched_preempt_cache *pc, const struct sched_view *v)
{
    if (pc->by_node_off)
        return;
    pc->by_node_off = xcalloc(v->nnodes + 1, sizeof(int));
    for (size_t i = 0; i < v->npods; i++)
        if (v->pods[i].alive && v->pods[i].node >= 0)
            pc->by_node_off[v->pods[i].node + 1]++;
    for (size_t n = 0; n < v->nnodes; n++)
        pc->by_node_off[n + 1] += pc->by_node_off[n];
    pc->by_node = xcalloc((size_t)pc->by_node_off[v->nnodes] + 1, sizeof(int));
    int *fill = xcalloc(v->nnodes + 1, sizeof(int));
    for (size_t i = 0; i < v->npods; i++) {
        int n = v->pods[i].node;
        if (v->pods[i].alive && n >= 0)
            pc->by_node[pc->by_node_off[n] + fill[n]++] = (int)i;
    }
    free(fill);
}

struct sched_preempt_cache *sched__pre_w(struct sched_cyc *c)
{
    if (!c->pre)
        c->pre = xcalloc(1, sizeof(*c->pre));
    return c->pre;
}

const struct sched_preempt_cache *sched__pre_by_node(struct sched_cyc *c)
{
    struct sched_preempt_cache *pc = sched__pre_w(c);
    pods_by_node(pc, c->v);
    return pc;
}

void sched__preempt_cache_free(struct sched_cyc *c)
{
    struct sched_preempt_cache *pc = c->pre;
    if (!pc)
        return;
    memo_free(pc);
    qcache_free(pc->qcache);
    free(pc->by_node_off);
    free(pc->by_node);
    free(pc);
    c->pre = NULL;
}
