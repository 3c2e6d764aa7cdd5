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

/* A live leaf queue other than q with pending pods asking for resource r that is owed at
 * least `asked` of it (deserved - allocated): the queue a surplus pod of q asking that
 * much would keep waiting; -1 when none. A queue owed less than the pod asks could not
 * use the room within its share either, so the pod may borrow it. */
static int queue_waiting(const struct sched_view *v, int q, int r, int64_t asked)
{
    for (size_t o = 0; o < v->nqueues; o++) {
        const struct sv_queue *oq = &v->queues[o];
        if ((int)o != q && oq->alive && !oq->nchildren && oq->pend[r] > 0 &&
            oq->deserved[r] - oq->alloc[r] >= asked)
            return (int)o;
    }
    return -1;
}

/* The pods member m keeps whatever its queue's share: what its gang still needs for
 * minMember (none for a satisfied gang or a lone pod's job, whose every pod is surplus
 * once one runs). A lone pod is its own minimum. */
static long member_floor(const struct sched_view *v, const struct sched_attempt *a, size_t m)
{
    const struct sv_job *j = &v->jobs[a->rq.jobs[m]];
    if (!j->has_pg)
        return LONG_MAX;
    long want = a->rq.m[m].satisfied ? 0 : sched__job_min(j) - a->rq.m[m].base;
    return want < 0 ? 0 : want;
}

/* The resource of pod p in which queue q is above its deserved share while another queue
 * is owed at least what p asks of it (*waiting), -1 when none ("pods" left out). */
static int share_overrun(const struct sched_view *v, const struct sv_pod *p, int q, int *waiting)
{
    for (int k = 0; k < p->nreq; k++) {
        int r = p->req[k].res;
        if (r == 0 || v->queues[q].alloc[r] <= v->queues[q].deserved[r])
            continue;
        if ((*waiting = queue_waiting(v, q, r, p->req[k].v)) >= 0)
            return r;
    }
    return -1;
}

void sched__attempt_trim_to_share(struct sched_cyc *c, struct sched_attempt *a)
{
    struct sched_view *v = c->v;
    if (a->rq.has_spec || v->nqueues < 2)
        return;
    char al[32], as[32], de[32], pod[256] = "";
    int q = -1, r = -1, waiting = -1;
    while (c->nops) {
        const struct sched_op *op = &c->ops[c->nops - 1];
        const struct sv_pod *p = &v->pods[op->pod];
        int mi = sched__place_member(&a->rq, p->job), pq = v->jobs[p->job].queue, w = -1;
        /* only pods beyond the gang's minimum go back, last placed first (the placement
         * before the last one is a state the placer was in) */
        if (mi < 0 || pq < 0 || a->res.placed[mi] <= member_floor(v, a, (size_t)mi))
            break;
        int pr = share_overrun(v, p, pq, &w);
        if (pr < 0)
            break;
        int64_t req = 0;
        for (int k = 0; k < p->nreq; k++)
            req += p->req[k].res == pr ? p->req[k].v : 0;
        sched__view_unbind(v, op->pod);
        c->nops--;
        a->res.placed[mi]--;
        q = pq, r = pr, waiting = w;
        snprintf(pod, sizeof(pod), "%s", p->key);
        fmt_q(v, r, v->queues[q].alloc[r], al, sizeof(al));
        fmt_q(v, r, req, as, sizeof(as));
    }
    if (q < 0)
        return;
    const struct sv_queue *sq = &v->queues[q];
    fmt_q(v, r, sq->deserved[r], de, sizeof(de));
    sched__blocker_add(&a->blockers, WHY_WAITING_FOR_QUEUE_SHARE,
                       json_pack("{s:s,s:s,s:I,s:I,s:s,s:s}", "queue", sq->m.name, "resource",
                                 v->res[r], "allocated", (json_int_t)sq->alloc[r], "deserved",
                                 (json_int_t)sq->deserved[r], "pod", pod, "waitingQueue",
                                 v->queues[waiting].m.name),
                       WHY_MSG_QUEUE_SHARE_SURPLUS, sq->m.name, al, v->res[r], as, pod, de,
                       v->res[r], v->queues[waiting].m.name);
}
