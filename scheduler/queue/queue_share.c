/*
 * queue_share.c - deserved shares, once per cycle (queue.h).
 *
 * Volcano's proportion plugin divides the cluster by weight among the queues that want
 * it, a queue never deserving more than it requests, never less than its guarantee, never
 * more than its capability; its capacity plugin adds the hierarchy. Here each resource is
 * water-filled exactly: rounds give every queue still wanting more its weight's part of
 * what is left; a queue whose part would take it past its target takes its target and
 * leaves the round, which then starts again without it; a round in which nobody reaches
 * a target hands out the rest and ends. Integer arithmetic (128-bit products), so the
 * shares are exact up to a unit per queue.
 */
#include <stdio.h>
#include <string.h>

#include "queue.h"

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* min of two capabilities, -1 meaning not limited */
static int64_t cap_min(int64_t a, int64_t b)
{
    return a < 0 ? b : b < 0 ? a : min64(a, b);
}

/* The amount of resource r the children of parent (-1: the top level) water-fill. */
static void fill(struct sched_view *v, int parent, size_t r, int64_t amount, int *kids,
                 int64_t *target)
{
    size_t n = 0;
    int64_t guars = 0;
    for (size_t i = 0; i < v->nqueues; i++)
        if (v->queues[i].alive && v->queues[i].parent == parent) {
            kids[n++] = (int)i;
            guars += v->queues[i].guar[r];
        }
    int64_t left = amount;
    for (size_t k = 0; k < n; k++) {
        struct sv_queue *q = &v->queues[kids[k]];
        int64_t pcap = parent >= 0 ? v->queues[parent].realcap[r] : -1;
        int64_t others = guars - q->guar[r]; /* reserved for the other queues */
        q->realcap[r] = cap_min(q->cap[r], pcap);
        if (others > 0)
            q->realcap[r] = cap_min(q->realcap[r], amount > others ? amount - others : 0);
        int64_t want = q->request[r] > q->guar[r] ? q->request[r] : q->guar[r];
        target[k] = q->realcap[r] < 0 ? want : min64(want, q->realcap[r]);
        q->deserved[r] = min64(q->guar[r], target[k]);
        left -= q->deserved[r];
    }
    size_t active = n;
    while (left > 0 && active > 0) {
        __int128 w = 0;
        for (size_t k = 0; k < n; k++)
            if (v->queues[kids[k]].deserved[r] < target[k])
                w += v->queues[kids[k]].m.weight;
        if (w == 0)
            break;
        int capped = 0;
        for (size_t k = 0; k < n; k++) {
            struct sv_queue *q = &v->queues[kids[k]];
            if (q->deserved[r] >= target[k])
                continue;
            __int128 part = (__int128)left * q->m.weight / w;
            if (q->deserved[r] + part >= target[k]) {
                left -= target[k] - q->deserved[r];
                q->deserved[r] = target[k];
                capped = 1;
                active--;
            }
        }
        if (capped)
            continue;
        int64_t given = 0;
        for (size_t k = 0; k < n; k++) {
            struct sv_queue *q = &v->queues[kids[k]];
            if (q->deserved[r] >= target[k])
                continue;
            int64_t part = (int64_t)((__int128)left * q->m.weight / w);
            q->deserved[r] += part;
            given += part;
        }
        left -= given;
        break;
    }
    for (size_t k = 0; k < n; k++)
        if (v->queues[kids[k]].nchildren) {
            int *sub = kids + n; /* the rest of the scratch array */
            fill(v, kids[k], r, v->queues[kids[k]].deserved[r], sub, target + n);
        }
}

void sched__queue_shares(struct sched_view *v, const int64_t *total, uint64_t cycle)
{
    for (size_t i = 0; i < v->nqueues; i++) {
        struct sv_queue *q = &v->queues[i];
        if (!q->alive)
            continue;
        for (size_t r = 0; r < v->rescap; r++)
            q->request[r] = q->alloc[r] + q->pend[r];
        memset(q->deserved, 0, v->rescap * sizeof(int64_t));
        q->rank = 0;
    }
    /* scratch: a level's children and targets, and below them the next level's */
    int *kids = xcalloc(2 * v->nqueues + 1, sizeof(int));
    int64_t *target = xcalloc(2 * v->nqueues + 1, sizeof(int64_t));
    for (size_t r = 0; r < v->nres; r++)
        fill(v, -1, r, total[r], kids, target);
    free(kids);
    free(target);
    v->share_cycle = cycle;
}

int sched__queue_pend_check(const struct sched_view *v, char *msg, size_t n)
{
    int64_t *scan = xcalloc(v->nqueues * v->rescap + 1, sizeof(int64_t));
    for (size_t i = 0; i < v->npods; i++) { /* the scan the kept sums replace */
        const struct sv_pod *p = &v->pods[i];
        if (!p->alive || p->counted || !sched__pod_pending(p))
            continue;
        for (int q = v->jobs[p->job].queue; q >= 0; q = v->queues[q].parent)
            for (int k = 0; k < p->nreq; k++)
                scan[(size_t)q * v->rescap + (size_t)p->req[k].res] += p->req[k].v;
    }
    int rc = 0;
    for (size_t q = 0; rc == 0 && q < v->nqueues; q++)
        for (size_t r = 0; rc == 0 && v->queues[q].alive && r < v->rescap; r++)
            if (v->queues[q].pend[r] != scan[q * v->rescap + r]) {
                snprintf(msg, n, "queue '%s' pending %s: kept %lld, scan %lld", v->queues[q].m.name,
                         r < v->nres ? v->res[r] : "(unused slot)", (long long)v->queues[q].pend[r],
                         (long long)scan[q * v->rescap + r]);
                rc = -1;
            }
    free(scan);
    return rc;
}

double sched__queue_share(const struct sched_view *v, int qi, int *dom)
{
    const struct sv_queue *q = &v->queues[qi];
    double best = 0;
    int at = -1;
    for (size_t r = 1; r < v->nres; r++) { /* resource 0 is "pods" */
        if (!q->alloc[r] && !q->deserved[r])
            continue;
        double s = q->deserved[r] ? (double)q->alloc[r] / (double)q->deserved[r] : 1.0;
        if (at < 0 || s > best) {
            best = s;
            at = (int)r;
        }
    }
    if (dom)
        *dom = at;
    return best;
}

int sched__queue_over_cap(const struct sched_view *v, int qi, const int64_t *asked, int *res)
{
    for (int q = qi; q >= 0; q = v->queues[q].parent)
        for (size_t r = 0; r < v->nres; r++) {
            int64_t cap = v->queues[q].realcap[r];
            if (asked[r] > 0 && cap >= 0 && v->queues[q].alloc[r] + asked[r] > cap) {
                *res = (int)r;
                return q;
            }
        }
    return -1;
}

int sched__queue_within_cap(const struct sched_view *v, int qi, const int64_t *asked,
                            const int64_t *more)
{
    for (int q = qi; q >= 0; q = v->queues[q].parent)
        for (size_t r = 0; r < v->nres; r++) {
            int64_t cap = v->queues[q].realcap[r], alloc = v->queues[q].alloc[r];
            if (more && more[r] > cap - alloc) /* alloc + more > cap, without overflow */
                alloc = cap + 1;
            if ((!asked || asked[r] > 0) && cap >= 0 && alloc > cap)
                return 0;
        }
    return 1;
}

int sched__queue_under(const struct sched_view *v, int q, int top)
{
    for (; q >= 0; q = v->queues[q].parent)
        if (q == top)
            return 1;
    return 0;
}
