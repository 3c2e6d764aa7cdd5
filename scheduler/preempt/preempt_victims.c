/*
 * preempt_victims.c - who a preemption may evict (preempt.h): the potential victims on the
 * nodes the job could use, their priority ranks and each node's cost (budgets, ranks, the
 * start of its highest-priority victims), gangs that can go whole or lose only their
 * members above minMember, and, once a plan is chosen, the rest of every gang it breaks.
 * preempt.c searches the minimal set among them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"
#include "preempt.h"
#include "queue.h"

/* ---- potential victims ---- */

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int in_preemptor(const struct preempt *pr, int job)
{
    for (size_t m = 0; m < pr->pj->njobs; m++)
        if (pr->pj->jobs[m] == job)
            return 1;
    return 0;
}

/* Bound, non-terminal pods of a job that are not terminating. */
static int job_bound(const struct sched_view *v, const struct sv_job *j)
{
    int n = 0;
    for (size_t i = 0; i < j->npods; i++) {
        const struct sv_pod *p = &v->pods[j->pods[i]];
        n += p->node >= 0 && p->counted && !p->m.deletion_ms && !model_pod_terminal(&p->m);
    }
    return n;
}

/* Nodes a pod of the job could use if resources allowed (static fit for some shape). */
static int node_static_ok(struct preempt *pr, const struct sv_node *n)
{
    for (size_t s = 0; s < pr->nshapes; s++)
        if (sched__fit_static(n, &pr->c->v->shapes[pr->shapes[s]]) == SCHED_FIT_OK)
            return 1;
    return 0;
}

static void collect_shapes(struct preempt *pr)
{
    const struct sched_view *v = pr->c->v;
    pr->shapes = xcalloc(pr->pj->npods + 1, sizeof(int));
    for (size_t i = 0; i < pr->pj->npods; i++) {
        int sh = v->pods[pr->pj->pods[i]].shape;
        size_t k = 0;
        while (k < pr->nshapes && pr->shapes[k] != sh)
            k++;
        if (k == pr->nshapes)
            pr->shapes[pr->nshapes++] = sh;
    }
}

static void add_victim(struct preempt *pr, int pi, int ni, int terminating, int *node_pn)
{
    XGROW(pr->pv, pr->npv + 1, pr->cappv);
    pr->pv[pr->npv] = (struct pv){pi, ni, 0, -1, 0, terminating, 0};
    if (node_pn[ni] < 0) {
        XGROW(pr->pn, pr->npn + 1, pr->cappn);
        memset(&pr->pn[pr->npn], 0, sizeof(pr->pn[0]));
        pr->pn[pr->npn].node = ni;
        node_pn[ni] = (int)pr->npn++;
    }
    struct pnode *pn = &pr->pn[node_pn[ni]];
    pn->v = xrealloc(pn->v, (pn->nv + 1) * sizeof(int));
    pn->v[pn->nv++] = (int)pr->npv++;
}

/* pn->top_start: the earliest start among the victims of the highest priority on the node
 * (kube-scheduler's GetEarliestPodStartTime); pods already terminating cost nothing and
 * do not count. */
static void top_start(const struct preempt *pr, struct pnode *pn)
{
    const struct sched_view *v = pr->c->v;
    int top = -1;
    pn->top_start = INT64_MAX;
    for (size_t k = 0; k < pn->nv; k++) {
        const struct pv *x = &pr->pv[pn->v[k]];
        if (x->terminating || x->rank < top)
            continue;
        int64_t st = sched__pod_start(pr, &v->pods[x->pod]);
        if (x->rank > top || st < pn->top_start)
            pn->top_start = st;
        top = x->rank;
    }
}

/* Ranks, gang breaking and node costs. A victim whose eviction alone drops its gang
 * below minMember costs every bound pod of that gang (once per node). */
