/*
 * place_gather.c - topology gather, part one: the spec, offer slots, candidates.
 *
 * DESIGN.md section 3 (Koordinator's algorithm): a node's offer slots for a
 * job are how many of the job's pending pods fit on it one after another,
 * capped at the job size; a domain's are the sum over its nodes. Candidates
 * are the domains at or below the narrowest MustGather layer (the whole
 * cluster without one) that hold the job, deepest layer first, then fewest
 * offer slots (binpack), then parent's and grandparent's offer slots, then
 * score, then name.
 *
 * podCountMultiple (Koordinator's constrainOfferSlotByPodCountMultiple): a
 * node's offer slots are rounded down to the NodeTopologyLayer multiple, a
 * domain's are the sum of its children's and nodes' rounded down to its layer's
 * multiple, bottom-up, so every number above is what the rule lets the domain
 * take; a domain holds the job when min(offer, job size) rounded down to its
 * multiple reaches the pods needed.
 *
 * Speed: for a job whose pods share one shape, a domain's offer slots are
 * cached under (shape, size, need, job, domain version, view epoch, multiples
 * generation); the job is in the key because its own nominations are not
 * reservations against it (place_fit.c), so only while a node below has
 * nominations: without them the next job of the shape (a stream of like gangs)
 * reuses every domain it did not touch; the generation because the multiples
 * round it (it grows when a gather's multiples differ from the last's). The domain
 * version grows on every allocate/release below it, so a placement only
 * recomputes the domains it touched; a domain whose free totals cannot hold
 * one more pod is answered from its totals without visiting its nodes.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kbest.h"
#include "place.h"
#include "why_msg.h"

/* ---- the spec ---- */

static void layer_list(const struct sched_topo *t, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (size_t l = 1; l <= t->nlayers && len < n; l++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", l > 1 ? ", " : "",
                                sched__topo_layer_name(t, (int)l));
}

int sched__gather_spec(const struct sched_topo *t, const struct model_podgroup *pg,
                       struct gather_spec *out, char *msg, size_t n)
{
    memset(out, 0, sizeof(*out));
    out->must = out->prefer = out->job = -1;
    /* Entries before a malformed one are checked first, as they come first. */
    for (size_t i = 0; i < pg->ngather; i++) {
        const struct model_gather *e = &pg->gather[i];
        if (!t) {
            if (!e->must)
                continue;
            snprintf(msg, n, WHY_MSG_TOPOLOGY_MISSING, e->layer);
            return WHY_TOPOLOGY_MISSING;
        }
        int d = sched__topo_layer(t, e->layer);
        if (d < 0) {
            char known[256];
            layer_list(t, known, sizeof(known));
            snprintf(msg, n, WHY_MSG_SPEC_UNKNOWN_LAYER, e->layer, known);
            return WHY_SPEC_INVALID;
        }
        if (e->must && d > out->must) {
            out->must = d;
            snprintf(out->layer, sizeof(out->layer), "%s", sched__topo_layer_name(t, d));
        } else if (!e->must && d > out->prefer) {
            out->prefer = d;
        }
    }
    if (pg->spec_error) {
        snprintf(msg, n, "%s", pg->spec_error);
        return WHY_SPEC_INVALID;
    }
    if (out->must < 0 && out->prefer >= 0)
        snprintf(out->layer, sizeof(out->layer), "%s", sched__topo_layer_name(t, out->prefer));
    return -1;
}

int32_t *sched__gather_multiples(const struct sched_topo *t, const struct model_podgroup *pg)
{
    int32_t *m = xcalloc(t->nlayers + 1, sizeof(*m));
    for (size_t d = 0; d <= t->nlayers; d++)
        m[d] = 1;
    for (size_t i = 0; pg && i < pg->ngather; i++) {
        int d = sched__topo_layer(t, pg->gather[i].layer);
        if (d >= 0) /* a later entry for the same layer wins, as in Koordinator's map */
            m[d] = pg->gather[i].pod_count_multiple;
    }
    return m;
}

