/*
 * cycle_queue.c - the queue rules of an attempt (queue.h): a job runs only in a leaf
 * queue that exists, never takes its queue over its capability, and when it does not fit
 * while its queue already has its deserved share, it waits for that share.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle.h"
#include "queue.h"
#include "why_msg.h"

void sched__attempt_queue_checks(struct sched_cyc *c, struct sched_attempt *a)
{
    struct sched_view *v = c->v;
    for (size_t m = 0; m < a->rq.njobs; m++) {
        const struct sv_job *j = &v->jobs[a->rq.jobs[m]];
        const char *name = sched__job_queue_name(v, j);
        if (j->queue < 0) {
            sched__blocker_add(&a->blockers, WHY_QUEUE_NOT_FOUND,
                               json_pack("{s:s,s:s}", "job", j->id, "queue", name),
                               WHY_MSG_QUEUE_NOT_FOUND, j->id, name);
            continue;
        }
        const struct sv_queue *q = &v->queues[j->queue];
        if (!q->nchildren)
            continue;
        json_t *kids = json_array();
        for (size_t i = 0; i < v->nqueues; i++)
            if (v->queues[i].alive && v->queues[i].parent == j->queue)
                json_array_append_new(kids, json_string(v->queues[i].m.name));
        sched__blocker_add(
            &a->blockers, WHY_QUEUE_NOT_LEAF,
            json_pack("{s:s,s:s,s:o}", "job", j->id, "queue", name, "children", kids),
            WHY_MSG_QUEUE_NOT_LEAF, j->id, name, q->nchildren);
    }
}

/* The pending pods of member m an attempt must place at least: all of them for a job that
 * gathers (its domains are chosen for all its pods), else the first the gang still needs
 * for minMember (one for a satisfied gang or a lone pod): an elastic gang starts with part
 * of its pods when its queue's capability allows no more, as Volcano allocates task by
 * task. */
static long member_least(const struct sched_view *v, const struct sched_attempt *a, size_t m)
{
    if (a->rq.has_spec)
        return LONG_MAX;
    long want =
        a->rq.m[m].satisfied ? 1 : sched__job_min(&v->jobs[a->rq.jobs[m]]) - a->rq.m[m].base;
    return want < 1 ? 1 : want;
}

/* What member m's pending pods of the attempt request ([v->nres], zeroed first): the first
 * `pods` of them in placement order; raised to what its PodGroup's spec.minResources still
 * lacks (Volcano's enqueue checks those against the queue's capability). */
static void member_asks(const struct sched_view *v, const struct sched_attempt *a, size_t m,
                        long pods, int64_t *asked)
{
    int job = a->rq.jobs[m];
    const struct sv_job *j = &v->jobs[job];
    memset(asked, 0, v->nres * sizeof(int64_t));
    for (size_t i = 0; i < a->rq.npods && pods > 0; i++) {
        const struct sv_pod *p = &v->pods[a->rq.pods[i]];
        if (p->job != job)
            continue;
        pods--;
        for (int k = 0; k < p->nreq; k++)
            asked[p->req[k].res] += p->req[k].v;
    }
    for (size_t k = 0; j->has_pg && k < j->pg.nmin_resources; k++) {
        int r = sched__strmap_get(&v->res_ix, j->pg.min_resources[k].name);
        if (r < 0)
            continue;
        int64_t lacks = j->pg.min_resources[k].value;
        for (size_t i = 0; i < j->npods; i++) {
            const struct sv_pod *p = &v->pods[j->pods[i]];
            for (int q = 0; p->counted && q < p->nreq; q++)
                lacks -= p->req[q].res == r ? p->req[q].v : 0;
        }
        if (lacks > asked[r])
            asked[r] = lacks;
    }
}

static void fmt_q(const struct sched_view *v, int r, int64_t x, char *buf, size_t n)
{
    model_quantity_format(x, model_resource_is_milli(v->res[r]), buf, n);
}

