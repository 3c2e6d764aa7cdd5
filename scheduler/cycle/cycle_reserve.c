/*
 * cycle_reserve.c - reservations in the cycle (cycle.h; the rules are reserve/reserve.h's,
 * the records record/resv_record.h's).
 *
 * The gang timeout and a reservation: a reservation is kept across the gang's timeouts. A
 * timeout drops only the gang's nominations (cycle_timeout.c) and opens a new window; the
 * reservation, which holds nodes by the gate and not by nominations, stays until the gang
 * is placed or gone, so a gang that waits for nodes to drain keeps its place.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cycle.h"
#include "reserve.h"
#include "resv_record.h"

int64_t sched__attempt_end_ms(const struct sched_cyc *c, const struct sched_attempt *a)
{
    int64_t lim = 0;
    for (size_t m = 0; m < a->rq.njobs; m++) {
        int64_t l = sched__job_limit_ms(c->v, &c->v->jobs[a->rq.jobs[m]]);
        lim = l > lim ? l : lim;
    }
    return lim > 0 ? c->now_ms + lim : INT64_MAX;
}

static int pending_left(const struct sched_view *v, const struct sv_job *j)
{
    for (size_t i = 0; i < j->npods; i++)
        if (sched__pod_pending(&v->pods[j->pods[i]]))
            return 1;
    return 0;
}

int sched__reserve_begin(struct sched_cyc *c, struct err *err)
{
    struct sched_view *v = c->v;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < v->nresv; i++) {
        struct sv_resv *r = &v->resv[i];
        if (!r->job)
            continue;
        int ji = sched__view_job(v, r->job);
        const char *why = ji < 0 || !v->jobs[ji].alive     ? "gone"
                          : !pending_left(v, &v->jobs[ji]) ? "placed"
                                                           : NULL;
        if (!why) {
            size_t keep = 0; /* nodes deleted since: their slots may hold other nodes now */
            for (size_t k = 0; k < r->nnodes; k++)
                if (v->nodes[r->nodes[k]].alive && v->nodes[r->nodes[k]].resv == (int)i + 1)
                    r->nodes[keep++] = r->nodes[k];
            r->nnodes = keep;
            continue;
        }
        char *job = xstrdup(r->job);
        sched__view_resv_del(v, (int)i);
        rc = sched__record_unreserved(c, job, why, err);
        c->changes++;
        free(job);
    }
    return rc;
}

void sched__reserve_gate_on(struct sched_cyc *c, const struct sched_attempt *a)
{
    if (!c->v->nresv_live || !a->rq.njobs)
        return;
    int32_t prio = sched__job_priority(c->v, &c->v->jobs[a->rq.jobs[0]]);
    sched__view_resv_gate(c->v, a->rq.jobs, a->rq.njobs, prio, sched__attempt_end_ms(c, a));
}

void sched__reserve_gate_off(struct sched_cyc *c)
{
    if (c->v->nresv_live)
        sched__view_resv_gate_off(c->v);
}

/* 1 when job ji is the first job of its queue this cycle and that queue is StrictFIFO. */
static int strict_head(struct sched_cyc *c, int ji)
{
    struct sched_view *v = c->v;
    int q = v->jobs[ji].queue;
    if (q < 0)
        return 0;
    if ((size_t)q >= c->nq_seen) {
        size_t n = v->nqueues + 1;
        c->q_seen = xrealloc(c->q_seen, n);
        memset(c->q_seen + c->nq_seen, 0, n - c->nq_seen);
        c->nq_seen = n;
    }
    int first = !c->q_seen[q];
    c->q_seen[q] = 1;
    const struct model_queue *m = &v->queues[q].m;
    int strategy = m->queueing_set ? (int)m->queueing : c->opts->default_queueing;
    return first && strategy == MODEL_QUEUEING_STRICT_FIFO;
}

static void resv_from_plan(const struct sched_view *v, struct reserve_plan *p, int64_t since,
                           struct sv_resv *r)
{
    memset(r, 0, sizeof(*r));
    r->job = xstrdup(v->jobs[p->job].id);
    r->prio = p->prio;
    r->start_ms = p->start_ms;
    r->since_ms = since;
    r->nodes = p->nodes;
    r->nnodes = p->nnodes;
    p->nodes = NULL;
    r->waits = xcalloc(p->nwaits + 1, sizeof(char *));
    for (size_t k = 0; k < p->nwaits; k++)
        r->waits[r->nwaits++] = xstrdup(v->jobs[p->waits[k]].id);
    r->strict = p->reason == RESERVE_STRICT_FIFO;
}

