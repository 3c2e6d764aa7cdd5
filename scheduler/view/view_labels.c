/*
 * view_labels.c - the pod label index and the inter-pod term index of the view
 * (view_labels.h): how the pod rules find the placed pods a selector picks, and the
 * placed pods whose terms may pick a pod, without walking every pod.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "strmap.h"
#include "view_labels.h"

static struct sv_reflist *list_get(struct sched_view *v, struct sched_strmap *ix, const char *key,
                                   int create)
{
    int li = sched__strmap_get(ix, key);
    if (li < 0) {
        if (!create)
            return NULL;
        XGROW(v->lists, v->nlists + 1, v->caplists);
        li = (int)v->nlists++;
        memset(&v->lists[li], 0, sizeof(v->lists[li]));
        sched__strmap_put(ix, key, li);
    }
    return &v->lists[li];
}

static void list_add(struct sched_view *v, struct sched_strmap *ix, const char *key,
                     struct sv_ref ref)
{
    struct sv_reflist *l = list_get(v, ix, key, 1);
    XGROW(l->r, l->n + 1, l->cap);
    l->r[l->n++] = ref;
}

static void pair_key(char *buf, size_t n, const char *key, const char *value)
{
    sched__str_join_to(buf, n, key, '=', value);
}

/* The pair a term is listed under: its selector's first single-valued In. */
static void term_key(const struct model_pod_term *t, char *buf, size_t n)
{
    buf[0] = '\0';
    for (size_t i = 0; i < t->sel.nreq; i++) {
        const struct model_sel_req *r = &t->sel.req[i];
        if (r->op == MODEL_OP_IN && r->nvalues == 1) {
            pair_key(buf, n, r->key, r->values[0]);
            return;
        }
    }
}

const struct model_pod_term *sched__view_term(const struct sched_view *v, int pi, int term)
{
    const struct model_affinity *a = v->pods[pi].m.aff;
    int i = term & 0xffff;
    switch (term >> 16) {
    case SV_TERM_AFF_REQ:
        return &a->aff_req[i];
    case SV_TERM_ANTI_REQ:
        return &a->anti_req[i];
    case SV_TERM_AFF_PREF:
        return &a->aff_pref[i];
    default:
        return &a->anti_pref[i];
    }
}

int sched__pod_has_terms(const struct sv_pod *p)
{
    const struct model_affinity *a = p->m.aff;
    return a && a->naff_req + a->nanti_req + a->naff_pref + a->nanti_pref > 0;
}

void sched__view_index_pod(struct sched_view *v, int pi)
{
    struct sv_pod *p = &v->pods[pi];
    char buf[600];
    p->gen = ++v->gen;
    for (size_t i = 0; i < p->m.nlabels; i++) {
        pair_key(buf, sizeof(buf), p->m.labels[i].key, p->m.labels[i].value);
        list_add(v, &v->lab_ix, buf, (struct sv_ref){pi, p->gen, 0});
    }
    const struct model_affinity *a = p->m.aff;
    if (!sched__pod_has_terms(p))
        return;
    const size_t counts[] = {a->naff_req, a->nanti_req, a->naff_pref, a->nanti_pref};
    for (int kind = SV_TERM_AFF_REQ; kind <= SV_TERM_ANTI_PREF; kind++)
        for (size_t i = 0; i < counts[kind]; i++) {
            int term = kind << 16 | (int)i;
            term_key(sched__view_term(v, pi, term), buf, sizeof(buf));
            list_add(v, &v->term_ix, buf, (struct sv_ref){pi, p->gen, term});
        }
    v->nterm_pods++;
}

static int ref_live(const struct sched_view *v, struct sv_ref r)
{
    return (size_t)r.pod < v->npods && v->pods[r.pod].alive && v->pods[r.pod].gen == r.gen;
}

/* Walks l, dropping stale entries; calls fn for placed pods until it returns non-zero. */
static int walk(struct sched_view *v, struct sv_reflist *l,
                int (*fn)(struct sched_view *, struct sv_ref, void *), void *ctx)
{
    size_t w = 0;
    int rc = 0;
    for (size_t i = 0; i < l->n; i++) {
        struct sv_ref r = l->r[i];
        if (!ref_live(v, r))
            continue;
        l->r[w++] = r;
        if (!rc && v->pods[r.pod].counted)
            rc = fn(v, r, ctx);
    }
    l->n = w;
    return rc;
}

struct match_ctx {
    const struct model_selector *sel;
    sv_pod_fn fn;
    void *ctx;
};

static int match_one(struct sched_view *v, struct sv_ref r, void *ctx)
{
    struct match_ctx *m = ctx;
    const struct sv_pod *p = &v->pods[r.pod];
    if (!model_selector_match(m->sel, p->m.labels, p->m.nlabels))
        return 0;
    return m->fn(v, r.pod, m->ctx);
}

