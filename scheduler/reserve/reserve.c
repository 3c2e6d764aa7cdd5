/*
 * reserve.c - who starves and where a starving job's reservation goes (reserve.h).
 */
#include <stdlib.h>
#include <string.h>

#include "place_fit.h"
#include "reserve.h"

const char *sched__reserve_reason_name(enum reserve_reason r)
{
    return r == RESERVE_STRICT_FIFO ? "strict-fifo" : "max-wait";
}

int64_t sched__reserve_threshold(const struct sched_view *v, const struct sv_job *j, int64_t def_ms)
{
    if (j->has_pg && j->pg.max_wait_ms > 0)
        return j->pg.max_wait_ms;
    if (j->queue >= 0 && (size_t)j->queue < v->nqueues && v->queues[j->queue].m.max_wait_ms > 0)
        return v->queues[j->queue].m.max_wait_ms;
    return def_ms > 0 ? def_ms : 0;
}

int sched__reserve_waited(const struct sched_view *v, int ji, int64_t now_ms, int64_t def_ms)
{
    const struct sv_job *j = &v->jobs[ji];
    int64_t th = sched__reserve_threshold(v, j, def_ms), born = sched__job_creation(v, j);
    return th > 0 && born > 0 && now_ms - born > th;
}

/* ---- the plan ---- */

struct step {
    int64_t t;
    int node, rank, dom;
    long add; /* pods of the shape the node holds more from t on */
};

struct planner {
    struct sched_view *v;
    const struct sv_shape *sh;
    int64_t now;
    long need;
    int64_t *end;      /* [njobs] expected end of each job, -1 not computed yet */
    int *start, *pods; /* bound pods by node: pods[start[n] .. start[n + 1]) */
    int64_t *fr;       /* [sh->nreq] scratch */
    struct step *steps;
    size_t nsteps, capsteps;
};

static int64_t job_end(struct planner *pl, int ji)
{
    if (pl->end[ji] < 0)
        pl->end[ji] = sched__job_end_ms(pl->v, &pl->v->jobs[ji], pl->now);
    return pl->end[ji];
}

static int64_t pod_end(struct planner *pl, int pi)
{
    int64_t e = job_end(pl, pl->v->pods[pi].job);
    return e == 0 ? pl->now : e;
}

static void index_pods(struct planner *pl)
{
    struct sched_view *v = pl->v;
    pl->start = xcalloc(v->nnodes + 2, sizeof(int));
    for (size_t i = 0; i < v->npods; i++)
        if (v->pods[i].alive && v->pods[i].node >= 0 && v->pods[i].counted)
            pl->start[v->pods[i].node + 1]++;
    for (size_t n = 0; n < v->nnodes; n++)
        pl->start[n + 1] += pl->start[n];
    pl->pods = xcalloc((size_t)pl->start[v->nnodes] + 1, sizeof(int));
    int *fill = xcalloc(v->nnodes + 1, sizeof(int));
    for (size_t i = 0; i < v->npods; i++) {
        const struct sv_pod *p = &v->pods[i];
        if (p->alive && p->node >= 0 && p->counted)
            pl->pods[pl->start[p->node] + fill[p->node]++] = (int)i;
    }
    free(fill);
}

static long fits(const struct planner *pl)
{
    long k = pl->need;
    for (int i = 0; i < pl->sh->nreq && k > 0; i++) {
        if (pl->sh->req[i].v <= 0)
            continue;
        long c = pl->fr[i] <= 0 ? 0 : (long)(pl->fr[i] / pl->sh->req[i].v);
        k = c < k ? c : k;
    }
    return k;
}

static void emit(struct planner *pl, int64_t t, int ni, int dom, long add)
{
    XGROW(pl->steps, pl->nsteps + 1, pl->capsteps);
    pl->steps[pl->nsteps++] = (struct step){t, ni, pl->v->node_rank[ni], dom, add};
}

static int cmp_pod_end(const void *a, const void *b, void *ctx)
{
    int64_t x = pod_end(ctx, *(const int *)a), y = pod_end(ctx, *(const int *)b);
    return x < y ? -1 : x > y;
}

