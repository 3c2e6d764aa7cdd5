/*
 * place_index.c - the gather placer's candidates from an index of the domains that hold a
 * gang, kept as nodes fill and free.
 *
 * A stream of like gangs (one shape, size and need) asks for the same candidates again and
 * again, and each placement changes the offer of a few domains only: the block it filled,
 * its ancestors. Scanning every domain for each gang made the cost per pod grow with the
 * cluster. The index keeps, per depth, the domains that hold the gang in try order
 * (place_cands.c: fewest offer slots, then the parent's and the grandparent's, then
 * score, then name), each with the keys it was sorted by. sched__topo_usage logs every
 * domain whose usage changed (t->dirty); a query re-keys those, the children of those
 * whose offer the children compare by (when a depth has more than one parent), and the
 * grandchildren likewise, then reads the first SCHED_GATHER_TRIES from the deepest depth
 * up. Two domains with the same parent have the same parent's offer, so the parent's offer
 * is compared only between domains of different parents (the same for grandparents): a
 * depth under one grandparent (the root) never re-keys on the root's changes.
 *
 * Used when the offers are the same for every job of the key (no nomination in the
 * cluster), with no podCountMultiple and no single node holding the gang; otherwise, and
 * when the key, the view's offer epoch (view_bind.h) or the multiples changed since the
 * index was made, the caller scans (or the index is rebuilt from a scan). tests/test_place.c
 * compares it with every candidate built and sorted afresh over random steps.
 */
#include <stdlib.h>
#include <string.h>

#include "kbest.h"
#include "place_gather.h"
#include "place_index.h"

struct gidx_ent {
    int di;
    long offer, poffer, gpoffer;
    double score;
};

struct sched_gidx {
    int shape, size, need;
    uint64_t epoch, mgen;
    struct gidx_ent **at; /* [depth]: the holding domains of the depth, in try order */
    size_t *n, *cap;
    int *many_p, *many_gp;   /* [depth]: domains of the depth have more than one (grand)parent */
    size_t *ndoms;           /* [depth]: domains of the depth */
    struct gidx_ent *stored; /* [domain]: the keys it is in its array with */
    char *in;                /* [domain]: it is in its array */
    int *redo;               /* [domain]: scratch, the domains a query re-keys */
    uint64_t rebuilds, updates;
};

static int gparent(const struct sched_topo *t, int di)
{
    int p = t->doms[di].parent;
    return p >= 0 ? t->doms[p].parent : -1;
}

/* The try order (sched__gather_cand_cmp) of two domains of one depth, from their keys. */
static int cmp_ent(const struct sched_topo *t, const struct gidx_ent *a, const struct gidx_ent *b)
{
    if (a->offer != b->offer)
        return a->offer < b->offer ? -1 : 1;
    if (t->doms[a->di].parent != t->doms[b->di].parent && a->poffer != b->poffer)
        return a->poffer < b->poffer ? -1 : 1;
    if (gparent(t, a->di) != gparent(t, b->di) && a->gpoffer != b->gpoffer)
        return a->gpoffer < b->gpoffer ? -1 : 1;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return strcmp(t->doms[a->di].name, t->doms[b->di].name);
}

static struct gidx_ent key_of(struct gather *g, int di)
{
    const struct tp_dom *d = &g->t->doms[di];
    long o = sched__gather_offer_of(g, di), po = sched__gather_offer_of(g, g->t->doms[di].parent);
    long gpo = sched__gather_offer_of(g, gparent(g->t, di));
    return (struct gidx_ent){di, o, po, gpo, sched__gather_dom_score(g, d)};
}

/* Position of e in depth's array by the stored keys (all current, or all as of the last
 * query), or where it would go. */