static void rank_and_cost(struct preempt *pr)
{
    struct sched_view *v = pr->c->v;
    int32_t *pr_list = xcalloc(pr->npv + 1, sizeof(int32_t));
    for (size_t i = 0; i < pr->npv; i++)
        pr_list[i] = v->pods[pr->pv[i].pod].prio;
    qsort(pr_list, pr->npv, sizeof(int32_t), cmp_i32);
    size_t nr = 0;
    for (size_t i = 0; i < pr->npv; i++)
        if (!nr || pr_list[nr - 1] != pr_list[i])
            pr_list[nr++] = pr_list[i];
    pr->nranks = (int)nr;
    for (size_t i = 0; i < pr->npv; i++) {
        struct pv *x = &pr->pv[i];
        const struct sv_pod *p = &v->pods[x->pod];
        int32_t *at = bsearch(&p->prio, pr_list, nr, sizeof(int32_t), cmp_i32);
        x->rank = (int)(at - pr_list);
        const struct sv_job *j = &v->jobs[p->job];
        if (!x->terminating && j->gang && j->has_pg && job_bound(v, j) - 1 < sched__job_min(j))
            x->gang = p->job;
    }
    for (size_t i = 0; i < pr->npn; i++) {
        struct pnode *pn = &pr->pn[i];
        sched__pdb_node_cost(pr, pn);
        top_start(pr, pn);
        pn->cost = xcalloc(nr + 1, sizeof(long));
        for (size_t k = 0; k < pn->nv; k++) {
            const struct pv *x = &pr->pv[pn->v[k]];
            int seen = 0;
            for (size_t q = 0; x->gang >= 0 && q < k; q++)
                seen |= pr->pv[pn->v[q]].gang == x->gang;
            if (x->terminating) {
                continue; /* evicted already: reusing its room costs nothing */
            } else if (x->gang < 0) {
                pn->cost[x->rank]++;
            } else if (!seen) {
                const struct sv_job *j = &v->jobs[x->gang];
                for (size_t q = 0; q < j->npods; q++) {
                    const struct sv_pod *gp = &v->pods[j->pods[q]];
                    int32_t *at = bsearch(&gp->prio, pr_list, nr, sizeof(int32_t), cmp_i32);
                    pn->cost[at ? at - pr_list : 0] += gp->node >= 0 && !gp->m.deletion_ms;
                }
            }
        }
    }
    free(pr_list);
}

int sched__preempt_victim_ok(const struct preempt *pr, const struct sv_pod *p)
{
    const struct sched_view *v = pr->c->v;
    const struct sv_job *j = &v->jobs[p->job];
    if (in_preemptor(pr, p->job))
        return 0;
    if (pr->pj->cap_queue >= 0 && !sched__queue_under(v, j->queue, pr->pj->cap_queue))
        return 0;
    if (pr->queue < 0 || j->queue < 0 || j->queue == pr->queue)
        return p->prio < pr->prio;
    return sched__reclaim_may_take(pr, p->job);
}

/* Gangs are evicted whole or not at all: a gang may lose pods only when every bound,
 * non-terminating member could be evicted too (sched__preempt_victim_ok). Asked for each
 * member, answered once a search (nothing it reads changes while the victims are
 * collected). */
static int gang_evictable(struct preempt *pr, int job)
{
    const struct sched_view *v = pr->c->v;
    const struct sv_job *j = &v->jobs[job];
    if (!j->gang || !j->has_pg)
        return 1;
    if (!pr->gang_ok)
        pr->gang_ok = xcalloc(v->njobs + 1, 1);
    if (!pr->gang_ok[job]) {
        pr->gang_ok[job] = 1;
        for (size_t i = 0; i < j->npods && pr->gang_ok[job] == 1; i++) {
            const struct sv_pod *p = &v->pods[j->pods[i]];
            if (p->node >= 0 && p->counted && !p->m.deletion_ms && !model_pod_terminal(&p->m) &&
                !sched__preempt_victim_ok(pr, p))
                pr->gang_ok[job] = 2;
        }
    }
    return pr->gang_ok[job] == 1;
}

