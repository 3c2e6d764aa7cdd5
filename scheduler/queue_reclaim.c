/*
 * queue_reclaim.c - what a preemptor may take from other queues (queue.h, preempt.h).
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
 */
#include <stdlib.h>
#include <string.h>

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

/* contended[r]: some queue deserves less of r than it requests (the cluster is short of
 * it). Only there does "never under its deserved share" bind: a queue deserves what it
 * asks of a resource nobody contends for, so any eviction would leave it under. New. */
static char *contended(const struct sched_view *v)
{
    char *c = xcalloc(v->nres + 1, 1);
    for (size_t q = 0; q < v->nqueues; q++)
        for (size_t r = 1; v->queues[q].alive && r < v->nres; r++)
            c[r] |= v->queues[q].deserved[r] < v->queues[q].request[r];
    return c;
}

/* live[q * nres + r]: what queue q holds that is not terminating. New. */
static int64_t *live_alloc(const struct sched_view *v)
{
    size_t nr = v->nres;
    int64_t *live = xcalloc(v->nqueues * nr + 1, sizeof(int64_t));
    for (size_t q = 0; q < v->nqueues; q++)
        if (v->queues[q].alive)
            memcpy(live + q * nr, v->queues[q].alloc, nr * sizeof(int64_t));
    for (size_t i = 0; i < v->npods; i++) {
        const struct sv_pod *p = &v->pods[i];
        if (!p->alive || !p->counted || !p->m.deletion_ms)
            continue;
        for (int q = v->jobs[p->job].queue; q >= 0; q = v->queues[q].parent)
            for (int k = 0; k < p->nreq; k++)
                live[(size_t)q * nr + p->req[k].res] -= p->req[k].v;
    }
    return live;
}