/* ---- offer slots ---- */

static long round_down(long x, int32_t m)
{
    return m > 1 ? x / m * m : x;
}

long sched__gather_holds(const struct gather *g, int depth, long offer)
{
    return round_down(offer < g->size ? offer : g->size, g->mult[depth]);
}

/* Free capacity as place_fit.c sees it for the attempt's pods: the attempt's own nominations (a
 * preemptor's nominated block) are not reservations against it. */
static int64_t free_of(const struct gather *g, const struct sv_node *n, int r, int32_t prio)
{
    return sched__free_for(g->v, n, r, prio, g->a->jobs, g->a->njobs);
}

static long node_offer_raw(struct gather *g, int ni)
{
    struct sched_view *v = g->v;
    const struct sv_node *n = &v->nodes[ni];
    long cnt = 0;
    if (g->shape >= 0) {
        const struct sv_shape *sh = &v->shapes[g->shape];
        if (sched__fit_static(n, sh) != SCHED_FIT_OK)
            return 0;
        return sched__fit_count(v, n, sh->req, sh->nreq, sh->priority, g->a->jobs, g->a->njobs,
                                g->size);
    }
    /* Different shapes: place them one after another on a copy of the free vector. */
    int64_t *fr = g->scratch;
    for (size_t r = 0; r < v->nres; r++)
        fr[r] = INT64_MIN;
    for (size_t i = 0; i < g->a->npods && cnt < g->size; i++) {
        const struct sv_pod *p = &v->pods[g->a->pods[i]];
        const struct sv_shape *sh = &v->shapes[p->shape];
        if (sched__fit_static(n, sh) != SCHED_FIT_OK)
            continue;
        int ok = 1;
        for (int k = 0; k < p->nreq && ok; k++) {
            int r = p->req[k].res;
            if (fr[r] == INT64_MIN)
                fr[r] = free_of(g, n, r, p->prio);
            ok = p->req[k].v <= fr[r];
        }
        for (int k = 0; k < p->nreq && ok; k++)
            fr[p->req[k].res] -= p->req[k].v;
        cnt += ok;
    }
    return cnt;
}

long sched__gather_node_offer(struct gather *g, int ni)
{
    return round_down(node_offer_raw(g, ni), g->mult[g->t->nlayers]);
}

long sched__gather_dom_offer_raw(struct gather *g, int di)
{
    const struct tp_dom *d = &g->t->doms[di];
    long sum = 0;
    for (size_t i = 0; i < d->nkids; i++)
        sum += sched__gather_dom_offer_raw(g, g->t->doms[di].kids[i]);
    d = &g->t->doms[di];
    for (size_t i = 0; i < d->nnodes; i++)
        sum += node_offer_raw(g, d->nodes[i]);
    return sum;
}

/* Pods of the common shape the domain's free totals could hold at most. */
static long upper_bound(const struct gather *g, const struct tp_dom *d)
{
    const struct sv_shape *sh = &g->v->shapes[g->shape];
    long ub = LONG_MAX;
    for (int i = 0; i < sh->nreq; i++) {
        int r = sh->req[i].res;
        int64_t f = (size_t)r < g->t->nres ? d->free[r] : 0;
        long k = f <= 0 ? 0 : (long)(f / sh->req[i].v);
        ub = k < ub ? k : ub;
    }
    return ub;
}

