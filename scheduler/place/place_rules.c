/*
 * place_rules.c - the rules that tie a pod to other pods, as kube-scheduler's
 * InterPodAffinity and PodTopologySpread plugins decide them: required and preferred
 * pod (anti-)affinity, the symmetry of placed pods' terms, and topology spread.
 *
 * Prepare (their PreFilter / PreScore) counts, once per pick, the placed pods each rule
 * selects per topology pair (topologyKey, value): pods bound and pods placed by the
 * running cycle's statements alike, so members of one gang see each other. Filter and
 * the raw scores then look a node's labels up in those counts. Counting goes through
 * the view's label and term indexes (view_labels.c), so a pod whose rules select few
 * pods costs little however large the cluster.
 *
 * Upstream facts kept: an existing pod counts for required affinity only when it
 * matches every term; the first pod of a group whose affinity selects itself may go
 * anywhere the topology keys exist; a placed pod's required anti-affinity keeps matching
 * pods out of its domain, and its required affinity scores with weight 1
 * (hardPodAffinityWeight); spread counts pods that are not terminating, in the pod's
 * namespace, on nodes that pass nodeAffinityPolicy / nodeTaintsPolicy and carry every
 * constraint's key; minDomains above the domain count makes the global minimum 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place_fit.h"
#include "place_rules.h"

static void pair(char *buf, size_t n, const char *key, const char *value)
{
    snprintf(buf, n, "%s\x1f%s", key, value);
}

static void map_add(struct sched_strmap *m, const char *key, const char *value, int d)
{
    char buf[600];
    pair(buf, sizeof(buf), key, value);
    int cur = sched__strmap_get(m, buf);
    sched__strmap_put(m, buf, (cur < 0 ? 0 : cur) + d);
}

/* Preference sums may be negative: the score map holds them plus SCORE_BIAS. */
#define SCORE_BIAS (1 << 29)

static void score_add(struct sched_rules *r, const char *key, const char *value, int d)
{
    char buf[600];
    pair(buf, sizeof(buf), key, value);
    int cur = sched__strmap_get(&r->score, buf);
    sched__strmap_put(&r->score, buf, (cur < 0 ? SCORE_BIAS : cur) + d);
    r->has_score = 1;
}

/* Keeps the pod out of the domain key=value; pod qi (the first found) is why. */
static void forbid(struct sched_rules *r, const char *key, const char *value, int qi)
{
    char buf[600];
    pair(buf, sizeof(buf), key, value);
    if (sched__strmap_get(&r->forbid, buf) < 0)
        sched__strmap_put(&r->forbid, buf, qi);
}

static const char *node_label(const struct sv_node *n, const char *key)
{
    return model_label(n->m.labels, n->m.nlabels, key);
}

/* 1 when the term, written by a pod of namespace owner_ns, looks at namespace ns. */
static int term_ns(const struct model_pod_term *t, const char *owner_ns, const char *ns)
{
    if (t->all_ns)
        return 1;
    if (!t->nnamespaces)
        return !strcmp(owner_ns, ns);
    for (size_t i = 0; i < t->nnamespaces; i++)
        if (!strcmp(t->namespaces[i], ns))
            return 1;
    return 0;
}

static int term_selects(const struct model_pod_term *t, const char *owner_ns,
                        const struct sv_pod *q)
{
    return term_ns(t, owner_ns, q->m.ns) &&
           model_selector_match(&t->sel, q->m.labels, q->m.nlabels);
}

/* ---- counting the pods the pod's own terms select ---- */

struct term_walk {
    struct sched_rules *r;
    const struct sv_pod *self;
    const struct model_pod_term *terms;
    size_t nterms;
    int kind; /* SV_TERM_* */
    size_t term;
};

static int own_term_pod(struct sched_view *v, int qi, void *ctx)
{
    struct term_walk *w = ctx;
    struct sched_rules *r = w->r;
    const struct sv_pod *q = &v->pods[qi];
    const struct sv_node *n = &v->nodes[q->node];
    if (q == w->self)
        return 0;
    if (w->kind == SV_TERM_AFF_REQ) {
        for (size_t i = 0; i < w->nterms; i++)
            if (!term_selects(&w->terms[i], w->self->m.ns, q))
                return 0;
        for (size_t i = 0; i < w->nterms; i++) {
            const char *val = node_label(n, w->terms[i].topology_key);
            if (val) {
                map_add(&r->aff[i], w->terms[i].topology_key, val, 1);
                r->aff_n++;
            }
        }
        return 0;
    }
    const struct model_pod_term *t = &w->terms[w->term];
    const char *val = node_label(n, t->topology_key);
    if (!val || !term_ns(t, w->self->m.ns, q->m.ns))
        return 0;
    if (w->kind == SV_TERM_ANTI_REQ) {
        forbid(r, t->topology_key, val, qi);
    } else {
        score_add(r, t->topology_key, val, w->kind == SV_TERM_AFF_PREF ? t->weight : -t->weight);
    }
    return 0;
}