int sched__view_pods_matching(struct sched_view *v, const struct model_selector *sel, sv_pod_fn fn,
                              void *ctx)
{
    if (sel->none)
        return 0;
    /* The In requirement with the fewest listed pods narrows the walk. */
    const struct model_sel_req *best = NULL;
    size_t best_n = (size_t)-1;
    char buf[600];
    for (size_t i = 0; i < sel->nreq; i++) {
        const struct model_sel_req *r = &sel->req[i];
        if (r->op != MODEL_OP_IN)
            continue;
        size_t n = 0;
        for (size_t k = 0; k < r->nvalues; k++) {
            pair_key(buf, sizeof(buf), r->key, r->values[k]);
            const struct sv_reflist *l = list_get(v, &v->lab_ix, buf, 0);
            n += l ? l->n : 0;
        }
        if (n < best_n) {
            best_n = n;
            best = r;
        }
    }
    struct match_ctx m = {sel, fn, ctx};
    if (!best) {
        for (size_t pi = 0; pi < v->npods; pi++) {
            const struct sv_pod *p = &v->pods[pi];
            int rc;
            if (p->alive && p->counted &&
                (rc = match_one(v, (struct sv_ref){(int)pi, p->gen, 0}, &m)))
                return rc;
        }
        return 0;
    }
    for (size_t k = 0; k < best->nvalues; k++) {
        pair_key(buf, sizeof(buf), best->key, best->values[k]);
        struct sv_reflist *l = list_get(v, &v->lab_ix, buf, 0);
        int rc = l ? walk(v, l, match_one, &m) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

struct term_ctx {
    sv_term_fn fn;
    void *ctx;
};

static int term_one(struct sched_view *v, struct sv_ref r, void *ctx)
{
    struct term_ctx *t = ctx;
    return t->fn(v, r.pod, r.term, t->ctx);
}

int sched__view_terms_for(struct sched_view *v, const struct model_kv *labels, size_t n,
                          sv_term_fn fn, void *ctx)
{
    if (!v->nterm_pods)
        return 0;
    struct term_ctx t = {fn, ctx};
    char buf[600];
    struct sv_reflist *l = list_get(v, &v->term_ix, "", 0);
    int rc = l ? walk(v, l, term_one, &t) : 0;
    for (size_t i = 0; !rc && i < n; i++) {
        pair_key(buf, sizeof(buf), labels[i].key, labels[i].value);
        if ((l = list_get(v, &v->term_ix, buf, 0)))
            rc = walk(v, l, term_one, &t);
    }
    return rc;
}

/* ---- nodes by label ---- */

void sched__view_node_labels_free(struct sched_view *v)
{
    for (size_t i = 0; i < v->nnls; i++) {
        free(v->nls[i].ix);
        free(v->nls[i].pair);
    }
    for (size_t i = 0; i < v->nnks; i++) {
        free(v->nks[i].ix);
        free(v->nks[i].vals);
    }
    free(v->nls);
    free(v->nks);
    sched__strmap_free(&v->nl_ix);
    sched__strmap_free(&v->nk_ix);
    v->nls = v->nks = NULL;
    v->nnls = v->capnls = v->nnks = v->capnks = 0;
}

/* Appends ni to the list of key in ix; returns the list's index and sets *created. */
static int nodes_add(struct sched_strmap *ix, struct sv_nodes **lists, size_t *n, size_t *cap,
                     const char *key, int ni, int *created)
{
    int li = sched__strmap_get(ix, key);
    *created = li < 0;
    if (li < 0) {
        XGROW(*lists, *n + 1, *cap);
        li = (int)(*n)++;
        memset(&(*lists)[li], 0, sizeof((*lists)[li]));
        sched__strmap_put(ix, key, li);
    }
    struct sv_nodes *l = &(*lists)[li];
    XGROW(l->ix, l->n + 1, l->cap);
    l->ix[l->n++] = ni;
    return li;
}

static void node_labels_build(struct sched_view *v)
{
    char buf[600];
    sched__view_node_labels_free(v);
    for (size_t ni = 0; ni < v->nnodes; ni++) {
        const struct sv_node *n = &v->nodes[ni];
        if (!n->alive)
            continue;
        for (size_t i = 0; i < n->m.nlabels; i++) {
            int created, kc;
            snprintf(buf, sizeof(buf), "%s\x1f%s", n->m.labels[i].key, n->m.labels[i].value);
            int pl = nodes_add(&v->nl_ix, &v->nls, &v->nnls, &v->capnls, buf, (int)ni, &created);
            int kl = nodes_add(&v->nk_ix, &v->nks, &v->nnks, &v->capnks, n->m.labels[i].key,
                               (int)ni, &kc);
            if (created) {
                v->nls[pl].pair = xstrdup(buf);
                struct sv_nodes *k = &v->nks[kl];
                XGROW(k->vals, k->nvals + 1, k->capvals);
                k->vals[k->nvals++] = pl;
            }
        }
    }
    v->nl_dirty = 0;
}

const struct sv_nodes *sched__view_nodes_pair(struct sched_view *v, const char *pair)
{
    if (v->nl_dirty)
        node_labels_build(v);
    int li = sched__strmap_get(&v->nl_ix, pair);
    return li < 0 ? NULL : &v->nls[li];
}

const struct sv_nodes *sched__view_nodes_labelled(struct sched_view *v, const char *key,
                                                  const char *value)
{
    char buf[600];
    if (v->nl_dirty)
        node_labels_build(v);
    if (value) {
        snprintf(buf, sizeof(buf), "%s\x1f%s", key, value);
        return sched__view_nodes_pair(v, buf);
    }
    int li = sched__strmap_get(&v->nk_ix, key);
    return li < 0 ? NULL : &v->nks[li];
}
