/*
 * view_queue.c - the queues of the view: the tree, which queue each job is in, and each
 * queue's allocation.
 *
 * A queue's allocation is kept exact at every moment, statements and preemption dry runs
 * included: sched__view_usage, the one place a pod's requests are added to or taken off
 * a node, adds them to its job's queue and every ancestor too. The pending sums likewise:
 * sched__queue_pend is the one place a pending pod's requests are added or taken off, and
 * every change of a pod that can move them calls it before and after (view_queue.h). A job's
 * queue is resolved by name (sched__job_queue_name) whenever its PodGroup or pods change,
 * moving both sums; queues change rarely, so any change of a queue re-resolves the whole
 * tree and recounts.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "strmap.h"
#include "view_base.h"
#include "view_queue.h"
#include "view_wait.h"

const char *sched__job_queue_name(const struct sched_view *v, const struct sv_job *j)
{
    if (j->has_pg && j->pg.queue)
        return j->pg.queue;
    for (size_t i = 0; i < j->npods; i++)
        if (v->pods[j->pods[i]].m.queue)
            return v->pods[j->pods[i]].m.queue;
    return MODEL_QUEUE_DEFAULT;
}

int sched__view_queue(const struct sched_view *v, const char *name)
{
    return sched__strmap_get(&v->queue_ix, name);
}

/* Adds pod p's requests (sign -1: takes them off) to queue q's alloc (pend: its pend) and
 * every ancestor's. */
static void chain_add(struct sched_view *v, int q, const struct sv_pod *p, int pend, int sign)
{
    for (; q >= 0; q = v->queues[q].parent) {
        int64_t *sum = pend ? v->queues[q].pend : v->queues[q].alloc;
        for (int i = 0; i < p->nreq; i++)
            sum[p->req[i].res] += sign * p->req[i].v;
    }
}

void sched__queue_usage(struct sched_view *v, const struct sv_pod *p, int sign)
{
    chain_add(v, v->jobs[p->job].queue, p, 0, sign);
}

int sched__queue_pends(const struct sv_pod *p)
{
    return p->alive && !p->counted && sched__pod_pending(p);
}

void sched__queue_pend(struct sched_view *v, const struct sv_pod *p, int sign)
{
    if (sched__queue_pends(p))
        chain_add(v, v->jobs[p->job].queue, p, 1, sign);
}

/* Job j's counted pods in queue q's allocation, its pending pods in its pending sum. */
static void job_sums(struct sched_view *v, const struct sv_job *j, int q, int sign)
{
    for (size_t i = 0; q >= 0 && i < j->npods; i++) {
        const struct sv_pod *p = &v->pods[j->pods[i]];
        if (p->counted)
            chain_add(v, q, p, 0, sign);
        if (sched__queue_pends(p))
            chain_add(v, q, p, 1, sign);
    }
}

void sched__view_job_requeue(struct sched_view *v, int ji)
{
    struct sv_job *j = &v->jobs[ji];
    int q = sched__view_queue(v, sched__job_queue_name(v, j));
    if (q == j->queue)
        return;
    job_sums(v, j, j->queue, -1);
    job_sums(v, j, q, 1);
    j->queue = q;
}

static int64_t *vec(const struct sched_view *v)
{
    return xcalloc(v->rescap, sizeof(int64_t));
}

static void queue_vectors(struct sched_view *v, struct sv_queue *q)
{
    int64_t **all[] = {&q->cap,     &q->guar,     &q->alloc,  &q->pend,
                       &q->request, &q->deserved, &q->realcap};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        free(*all[i]);
        *all[i] = vec(v);
    }
}

static void queue_clear(struct sv_queue *q)
{
    model_queue_release(&q->m);
    free(q->cap);
    free(q->guar);
    free(q->alloc);
    free(q->pend);
    free(q->request);
    free(q->deserved);
    free(q->realcap);
    memset(q, 0, sizeof(*q));
}

void sched__view_queues_free(struct sched_view *v)
{
    for (size_t i = 0; i < v->nqueues; i++)
        queue_clear(&v->queues[i]);
    free(v->queues);
    sched__strmap_free(&v->queue_ix);
}

/* Parents, depths, children counts; a parent that is unknown, itself, or on a cycle makes
 * a queue top-level. */
/* Cuts each cycle of parents (the API refuses them, admit_queue.c; the mirror may bring
 * one) at the member whose name sorts first, which becomes top-level: the same tree
 * whatever order the queues' slots are in, so a view rebuilt from the store agrees with
 * the live one. Queues whose parents lead into a cycle keep their parents. */