/* A pod of another job the preemptor may evict for itself, leaving the job's other pods
 * aside: sched__preempt_victim_ok without reclaim's whole-job pool (other queues: only
 * whether reclaim may take from that queue at all; mark_surplus weighs what they hold). */
static int pod_evictable(const struct preempt *pr, const struct sv_pod *p)
{
    const struct sched_view *v = pr->c->v;
    const struct sv_job *j = &v->jobs[p->job];
    if (in_preemptor(pr, p->job) || p->node < 0 || !p->counted || p->m.deletion_ms ||
        model_pod_terminal(&p->m))
        return 0;
    if (pr->pj->cap_queue >= 0 && !sched__queue_under(v, j->queue, pr->pj->cap_queue))
        return 0;
    if (pr->queue < 0 || j->queue < 0 || j->queue == pr->queue)
        return p->prio < pr->prio;
    return pr->rec && pr->rec->qok[j->queue];
}

static int cmp_least_important(const void *x, const void *y, void *ctx)
{
    const struct preempt *pr = ctx;
    const struct sched_view *v = pr->c->v;
    return -sched__more_important(pr, &v->pods[*(const int *)x], &v->pods[*(const int *)y]);
}

/* Volcano's gang preemptableFn (reclaimableFn alike): a gang that cannot go whole (some
 * bound member is no victim of this preemptor) may still lose the members above its
 * minMember, least important first, while it keeps minMember bound; for reclaim, while
 * what they hold together fits their queue's budget. Marks them in pr->surplus. */
static void mark_surplus(struct preempt *pr, int job)
{
    const struct sched_view *v = pr->c->v;
    const struct sv_job *j = &v->jobs[job];
    int n = job_bound(v, j) - sched__job_min(j), *c = xcalloc(j->npods + 1, sizeof(int));
    size_t nc = 0;
    for (size_t i = 0; n > 0 && i < j->npods; i++)
        if (pod_evictable(pr, &v->pods[j->pods[i]]))
            c[nc++] = j->pods[i];
    qsort_r(c, nc, sizeof(int), cmp_least_important, pr);
    int other = j->queue >= 0 && pr->queue >= 0 && j->queue != pr->queue;
    int64_t *hold = xcalloc(v->nres + 1, sizeof(int64_t));
    for (size_t i = 0; i < nc && n > 0; i++, n--) {
        const struct sv_pod *p = &v->pods[c[i]];
        for (int k = 0; k < p->nreq; k++)
            hold[p->req[k].res] += p->req[k].v;
        if (other && !sched__reclaim_may_take_part(pr, job, hold))
            break;
        if (!pr->surplus)
            pr->surplus = xcalloc(v->npods + 1, 1);
        pr->surplus[c[i]] = 1;
    }
    free(hold);
    free(c);
}

/* Pod pi is a member its gang may lose above minMember (mark_surplus). */
static int surplus_member(struct preempt *pr, int pi)
{
    const struct sched_view *v = pr->c->v;
    const struct sv_job *j = &v->jobs[v->pods[pi].job];
    if (!j->gang || !j->has_pg)
        return 0;
    if (!pr->surplus_job)
        pr->surplus_job = xcalloc(v->njobs + 1, 1);
    if (!pr->surplus_job[v->pods[pi].job]) {
        pr->surplus_job[v->pods[pi].job] = 1;
        mark_surplus(pr, v->pods[pi].job);
    }
    return pr->surplus && pr->surplus[pi];
}

/* Potential victims: of its queue and strictly lower priority, or of another queue
 * reclaim may take from (sched__preempt_victim_ok), bound, not terminating, not of the
 * preemptor, not of a gang that cannot be evicted whole, on nodes the job could use but
 * that failed for resources; and every pod already terminating on such nodes, whoever's
 * (reused at no cost, never evicted twice: a second preemption in a cycle uses the room of
 * a gang the first one evicted instead of breaking another). Reusing that room takes
 * nothing from the preemptors nominated there: their nominations still reserve it
 * (sched__free_for), so the dry run sees exactly what is free once the terminating pods
 * are gone. Only the pods of nodes the job could use are looked at (the cycle's
 * pods-by-node index, which lacks the pods placed in this cycle before it was built: a job
 * placed earlier in the cycle is a victim from the next cycle on), so a cycle with many
 * unschedulable jobs does not scan every pod for each of them. */