/* Every queue from q up to (not including) top stays within its deserved share with asked. */
static int within_share(const struct sched_view *v, const int64_t *live, int q, int top,
                        const int64_t *asked)
{
    for (; q >= 0 && q != top; q = v->queues[q].parent)
        for (size_t r = 1; r < v->nres; r++)
            if (asked[r] > 0 && live[(size_t)q * v->nres + r] + asked[r] > v->queues[q].deserved[r])
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

/* The job's requests on pods that are counted and not terminating ([nres]). */
static void job_hold(const struct sched_view *v, const struct sv_job *j, int64_t *out)
{
    memset(out, 0, v->nres * sizeof(int64_t));
    for (size_t i = 0; i < j->npods; i++) {
        const struct sv_pod *p = &v->pods[j->pods[i]];
        if (p->counted && !p->m.deletion_ms)
            for (int k = 0; k < p->nreq; k++)
                out[p->req[k].res] += p->req[k].v;
    }
}

size_t sched__reclaim_pool(const struct sched_view *v, int q, const int64_t *asked, int within,
                           int narrow, char *ok)
{
    size_t nr = v->nres, offered = 0;
    if (q < 0 || v->nqueues < 2)
        return 0;
    int64_t *live = live_alloc(v);
    char *hot = contended(v);
    int64_t *budget = xcalloc(v->nqueues * nr + 1, sizeof(int64_t)), *hold = xcalloc(nr + 1, 8);
    for (size_t i = 0; i < v->nqueues * nr; i++)
        budget[i] = v->queues[i / nr].alive ? live[i] - v->queues[i / nr].deserved[i % nr] : 0;
    struct rjob *jobs = xcalloc(v->njobs + 1, sizeof(*jobs));
    for (size_t vq = 0; vq < v->nqueues; vq++) {
        const struct sv_queue *V = &v->queues[vq];
        if (!V->alive || (int)vq == q || V->nchildren ||
            (within >= 0 && !sched__queue_under(v, (int)vq, within)))
            continue;
        int top = lca(v, q, (int)vq);
        if (top == (int)vq || !path_reclaimable(v, (int)vq, top) ||
            !within_share(v, live, q, top, asked))
            continue;
        size_t n = 0;
        for (size_t ji = 0; ji < v->njobs; ji++) {
            const struct sv_job *j = &v->jobs[ji];
            if (j->alive && j->queue == (int)vq)
                jobs[n++] = (struct rjob){(int)ji, sched__job_priority(v, j),
                                          sched__job_creation(v, j), j->id};
        }
        qsort(jobs, n, sizeof(*jobs), cmp_rjob);
        for (size_t k = 0; k < n; k++) {
            job_hold(v, &v->jobs[jobs[k].job], hold);
            int fits = 1, any = 0;
            for (int a = (int)vq; fits && a >= 0 && a != top; a = v->queues[a].parent)
                for (size_t r = 1; fits && r < nr; r++) {
                    any |= hot[r] && hold[r] > 0;
                    fits = !hot[r] || hold[r] <= budget[(size_t)a * nr + r];
                }
            if (!fits || !any)
                continue;
            ok[jobs[k].job] = 1;
            offered++;
            if (!narrow)
                continue;
            for (int a = (int)vq; a >= 0 && a != top; a = v->queues[a].parent)
                for (size_t r = 1; r < nr; r++)
                    budget[(size_t)a * nr + r] -= hold[r];
        }
    }
    free(jobs);
    free(hold);
    free(budget);
    free(hot);
    free(live);
    return offered;
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

void sched__reclaim_entry(struct preempt *pr, json_t *entry)
{
    struct sched_view *v = pr->c->v;
    size_t nr = v->nres;
    int64_t *taken = xcalloc(v->nqueues * nr + 1, sizeof(int64_t));
    char *hit = xcalloc(v->nqueues + 1, 1);
    json_t *victims = json_object_get(entry, "victims"), *x;
    size_t i;
    pr->reclaim = 0;
    for (size_t k = 0; k < pr->npv; k++) {
        const struct pv *pv = &pr->pv[k];
        if (!pv->removed || pv->terminating)
            continue;
        const struct sv_pod *p = &v->pods[pv->pod];
        int q = v->jobs[p->job].queue;
        if (q < 0 || q == pr->queue)
            continue;
        pr->reclaim = hit[q] = 1;
        for (int r = 0; r < p->nreq; r++)
            taken[(size_t)q * nr + p->req[r].res] += p->req[r].v;
    }
    json_array_foreach(victims, i, x)
    {
        int pi = sched__view_pod(v, json_string_value(json_object_get(x, "pod")));
        int q = pi >= 0 ? v->jobs[v->pods[pi].job].queue : -1;
        json_object_set_new(x, "queue", q >= 0 ? json_string(v->queues[q].m.name) : json_null());
    }
    json_object_set_new(entry, "kind", json_string(pr->reclaim ? "reclaim" : "preemption"));
    if (pr->reclaim) {
        const char *name = v->queues[pr->queue].m.name;
        json_object_set_new(entry, "queue",
                            json_pack("{s:s,s:f,s:f}", "name", name, "shareBefore",
                                      sched__queue_share(v, pr->queue, NULL), "shareAfter",
                                      share_with(v, pr->queue, pr->asked, 1)));
        json_t *vq = json_array();
        for (size_t q = 0; q < v->nqueues; q++)
            if (hit[q])
                json_array_append_new(
                    vq, json_pack("{s:s,s:f,s:f}", "name", v->queues[q].m.name, "shareBefore",
                                  sched__queue_share(v, (int)q, NULL), "shareAfter",
                                  share_with(v, (int)q, taken + q * nr, -1)));
        json_object_set_new(entry, "victimQueues", vq);
    }
    free(hit);
    free(taken);
}

int sched__reclaim_within(const struct preempt *pr)
{
    const struct sched_view *v = pr->c->v;
    size_t nr = v->nres;
    int64_t *live = live_alloc(v);
    int64_t *taken = xcalloc(v->nqueues * nr + 1, sizeof(int64_t));
    for (size_t k = 0; k < pr->npv; k++) {
        const struct pv *x = &pr->pv[k];
        if (!x->removed || x->terminating)
            continue;
        const struct sv_pod *p = &v->pods[x->pod];
        int q = v->jobs[p->job].queue;
        if (q < 0 || q == pr->queue)
            continue;
        int top = lca(v, pr->queue, q);
        for (int a = q; a >= 0 && a != top; a = v->queues[a].parent)
            for (int i = 0; i < p->nreq; i++)
                taken[(size_t)a * nr + p->req[i].res] += p->req[i].v;
    }
    char *hot = contended(v);
    int ok = 1;
    for (size_t i = 0; ok && i < v->nqueues * nr; i++)
        ok = i % nr == 0 || !hot[i % nr] || !taken[i] ||
             live[i] - taken[i] >= v->queues[i / nr].deserved[i % nr];
    free(hot);
    free(taken);
    free(live);
    return ok;
}
