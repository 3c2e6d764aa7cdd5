/*
 * cycle_cluster.c - the cluster's capacity as a cycle sees it: the allocatable of the
 * schedulable nodes summed per resource, and the node counts (cycle.h).
 */
#include <stdlib.h>
#include <string.h>

#include "cycle.h"
#include "sat.h"

const int64_t *sched__cyc_cluster(struct sched_cyc *c)
{
    struct sched_view *v = c->v;
    struct sched *s = c->s;
    if (c->cluster_alloc)
        return c->cluster_alloc;
    /* summing 50,000 nodes in every cycle grew the cost per pod with the cluster: the sums
     * are kept until a node changes (the epoch grows) */
    if (s->cl_epoch != v->epoch || s->cl_nres != v->nres) {
        size_t nn;
        const int *order = sched__view_node_order(v, &nn);
        free(s->cl_alloc);
        s->cl_alloc = xcalloc(v->nres + 1, sizeof(int64_t));
        s->cl_nodes = (long)nn;
        s->cl_cordoned = 0;
        for (size_t i = 0; i < nn; i++) {
            const struct sv_node *n = &v->nodes[order[i]];
            s->cl_cordoned += n->m.unschedulable != 0;
            for (size_t r = 0; !n->m.unschedulable && r < v->nres; r++)
                s->cl_alloc[r] = sat_add_i64(s->cl_alloc[r], n->alloc[r]); /* sat.h */
        }
        s->cl_epoch = v->epoch;
        s->cl_nres = v->nres;
    }
    c->cluster_alloc = xcalloc(v->rescap + 1, sizeof(int64_t));
    memcpy(c->cluster_alloc, s->cl_alloc, v->nres * sizeof(int64_t));
    c->cluster_nodes = s->cl_nodes;
    c->cluster_cordoned = s->cl_cordoned;
    return c->cluster_alloc;
}