void sched__collect_victims(struct preempt *pr)
{
    struct sched_view *v = pr->c->v;
    int *node_pn = xcalloc(v->nnodes + 1, sizeof(int));
    collect_shapes(pr);
    const struct sched_preempt_cache *pc = sched__pre_by_node(pr->c);
    for (size_t n = 0; n < v->nnodes; n++) {
        node_pn[n] = -1;
        int lo = pc->by_node_off[n], hi = pc->by_node_off[n + 1];
        if (lo == hi || !v->nodes[n].alive || !node_static_ok(pr, &v->nodes[n]))
            continue;
        for (int k = lo; k < hi; k++) {
            int i = pc->by_node[k];
            const struct sv_pod *p = &v->pods[i];
            if (!p->alive || p->node != (int)n || !p->counted || model_pod_terminal(&p->m) ||
                in_preemptor(pr, p->job))
                continue;
            if (p->m.deletion_ms)
                add_victim(pr, i, (int)n, 1, node_pn);
            else if (sched__preempt_victim_ok(pr, p) && gang_evictable(pr, p->job))
                add_victim(pr, i, (int)n, 0, node_pn);
            else if (surplus_member(pr, i))
                add_victim(pr, i, (int)n, 0, node_pn);
        }
    }
    free(node_pn);
    for (size_t i = 0; i < pr->npv; i++)
        pr->npotential += !pr->pv[i].terminating;
    rank_and_cost(pr);
}

/* ---- whole gangs ---- */

/* Bound members of gang j that stay (not terminating, not chosen). */
static int gang_left(struct preempt *pr, const struct sv_job *j, const char *chosen)
{
    const struct sched_view *v = pr->c->v;
    int n = 0;
    for (size_t i = 0; i < j->npods; i++) {
        const struct sv_pod *p = &v->pods[j->pods[i]];
        n += p->node >= 0 && p->counted && !p->m.deletion_ms && !model_pod_terminal(&p->m) &&
             !chosen[j->pods[i]];
    }
    return n;
}

/* A victim gang left below minMember by the chosen set loses its remaining bound members
 * in the same plan (added as chosen victims, wherever they run): gangs are evicted whole
 * or not at all. collect_victims only offers pods of gangs that can go whole. */
void sched__complete_gangs(struct preempt *pr)
{
    struct sched_view *v = pr->c->v;
    char *chosen = xcalloc(v->npods + 1, 1);
    for (size_t i = 0; i < pr->npv; i++)
        chosen[pr->pv[i].pod] = pr->pv[i].removed && !pr->pv[i].terminating;
    size_t n = pr->npv;
    for (size_t i = 0; i < n; i++) {
        if (!pr->pv[i].removed || pr->pv[i].terminating)
            continue;
        const struct sv_job *j = &v->jobs[v->pods[pr->pv[i].pod].job];
        if (!j->gang || !j->has_pg || gang_left(pr, j, chosen) >= sched__job_min(j))
            continue;
        for (size_t q = 0; q < j->npods; q++) {
            int pi = j->pods[q];
            const struct sv_pod *p = &v->pods[pi];
            if (chosen[pi] || p->node < 0 || !p->counted || p->m.deletion_ms ||
                model_pod_terminal(&p->m))
                continue;
            size_t k = 0;
            while (k < pr->npv && pr->pv[k].pod != pi)
                k++;
            if (k == pr->npv) {
                XGROW(pr->pv, pr->npv + 1, pr->cappv);
                pr->pv[pr->npv++] = (struct pv){pi, p->node, 0, p->job, 0, 0, 0};
            }
            pr->pv[k].removed = 1;
            chosen[pi] = 1;
        }
    }
    free(chosen);
}
