/*
 * preempt_reclaim.c - what a preemptor may take from other queues (queue.h, preempt.h).
 *
 * A job whose queue stays within its deserved share with the job (Volcano's reclaim
 * condition, checked for each queue on its chain below the common ancestor with the
 * victim's queue) may evict whole jobs of other queues that are above their deserved
 * share and reclaimable, whatever the priorities, but never take such a queue (or an
 * ancestor below the common one) under its deserved share in a contended resource (one
 * some queue deserves less of than it requests: of any other, every queue deserves what it
 * asks, so any eviction would leave it under, and nobody needs it back).
 * The search first runs on the wide pool: every job that alone fits in what its queue has
 * above its share, so the minimal victim search picks the cheapest nodes. When the victims
 * it settles on take a queue under its share together (sched__reclaim_within), it runs
 * again on the narrow pool, which keeps the promise for every subset: each over-share
 * queue offers its running jobs lowest priority first, newest first, while what they hold
 * together fits. Pods already terminating count as gone.
 *
 * The wide pool is a predicate (a job's hold against its queue's budget), so a search
 * costs nothing per job it does not look at; what it reads that only preemption changes
 * within a cycle (each job's hold, each queue's terminating part, the victim order) is
 * computed once per cycle (struct sched_qcache) and kept in step as plans are executed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "preempt.h"
#include "queue.h"

struct rjob {
    int job;
    int32_t prio;
    int64_t created;
    const char *id;
};

static int cmp_rjob(const void *a, const void *b)
{
    const struct rjob *x = a, *y = b;
    if (x->prio != y->prio)
        return x->prio < y->prio ? -1 : 1;
    if (x->created != y->created)
        return x->created > y->created ? -1 : 1;
    return strcmp(x->id, y->id);
}

static int lca(const struct sched_view *v, int a, int b)
{
    while (a >= 0 && b >= 0 && a != b) {
        if (v->queues[a].depth >= v->queues[b].depth)
            a = v->queues[a].parent;
        else
            b = v->queues[b].parent;
    }
    return a == b ? a : -1;
}

/* ---- the cycle's cache ---- */

/* What reclaim reads of the view that changes only by preemption within a cycle (queues,
 * jobs and resources do not change within one): per queue, what its terminating pods hold
 * (its chain's, like alloc); per job, what its counted, non-terminating pods hold; and, on
 * first use by a narrow search, each queue's jobs in victim order. */

static struct sched_qcache *cache_get(struct sched_cyc *c)
{
    struct sched_preempt_cache *pc = sched__pre_w(c);
    const struct sched_view *v = c->v;
    if (pc->qcache)
        return pc->qcache;
    struct sched_qcache *k = xcalloc(1, sizeof(*k));
    k->nq = v->nqueues;
    k->nj = v->njobs;
    k->nr = v->nres;
    k->term = xcalloc(k->nq * k->nr + 1, sizeof(int64_t));
    k->hold = xcalloc(k->nj * k->nr + 1, sizeof(int64_t));
    for (size_t i = 0; i < v->npods; i++) {
        const struct sv_pod *p = &v->pods[i];
        if (!p->alive || !p->counted)
            continue;
        if (!p->m.deletion_ms) {
            for (int r = 0; r < p->nreq; r++)
                k->hold[(size_t)p->job * k->nr + p->req[r].res] += p->req[r].v;
            continue;
        }
        for (int q = v->jobs[p->job].queue; q >= 0; q = v->queues[q].parent)
            for (int r = 0; r < p->nreq; r++)
                k->term[(size_t)q * k->nr + p->req[r].res] += p->req[r].v;
    }
    return pc->qcache = k;
}

/* Victim order of every queue's jobs (the narrow pool's), built once per cycle. */
static void cache_order(struct sched_cyc *c, struct sched_qcache *k)
{
    const struct sched_view *v = c->v;
    if (k->off)
        return;
    k->off = xcalloc(k->nq + 2, sizeof(int));
    for (size_t j = 0; j < k->nj; j++)
        if (v->jobs[j].alive && v->jobs[j].queue >= 0)
            k->off[v->jobs[j].queue + 1]++;
    for (size_t q = 0; q < k->nq; q++)
        k->off[q + 1] += k->off[q];
    struct rjob *rj = xcalloc((size_t)k->off[k->nq] + 1, sizeof(*rj));
    int *fill = xcalloc(k->nq + 1, sizeof(int));
    for (size_t j = 0; j < k->nj; j++) {
        const struct sv_job *job = &v->jobs[j];
        if (job->alive && job->queue >= 0)
            rj[k->off[job->queue] + fill[job->queue]++] = (struct rjob){
                (int)j, sched__job_priority(v, job), sched__job_creation(v, job), job->id};
    }
    k->order = xcalloc((size_t)k->off[k->nq] + 1, sizeof(int));
    for (size_t q = 0; q < k->nq; q++) {
        qsort(rj + k->off[q], (size_t)(k->off[q + 1] - k->off[q]), sizeof(*rj), cmp_rjob);
        for (int i = k->off[q]; i < k->off[q + 1]; i++)
            k->order[i] = rj[i].job;
    }
    free(fill);
    free(rj);
}