/* 1 while reservation i holds (reserve.h): every node still its own, its start not passed. */
static int holds(const struct sched_cyc *c, int i)
{
    const struct sv_resv *r = &c->v->resv[i];
    if (!r->nnodes || r->start_ms == INT64_MAX || c->now_ms >= r->start_ms)
        return 0;
    for (size_t k = 0; k < r->nnodes; k++) {
        const struct sv_node *n = &c->v->nodes[r->nodes[k]];
        if (!n->alive || n->resv != i + 1 || n->m.unschedulable)
            return 0;
    }
    return 1;
}

/* The failed attempt's job starves: its reservation, kept while it holds, else decided
 * (again). */
static int reserve(struct sched_cyc *c, struct sched_attempt *a, int ji, enum reserve_reason why,
                   struct err *err)
{
    struct sched_view *v = c->v;
    struct reserve_plan p;
    int had = sched__view_resv_find(v, v->jobs[ji].id), rc = 0;
    if (had >= 0 && holds(c, had)) {
        sched__resv_blocker(v, &v->resv[had], &a->blockers);
        return 0;
    }
    if (had < 0 && v->nresv_live >= RESERVE_MAX)
        return 0; /* waits behind the reservations held */
    if (!sched__reserve_plan(v, &a->rq, c->now_ms, why, &p)) {
        if (had >= 0)
            sched__resv_blocker(v, &v->resv[had], &a->blockers);
        return 0;
    }
    if (had >= 0 && sched__reserve_plan_same(v, &p, &v->resv[had])) {
        sched__resv_blocker(v, &v->resv[had], &a->blockers);
        sched__reserve_plan_release(&p);
        return 0;
    }
    struct sv_resv r;
    if (had >= 0 && v->resv[had].strict)
        p.reason = RESERVE_STRICT_FIFO;
    resv_from_plan(v, &p, had >= 0 ? v->resv[had].since_ms : c->now_ms, &r);
    sched__reserve_plan_release(&p);
    int i = sched__view_resv_put(v, &r);
    rc = sched__record_reserved(c, i, had >= 0, err);
    c->s->met.reservations++;
    sched__resv_blocker(v, &v->resv[i], &a->blockers);
    return rc;
}

int sched__reserve_after(struct sched_cyc *c, struct sched_attempt *a, int ok, struct err *err)
{
    struct sched_view *v = c->v;
    if (!a->rq.njobs)
        return 0;
    int ji = a->rq.jobs[0], rc = 0;
    int head = strict_head(c, ji);
    int had = sched__view_resv_find(v, v->jobs[ji].id);
    if (ok) {
        if (had >= 0 && !pending_left(v, &v->jobs[ji])) {
            sched__view_resv_del(v, had);
            rc = sched__record_unreserved(c, v->jobs[ji].id, "placed", err);
        }
        return rc;
    }
    if (a->rq.npods && v->nresv_live) /* the gate is still on: what kept the job off */
        sched__resv_blocked_blocker(v, &v->shapes[v->pods[a->rq.pods[0]].shape],
                                    sched__attempt_end_ms(c, a), &a->blockers);
    int waited = sched__reserve_waited(v, ji, c->now_ms, c->opts->max_wait_ms);
    if (had < 0 && !waited && !head)
        return 0;
    sched__reserve_gate_off(c);
    return reserve(c, a, ji, head && !waited ? RESERVE_STRICT_FIFO : RESERVE_MAX_WAIT, err);
}

void sched__reserve_backfill(struct sched_cyc *c, const struct sched_attempt *a)
{
    struct sched_view *v = c->v;
    json_decref(c->backfill);
    c->backfill = NULL;
    if (!v->nresv_live)
        return;
    json_t *list = NULL;
    char *seen = xcalloc(v->nresv + 1, 1);
    for (size_t i = 0; i < c->nops; i++) {
        const struct sv_node *n = &v->nodes[c->ops[i].node];
        if (!n->resv || seen[n->resv - 1])
            continue;
        const struct sv_resv *r = &v->resv[n->resv - 1];
        int own = 0;
        for (size_t m = 0; m < a->rq.njobs; m++)
            own |= !strcmp(v->jobs[a->rq.jobs[m]].id, r->job);
        if (own)
            continue;
        seen[n->resv - 1] = 1;
        if (!list)
            list = json_array();
        json_t *x = sched__resv_json(v, r, c->cycle);
        json_t *o = json_pack("{s:s,s:O}", "reservation", r->job, "expectedStart",
                              json_object_get(x, SV_RESV_M_START));
        json_decref(x);
        json_array_append_new(list, o);
    }
    free(seen);
    if (list) {
        int64_t end = sched__attempt_end_ms(c, a);
        char ts[64];
        clock_format_rfc3339(end, ts, sizeof(ts));
        c->backfill = json_pack("{s:o,s:s}", "reservations", list, "ends", ts);
        c->s->met.backfills++;
    }
}