static void own_terms(struct sched_view *v, struct sched_rules *r, const struct sv_pod *p)
{
    const struct model_affinity *a = p->m.aff;
    struct term_walk w = {r, p, a->aff_req, a->naff_req, SV_TERM_AFF_REQ, 0};
    if (a->naff_req) {
        r->aff = xcalloc(a->naff_req, sizeof(*r->aff));
        r->naff = a->naff_req;
        for (size_t i = 0; i < r->naff; i++)
            sched__strmap_init(&r->aff[i]);
        sched__view_pods_matching(v, &a->aff_req[0].sel, own_term_pod, &w);
        r->self_all = 1;
        for (size_t i = 0; i < a->naff_req; i++)
            r->self_all &= term_selects(&a->aff_req[i], p->m.ns, p);
    }
    const struct {
        const struct model_pod_term *t;
        size_t n;
        int kind;
    } lists[] = {{a->anti_req, a->nanti_req, SV_TERM_ANTI_REQ},
                 {a->aff_pref, a->naff_pref, SV_TERM_AFF_PREF},
                 {a->anti_pref, a->nanti_pref, SV_TERM_ANTI_PREF}};
    for (size_t l = 0; l < 3; l++)
        for (size_t i = 0; i < lists[l].n; i++) {
            w = (struct term_walk){r, p, lists[l].t, lists[l].n, lists[l].kind, i};
            sched__view_pods_matching(v, &lists[l].t[i].sel, own_term_pod, &w);
        }
}

/* ---- the terms of placed pods that select the pod (symmetry) ---- */

static int placed_term(struct sched_view *v, int qi, int term, void *ctx)
{
    struct sched_rules *r = ctx;
    const struct sv_pod *q = &v->pods[qi];
    const struct model_pod_term *t = sched__view_term(v, qi, term);
    if (q == r->p || !term_selects(t, q->m.ns, r->p))
        return 0;
    const char *val = node_label(&v->nodes[q->node], t->topology_key);
    if (!val)
        return 0;
    switch (term >> 16) {
    case SV_TERM_ANTI_REQ:
        forbid(r, t->topology_key, val, qi);
        break;
    case SV_TERM_AFF_REQ:
        score_add(r, t->topology_key, val, 1); /* hardPodAffinityWeight */
        break;
    default:
        score_add(r, t->topology_key, val,
                  (term >> 16) == SV_TERM_AFF_PREF ? t->weight : -t->weight);
    }
    return 0;
}

/* ---- topology spread ---- */

/* Nodes counted for spread: nodeAffinityPolicy and nodeTaintsPolicy, and every key of
 * the pod's constraints of the same kind (hard or soft). */
static int spread_node(const struct sv_node *n, const struct sv_shape *sh,
                       const struct model_affinity *a, const struct model_spread *c)
{
    if (c->honor_affinity && !sched__fit_node_affinity(n, sh))
        return 0;
    if (c->honor_taints && !sched__fit_taints(n, sh))
        return 0;
    for (size_t k = 0; k < a->nspread; k++)
        if (a->spread[k].hard == c->hard && !node_label(n, a->spread[k].topology_key))
            return 0;
    return 1;
}

struct spread_walk {
    struct sched_rules_spread *s;
    const struct sv_shape *sh;
    const struct model_affinity *a;
    const char *ns;
};

static int spread_pod(struct sched_view *v, int qi, void *ctx)
{
    struct spread_walk *w = ctx;
    const struct sv_pod *q = &v->pods[qi];
    const struct sv_node *n = &v->nodes[q->node];
    if (q->m.deletion_ms || strcmp(q->m.ns, w->ns) || !spread_node(n, w->sh, w->a, w->s->c))
        return 0;
    map_add(&w->s->dom, w->s->c->topology_key, node_label(n, w->s->c->topology_key), 1);
    return 0;
}