/* The steps of node ni: what it holds now, then after each running pod's end. */
static void node_steps(struct planner *pl, int ni, int dom)
{
    const struct sv_node *n = &pl->v->nodes[ni];
    for (int i = 0; i < pl->sh->nreq; i++)
        pl->fr[i] = n->alloc[pl->sh->req[i].res] - n->used[pl->sh->req[i].res];
    long k = fits(pl);
    if (k > 0)
        emit(pl, pl->now, ni, dom, k);
    int *pods = pl->pods + pl->start[ni];
    size_t np = (size_t)(pl->start[ni + 1] - pl->start[ni]);
    qsort_r(pods, np, sizeof(int), cmp_pod_end, pl);
    for (size_t i = 0; i < np && k < pl->need; i++) {
        const struct sv_pod *p = &pl->v->pods[pods[i]];
        for (int q = 0; q < p->nreq; q++)
            for (int r = 0; r < pl->sh->nreq; r++)
                if (pl->sh->req[r].res == p->req[q].res)
                    pl->fr[r] += p->req[q].v;
        int64_t t = pod_end(pl, pods[i]);
        if (i + 1 < np && pod_end(pl, pods[i + 1]) == t)
            continue; /* the pods that end together free their room together */
        long k2 = fits(pl);
        if (k2 > k)
            emit(pl, t < pl->now ? pl->now : t, ni, dom, k2 - k);
        k = k2 > k ? k2 : k;
    }
}

static int cmp_step(const void *a, const void *b)
{
    const struct step *x = a, *y = b;
    if (x->dom != y->dom)
        return x->dom < y->dom ? -1 : 1;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->rank - y->rank;
}

/* The domain at depth of node ni, -1 when it has none there. */
static int dom_at(const struct sched_topo *t, int ni, int depth)
{
    if (!t || (size_t)ni >= t->nnode_dom)
        return -1;
    int d = t->node_dom[ni];
    while (d >= 0 && t->doms[d].depth > depth)
        d = t->doms[d].parent;
    return d >= 0 && t->doms[d].depth == depth ? d : -1;
}

static long pods_needed(const struct sched_view *v, const struct place_req *rq)
{
    long need = 0;
    for (size_t m = 0; m < rq->njobs; m++) {
        if (rq->m[m].satisfied)
            continue;
        long n = sched__job_min(&v->jobs[rq->jobs[m]]) - rq->m[m].base;
        need += n > 0 ? n : 0;
    }
    need = need > 0 ? need : 1;
    return need < (long)rq->npods ? need : (long)rq->npods;
}

static int cmp_job_id(const void *a, const void *b, void *ctx)
{
    const struct sched_view *v = ctx;
    return strcmp(v->jobs[*(const int *)a].id, v->jobs[*(const int *)b].id);
}

static int cmp_rank(const void *a, const void *b, void *ctx)
{
    const struct sched_view *v = ctx;
    return v->node_rank[*(const int *)a] - v->node_rank[*(const int *)b];
}

/* From the chosen steps [lo, hi): the nodes and the jobs that must end first. */
static void fill(struct planner *pl, size_t lo, size_t hi, struct reserve_plan *out)
{
    struct sched_view *v = pl->v;
    out->nodes = xcalloc(hi - lo + 1, sizeof(int));
    int64_t *upto = xcalloc(v->nnodes + 1, sizeof(int64_t));
    char *seen = xcalloc(v->nnodes + 1, 1);
    for (size_t i = lo; i < hi; i++) {
        int ni = pl->steps[i].node;
        if (!seen[ni]) {
            seen[ni] = 1;
            out->nodes[out->nnodes++] = ni;
        }
        upto[ni] = pl->steps[i].t > upto[ni] ? pl->steps[i].t : upto[ni];
    }
    char *jseen = xcalloc(v->njobs + 1, 1);
    out->waits = xcalloc(v->njobs + 1, sizeof(int));
    for (size_t k = 0; k < out->nnodes; k++) {
        int ni = out->nodes[k];
        for (int i = pl->start[ni]; i < pl->start[ni + 1]; i++) {
            int pi = pl->pods[i], ji = v->pods[pi].job;
            if (upto[ni] > pl->now && pod_end(pl, pi) <= upto[ni] && !jseen[ji]) {
                jseen[ji] = 1;
                out->waits[out->nwaits++] = ji;
            }
        }
    }
    qsort_r(out->nodes, out->nnodes, sizeof(int), cmp_rank, v);
    qsort_r(out->waits, out->nwaits, sizeof(int), cmp_job_id, v);
    free(upto);
    free(seen);
    free(jseen);
}

