/*
 * place_cands.c - topology gather, part two: the candidates, in try order
 * (place_cands.h).
 *
 * DESIGN.md section 3, steps 2-3 (Koordinator's algorithm): candidates are the domains at
 * or below the narrowest MustGather layer (the whole cluster without one) that hold the
 * job, and the single nodes that do, deepest layer first, then fewest offer slots
 * (binpack), then the parent's and the grandparent's offer slots, then score, then name.
 * Only the first SCHED_GATHER_TRIES are kept (kbest.h); a stream of like gangs takes them
 * from the index of holding domains (place_index.c) instead of a scan.
 */
#include <string.h>

#include "kbest.h"
#include "place_cands.h"
#include "place_fit.h"
#include "place_gather.h"
#include "place_index.h"

/* The try order's keys before the score: deeper first, then fewest offer slots (binpack),
 * then the parent's and the grandparent's. */
static int cmp_prefix(const struct gather_cand *a, const struct gather_cand *b)
{
    if (a->depth != b->depth)
        return a->depth > b->depth ? -1 : 1;
    if (a->offer != b->offer)
        return a->offer < b->offer ? -1 : 1;
    if (a->poffer != b->poffer)
        return a->poffer < b->poffer ? -1 : 1;
    if (a->gpoffer != b->gpoffer)
        return a->gpoffer < b->gpoffer ? -1 : 1;
    return 0;
}

int sched__gather_cand_cmp(const struct gather_cand *a, const struct gather_cand *b)
{
    int c = cmp_prefix(a, b);
    if (c)
        return c;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return strcmp(a->name, b->name);
}

static int cand_cmp(const void *a, const void *b)
{
    return sched__gather_cand_cmp(a, b);
}

/* Counts candidate x and keeps it when it is among the first SCHED_GATHER_TRIES in try order
 * (g->cands, in order): only they are tried, and building and sorting every block of a
 * large cluster for each gang made the cost per pod grow with the cluster. The score is
 * computed (score(g, ctx)) only when the keys before it do not already put x behind the
 * last kept candidate. The same candidates as a full sort (the order is total: names
 * differ). */
static void cand_offer(struct gather *g, size_t *kept, struct gather_cand x,
                       double (*score)(const struct gather *, const void *), const void *ctx)
{
    g->ncands++;
    if (*kept == SCHED_GATHER_TRIES && cmp_prefix(&x, &g->cands[*kept - 1]) > 0)
        return;
    x.score = score(g, ctx);
    sched__kbest_offer(g->cands, kept, SCHED_GATHER_TRIES, sizeof(x), &x, cand_cmp);
}

static double dom_score_of(const struct gather *g, const void *d)
{
    return sched__gather_dom_score(g, d);
}

static double node_score_of(const struct gather *g, const void *n)
{
    return sched__score(g->v, n, &g->v->shapes[g->v->pods[g->a->pods[0]].shape]);
}

/* With podCountMultiple a domain can hold the job while an ancestor cannot (the ancestor's
 * rounding), and whatever a candidate takes each of its ancestors takes too: a candidate
 * qualifies only when its ancestors hold the job as well (Koordinator descends only
 * through domains that hold it). Always true without multiples: a parent offers at least
 * what a child does. */
static int path_holds(struct gather *g, int di)
{
    for (; g->has_mult && di >= 0; di = g->t->doms[di].parent)
        if (sched__gather_holds(g, g->t->doms[di].depth, sched__gather_offer_of(g, di)) < g->need)
            return 0;
    return 1;
}

/* Single nodes that hold the job: only looked for when some node does. */
static void node_cands(struct gather *g, size_t *kept)
{
    const struct sched_topo *t = g->t;
    for (size_t di = 0; di < t->ndoms; di++) {
        const struct tp_dom *d = &t->doms[di];
        if (d->depth < g->lo && g->lo < (int)t->nlayers)
            continue;
        for (size_t i = 0; i < d->nnodes; i++) {
            long o = sched__gather_node_offer(g, d->nodes[i]);
            if (sched__gather_holds(g, (int)t->nlayers, o) < g->need || !path_holds(g, (int)di))
                continue;
            const struct sv_node *n = &g->v->nodes[d->nodes[i]];
            cand_offer(g, kept,
                       (struct gather_cand){-1, d->nodes[i], (int)t->nlayers, o,
                                            sched__gather_offer_of(g, (int)di),
                                            sched__gather_offer_of(g, d->parent), 0, n->name},
                       node_score_of, n);
        }
    }
}

void sched__gather_candidates(struct gather *g)
{
    const struct sched_topo *t = g->t;
    size_t kept = 0;
    long hold = 0;
    g->ncands = 0;
    if (!g->cands)
        g->cands = xcalloc(SCHED_GATHER_TRIES, sizeof(*g->cands));
    sched__gather_dom_offer(g, 0, &hold);
    if (sched__gather_indexed(g, hold))
        return;
    for (size_t di = 0; di < t->ndoms; di++) {
        const struct tp_dom *d = &t->doms[di];
        long h;
        long o = d->depth >= g->lo ? sched__gather_dom_offer(g, (int)di, &h) : 0;
        if (d->depth < g->lo || sched__gather_holds(g, d->depth, o) < g->need ||
            !path_holds(g, d->parent))
            continue;
        long po = sched__gather_offer_of(g, d->parent);
        long gpo = d->parent >= 0 ? sched__gather_offer_of(g, t->doms[d->parent].parent) : 0;
        cand_offer(g, &kept, (struct gather_cand){(int)di, -1, d->depth, o, po, gpo, 0, d->name},
                   dom_score_of, d);
    }
    if (hold > 0)
        node_cands(g, &kept);
}
