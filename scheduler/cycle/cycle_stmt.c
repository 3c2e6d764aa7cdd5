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

/* The statement's operations grouped by job into c->grouped and c->placed_jobs: jobs in the
 * order of their first pod, each job's pods in placement order. */
static void group_by_job(struct sched_cyc *c)
{
    const struct sched_view *v = c->v;
    XGROW(c->grouped, c->nops, c->capgrouped);
    c->ngrouped = c->nplaced_jobs = 0;
    for (size_t i = 0; i < c->nops; i++) {
        int job = v->pods[c->ops[i].pod].job;
        size_t k = 0;
        while (k < c->nplaced_jobs && c->placed_jobs[k].job != job)
            k++;
        if (k == c->nplaced_jobs) {
            XGROW(c->placed_jobs, k + 1, c->capplaced_jobs);
            c->placed_jobs[c->nplaced_jobs++] = (struct sched_placement){job, NULL, 0};
        }
        c->placed_jobs[k].n++;
    }
    size_t at = 0; /* each job's slice, then its pods in order */
    for (size_t k = 0; k < c->nplaced_jobs; k++) {
        c->placed_jobs[k].ops = c->grouped + at;
        at += c->placed_jobs[k].n;
        c->placed_jobs[k].n = 0;
    }
    for (size_t i = 0; i < c->nops; i++) {
        int job = v->pods[c->ops[i].pod].job;
        struct sched_placement *p = c->placed_jobs;
        while (p->job != job)
            p++;
        c->grouped[(size_t)(p->ops - c->grouped) + p->n++] = c->ops[i];
    }
    c->ngrouped = c->nops;
}

const struct sched_placement *sched__stmt_placement(const struct sched_cyc *c, int job)
{
    for (size_t k = 0; k < c->nplaced_jobs; k++)
        if (c->placed_jobs[k].job == job)
            return &c->placed_jobs[k];
    return NULL;
}

/* Writes the statement's bindings and one "placed" record per job; what it placed stays in
 * c->placed_jobs for the why documents (sched__stmt_placement). */
int sched__stmt_commit(struct sched_cyc *c, struct err *err)
{
    struct sched_view *v = c->v;
    c->plan_epoch++; /* placed pods: remembered preemption failures no longer hold */
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->nops; i++)
        rc = write_binding(c, &c->ops[i], err);
    group_by_job(c);
    if (rc == 0)
        rc = sched__audit_placed(c, err);
    c->jobs_placed += (long)c->nplaced_jobs;
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