int sched__reserve_plan(struct sched_view *v, const struct place_req *rq, int64_t now_ms,
                        enum reserve_reason reason, struct reserve_plan *out)
{
    memset(out, 0, sizeof(*out));
    if (rq->npods == 0 || rq->njobs == 0)
        return 0;
    size_t nn;
    const int *order = sched__view_node_order(v, &nn);
    const struct sv_job *j = &v->jobs[rq->jobs[0]];
    struct planner pl = {.v = v,
                         .sh = &v->shapes[v->pods[rq->pods[0]].shape],
                         .now = now_ms,
                         .need = pods_needed(v, rq)};
    int own = sched__view_resv_find(v, j->id) + 1;
    int depth = rq->has_spec && rq->spec.must >= 0 ? rq->spec.must : -1;
    struct sched_topo *t = depth >= 0 ? sched__topo_get(v) : NULL;
    pl.end = xcalloc(v->njobs + 1, sizeof(int64_t));
    memset(pl.end, 0xff, (v->njobs + 1) * sizeof(int64_t)); /* -1: not computed */
    pl.fr = xcalloc((size_t)pl.sh->nreq + 1, sizeof(int64_t));
    index_pods(&pl);
    for (size_t i = 0; i < nn; i++) {
        int ni = order[i];
        const struct sv_node *n = &v->nodes[ni];
        if ((n->resv && n->resv != own) || sched__fit_static(n, pl.sh) != SCHED_FIT_OK)
            continue;
        int dom = depth >= 0 ? dom_at(t, ni, depth) : 0;
        if (dom >= 0)
            node_steps(&pl, ni, dom);
    }
    if (pl.nsteps)
        qsort(pl.steps, pl.nsteps, sizeof(*pl.steps), cmp_step);
    size_t best_lo = 0, best_hi = 0;
    int64_t best_t = 0;
    int found = 0;
    for (size_t lo = 0; lo < pl.nsteps;) {
        size_t hi = lo;
        long sum = 0;
        while (hi < pl.nsteps && pl.steps[hi].dom == pl.steps[lo].dom && sum < pl.need)
            sum += pl.steps[hi++].add;
        if (sum >= pl.need && (!found || pl.steps[hi - 1].t < best_t)) {
            found = 1;
            best_lo = lo;
            best_hi = hi;
            best_t = pl.steps[hi - 1].t;
        }
        while (hi < pl.nsteps && pl.steps[hi].dom == pl.steps[lo].dom)
            hi++;
        lo = hi;
    }
    if (found) {
        out->job = rq->jobs[0];
        out->prio = sched__job_priority(v, j);
        out->start_ms = best_t < now_ms ? now_ms : best_t;
        out->reason = reason;
        out->domain = depth >= 0 ? t->doms[pl.steps[best_lo].dom].name : NULL;
        fill(&pl, best_lo, best_hi, out);
    }
    free(pl.end);
    free(pl.fr);
    free(pl.start);
    free(pl.pods);
    free(pl.steps);
    return found;
}

void sched__reserve_plan_release(struct reserve_plan *p)
{
    if (!p)
        return;
    free(p->nodes);
    free(p->waits);
    memset(p, 0, sizeof(*p));
}

int sched__reserve_plan_same(const struct sched_view *v, const struct reserve_plan *p,
                             const struct sv_resv *r)
{
    if (p->start_ms != r->start_ms || p->nnodes != r->nnodes || p->nwaits != r->nwaits)
        return 0;
    for (size_t i = 0; i < p->nnodes; i++)
        if (p->nodes[i] != r->nodes[i])
            return 0;
    for (size_t i = 0; i < p->nwaits; i++)
        if (strcmp(v->jobs[p->waits[i]].id, r->waits[i]))
            return 0;
    return 1;
}