/* Victims chosen by a plan about to be executed: their room is terminating now. */
static void cache_mark(struct sched_cyc *c, const struct sv_pod *p)
{
    struct sched_preempt_cache *pc = sched__pre_w(c);
    struct sched_qcache *k = pc->qcache;
    const struct sched_view *v = c->v;
    if (!k)
        return;
    for (int r = 0; r < p->nreq; r++)
        k->hold[(size_t)p->job * k->nr + p->req[r].res] -= p->req[r].v;
    for (int q = v->jobs[p->job].queue; q >= 0; q = v->queues[q].parent)
        for (int r = 0; r < p->nreq; r++)
            k->term[(size_t)q * k->nr + p->req[r].res] += p->req[r].v;
}

/* ---- one preemption's reclaim ---- */

/* contended[r]: some queue deserves less of r than it requests (the cluster is short of
 * it). Only there does "never under its deserved share" bind: a queue deserves what it
 * asks of a resource nobody contends for, so any eviction would leave it under. */
static void contended(const struct sched_view *v, char *c)
{
    for (size_t q = 0; q < v->nqueues; q++)
        for (size_t r = 1; v->queues[q].alive && r < v->nres; r++)
            c[r] |= v->queues[q].deserved[r] < v->queues[q].request[r];
}

static int64_t live(const struct sched_view *v, const struct sched_qcache *k, int q, size_t r)
{
    return v->queues[q].alloc[r] - k->term[(size_t)q * k->nr + r];
}

/* Every queue from q up to (not including) top stays within its deserved share with
 * asked. */
static int within_share(const struct sched_view *v, const struct sched_qcache *k, int q, int top,
                        const int64_t *asked)
{
    for (; q >= 0 && q != top; q = v->queues[q].parent)
        for (size_t r = 1; r < v->nres; r++)
            if (asked[r] > 0 && live(v, k, q, r) + asked[r] > v->queues[q].deserved[r])
                return 0;
    return 1;
}

static int path_reclaimable(const struct sched_view *v, int q, int top)
{
    for (; q >= 0 && q != top; q = v->queues[q].parent)
        if (!v->queues[q].m.reclaimable)
            return 0;
    return 1;
}

/* hold fits the budget of every queue from q up to (not including) top, and frees some
 * contended resource. */
static int fits_budget(const struct sched_view *v, const struct reclaim *rc, int q, int top,
                       const int64_t *hold)
{
    int any = 0;
    for (size_t r = 1; r < v->nres; r++)
        any |= rc->hot[r] && hold[r] > 0;
    for (int a = q; any && a >= 0 && a != top; a = v->queues[a].parent)
        for (size_t r = 1; r < v->nres; r++)
            if (rc->hot[r] && hold[r] > rc->budget[(size_t)a * v->nres + r])
                return 0;
    return any;
}

int sched__reclaim_begin(struct preempt *pr, int narrow)
{
    struct sched_cyc *c = pr->c;
    const struct sched_view *v = c->v;
    size_t nr = v->nres, n = 0;
    int q = pr->queue, within = pr->pj->cap_queue;
    if (q < 0 || v->nqueues < 2)
        return 0;
    struct sched_qcache *k = cache_get(c);
    struct reclaim *rc = xcalloc(1, sizeof(*rc));
    rc->qok = xcalloc(v->nqueues + 1, 1);
    rc->top = xcalloc(v->nqueues + 1, sizeof(int));
    rc->hot = xcalloc(nr + 1, 1);
    rc->budget = xcalloc(v->nqueues * nr + 1, sizeof(int64_t));
    contended(v, rc->hot);
    for (size_t vq = 0; vq < v->nqueues; vq++) {
        const struct sv_queue *V = &v->queues[vq];
        if (!V->alive)
            continue;
        for (size_t r = 0; r < nr; r++)
            rc->budget[vq * nr + r] = live(v, k, (int)vq, r) - V->deserved[r];
        if ((int)vq == q || V->nchildren ||
            (within >= 0 && !sched__queue_under(v, (int)vq, within)))
            continue;
        int top = lca(v, q, (int)vq), over = 0;
        for (size_t r = 1; r < nr; r++) /* above its share in a contended resource */
            over |= rc->hot[r] && rc->budget[vq * nr + r] > 0;
        rc->top[vq] = top;
        rc->qok[vq] = over && top != (int)vq && path_reclaimable(v, (int)vq, top) &&
                      within_share(v, k, q, top, pr->asked);
        n += rc->qok[vq];
    }
    if (n && narrow) { /* each queue's jobs in victim order while they fit together */
        cache_order(c, k);
        rc->narrow = xcalloc(v->njobs + 1, 1);
        int64_t *budget = xcalloc(v->nqueues * nr + 1, sizeof(int64_t));
        memcpy(budget, rc->budget, v->nqueues * nr * sizeof(int64_t));
        for (size_t vq = 0; vq < v->nqueues; vq++)
            for (int i = k->off[vq]; rc->qok[vq] && i < k->off[vq + 1]; i++) {
                const int64_t *hold = k->hold + (size_t)k->order[i] * nr;
                if (!fits_budget(v, rc, (int)vq, rc->top[vq], hold))
                    continue;
                rc->narrow[k->order[i]] = 1;
                for (int a = (int)vq; a >= 0 && a != rc->top[vq]; a = v->queues[a].parent)
                    for (size_t r = 1; r < nr; r++)
                        rc->budget[(size_t)a * nr + r] -= hold[r];
            }
        memcpy(rc->budget, budget, v->nqueues * nr * sizeof(int64_t));
        free(budget);
    }
    if (!n) {
        pr->rec = rc;
        sched__reclaim_end(pr);
        return 0;
    }
    pr->rec = rc;
    return 1;
}