static void break_cycles(struct sched_view *v)
{
    /* 0 not seen, 1 on the walk being made, 2 done */
    unsigned char *state = xcalloc(v->nqueues + 1, 1);
    for (size_t i = 0; i < v->nqueues; i++) {
        int p = (int)i;
        while (p >= 0 && state[p] == 0) {
            state[p] = 1;
            p = v->queues[p].parent;
        }
        int cut = -1;
        if (p >= 0 && state[p] == 1) { /* the walk came back to p: p's cycle */
            cut = p;
            for (int q = v->queues[p].parent; q != p; q = v->queues[q].parent)
                if (strcmp(v->queues[q].m.name, v->queues[cut].m.name) < 0)
                    cut = q;
        }
        for (int q = (int)i; q >= 0 && state[q] == 1; q = v->queues[q].parent)
            state[q] = 2; /* the whole walk, the cycle still whole */
        if (cut >= 0)
            v->queues[cut].parent = -1;
    }
    free(state);
}

static void resolve_tree(struct sched_view *v)
{
    for (size_t i = 0; i < v->nqueues; i++) {
        struct sv_queue *q = &v->queues[i];
        q->parent = q->alive && q->m.parent ? sched__view_queue(v, q->m.parent) : -1;
        q->nchildren = 0;
        q->depth = 0;
    }
    break_cycles(v);
    for (size_t i = 0; i < v->nqueues; i++) {
        struct sv_queue *q = &v->queues[i];
        if (!q->alive)
            continue;
        for (int p = q->parent; p >= 0; p = v->queues[p].parent)
            q->depth++;
        if (q->parent >= 0)
            v->queues[q->parent].nchildren++;
    }
}

/* The tree, every job's queue, every allocation and pending sum, from scratch. */
static void recount(struct sched_view *v)
{
    resolve_tree(v);
    for (size_t i = 0; i < v->nqueues; i++)
        if (v->queues[i].alive) {
            memset(v->queues[i].alloc, 0, v->rescap * sizeof(int64_t));
            memset(v->queues[i].pend, 0, v->rescap * sizeof(int64_t));
        }
    for (size_t ji = 0; ji < v->njobs; ji++) {
        struct sv_job *j = &v->jobs[ji];
        if (!j->alive)
            continue;
        j->queue = sched__view_queue(v, sched__job_queue_name(v, j));
        job_sums(v, j, j->queue, 1);
    }
}

static void set_limits(struct sched_view *v, struct sv_queue *q)
{
    const struct model_queue *m = &q->m;
    /* intern first: interning may grow every vector */
    for (size_t i = 0; i < m->ncapability; i++)
        sched__view_res(v, m->capability[i].name);
    for (size_t i = 0; i < m->nguarantee; i++)
        sched__view_res(v, m->guarantee[i].name);
    queue_vectors(v, q);
    for (size_t r = 0; r < v->rescap; r++)
        q->cap[r] = q->realcap[r] = -1;
    for (size_t i = 0; i < m->ncapability; i++)
        q->cap[sched__view_res(v, m->capability[i].name)] = m->capability[i].value;
    for (size_t i = 0; i < m->nguarantee; i++)
        q->guar[sched__view_res(v, m->guarantee[i].name)] = m->guarantee[i].value;
}

static void builtin_default(struct model_queue *m)
{
    memset(m, 0, sizeof(*m));
    m->name = xstrdup(MODEL_QUEUE_DEFAULT);
    m->weight = 1;
    m->reclaimable = 1;
}

void sched__view_put_queue(struct sched_view *v, struct model_queue *mq)
{
    sched__wait_event(v, SV_EV_QUEUE);
    int qi = sched__view_queue(v, mq->name);
    if (qi < 0) {
        for (qi = 0; qi < (int)v->nqueues && v->queues[qi].alive; qi++)
            ;
        if (qi == (int)v->nqueues) {
            XGROW(v->queues, v->nqueues + 1, v->capqueues);
            v->nqueues++;
        }
        memset(&v->queues[qi], 0, sizeof(v->queues[qi]));
        sched__strmap_put(&v->queue_ix, mq->name, qi);
    }
    struct sv_queue *q = &v->queues[qi];
    model_queue_release(&q->m);
    q->m = *mq;
    memset(mq, 0, sizeof(*mq));
    q->alive = 1;
    q->stored = 1;
    set_limits(v, q);
    recount(v);
}

void sched__view_del_queue(struct sched_view *v, const char *name)
{
    sched__wait_event(v, SV_EV_QUEUE);
    int qi = sched__view_queue(v, name);
    if (qi < 0)
        return;
    if (!strcmp(name, MODEL_QUEUE_DEFAULT)) {
        struct model_queue m;
        builtin_default(&m);
        sched__view_put_queue(v, &m);
        v->queues[qi].stored = 0;
        return;
    }
    sched__strmap_del(&v->queue_ix, name);
    queue_clear(&v->queues[qi]);
    recount(v);
}

void sched__view_queues_init(struct sched_view *v)
{
    struct model_queue m;
    sched__strmap_init(&v->queue_ix);
    builtin_default(&m);
    sched__view_put_queue(v, &m);
    v->queues[0].stored = 0;
}
