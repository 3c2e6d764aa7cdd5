/*
 * preempt_why.c - the preemption part of the why document: whether preemption was
 * attempted and, when not, why not, with numbers ("no lower-priority pods on 4,800 nodes
 * that failed for resources"). Codes come from the one enum in why.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"
#include "preempt.h"
#include "why.h"
#include "why_msg.h"

static void verdict(struct sched_preempt_verdict *out, int code, const char *reason, json_t *detail)
{
    out->code = code;
    out->attempted = 0;
    out->blocks = code == WHY_PREEMPTION_WAITING;
    snprintf(out->reason, sizeof(out->reason), "%s", reason);
    out->detail = detail;
}

int sched__preempt_ineligible(struct sched_cyc *c, const struct sched_preempt_job *pj,
                              struct sched_preempt_verdict *out)
{
    struct sched_view *v = c->v;
    for (size_t i = 0; i < pj->npods; i++)
        if (v->pods[pj->pods[i]].never) {
            verdict(out, WHY_PREEMPTION_NEVER, WHY_MSG_PREEMPTION_NEVER, NULL);
            return 1;
        }
    /* No redundant preemption: victims evicted for this job's nominated nodes that are
     * still terminating will free the room. */
    long waiting = sched__preempt_terminating(v, pj->pods, pj->npods);
    if (!waiting)
        return 0;
    char n[32], msg[128];
    snprintf(msg, sizeof(msg), WHY_MSG_PREEMPTION_WAITING,
             sched__preempt_count(waiting, n, sizeof(n)), waiting == 1 ? "" : "s");
    verdict(out, WHY_PREEMPTION_WAITING, msg,
            json_pack("{s:I}", "terminating", (json_int_t)waiting));
    return 1;
}

void sched__preempt_no_victims(struct preempt *pr, struct sched_preempt_verdict *out)
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
    char num[32], msg[256];
    sched__preempt_count(failed, num, sizeof(num));
    if (pr->queue >= 0 && v->nqueues > 1) /* queues: say what reclaim found too */
        snprintf(msg, sizeof(msg), WHY_MSG_NO_VICTIMS_QUEUE, v->queues[pr->queue].m.name,
                 pr->rec ? WHY_MSG_NO_VICTIMS_RECLAIM : WHY_MSG_NO_VICTIMS_NO_RECLAIM, num);
    else
        snprintf(msg, sizeof(msg), WHY_MSG_NO_VICTIMS, num);
    verdict(out, WHY_PREEMPTION_NO_VICTIMS, msg,
            json_pack("{s:I}", "nodesFailedForResources", (json_int_t)failed));
}

void sched__preempt_not_helpful(struct preempt *pr, struct sched_preempt_verdict *out)
{
    char num[32], pods[32], msg[256];
    const char *layer = pr->pj->must_layer;
    sched__preempt_count((long)pr->npv, num, sizeof(num));
    sched__preempt_count((long)pr->pj->npods, pods, sizeof(pods));
    if (layer)
        snprintf(msg, sizeof(msg), WHY_MSG_NOT_HELPFUL_LAYER, num, layer, pods);
    else
        snprintf(msg, sizeof(msg), WHY_MSG_NOT_HELPFUL, num);
    verdict(out, WHY_PREEMPTION_NOT_HELPFUL, msg,
            json_pack("{s:I}", "potentialVictims", (json_int_t)pr->npv));
}

long sched__preempt_terminating(const struct sched_view *v, const int *pods, size_t npods)
{
    char *mark = NULL;
    for (size_t i = 0; i < npods; i++) {
        int ni = v->pods[pods[i]].nominated;
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
    return waiting;
}