int sched__reclaim_may_take(const struct preempt *pr, int job)
{
    const struct reclaim *rc = pr->rec;
    const struct sched_view *v = pr->c->v;
    int q = v->jobs[job].queue;
    if (!rc || q < 0 || !rc->qok[q])
        return 0;
    if (rc->narrow)
        return rc->narrow[job];
    return fits_budget(v, rc, q, rc->top[q], pr->c->pre->qcache->hold + (size_t)job * v->nres);
}

int sched__reclaim_may_take_part(const struct preempt *pr, int job, const int64_t *hold)
{
    const struct reclaim *rc = pr->rec;
    const struct sched_view *v = pr->c->v;
    int q = v->jobs[job].queue;
    if (!rc || q < 0 || !rc->qok[q] || rc->narrow) /* the narrow pool offers whole jobs */
        return 0;
    return fits_budget(v, rc, q, rc->top[q], hold);
}

void sched__reclaim_end(struct preempt *pr)
{
    struct reclaim *rc = pr->rec;
    if (!rc)
        return;
    free(rc->qok);
    free(rc->top);
    free(rc->hot);
    free(rc->budget);
    free(rc->narrow);
    free(rc);
    pr->rec = NULL;
}

/* q's dominant share with delta added to its allocation (sign 1) or taken off (-1). */
static double share_with(struct sched_view *v, int q, const int64_t *delta, int sign)
{
    int64_t *a = v->queues[q].alloc;
    for (size_t r = 0; r < v->nres; r++)
        a[r] += sign * delta[r];
    double s = sched__queue_share(v, q, NULL);
    for (size_t r = 0; r < v->nres; r++)
        a[r] -= sign * delta[r];
    return s;
}

void sched__reclaim_plan(struct preempt *pr, struct preempt_plan *p)
{
    struct sched_view *v = pr->c->v;
    size_t nr = v->nres;
    int64_t *taken = xcalloc(v->nqueues * nr + 1, sizeof(int64_t));
    char *hit = xcalloc(v->nqueues + 1, 1);
    p->reclaim = 0;
    for (size_t k = 0; k < pr->npv; k++) {
        const struct pv *pv = &pr->pv[k];
        if (!pv->removed || pv->terminating)
            continue;
        const struct sv_pod *pod = &v->pods[pv->pod];
        cache_mark(pr->c, pod);
        int q = v->jobs[pod->job].queue;
        if (q < 0 || q == pr->queue)
            continue;
        p->reclaim = hit[q] = 1;
        for (int r = 0; r < pod->nreq; r++)
            taken[(size_t)q * nr + pod->req[r].res] += pod->req[r].v;
    }
    if (p->reclaim) {
        p->queue = (struct preempt_share){pr->queue, sched__queue_share(v, pr->queue, NULL),
                                          share_with(v, pr->queue, pr->asked, 1)};
        p->victim_queues = xcalloc(v->nqueues + 1, sizeof(*p->victim_queues));
        for (size_t q = 0; q < v->nqueues; q++)
            if (hit[q])
                p->victim_queues[p->nvictim_queues++] =
                    (struct preempt_share){(int)q, sched__queue_share(v, (int)q, NULL),
                                           share_with(v, (int)q, taken + q * nr, -1)};
    }
    free(hit);
    free(taken);
}

int sched__reclaim_within(const struct preempt *pr)
{
    const struct sched_view *v = pr->c->v;
    const struct reclaim *rc = pr->rec;
    size_t nr = v->nres;
    if (!rc)
        return 1;
    int64_t *taken = xcalloc(v->nqueues * nr + 1, sizeof(int64_t));
    for (size_t k = 0; k < pr->npv; k++) {
        const struct pv *x = &pr->pv[k];
        if (!x->removed || x->terminating)
            continue;
        const struct sv_pod *p = &v->pods[x->pod];
        int q = v->jobs[p->job].queue;
        if (q < 0 || q == pr->queue)
            continue;
        for (int a = q; a >= 0 && a != rc->top[q]; a = v->queues[a].parent)
            for (int i = 0; i < p->nreq; i++)
                taken[(size_t)a * nr + p->req[i].res] += p->req[i].v;
    }
    int ok = 1;
    for (size_t i = 0; ok && i < v->nqueues * nr; i++)
        ok = i % nr == 0 || !rc->hot[i % nr] || !taken[i] || taken[i] <= rc->budget[i];
    free(taken);
    return ok;
}
