/*
 * place_gather.c - topology gather, part one: the spec and offer slots (place_gather.h).
 *
 * DESIGN.md section 3 (Koordinator's algorithm): a node's offer slots for a
 * job are how many of the job's pending pods fit on it one after another,
 * capped at the job size; a domain's are the sum over its nodes. The candidates
 * they rank are place_cands.c's.
 *
 * podCountMultiple (Koordinator's constrainOfferSlotByPodCountMultiple): a
 * node's offer slots are rounded down to the NodeTopologyLayer multiple, a
 * domain's are the sum of its children's and nodes' rounded down to its layer's
 * multiple, bottom-up, so every number above is what the rule lets the domain
 * take; a domain holds the job when min(offer, job size) rounded down to its
 * multiple reaches the pods needed.
 *
 * Speed: for a job whose pods share one shape, a domain's offer slots are
 * cached under (shape, size, need, job, domain version, offer epoch, multiples
 * generation); the job is in the key because its own nominations are not
 * reservations against it (place_fit.c), so only while a node below has
 * nominations: without them the next job of the shape (a stream of like gangs)
 * reuses every domain it did not touch; the generation because the multiples
 * round it (it grows when a gather's multiples differ from the last's). The domain
 * version grows on every allocate/release below it, so a placement only
 * recomputes the domains it touched; a domain whose free totals cannot hold
 * one more pod is answered from its totals without visiting its nodes. The offer
 * epoch (sched__view_offer_epoch) is the view's epoch without its bumps for
 * releases of usage, which the versions hold: a gang rolled back, or a preemption's
 * dry run taking victims out of their nodes and putting them back, re-plans with
 * every other domain's offer kept (one re-plan per node a preemption weighs).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"
#include "place_fit.h"
#include "place_gather.h"
#include "why_msg.h"

/* ---- the spec ---- */

static void layer_list(const struct sched_topo *t, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (size_t l = 1; l <= t->nlayers && len < n; l++)
        len += (size_t)fmt_snprintf(buf + len, n - len, "%s%s", l > 1 ? ", " : "",
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
            fmt_snprintf(msg, n, WHY_MSG_TOPOLOGY_MISSING, e->layer);
            return WHY_TOPOLOGY_MISSING;
        }
        int d = sched__topo_layer(t, e->layer);
        if (d < 0) {
            char known[256];
            layer_list(t, known, sizeof(known));
            fmt_snprintf(msg, n, WHY_MSG_SPEC_UNKNOWN_LAYER, e->layer, known);
            return WHY_SPEC_INVALID;
        }
        if (e->must && d > out->must) {
            out->must = d;
            fmt_snprintf(out->layer, sizeof(out->layer), "%s", sched__topo_layer_name(t, d));
        } else if (!e->must && d > out->prefer) {
            out->prefer = d;
        }
    }
    if (pg->spec_error) {
        fmt_snprintf(msg, n, "%s", pg->spec_error);
        return WHY_SPEC_INVALID;
    }
    if (out->must < 0 && out->prefer >= 0)
        fmt_snprintf(out->layer, sizeof(out->layer), "%s", sched__topo_layer_name(t, out->prefer));
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
        d->c_epoch == sched__view_offer_epoch(g->v) && d->c_mgen == g->t->mult_gen) {
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
        d->c_epoch = sched__view_offer_epoch(g->v);
        d->c_mgen = g->t->mult_gen;
        d->c_offer = sum;
        d->c_hold = h;
    }
    *hold = h;
    return sum;
}

long sched__gather_offer_of(struct gather *g, int di)
{
    long h;
    return di < 0 ? 0 : sched__gather_dom_offer(g, di, &h);
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

/* ---- slots ---- */

int sched__gather_slot_cmp(const void *x, const void *y)
{
    const struct gather_slot *a = x, *b = y;
    if (a->offer != b->offer)
        return a->offer > b->offer ? -1 : 1;
    return a->ix < b->ix ? -1 : a->ix > b->ix;
}
