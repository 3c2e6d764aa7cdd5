/*
 * place_nodeset.c - topology gather, part three: fill a candidate domain, try the next
 * candidates when the full simulation fails (node sets), and the account of what it did
 * (struct place_topology, which record/ writes as the why's topology part; place_nodeset.h).
 *
 * Fill (DESIGN.md section 3, step 4): children first, the child with most offer
 * slots first (name on ties), each taking as many pods as it can; pods go in
 * placement order (network-topology-index, then name), so index order follows
 * topology order; pods that pod rules (place_rules.c) turned away get another sweep
 * while sweeps place pods. Each try is its own statement: a try that does not place the
 * job is undone before the next one (step 5). At most MAX_TRIES candidates are
 * tried per attempt; the why lists every try.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fmt.h"
#include "kbest.h"
#include "place_cands.h"
#include "place_fit.h"
#include "place_gather.h"
#include "place_index.h"
#include "place_nodeset.h"
#include "place_rules.h"
#include "why_msg.h"

#define MAX_TRIES SCHED_GATHER_TRIES
#define BEST_MAX 3

/* Places pending pods on node ni in order, at most budget; returns how many. */
static long fill_node(struct gather *g, int ni, long budget)
{
    struct sched_view *v = g->v;
    const struct place_req *a = g->a;
    const struct sv_node *n = &v->nodes[ni];
    int32_t m = g->mult[g->t->nlayers];
    long placed = 0;
    if (m > 1) {
        long o = sched__gather_node_offer(g, ni);
        budget = (budget < o ? budget : o) / m * m;
    }
    for (size_t i = g->next; i < a->npods && placed < budget; i++) {
        if (g->done[i])
            continue;
        int pi = a->pods[i];
        const struct sv_shape *sh = &v->shapes[v->pods[pi].shape];
        if (sched__fit_static(n, sh) == SCHED_FIT_OK && sched__fit_res(v, n, sh, pi) < 0) {
            struct sched_rules r;
            int by, ok = !sched__rules_prepare(v, pi, &r) ||
                         sched__rules_filter(&r, ni, &by) == SCHED_FIT_OK;
            sched__rules_release(&r);
            if (!ok) {
                g->ruled = 1; /* its pod rules keep it off this node; another may take it */
                continue;
            }
            sched__stmt_alloc(g->c, pi, ni);
            g->done[i] = 1;
            g->nplaced++;
            placed++;
            g->res->placed[sched__place_member(a, v->pods[pi].job)]++;
        } else if (g->shape >= 0) {
            break; /* one shape: the next pod does not fit either */
        }
    }
    while (g->next < a->npods && g->done[g->next])
        g->next++;
    g->mult_broken |= m > 1 && placed % m;
    return placed;
}

/* Fills domain di children-first with at most budget pods; returns how many it placed.
 * With a podCountMultiple at its layer the budget is min(budget, offer slots) rounded down
 * to it (Koordinator's distributeOfferSlot); a domain that still ends off its multiple
 * (offer slots overestimate) breaks the try. */
static long fill_dom(struct gather *g, int di, long budget)
{
    const struct tp_dom *d = &g->t->doms[di];
    int32_t m = g->mult[d->depth];
    long placed = 0, h;
    if (m > 1) {
        long o = sched__gather_dom_offer(g, di, &h);
        budget = (budget < o ? budget : o) / m * m;
        d = &g->t->doms[di];
    }
    size_t n = d->nkids > d->nnodes ? d->nkids : d->nnodes;
    struct gather_slot *s = xcalloc(n + 1, sizeof(*s));
    for (size_t i = 0; i < d->nkids; i++)
        s[i] = (struct gather_slot){(int)i, sched__gather_dom_offer(g, d->kids[i], &h)};
    qsort(s, d->nkids, sizeof(*s), sched__gather_slot_cmp);
    for (size_t i = 0; i < d->nkids && g->nplaced < g->a->npods && placed < budget; i++)
        if (s[i].offer > 0)
            placed += fill_dom(g, g->t->doms[di].kids[s[i].ix], budget - placed);
    d = &g->t->doms[di];
    for (size_t i = 0; i < d->nnodes; i++)
        s[i] = (struct gather_slot){(int)i, sched__gather_node_offer(g, d->nodes[i])};
    qsort(s, d->nnodes, sizeof(*s), sched__gather_slot_cmp);
    for (size_t i = 0; i < d->nnodes && g->nplaced < g->a->npods && placed < budget; i++)
        if (s[i].offer > 0)
            placed += fill_node(g, d->nodes[s[i].ix], budget - placed);
    free(s);
    g->mult_broken |= m > 1 && placed % m;
    return placed;
}