long sched__gather_dom_offer(struct gather *g, int di, long *hold)
{
    struct tp_dom *d = &g->t->doms[di];
    if (g->shape >= 0 && d->c_shape == g->shape && d->c_size == g->size && d->c_need == g->need &&
        (d->c_job == g->a->jobs[0] || !d->c_nom) && d->c_ver == d->ver &&
        d->c_epoch == g->v->epoch && d->c_mgen == g->t->mult_gen) {
        *hold = d->c_hold;
        return d->c_offer;
    }
    long sum = 0, h = 0;
    int nom = 0; /* the offer depends on the job (a nomination below); a bound of 0 never */
    if (g->shape < 0 || upper_bound(g, d) > 0) {
        for (size_t i = 0; i < d->nkids; i++) {
            long kh = 0;
            sum += sched__gather_dom_offer(g, d->kids[i], &kh);
            h += kh;
            nom |= g->t->doms[d->kids[i]].c_nom;
        }
        for (size_t i = 0; i < d->nnodes; i++) {
            long o = sched__gather_node_offer(g, d->nodes[i]);
            sum += o;
            h += sched__gather_holds(g, (int)g->t->nlayers, o) >= g->need;
            nom |= g->v->nodes[d->nodes[i]].nnom != 0;
        }
    }
    d = &g->t->doms[di];
    sum = round_down(sum, g->mult[d->depth]); /* children rounded first: bottom-up */
    if (g->shape >= 0) {
        d->c_shape = g->shape;
        d->c_size = g->size;
        d->c_need = g->need;
        d->c_job = g->a->jobs[0];
        d->c_nom = nom;
        d->c_ver = d->ver;
        d->c_epoch = g->v->epoch;
        d->c_mgen = g->t->mult_gen;
        d->c_offer = sum;
        d->c_hold = h;
    }
    *hold = h;
    return sum;
}

const char *sched__gather_limit(struct gather *g, int di)
{
    const struct tp_dom *d = &g->t->doms[di];
    int pi = g->a->pods[0];
    const struct sv_shape *sh = &g->v->shapes[g->v->pods[pi].shape];
    const char *best = NULL;
    long least = LONG_MAX;
    for (int i = 0; i < sh->nreq; i++) {
        int r = sh->req[i].res;
        int64_t f = (size_t)r < g->t->nres ? d->free[r] : 0;
        long k = f <= 0 ? 0 : (long)(f / sh->req[i].v);
        if (k < least) {
            least = k;
            best = r == SV_RES_PODS ? "pods" : g->v->res[r];
        }
    }
    return best;
}

/* ---- candidates ---- */

double sched__gather_dom_score(const struct gather *g, const struct tp_dom *d)
{
    const struct sv_shape *sh = &g->v->shapes[g->v->pods[g->a->pods[0]].shape];
    double sum = 0;
    int cnt = 0;
    for (int i = 0; i < sh->nreq; i++) {
        int r = sh->req[i].res;
        if ((size_t)r >= g->t->nres || d->alloc[r] <= 0)
            continue;
        sum += (double)(d->alloc[r] - d->free[r] + sh->req[i].v) / (double)d->alloc[r];
        cnt++;
    }
    return cnt ? sum / cnt : 0;
}

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

static long offer_of(struct gather *g, int di)
{
    long h;
    return di < 0 ? 0 : sched__gather_dom_offer(g, di, &h);
}

/* With podCountMultiple a domain can hold the job while an ancestor cannot (the ancestor's
 * rounding), and whatever a candidate takes each of its ancestors takes too: a candidate
 * qualifies only when its ancestors hold the job as well (Koordinator descends only
 * through domains that hold it). Always true without multiples: a parent offers at least
 * what a child does. */
static int path_holds(struct gather *g, int di)
{
    for (; g->has_mult && di >= 0; di = g->t->doms[di].parent)
        if (sched__gather_holds(g, g->t->doms[di].depth, offer_of(g, di)) < g->need)
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
                                            offer_of(g, (int)di), offer_of(g, d->parent), 0,
                                            n->name},
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
        long po = offer_of(g, d->parent);
        long gpo = d->parent >= 0 ? offer_of(g, t->doms[d->parent].parent) : 0;
        cand_offer(g, &kept, (struct gather_cand){(int)di, -1, d->depth, o, po, gpo, 0, d->name},
                   dom_score_of, d);
    }
    if (hold > 0)
        node_cands(g, &kept);
}
