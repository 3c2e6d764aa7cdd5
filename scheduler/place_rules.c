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

#include "place.h"

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

static int map_get(const struct sched_strmap *m, const char *key, const char *value)
{
    char buf[600];
    pair(buf, sizeof(buf), key, value);
    return sched__strmap_get(m, buf);
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
                map_add(&r->aff, w->terms[i].topology_key, val, 1);
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
        if (map_get(&r->forbid, t->topology_key, val) < 0) {
            char buf[600];
            pair(buf, sizeof(buf), t->topology_key, val);
            sched__strmap_put(&r->forbid, buf, qi);
        }
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
        if (map_get(&r->forbid, t->topology_key, val) < 0) {
            char buf[600];
            pair(buf, sizeof(buf), t->topology_key, val);
            sched__strmap_put(&r->forbid, buf, qi);
        }
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
    size_t nn;
    const int *order = sched__view_node_order(v, &nn);
    r->sp = xcalloc(a->nspread + 1, sizeof(*r->sp));
    r->nsp = a->nspread;
    for (size_t i = 0; i < a->nspread; i++) {
        struct sched_rules_spread *s = &r->sp[i];
        s->c = &a->spread[i];
        sched__strmap_init(&s->dom);
        for (size_t k = 0; k < nn; k++) {
            const struct sv_node *n = &v->nodes[order[k]];
            const char *val = node_label(n, s->c->topology_key);
            if (val && map_get(&s->dom, s->c->topology_key, val) < 0 &&
                spread_node(n, sh, a, s->c)) {
                map_add(&s->dom, s->c->topology_key, val, 0);
                s->ndom++;
            }
        }
        struct spread_walk w = {s, sh, a, p->m.ns};
        sched__view_pods_matching(v, &s->c->sel, spread_pod, &w);
        s->min = s->ndom ? INT64_MAX : 0;
        for (size_t k = sched__strmap_next(&s->dom, 0); k < s->dom.cap;
             k = sched__strmap_next(&s->dom, k + 1))
            s->min = s->dom.vals[k] < s->min ? s->dom.vals[k] : s->min;
        if (s->c->hard && (int64_t)s->ndom < s->c->min_domains)
            s->min = 0;
        s->self = model_selector_match(&s->c->sel, p->m.labels, p->m.nlabels);
        s->weight = log((double)s->ndom + 2);
    }
}

int sched__rules_prepare(struct sched_view *v, int pi, struct sched_rules *r)
{
    const struct sv_pod *p = &v->pods[pi];
    const struct model_affinity *a = p->m.aff;
    memset(r, 0, sizeof(*r));
    r->p = p;
    sched__strmap_init(&r->aff);
    sched__strmap_init(&r->forbid);
    sched__strmap_init(&r->score);
    int own = a && (sched__pod_has_terms(p) || a->nspread);
    if (a && sched__pod_has_terms(p))
        own_terms(v, r, p);
    sched__view_terms_for(v, p->m.labels, p->m.nlabels, placed_term, r);
    if (a && a->nspread)
        spread_prepare(v, r, p);
    r->active = own || r->forbid.count || r->has_score;
    return r->active;
}

void sched__rules_release(struct sched_rules *r)
{
    sched__strmap_free(&r->aff);
    sched__strmap_free(&r->forbid);
    sched__strmap_free(&r->score);
    for (size_t i = 0; i < r->nsp; i++)
        sched__strmap_free(&r->sp[i].dom);
    free(r->sp);
    memset(r, 0, sizeof(*r));
}

int sched__rules_filter(const struct sched_rules *r, const struct sv_node *n, int *by)
{
    const struct model_affinity *a = r->p->m.aff;
    *by = -1;
    if (a && a->naff_req) {
        int exist = 1;
        for (size_t i = 0; i < a->naff_req; i++) {
            const char *val = node_label(n, a->aff_req[i].topology_key);
            if (!val)
                return SCHED_FIT_POD_AFFINITY;
            exist &= map_get(&r->aff, a->aff_req[i].topology_key, val) > 0;
        }
        if (!exist && !(r->aff_n == 0 && r->self_all))
            return SCHED_FIT_POD_AFFINITY;
    }
    if (r->forbid.count)
        for (size_t i = 0; i < n->m.nlabels; i++) {
            int q = map_get(&r->forbid, n->m.labels[i].key, n->m.labels[i].value);
            if (q >= 0) {
                *by = q;
                return SCHED_FIT_POD_ANTI_AFFINITY;
            }
        }
    for (size_t i = 0; i < r->nsp; i++) {
        const struct sched_rules_spread *s = &r->sp[i];
        if (!s->c->hard)
            continue;
        const char *val = node_label(n, s->c->topology_key);
        int cnt = val ? map_get(&s->dom, s->c->topology_key, val) : 0;
        if (!val || (int64_t)(cnt < 0 ? 0 : cnt) + s->self - s->min > s->c->max_skew) {
            *by = (int)i;
            return SCHED_FIT_SPREAD;
        }
    }
    return SCHED_FIT_OK;
}

long sched__rules_affinity_score(const struct sched_rules *r, const struct sv_node *n)
{
    long sum = 0;
    for (size_t i = 0; r->has_score && i < n->m.nlabels; i++) {
        int s = map_get(&r->score, n->m.labels[i].key, n->m.labels[i].value);
        sum += s < 0 ? 0 : s - SCORE_BIAS;
    }
    return sum;
}

int sched__rules_spread_score(const struct sched_rules *r, const struct sv_node *n, long *raw)
{
    double sum = 0;
    int any = 0;
    for (size_t i = 0; i < r->nsp; i++) {
        const struct sched_rules_spread *s = &r->sp[i];
        if (s->c->hard)
            continue;
        const char *val = node_label(n, s->c->topology_key);
        if (!val)
            return 0;
        int cnt = map_get(&s->dom, s->c->topology_key, val);
        sum += (double)(cnt < 0 ? 0 : cnt) * s->weight + (double)(s->c->max_skew - 1);
        any = 1;
    }
    *raw = lround(sum);
    return any;
}
