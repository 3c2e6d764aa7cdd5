/*
 * preempt_why.c - the preemption part of the why document: whether preemption was
 * attempted and, when not, why not, with numbers ("no lower-priority pods on 4,800 nodes
 * that failed for resources"). Codes come from the one enum in why.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "place.h"
#include "preempt.h"
#include "why.h"

const char *sched__preempt_count(long n, char *buf, size_t len)
{
    char digits[32];
    int nd = snprintf(digits, sizeof(digits), "%ld", n < 0 ? -n : n);
    size_t o = 0;
    if (n < 0 && o + 1 < len)
        buf[o++] = '-';
    for (int i = 0; i < nd && o + 2 < len; i++) {
        if (i && (nd - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = 0;
    return buf;
}

static json_t *verdict(int code, const char *reason)
{
    return json_pack("{s:b,s:s,s:s}", "attempted", 0, "code", why_code_name(code), "reason",
                     reason);
}

json_t *sched__preempt_ineligible(struct sched_cyc *c, const struct sched_preempt_job *pj,
                                  int *blocker)
{
    struct sched_view *v = c->v;
    for (size_t i = 0; i < pj->npods; i++)
        if (v->pods[pj->pods[i]].m.preempt_never)
            return verdict(WHY_PREEMPTION_NEVER, "policy Never");
    /* No redundant preemption: victims evicted for this job's nominated nodes that are
     * still terminating will free the room. */
    char *mark = NULL;
    for (size_t i = 0; i < pj->npods; i++) {
        int ni = v->pods[pj->pods[i]].nominated;
        if (ni < 0)
            continue;
        if (!mark)
            mark = xcalloc(v->nnodes + 1, 1);
        mark[ni] = 1;
    }
    long waiting = 0;
    for (size_t i = 0; mark && i < v->npods; i++) {
        const struct sv_pod *p = &v->pods[i];
        waiting += p->alive && p->node >= 0 && mark[p->node] && p->m.deletion_ms &&
                   !model_pod_terminal(&p->m);
    }
    free(mark);
    if (!waiting)
        return NULL;
    char n[32], msg[128];
    snprintf(msg, sizeof(msg), "waiting for %s victim%s to terminate",
             sched__preempt_count(waiting, n, sizeof(n)), waiting == 1 ? "" : "s");
    json_t *out = verdict(WHY_PREEMPTION_WAITING, msg);
    json_object_set_new(out, "terminating", json_integer(waiting));
    *blocker = WHY_PREEMPTION_WAITING;
    return out;
}

json_t *sched__preempt_no_victims(struct preempt *pr)
{
    struct sched_view *v = pr->c->v;
    int trig = pr->pj->trigger >= 0 ? pr->pj->trigger : pr->pj->npods ? pr->pj->pods[0] : -1;
    long failed = 0;
    size_t nn;
    const int *order = sched__view_node_order(v, &nn);
    for (size_t i = 0; trig >= 0 && i < nn; i++) {
        const struct sv_node *n = &v->nodes[order[i]];
        const struct sv_shape *sh = &v->shapes[v->pods[trig].shape];
        failed += sched__fit_static(n, sh) == SCHED_FIT_OK && sched__fit_res(v, n, sh, trig) >= 0;
    }
    char num[32], msg[160];
    snprintf(msg, sizeof(msg), "no lower-priority pods on %s nodes that failed for resources",
             sched__preempt_count(failed, num, sizeof(num)));
    json_t *out = verdict(WHY_PREEMPTION_NO_VICTIMS, msg);
    json_object_set_new(out, "nodesFailedForResources", json_integer(failed));
    return out;
}

/* The narrowest MustGather layer named by a member's network-topology-spec, or NULL. */
static char *must_gather_layer(struct preempt *pr)
{
    struct sched_view *v = pr->c->v;
    char *best = NULL;
    int best_depth = -1;
    for (size_t m = 0; m < pr->pj->njobs; m++) {
        const struct sv_job *j = &v->jobs[pr->pj->jobs[m]];
        json_t *spec =
            j->has_pg && j->pg.topology_spec ? json_loads(j->pg.topology_spec, 0, NULL) : NULL;
        size_t i;
        json_t *g;
        json_array_foreach(json_object_get(spec, "gatherStrategy"), i, g)
        {
            const char *layer = json_string_value(json_object_get(g, "layer"));
            const char *st = json_string_value(json_object_get(g, "strategy"));
            if (!layer || !st || strcmp(st, "MustGather"))
                continue;
            int depth = 0;
            for (size_t k = 0; v->has_topology && k < v->topo.nlayers; k++)
                if (!strcasecmp(v->topo.layers[k].name, layer))
                    depth = (int)k; /* root first, narrower layers later */
            if (!best || depth > best_depth) {
                free(best);
                best = xstrdup(layer);
                best_depth = depth;
            }
        }
        json_decref(spec);
    }
    return best;
}

json_t *sched__preempt_not_helpful(struct preempt *pr)
{
    char num[32], pods[32], msg[256];
    char *layer = must_gather_layer(pr);
    sched__preempt_count((long)pr->npv, num, sizeof(num));
    sched__preempt_count((long)pr->pj->npods, pods, sizeof(pods));
    if (layer)
        snprintf(msg, sizeof(msg),
                 "preemption would not help: even with all %s potential victims removed no %s "
                 "domain holds %s pods",
                 num, layer, pods);
    else
        snprintf(msg, sizeof(msg),
                 "preemption would not help: even with all %s potential victims removed the job "
                 "does not fit",
                 num);
    free(layer);
    json_t *out = verdict(WHY_PREEMPTION_NOT_HELPFUL, msg);
    json_object_set_new(out, "potentialVictims", json_integer((json_int_t)pr->npv));
    return out;
}