static void reset_try(struct gather *g)
{
    sched__stmt_undo(g->c);
    memset(g->done, 0, g->a->npods + 1);
    for (size_t m = 0; m < g->a->njobs; m++)
        g->res->placed[m] = 0;
    g->next = g->nplaced = 0;
    g->mult_broken = 0;
}

static long gcd(long a, long b)
{
    while (b) {
        long r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* Fills candidate x. Every pod it places lands in each of x's ancestors too, so the count
 * must be a multiple of each ancestor's podCountMultiple: the budget is the job size
 * rounded down to their least common multiple, and a fill that ends off it breaks the try. */
static void fill_cand(struct gather *g, const struct gather_cand *x)
{
    long step = 1;
    int up = x->dom >= 0 ? g->t->doms[x->dom].parent : g->t->node_dom[x->node];
    for (; g->has_mult && up >= 0 && step <= g->size; up = g->t->doms[up].parent) {
        long m = g->mult[g->t->doms[up].depth];
        step = step / gcd(step, m) * m;
    }
    long budget = step > g->size ? 0 : g->size / step * step, placed = 0, got;
    /* Pod rules depend on the pods placed so far (a spread constraint lets a block take
     * its second pod once the others have one): sweep again while they turned pods away
     * and the last sweep placed some. */
    do {
        g->ruled = 0;
        got = x->dom >= 0 ? fill_dom(g, x->dom, budget - placed)
                          : fill_node(g, x->node, budget - placed);
        placed += got;
    } while (g->ruled && got > 0 && placed < budget);
    g->mult_broken |= step > 1 && placed % step;
}

/* "blocks" from "BlockLayer". */
static void plural(const char *layer, char *out, size_t n)
{
    size_t len = strlen(layer), k = 0;
    if (len > 5 && !strcasecmp(layer + len - 5, "Layer"))
        len -= 5;
    for (size_t i = 0; i < len && k + 2 < n; i++)
        out[k++] = (char)tolower((unsigned char)layer[i]);
    out[k++] = 's';
    out[k] = 0;
}

/* The why's layer: how many domains and how many hold the job, and the BEST_MAX with the
 * most offer slots, most first, taken before the tries so the numbers describe the cluster
 * the job saw. */
struct layer_stats {
    int depth;
    struct gather_slot *s;
    size_t n, hold;
};

static void layer_stats(struct gather *g, struct layer_stats *st)
{
    const struct sched_topo *t = g->t;
    size_t kept = 0;
    st->depth = g->spec->must >= 0 ? g->spec->must : g->spec->prefer >= 0 ? g->spec->prefer : 0;
    st->s = xcalloc(BEST_MAX, sizeof(*st->s));
    st->n = st->hold = 0;
    if (sched__gather_index_best(g, st->depth, BEST_MAX, st->s, &st->n, &st->hold))
        return;
    for (size_t di = 0; di < t->ndoms; di++) {
        if (t->doms[di].depth != st->depth)
            continue;
        long h;
        struct gather_slot x = {(int)di, sched__gather_dom_offer(g, (int)di, &h)};
        st->n++;
        st->hold += sched__gather_holds(g, st->depth, x.offer) >= g->need;
        /* only the BEST_MAX first are shown: kept in order, not every domain sorted */
        sched__kbest_offer(st->s, &kept, BEST_MAX, sizeof(x), &x, sched__gather_slot_cmp);
    }
}

/* 1 when podCountMultiple is what limits how many of the job's pods domain di holds: its
 * nodes would hold more without the rule. */
static int limited_by_mult(struct gather *g, int di, long holds)
{
    if (!g->has_mult)
        return 0;
    long raw = sched__gather_dom_offer_raw(g, di);
    return (raw < g->size ? raw : g->size) > holds;
}

/* The why's name for what limits domain di: "podCountMultiple" (limited_by_mult), else the
 * scarcest resource (NULL: none). */
static const char *limit_of(struct gather *g, int di, int by_mult)
{
    return by_mult ? "podCountMultiple" : sched__gather_limit(g, di);
}

/* "BlockLayer=4, NodeTopologyLayer=2": the job's podCountMultiple entries, root first. */
static void mult_list(const struct gather *g, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = 0;
    for (size_t d = 0; d <= g->t->nlayers && len < n; d++)
        if (g->mult[d] > 1)
            len += (size_t)fmt_snprintf(buf + len, n - len, "%s%s=%d", len ? ", " : "",
                                        sched__topo_layer_name(g->t, (int)d), (int)g->mult[d]);
}

/* What gather did, for the why (also the summary, which the blockers say). tried[0..ntried)
 * are the candidates tried (taken). New. */
static struct place_topology *account(struct gather *g, const struct layer_stats *st,
                                      struct place_topo_try *tried, size_t ntried,
                                      const struct gather_cand *chosen)
{
    const struct sched_topo *t = g->t;
    const char *layer = sched__topo_layer_name(t, st->depth);
    struct place_topology *o = xcalloc(1, sizeof(*o));
    *o = (struct place_topology){.tree = t,
                                 .must = g->spec->must >= 0,
                                 .depth = st->depth,
                                 .job_pods = g->size,
                                 .needed = g->need,
                                 .candidates = (int)g->ncands,
                                 .holding = st->hold,
                                 .tried = tried,
                                 .ntried = ntried};
    for (size_t i = 0; i < st->n && i < PLACE_TOPO_BEST; i++) {
        long holds = sched__gather_holds(g, st->depth, st->s[i].offer);
        o->best[o->nbest++] = (struct place_topo_best){
            t->doms[st->s[i].ix].name, holds,
            holds < g->size ? limit_of(g, st->s[i].ix, limited_by_mult(g, st->s[i].ix, holds))
                            : NULL};
    }
    if (g->has_mult) {
        o->nmult = t->nlayers + 1;
        o->mult = xcalloc(o->nmult, sizeof(int32_t));
        memcpy(o->mult, g->mult, o->nmult * sizeof(int32_t));
    }
    char *sum = o->summary, what[80];
    size_t n = sizeof(o->summary);
    plural(layer, what, sizeof(what));
    int len = fmt_snprintf(sum, n, WHY_MSG_GATHER_SUMMARY,
                           g->spec->must >= 0 ? "MustGather" : "PreferGather", layer, st->hold,
                           st->n, what, g->need, WHY_PLURAL(g->need));
    int mult_named = 0; /* the summary already lists the multiples */
    if (chosen) {
        fmt_snprintf(sum + len, n - (size_t)len, WHY_MSG_GATHER_PLACED,
                     sched__topo_layer_name(t, chosen->depth), chosen->name, chosen->offer);
    } else if (st->n) {
        long holds = sched__gather_holds(g, st->depth, st->s[0].offer);
        mult_named = limited_by_mult(g, st->s[0].ix, holds);
        const char *lim = limit_of(g, st->s[0].ix, mult_named);
        char why[256];
        if (mult_named) {
            int k = fmt_snprintf(why, sizeof(why), WHY_MSG_GATHER_LIMIT_MULT);
            mult_list(g, why + k, sizeof(why) - (size_t)k);
            lim = why;
        }
        len +=
            fmt_snprintf(sum + len, n - (size_t)len, WHY_MSG_GATHER_BEST, t->doms[st->s[0].ix].name,
                         holds, lim ? " (" : "", lim ? lim : "", lim ? ")" : "");
    }
    if (!chosen && g->has_mult && len < (int)n && !mult_named) {
        char list[256];
        mult_list(g, list, sizeof(list));
        fmt_snprintf(sum + len, n - (size_t)len, WHY_MSG_GATHER_MULT, list);
    }
    return o;
}

/* Nothing holds the job: fill the best domain of the layer anyway (the cluster for
 * PreferGather), so the gang numbers show what is placeable; the attempt discards it. */
static void fill_best_effort(struct gather *g)
{
    int best = 0;
    long best_offer = -1;
    for (size_t di = 0; g->spec->must >= 0 && di < g->t->ndoms; di++) {
        long h, o;
        if (g->t->doms[di].depth != g->spec->must)
            continue;
        if ((o = sched__gather_dom_offer(g, (int)di, &h)) > best_offer) {
            best_offer = o;
            best = (int)di;
        }
    }
    if (g->spec->must < (int)g->t->nlayers)
        fill_dom(g, best, g->size);
}

static int run(struct gather *g)
{
    struct place_topo_try *tried = xcalloc(MAX_TRIES + 1, sizeof(*tried));
    size_t ntried = 0;
    const struct gather_cand *chosen = NULL;
    struct layer_stats st;
    sched__gather_candidates(g);
    layer_stats(g, &st);
    for (size_t i = 0; i < g->ncands && i < MAX_TRIES && !chosen; i++) {
        fill_cand(g, &g->cands[i]);
        int ok = sched__place_members_met(g->v, g->a, g->res) && !g->mult_broken;
        const struct gather_cand *x = &g->cands[i];
        tried[ntried++] = (struct place_topo_try){x->depth, x->name, x->offer, (int)g->nplaced, ok};
        if (ok)
            chosen = &g->cands[i];
        else
            reset_try(g);
    }
    const struct place_req *a = g->a;
    struct place_result *res = g->res;
    res->topology = account(g, &st, tried, ntried, chosen);
    const char *summary = res->topology->summary;
    free(st.s);
    if (!chosen && g->ncands) {
        sched__blocker_add(
            &res->blockers, WHY_TOPOLOGY_NODESETS_FAILED,
            json_pack("{s:i,s:i}", "candidates", (int)g->ncands, "tried", (int)ntried),
            WHY_MSG_NODESETS_FAILED, (int)ntried, (int)g->ncands, g->need, summary);
        fill_cand(g, &g->cands[0]);
    } else if (!chosen) {
        if (g->spec->must >= 0)
            sched__blocker_add(&res->blockers, WHY_TOPOLOGY_NO_DOMAIN,
                               json_pack("{s:s}", "layer", g->spec->layer), "%s", summary);
        fill_best_effort(g);
    }
    for (size_t i = 0; !chosen && i < a->npods; i++) {
        int m = sched__place_member(a, g->v->pods[a->pods[i]].job);
        if (!g->done[i] && res->fail_pod[m] < 0)
            res->fail_pod[m] = a->pods[i];
    }
    return 0;
}

int sched__place_gather(struct sched_cyc *c, const struct place_req *a, struct place_result *out,
                        struct err *err)
{
    (void)err;
    struct gather g = {.c = c,
                       .v = c->v,
                       .t = sched__topo_get(c->v),
                       .a = a,
                       .res = out,
                       .spec = &a->spec,
                       .size = (int)a->npods};
    if (!a->npods)
        return 0;
    g.mult = sched__gather_multiples(g.t, a->spec.job >= 0 ? &c->v->jobs[a->spec.job].pg : NULL);
    size_t nm = (g.t->nlayers + 1) * sizeof(*g.mult);
    for (size_t d = 0; d <= g.t->nlayers; d++)
        g.has_mult |= g.mult[d] > 1;
    if (!g.t->mult_last || memcmp(g.t->mult_last, g.mult, nm)) {
        /* other multiples than the last gather's: the cached offer slots do not apply */
        free(g.t->mult_last);
        g.t->mult_last = memcpy(xmalloc(nm), g.mult, nm);
        g.t->mult_gen++;
    }
    for (size_t m = 0; m < a->njobs; m++) {
        int short_by = sched__job_min(&c->v->jobs[a->jobs[m]]) - a->m[m].base;
        if (!a->m[m].satisfied)
            g.need += short_by > 0 ? short_by : 0;
    }
    if (g.need <= 0 || g.need > g.size)
        g.need = g.size;
    g.lo = a->spec.must >= 0 ? a->spec.must : 0;
    g.shape = c->v->pods[a->pods[0]].shape;
    for (size_t i = 1; i < a->npods && g.shape >= 0; i++)
        if (c->v->pods[a->pods[i]].shape != g.shape)
            g.shape = -1;
    g.done = xcalloc(a->npods + 1, 1);
    g.scratch = xcalloc(c->v->nres + 1, sizeof(int64_t));
    int rc = run(&g);
    free(g.done);
    free(g.scratch);
    free(g.mult);
    free(g.cands);
    return rc;
}