static void spread_prepare(struct sched_view *v, struct sched_rules *r, const struct sv_pod *p)
{
    const struct model_affinity *a = p->m.aff;
    const struct sv_shape *sh = &v->shapes[p->shape];
    r->sp = xcalloc(a->nspread + 1, sizeof(*r->sp));
    r->nsp = a->nspread;
    for (size_t i = 0; i < a->nspread; i++) {
        struct sched_rules_spread *s = &r->sp[i];
        s->c = &a->spread[i];
        sched__strmap_init(&s->dom);
        /* a domain counts when one of its nodes does */
        const struct sv_nodes *k = sched__view_nodes_labelled(v, s->c->topology_key, NULL);
        for (size_t d = 0; k && d < k->nvals; d++) {
            const struct sv_nodes *l = &v->nls[k->vals[d]];
            for (size_t q = 0; q < l->n; q++)
                if (spread_node(&v->nodes[l->ix[q]], sh, a, s->c)) {
                    sched__strmap_put(&s->dom, l->pair, 0);
                    s->ndom++;
                    break;
                }
        }
        struct spread_walk w = {s, sh, a, p->m.ns};
        sched__view_pods_matching(v, &s->c->sel, spread_pod, &w);
        s->min = s->ndom ? INT64_MAX : 0;
        for (size_t q = sched__strmap_next(&s->dom, 0); q < s->dom.cap;
             q = sched__strmap_next(&s->dom, q + 1))
            s->min = s->dom.vals[q] < s->min ? s->dom.vals[q] : s->min;
        if (s->c->hard && (int64_t)s->ndom < s->c->min_domains)
            s->min = 0;
        s->self = model_selector_match(&s->c->sel, p->m.labels, p->m.nlabels);
        s->weight = log((double)s->ndom + 2);
    }
}

/* ---- per node: what the counts mean for each node ---- */

#define FOREACH_ENTRY(m, q)                                                                        \
    for (size_t q = sched__strmap_next(m, 0); q < (m)->cap; q = sched__strmap_next(m, q + 1))

static void set_fail(struct sched_rules *r, int ni, int why, int by)
{
    if (r->fail[ni] == SCHED_FIT_OK) {
        r->fail[ni] = (signed char)why;
        r->by[ni] = by;
    }
}

static void affinity_nodes(struct sched_view *v, struct sched_rules *r,
                           const struct model_affinity *a)
{
    int *sat = xcalloc(r->nn + 1, sizeof(int));
    for (size_t t = 0; t < a->naff_req; t++) {
        const char *key = a->aff_req[t].topology_key;
        if (r->aff_n == 0 && r->self_all) { /* the first of a group: wherever the keys exist */
            const struct sv_nodes *l = sched__view_nodes_labelled(v, key, NULL);
            for (size_t q = 0; l && q < l->n; q++)
                sat[l->ix[q]]++;
            continue;
        }
        FOREACH_ENTRY(&r->aff[t], e)
        {
            if (r->aff[t].vals[e] <= 0)
                continue;
            const struct sv_nodes *l = sched__view_nodes_pair(v, r->aff[t].keys[e]);
            for (size_t q = 0; l && q < l->n; q++)
                sat[l->ix[q]]++;
        }
    }
    for (size_t ni = 0; ni < r->nn; ni++)
        if (sat[ni] != (int)a->naff_req)
            set_fail(r, (int)ni, SCHED_FIT_POD_AFFINITY, -1);
    free(sat);
}

static void spread_nodes(struct sched_view *v, struct sched_rules *r)
{
    unsigned char *has = xcalloc(r->nn + 1, 1);
    double *soft = NULL;
    int nsoft = 0;
    for (size_t i = 0; i < r->nsp; i++) {
        const struct sched_rules_spread *s = &r->sp[i];
        const struct sv_nodes *k = sched__view_nodes_labelled(v, s->c->topology_key, NULL);
        if (!s->c->hard) {
            if (!soft)
                soft = xcalloc(r->nn + 1, sizeof(double));
            nsoft++;
            for (size_t q = 0; k && q < k->n; q++) {
                r->sp_ok[k->ix[q]]++;
                soft[k->ix[q]] += (double)(s->c->max_skew - 1);
            }
            FOREACH_ENTRY(&s->dom, e)
            {
                const struct sv_nodes *l = sched__view_nodes_pair(v, s->dom.keys[e]);
                for (size_t q = 0; l && q < l->n; q++)
                    soft[l->ix[q]] += (double)s->dom.vals[e] * s->weight;
            }
            continue;
        }
        memset(has, 0, r->nn);
        for (size_t q = 0; k && q < k->n; q++)
            has[k->ix[q]] = 1;
        for (size_t ni = 0; ni < r->nn; ni++)
            if (!has[ni])
                set_fail(r, (int)ni, SCHED_FIT_SPREAD, (int)i);
        /* a node outside the counted domains holds 0, which never exceeds maxSkew */
        FOREACH_ENTRY(&s->dom, e)
        {
            if ((int64_t)s->dom.vals[e] + s->self - s->min <= s->c->max_skew)
                continue;
            const struct sv_nodes *l = sched__view_nodes_pair(v, s->dom.keys[e]);
            for (size_t q = 0; l && q < l->n; q++)
                set_fail(r, l->ix[q], SCHED_FIT_SPREAD, (int)i);
        }
    }
    for (size_t ni = 0; soft && ni < r->nn; ni++) {
        r->sp_ok[ni] = r->sp_ok[ni] == nsoft;
        r->sps[ni] = lround(soft[ni]);
    }
    if (!soft)
        memset(r->sp_ok, 0, r->nn);
    free(soft);
    free(has);
}