static size_t find(const struct sched_topo *t, const struct sched_gidx *x, int depth,
                   const struct gidx_ent *e)
{
    size_t lo = 0, hi = x->n[depth];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (cmp_ent(t, &x->at[depth][mid], e) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Takes di out of its array (found by its stored keys). */
static void take_out(struct sched_topo *t, struct sched_gidx *x, int di)
{
    if (!x->in[di])
        return;
    int depth = t->doms[di].depth;
    size_t i = find(t, x, depth, &x->stored[di]);
    /* the keys are a total order (names differ), so i is di's place */
    memmove(&x->at[depth][i], &x->at[depth][i + 1], (x->n[depth] - i - 1) * sizeof(**x->at));
    x->n[depth]--;
    x->in[di] = 0;
}

/* Puts di in its array with its keys afresh when it holds the gang. */
static void put_in(struct gather *g, int di)
{
    struct sched_topo *t = g->t;
    struct sched_gidx *x = t->gidx;
    int depth = t->doms[di].depth;
    struct gidx_ent e = key_of(g, di);
    if (x->in[di] || sched__gather_holds(g, depth, e.offer) < g->need)
        return;
    size_t at = find(t, x, depth, &e);
    XGROW(x->at[depth], x->n[depth] + 1, x->cap[depth]);
    memmove(&x->at[depth][at + 1], &x->at[depth][at], (x->n[depth] - at) * sizeof(e));
    x->at[depth][at] = e;
    x->n[depth]++;
    x->stored[di] = e;
    x->in[di] = 1;
}

static void rebuild(struct gather *g)
{
    struct sched_topo *t = g->t;
    struct sched_gidx *x = t->gidx;
    for (size_t d = 0; d < t->nlayers; d++)
        x->n[d] = 0;
    memset(x->in, 0, t->ndoms);
    for (size_t di = 0; di < t->ndoms; di++)
        put_in(g, (int)di);
    x->shape = g->shape;
    x->size = g->size;
    x->need = g->need;
    x->epoch = sched__view_offer_epoch(g->v);
    x->mgen = t->mult_gen;
    x->rebuilds++;
}

static struct sched_gidx *gidx_new(const struct sched_topo *t)
{
    struct sched_gidx *x = xcalloc(1, sizeof(*x));
    size_t nd = t->nlayers + 1;
    x->at = xcalloc(nd, sizeof(*x->at));
    x->n = xcalloc(nd, sizeof(*x->n));
    x->cap = xcalloc(nd, sizeof(*x->cap));
    x->many_p = xcalloc(nd, sizeof(int));
    x->many_gp = xcalloc(nd, sizeof(int));
    x->ndoms = xcalloc(nd, sizeof(size_t));
    x->stored = xcalloc(t->ndoms + 1, sizeof(*x->stored));
    x->in = xcalloc(t->ndoms + 1, 1);
    x->redo = xcalloc(2 * t->ndoms + 1, sizeof(int)); /* a domain at most twice */
    int *p = xcalloc(nd, sizeof(int)), *gp = xcalloc(nd, sizeof(int));
    for (size_t d = 0; d < nd; d++)
        p[d] = gp[d] = -2;
    for (size_t di = 0; di < t->ndoms; di++) {
        int d = t->doms[di].depth, pp = t->doms[di].parent, gg = gparent(t, (int)di);
        x->many_p[d] |= p[d] != -2 && p[d] != pp;
        x->many_gp[d] |= gp[d] != -2 && gp[d] != gg;
        p[d] = pp;
        gp[d] = gg;
        x->ndoms[d]++;
    }
    free(p);
    free(gp);
    x->shape = -1;
    return x;
}

static void gidx_free(struct sched_gidx *x, size_t ndepths)
{
    if (!x)
        return;
    for (size_t d = 0; d < ndepths; d++)
        free(x->at[d]);
    free(x->at);
    free(x->n);
    free(x->cap);
    free(x->many_p);
    free(x->many_gp);
    free(x->ndoms);
    free(x->stored);
    free(x->in);
    free(x->redo);
    free(x);
}

/* The domains whose keys changed since the last query: the logged ones, and the children
 * and grandchildren that compare by their offer. All are taken out first (by the keys they
 * were put in with, which the others share), then put back with their keys afresh: the
 * array is sorted by one set of keys at every step. */
static void update(struct gather *g)
{
    struct sched_topo *t = g->t;
    struct sched_gidx *x = t->gidx;
    size_t nredo = 0; /* a domain at most twice: once logged, once as a (grand)child */
    for (size_t k = 0; k < t->ndirty; k++) {
        int di = t->dirty[k];
        x->redo[nredo++] = di;
        take_out(t, x, di);
        for (size_t c = 0; c < t->doms[di].nkids; c++) {
            int kd = t->doms[di].kids[c];
            if (x->many_p[t->doms[kd].depth] && x->in[kd]) {
                x->redo[nredo++] = kd; /* in only once: taken out now */
                take_out(t, x, kd);
            }
            for (size_t e = 0; e < t->doms[kd].nkids; e++) {
                int gk = t->doms[kd].kids[e];
                if (x->many_gp[t->doms[gk].depth] && x->in[gk]) {
                    x->redo[nredo++] = gk;
                    take_out(t, x, gk);
                }
            }
        }
    }
    for (size_t k = 0; k < nredo; k++)
        put_in(g, x->redo[k]);
    x->updates++;
}

static void dirty_clear(struct sched_topo *t)
{
    for (size_t k = 0; k < t->ndirty; k++)
        t->is_dirty[t->dirty[k]] = 0;
    t->ndirty = 0;
}

int sched__gather_indexed(struct gather *g, long hold)
{
    struct sched_topo *t = g->t;
    g->indexed = 0;
    if (hold > 0 || g->has_mult || g->shape < 0 || t->doms[0].c_nom)
        return 0;
    if (!t->gidx) {
        t->gidx = gidx_new(t);
        t->gidx_free = gidx_free;
    }
    struct sched_gidx *x = t->gidx;
    if (x->shape != g->shape || x->size != g->size || x->need != g->need ||
        x->epoch != sched__view_offer_epoch(g->v) || x->mgen != t->mult_gen)
        rebuild(g);
    else
        update(g);
    dirty_clear(t);
    size_t kept = 0;
    g->ncands = 0;
    for (int d = (int)t->nlayers - 1; d >= g->lo && d >= 0; d--) {
        g->ncands += x->n[d];
        for (size_t i = 0; i < x->n[d] && kept < SCHED_GATHER_TRIES; i++) {
            const struct gidx_ent *e = &x->at[d][i];
            g->cands[kept++] = (struct gather_cand){
                e->di, -1, d, e->offer, e->poffer, e->gpoffer, e->score, t->doms[e->di].name};
        }
    }
    g->indexed = 1;
    return 1;
}

int sched__gather_index_best(const struct gather *g, int depth, size_t max,
                             struct gather_slot *best, size_t *ndoms, size_t *hold)
{
    const struct sched_gidx *x = g->t->gidx;
    if (!g->indexed || max == 0 || depth < 0 || (size_t)depth >= g->t->nlayers || x->n[depth] < max)
        return 0;
    /* The holders are sorted by offer, fewest first: the most are at the end. From the end,
     * until max are kept and the offers fall below the last kept one's (the lower indexes
     * of a tie with it may still come). */
    const struct gidx_ent *a = x->at[depth];
    size_t kept = 0;
    for (size_t i = x->n[depth]; i-- > 0;) {
        if (kept == max && a[i].offer < best[max - 1].offer)
            break;
        struct gather_slot s = {a[i].di, a[i].offer};
        sched__kbest_offer(best, &kept, max, sizeof(s), &s, sched__gather_slot_cmp);
    }
    *ndoms = x->ndoms[depth];
    *hold = x->n[depth];
    return 1;
}

uint64_t sched__gather_index_updates(const struct sched_topo *t)
{
    return t->gidx ? t->gidx->updates : 0;
}
