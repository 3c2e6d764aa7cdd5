/*
 * cycle_stmt.c - statements: a job attempt's allocations, applied to the view with an
 * undo log; commit writes the bindings and "placed" records into the cycle's
 * transaction, discard undoes them in reverse order.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cycle.h"
#include "why.h"

/* A gang that partly fits is placed and rolled back every cycle; the audit log gets a
 * "discarded" record only when the job's discard reason changes (the metric counts all). */
int sched__stmt_discard(struct sched_cyc *c, const char *job, int code, const char *msg,
                        struct err *err)
{
    if (!c->nops)
        return 0;
    int rc = sched__audit_discarded(c, job, code, msg, err);
    sched__stmt_undo(c);
    c->discarded++;
    c->s->met.statements_discarded++;
    return rc;
}

static int write_binding(struct sched_cyc *c, const struct sched_op *op, struct err *err)
{
    struct sched_view *v = c->v;
    struct sv_pod *p = &v->pods[op->pod];
    const char *ts = sched__cyc_ts(c);
    /* a record of a few bytes: the pod's JSON is neither read nor written (store.h) */
    int rc = store_pod_bind(c->txn, p->key, v->nodes[op->node].name, ts, err);
    if (rc < 0)
        return rc;
    sched__view_set_nominated(v, op->pod, -1);
    if (!p->m.start_ms) /* as the binding sets status.startTime (model_pod_set_bound) */
        p->m.start_ms = c->now_ms / 1000 * 1000;
    if (p->m.deadline_ms > 0 && p->m.start_ms + p->m.deadline_ms < v->deadline_next_ms)
        v->deadline_next_ms = p->m.start_ms + p->m.deadline_ms;
    struct sv_node *n = &v->nodes[op->node];
    if (!n->ncyc) {
        XGROW(c->touched, c->ntouched + 1, c->captouched);
        c->touched[c->ntouched++] = op->node;
    }
    XGROW(n->cyc_pods, n->ncyc + 1, n->capcyc);
    n->cyc_pods[n->ncyc++] = op->pod;
    return 0;
}

/* Writes the statement's bindings and one "placed" record per job; *placement (new)
 * maps pod -> node for the why documents, keyed by job id. */
int sched__stmt_commit(struct sched_cyc *c, json_t **placement, struct err *err)
{
    struct sched_view *v = c->v;
    c->plan_epoch++; /* placed pods: remembered preemption failures no longer hold */
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->nops; i++)
        rc = write_binding(c, &c->ops[i], err);
    size_t njobs = 0;
    *placement = NULL;
    if (rc == 0)
        rc = sched__audit_placed(c, placement, &njobs, err);
    c->jobs_placed += (long)njobs;
    if (c->nops) { /* pod rules may pass now; with several queues, the shares moved */
        sched__wait_event(v, SV_EV_PLACED);
        if (v->nqueues > 1)
            sched__wait_event(v, SV_EV_QUEUE);
    }
    c->placed += (long)c->nops;
    c->s->met.pods_placed += c->nops;
    c->s->met.statements_committed++;
    c->nops = 0;
    return rc;
}