int sched__attempt_capability(struct sched_cyc *c, struct sched_attempt *a)
{
    struct sched_view *v = c->v;
    int64_t *asked = xcalloc(v->nres + 1, sizeof(int64_t));
    int over = -1;
    for (size_t m = 0; m < a->rq.njobs; m++) {
        const struct sv_job *j = &v->jobs[a->rq.jobs[m]];
        int r = -1;
        member_asks(v, a, m, member_least(v, a, m), asked);
        int q = j->queue >= 0 ? sched__queue_over_cap(v, j->queue, asked, &r) : -1;
        if (q < 0)
            continue;
        if (over < 0)
            over = q;
        const struct sv_queue *sq = &v->queues[q];
        char al[32], as[32], cp[32];
        fmt_q(v, r, sq->alloc[r], al, sizeof(al));
        fmt_q(v, r, asked[r], as, sizeof(as));
        fmt_q(v, r, sq->realcap[r], cp, sizeof(cp));
        const char *why = sq->cap[r] >= 0 && sq->cap[r] == sq->realcap[r] ? WHY_MSG_QUEUE_CAP_OWN
                                                                          : WHY_MSG_QUEUE_CAP_LEFT;
        sched__blocker_add(&a->blockers, WHY_QUEUE_OVER_CAPABILITY,
                           json_pack("{s:s,s:s,s:s,s:I,s:I,s:I}", "job", j->id, "queue", sq->m.name,
                                     "resource", v->res[r], "allocated", (json_int_t)sq->alloc[r],
                                     "asked", (json_int_t)asked[r], "capability",
                                     (json_int_t)sq->realcap[r]),
                           WHY_MSG_QUEUE_OVER_CAPABILITY, sq->m.name, al, v->res[r], as, j->id, cp,
                           v->res[r], why);
    }
    free(asked);
    return over;
}

void sched__attempt_queue_share(struct sched_cyc *c, struct sched_attempt *a, int job)
{
    struct sched_view *v = c->v;
    const struct sv_job *j = &v->jobs[job];
    int q = j->queue;
    if (q < 0 || v->nqueues < 2)
        return;
    int64_t *asked = xcalloc(v->nres + 1, sizeof(int64_t));
    member_asks(v, a, (size_t)sched__place_member(&a->rq, job), LONG_MAX, asked);
    const struct sv_queue *sq = &v->queues[q];
    for (size_t r = 1; r < v->nres; r++) {
        if (!asked[r] || sq->alloc[r] + asked[r] <= sq->deserved[r])
            continue;
        int borrowed = 0; /* another queue holds more than its share of r */
        for (size_t o = 0; o < v->nqueues && !borrowed; o++)
            borrowed = (int)o != q && v->queues[o].alive && !v->queues[o].nchildren &&
                       v->queues[o].alloc[r] > v->queues[o].deserved[r];
        if (!borrowed)
            continue;
        char al[32], as[32], de[32];
        fmt_q(v, (int)r, sq->alloc[r], al, sizeof(al));
        fmt_q(v, (int)r, asked[r], as, sizeof(as));
        fmt_q(v, (int)r, sq->deserved[r], de, sizeof(de));
        sched__blocker_add(&a->blockers, WHY_WAITING_FOR_QUEUE_SHARE,
                           json_pack("{s:s,s:s,s:I,s:I,s:I}", "queue", sq->m.name, "resource",
                                     v->res[r], "allocated", (json_int_t)sq->alloc[r], "asked",
                                     (json_int_t)asked[r], "deserved", (json_int_t)sq->deserved[r]),
                           WHY_MSG_WAITING_FOR_QUEUE_SHARE, sq->m.name, al, v->res[r], as, de,
                           v->res[r]);
        break;
    }
    free(asked);
}

/* Every member's queue, and each ancestor, within its realcap in every limited resource. */
static int members_within_cap(const struct sched_view *v, const struct sched_attempt *a)
{
    for (size_t m = 0; m < a->rq.njobs; m++) {
        int q = v->jobs[a->rq.jobs[m]].queue;
        if (q >= 0 && !sched__queue_within_cap(v, q, NULL, NULL))
            return 0;
    }
    return 1;
}

void sched__attempt_trim_to_cap(struct sched_cyc *c, struct sched_attempt *a)
{
    struct sched_view *v = c->v;
    while (c->nops && !members_within_cap(v, a)) {
        const struct sched_op *op = &c->ops[c->nops - 1];
        int mi = sched__place_member(&a->rq, v->pods[op->pod].job);
        /* only pods beyond what the member needs go back: the placement before the last
         * one is a state the placer was in, so it is valid */
        if (mi < 0 || a->res.placed[mi] <= member_least(v, a, (size_t)mi))
            return;
        sched__view_unbind(v, op->pod);
        c->nops--;
        a->res.placed[mi]--;
    }
}
