/*
 * view_bind.c - a pod's node in the view (view_bind.h): the usage of a counted pod, the
 * statements' bind and unbind, the cycle's own edits of a live pod, nominations, and the
 * adoption of orphans by a new node.
 *
 * Every change of where a pod counts passes here, so the node's, the queues' (view_queue.c)
 * and the topology domains' (topo.c) sums move together.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "topo.h"
#include "view_bind.h"
#include "view_queue.h"
#include "view_wait.h"

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

/* ---- nominations ---- */

void sched__view_nominate_add(struct sched_view *v, int pi, int ni)
{
    struct sv_node *n = &v->nodes[ni];
    XGROW(n->nominated, n->nnom + 1, n->capnom);
    n->nominated[n->nnom++] = pi;
    v->pods[pi].nominated = ni;
}

void sched__view_nominate_clear(struct sched_view *v, int pi)
{
    struct sv_pod *p = &v->pods[pi];
    if (p->nominated < 0)
        return;
    struct sv_node *n = &v->nodes[p->nominated];
    sched__view_todo(v, p->job); /* a gang may miss a member it held */
    for (size_t i = 0; i < n->nnom; i++) {
        if (n->nominated[i] == pi) {
            n->nominated[i] = n->nominated[--n->nnom];
            break;
        }
    }
    p->nominated = -1;
    v->epoch++;
}

void sched__view_set_nominated(struct sched_view *v, int pi, int ni)
{
    struct sv_pod *p = &v->pods[pi];
    sched__view_nominate_clear(v, pi);
    free(p->m.nominated_node);
    p->m.nominated_node = NULL;
    if (ni < 0)
        return;
    sched__view_nominate_add(v, pi, ni);
    p->m.nominated_node = xstrdup(v->nodes[ni].name);
    v->epoch++;
}

/* Orphans are bound pods and nominations whose node was unknown; a new node
 * adopts them (called by sched__view_put_node). */
void sched__view_adopt(struct sched_view *v, int ni)
{
    const char *name = v->nodes[ni].name;
    for (size_t i = 0; i < v->npods && v->orphans; i++) {
        struct sv_pod *p = &v->pods[i];
        if (!p->alive)
            continue;
        if (p->m.node_name && p->node < 0 && !strcmp(p->m.node_name, name)) {
            p->node = ni;
            v->orphans--;
            if (!model_pod_terminal(&p->m)) {
                sched__queue_pend(v, p, -1);
                p->counted = 1;
                sched__view_usage(v, p, 1);
                sched__queue_pend(v, p, 1);
            }
        } else if (!p->m.node_name && p->m.nominated_node && p->nominated < 0 &&
                   !strcmp(p->m.nominated_node, name)) {
            v->orphans--;
            sched__view_nominate_add(v, (int)i, ni);
        }
    }
}

/* ---- statement primitives ---- */

/* A nominated pod bound to another node than its nomination (or unbound from one) takes its
 * reservation off the nominated node (or puts it back: place_fit.c reserves for pending pods
 * only), a change the node's usage does not show: the domains above the node are touched
 * for the gather's offers, and a bind, which frees room there, ends the epoch within which
 * the pick caches take usage to only grow (place_pick.c; an unbind ends it anyway). */
static void nomination_moved(struct sched_view *v, const struct sv_pod *p, int ni, int bind)
{
    if (p->nominated < 0 || p->nominated == ni)
        return;
    sched__topo_touch(v, p->nominated);
    if (bind)
        sched__view_epoch_usage(v);
}

void sched__view_epoch_usage(struct sched_view *v)
{
    v->epoch++;
    v->usage_bumps++;
}

void sched__view_bind(struct sched_view *v, int pi, int ni)
{
    struct sv_pod *p = &v->pods[pi];
    nomination_moved(v, p, ni, 1);
    sched__queue_pend(v, p, -1);
    p->node = ni;
    p->m.node_name = xstrdup(v->nodes[ni].name);
    p->counted = 1;
    sched__view_usage(v, p, 1);
    sched__queue_pend(v, p, 1);
}

void sched__view_unbind(struct sched_view *v, int pi)
{
    struct sv_pod *p = &v->pods[pi];
    nomination_moved(v, p, p->node, 0);
    sched__queue_pend(v, p, -1);
    if (p->counted)
        sched__view_usage(v, p, -1);
    free(p->m.node_name);
    p->m.node_name = NULL;
    p->node = -1;
    p->counted = 0;
    sched__queue_pend(v, p, 1);
    sched__view_epoch_usage(v);
    sched__view_todo(v, p->job);
}

void sched__view_pod_terminating(struct sched_view *v, int pi, int64_t ms)
{
    struct sv_pod *p = &v->pods[pi];
    sched__queue_pend(v, p, -1);
    v->ndeleting += !p->m.deletion_ms;
    p->m.deletion_ms = ms;
    sched__queue_pend(v, p, 1);
}

void sched__view_pod_phase(struct sched_view *v, int pi, const char *phase)
{
    struct sv_pod *p = &v->pods[pi];
    sched__queue_pend(v, p, -1);
    free(p->m.phase);
    p->m.phase = phase ? xstrdup(phase) : NULL;
    /* a bound pod counts while it is not terminal, as sched__view_put_pod has it */
    int counted = p->node >= 0 && !model_pod_terminal(&p->m);
    if (counted != p->counted) {
        if (!counted) {
            sched__wait_freed(v, p->node);
            v->epoch++; /* room freed: the placers' per-shape caches no longer hold */
        }
        sched__view_usage(v, p, counted ? 1 : -1);
        p->counted = counted;
    }
    sched__queue_pend(v, p, 1);
}