/* Turns the counts into per-node verdicts and raw scores. */
static void materialize(struct sched_view *v, struct sched_rules *r)
{
    const struct model_affinity *a = r->p->m.aff;
    /* One prepared sched_rules at a time uses the view's memory for its arrays: a pick
     * with rules costs no allocation of its own. */
    if (v->rules_busy)
        abort(); /* a second sched_rules prepared before the first was released */
    r->nn = v->nnodes;
    size_t n = r->nn + 1, need = n * (2 * sizeof(long) + sizeof(int) + 2);
    if (need > v->rules_cap) {
        free(v->rules_mem);
        v->rules_mem = xmalloc(need);
        v->rules_cap = need;
    }
    memset(v->rules_mem, 0, need);
    v->rules_busy = 1;
    r->v = v;
    r->ipa = v->rules_mem;
    r->sps = r->ipa + n;
    r->by = (int *)(r->sps + n);
    r->fail = (signed char *)(r->by + n);
    r->sp_ok = (unsigned char *)(r->fail + n);
    if (a && a->naff_req)
        affinity_nodes(v, r, a);
    FOREACH_ENTRY(&r->forbid, e)
    {
        const struct sv_nodes *l = sched__view_nodes_pair(v, r->forbid.keys[e]);
        for (size_t q = 0; l && q < l->n; q++)
            set_fail(r, l->ix[q], SCHED_FIT_POD_ANTI_AFFINITY, r->forbid.vals[e]);
    }
    if (r->nsp)
        spread_nodes(v, r);
    FOREACH_ENTRY(&r->score, e)
    {
        const struct sv_nodes *l = sched__view_nodes_pair(v, r->score.keys[e]);
        for (size_t q = 0; l && q < l->n; q++)
            r->ipa[l->ix[q]] += r->score.vals[e] - SCORE_BIAS;
    }
}

int sched__rules_prepare(struct sched_view *v, int pi, struct sched_rules *r)
{
    const struct sv_pod *p = &v->pods[pi];
    const struct model_affinity *a = p->m.aff;
    memset(r, 0, sizeof(*r));
    r->p = p;
    sched__strmap_init(&r->forbid);
    sched__strmap_init(&r->score);
    int own = a && (sched__pod_has_terms(p) || a->nspread);
    if (a && sched__pod_has_terms(p))
        own_terms(v, r, p);
    sched__view_terms_for(v, p->m.labels, p->m.nlabels, placed_term, r);
    if (a && a->nspread)
        spread_prepare(v, r, p);
    r->active = own || r->forbid.count || r->has_score;
    if (r->active)
        materialize(v, r);
    return r->active;
}

void sched__rules_release(struct sched_rules *r)
{
    for (size_t i = 0; i < r->naff; i++)
        sched__strmap_free(&r->aff[i]);
    free(r->aff);
    sched__strmap_free(&r->forbid);
    sched__strmap_free(&r->score);
    for (size_t i = 0; i < r->nsp; i++)
        sched__strmap_free(&r->sp[i].dom);
    free(r->sp);
    if (r->v)
        r->v->rules_busy = 0;
    memset(r, 0, sizeof(*r));
}

int sched__rules_filter(const struct sched_rules *r, int ni, int *by)
{
    *by = r->by[ni];
    return r->fail[ni];
}

long sched__rules_affinity_score(const struct sched_rules *r, int ni)
{
    return r->ipa[ni];
}

int sched__rules_spread_score(const struct sched_rules *r, int ni, long *raw)
{
    *raw = r->sps[ni];
    return r->sp_ok[ni];
}
