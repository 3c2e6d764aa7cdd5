/*
 * queue_order.c - the order a cycle attempts its pending jobs in (queue.h).
 *
 * Each leaf queue holds its jobs sorted once (priority, DRF, creation, id); the next job
 * comes from the leaf reached by walking down the tree, at each level to the child with
 * the lowest dominant share that still has jobs. Shares are read live: a queue that placed
 * a job has a larger allocation at its next turn, which is how a cycle interleaves queues
 * by share as Volcano's allocate action does. A queue at or above its deserved share keeps
 * its turn order too: it borrows what the queues below their share left idle.
 */
#include <stdlib.h>
#include <string.h>

#include "queue.h"

struct job_key {
    int job;
    int32_t prio;
    double drf;
    int64_t created;
    const char *id;
};

struct sched_qorder {
    struct sched_view *v;
    struct job_key *keys; /* grouped by queue: queue q's jobs are keys[off[q] .. off[q+1]) */
    size_t *off, *pos;    /* [nqueues + 1], pos: next of each queue */
    size_t *left;         /* jobs left in each queue's subtree */
    size_t rest, nrest;   /* keys[rest ..) jobs of no usable queue, next at nrest */
    size_t n;
};

static int cmp_job(const void *a, const void *b)
{
    const struct job_key *x = a, *y = b;
    if (x->prio != y->prio)
        return x->prio > y->prio ? -1 : 1;
    if (x->drf != y->drf)
        return x->drf < y->drf ? -1 : 1;
    if (x->created != y->created)
        return x->created < y->created ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* The job's dominant share of the cluster: its counted pods' requests against total. */
static double job_drf(const struct sched_view *v, const struct sv_job *j, const int64_t *total)
{
    double best = 0;
    for (size_t i = 0; i < j->npods; i++) {
        const struct sv_pod *p = &v->pods[j->pods[i]];
        if (!p->counted)
            continue;
        for (int k = 0; k < p->nreq; k++) {
            int r = p->req[k].res;
            double s = r && total[r] ? (double)p->req[k].v / (double)total[r] : 0;
            best = s > best ? s : best;
        }
    }
    return best;
}

/* The queue a job is ordered in: its queue when it exists and is a leaf, else nqueues. */
static size_t slot_of(const struct sched_view *v, const struct sv_job *j)
{
    return j->queue >= 0 && !v->queues[j->queue].nchildren ? (size_t)j->queue : v->nqueues;
}

static int queue_before(const struct sched_view *v, int a, int b)
{
    double sa = sched__queue_share(v, a, NULL), sb = sched__queue_share(v, b, NULL);
    if (sa != sb)
        return sa < sb;
    const struct sv_queue *x = &v->queues[a], *y = &v->queues[b];
    if (x->m.creation_ms != y->m.creation_ms)
        return x->m.creation_ms < y->m.creation_ms;
    return strcmp(x->m.name, y->m.name) < 0;
}

/* The leaf to take the next job from, -1 when every queue is done. */
static int pick_leaf(const struct sched_qorder *o)
{
    const struct sched_view *v = o->v;
    int at = -1;
    for (;;) {
        int best = -1;
        for (size_t i = 0; i < v->nqueues; i++)
            if (v->queues[i].alive && v->queues[i].parent == at && o->left[i] &&
                (best < 0 || queue_before(v, (int)i, best)))
                best = (int)i;
        if (best < 0 || o->pos[best] < o->off[best + 1])
            return best;
        at = best;
    }
}

static void take(struct sched_qorder *o, int q)
{
    o->pos[q]++;
    for (; q >= 0; q = o->v->queues[q].parent)
        o->left[q]--;
}

struct sched_qorder *sched__qorder_new(struct sched_view *v, const int *jobs, size_t n,
                                       const int64_t *total)
{
    struct sched_qorder *o = xcalloc(1, sizeof(*o));
    size_t nq = v->nqueues;
    o->v = v;
    o->n = n;
    o->keys = xcalloc(n + 1, sizeof(*o->keys));
    o->off = xcalloc(nq + 2, sizeof(size_t));
    o->pos = xcalloc(nq + 2, sizeof(size_t));
    o->left = xcalloc(nq + 1, sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        o->off[slot_of(v, &v->jobs[jobs[i]]) + 1]++;
    for (size_t q = 0; q <= nq; q++)
        o->off[q + 1] += o->off[q];
    memcpy(o->pos, o->off, (nq + 1) * sizeof(size_t));
    for (size_t i = 0; i < n; i++) {
        const struct sv_job *j = &v->jobs[jobs[i]];
        size_t q = slot_of(v, j);
        o->keys[o->pos[q]++] =
            (struct job_key){jobs[i], sched__job_priority(v, j), job_drf(v, j, total),
                             sched__job_creation(v, j), j->id};
    }
    for (size_t q = 0; q <= nq; q++) {
        qsort(o->keys + o->off[q], o->off[q + 1] - o->off[q], sizeof(*o->keys), cmp_job);
        o->pos[q] = o->off[q];
    }
    for (size_t q = 0; q < nq; q++)
        for (int a = (int)q; a >= 0 && v->queues[q].alive; a = v->queues[a].parent)
            o->left[a] += o->off[q + 1] - o->off[q];
    o->rest = o->nrest = o->off[nq];
    /* ranks: the order the leaves come in when nothing is placed */
    size_t *saved = xcalloc(nq + 1, sizeof(size_t));
    memcpy(saved, o->left, nq * sizeof(size_t));
    int rank = 0;
    for (int q; (q = pick_leaf(o)) >= 0;) {
        v->queues[q].rank = ++rank;
        for (int a = q; a >= 0; a = v->queues[a].parent)
            o->left[a] -= o->off[q + 1] - o->pos[q];
    }
    memcpy(o->left, saved, nq * sizeof(size_t));
    free(saved);
    return o;
}

int sched__qorder_next(struct sched_qorder *o)
{
    int q = pick_leaf(o);
    if (q >= 0) {
        int job = o->keys[o->pos[q]].job;
        take(o, q);
        return job;
    }
    return o->nrest < o->n ? o->keys[o->nrest++].job : -1;
}

void sched__qorder_free(struct sched_qorder *o)
{
    if (!o)
        return;
    free(o->keys);
    free(o->off);
    free(o->pos);
    free(o->left);
    free(o);
}
