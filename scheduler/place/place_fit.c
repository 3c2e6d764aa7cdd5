/*
 * place_fit.c - does a pod shape fit a node, and which node to choose.
 *
 * Fit (DESIGN.md section 3): every requested resource fits allocatable minus
 * requested by bound pods minus reservations of nominated pods of equal or
 * higher priority; the node is schedulable, the nodeSelector and the required node
 * affinity match, every NoSchedule and NoExecute taint is tolerated; and the pod
 * rules (place_rules.c) hold.
 *
 * Choice: binpack alone while the candidates do not differ in preferences and no pod
 * rule applies (the fast path: the shape's heap, place_heap.c); otherwise a scan with
 * kube-scheduler's weighted, normalized scores (pick_scan).
 *
 * Speed: each shape keeps the list of statically feasible nodes that still had
 * room at the current view epoch. Within one epoch usage only grows, so a node
 * that no longer fits a shape is dropped from its list for good, and a shape
 * that fits nowhere is remembered as such (fail_epoch). Any change that frees
 * capacity or changes nodes bumps the epoch and the lists are rebuilt.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"

static int streq(const char *a, const char *b)
{
    return !strcmp(a ? a : "", b ? b : "");
}

static int tolerates(const struct model_toleration *t, const struct model_taint *x)
{
    if (t->effect && *t->effect && !streq(t->effect, x->effect))
        return 0;
    if (t->op && !strcmp(t->op, "Exists"))
        return !t->key || !*t->key || streq(t->key, x->key);
    return streq(t->key, x->key) && streq(t->value, x->value);
}

int sched__fit_node_affinity(const struct sv_node *n, const struct sv_shape *sh)
{
    for (size_t i = 0; i < sh->nsel; i++) {
        const char *val = model_label(n->m.labels, n->m.nlabels, sh->sel[i].key);
        if (!val || strcmp(val, sh->sel[i].value))
            return 0;
    }
    if (!sh->aff || !sh->aff->has_node_req)
        return 1;
    for (size_t t = 0; t < sh->aff->nnode_req; t++) /* terms are ORed */
        if (model_node_term_match(&sh->aff->node_req[t], n->name, n->m.labels, n->m.nlabels))
            return 1;
    return 0;
}

static int tolerated(const struct model_taint *x, const struct sv_shape *sh)
{
    for (size_t k = 0; k < sh->ntol; k++)
        if (tolerates(&sh->tol[k], x))
            return 1;
    return 0;
}

const struct model_taint *sched__fit_untolerated(const struct sv_node *n, const struct sv_shape *sh)
{
    for (size_t i = 0; i < n->m.ntaints; i++) {
        const struct model_taint *x = &n->m.taints[i];
        if ((streq(x->effect, "NoSchedule") || streq(x->effect, "NoExecute")) && !tolerated(x, sh))
            return x;
    }
    return NULL;
}

int sched__fit_taints(const struct sv_node *n, const struct sv_shape *sh)
{
    return sched__fit_untolerated(n, sh) == NULL;
}

int sched__fit_static(const struct sv_node *n, const struct sv_shape *sh)
{
    if (n->m.unschedulable)
        return SCHED_FIT_UNSCHEDULABLE;
    if (!sched__fit_node_affinity(n, sh)) {
        /* name the nodeSelector when it is what fails */
        for (size_t i = 0; i < sh->nsel; i++) {
            const char *val = model_label(n->m.labels, n->m.nlabels, sh->sel[i].key);
            if (!val || strcmp(val, sh->sel[i].value))
                return SCHED_FIT_SELECTOR;
        }
        return SCHED_FIT_AFFINITY;
    }
    return sched__fit_taints(n, sh) ? SCHED_FIT_OK : SCHED_FIT_TAINT;
}

/* The static preferences of a node for a shape: the summed weights of the preferred node
 * affinity terms it matches, and its untolerated PreferNoSchedule taints. */
static void static_prefs(const struct sv_node *n, const struct sv_shape *sh, long *aff,
                         long *taints)
{
    *aff = *taints = 0;
    for (size_t t = 0; sh->aff && t < sh->aff->nnode_pref; t++)
        if (model_node_term_match(&sh->aff->node_pref[t], n->name, n->m.labels, n->m.nlabels))
            *aff += sh->aff->node_pref[t].weight;
    for (size_t i = 0; i < n->m.ntaints; i++)
        if (streq(n->m.taints[i].effect, "PreferNoSchedule") && !tolerated(&n->m.taints[i], sh))
            (*taints)++;
}

/* Reserved amount of resource r on n for a pod of priority prio of one of jobs: the one
 * rule for reservations, shared by fit and the gather placer. A job's own nominations
 * (a preemptor's gang, its GangGroup) do not reserve against it. */
static int reserves(const struct sv_pod *p, int32_t prio, const int *jobs, size_t njobs)
{
    size_t k = 0;
    while (k < njobs && jobs[k] != p->job)
        k++;
    return k == njobs && p->node < 0 && p->prio >= prio;
}

static int64_t reserved(const struct sched_view *v, const struct sv_node *n, int r, int32_t prio,
                        const int *jobs, size_t njobs)
{
    int64_t sum = 0;
    for (size_t i = 0; i < n->nnom; i++) {
        const struct sv_pod *p = &v->pods[n->nominated[i]];
        if (!reserves(p, prio, jobs, njobs))
            continue;
        for (int q = 0; q < p->nreq; q++)
            if (p->req[q].res == r)
                sum += p->req[q].v;
    }
    return sum;
}

int64_t sched__free_for(const struct sched_view *v, const struct sv_node *n, int r, int32_t prio,
                        const int *jobs, size_t njobs)
{
    int64_t f = n->alloc[r] - n->used[r];
    if (n->nnom)
        f -= reserved(v, n, r, prio, jobs, njobs);
    return f;
}

long sched__fit_count(const struct sched_view *v, const struct sv_node *n, const struct sv_req *req,
                      int nreq, int32_t prio, const int *jobs, size_t njobs, long cap)
{
    long cnt = cap;
    for (int i = 0; i < nreq && cnt > 0; i++) {
        if (req[i].v <= 0)
            continue; /* a zero request never limits */
        int64_t f = sched__free_for(v, n, req[i].res, prio, jobs, njobs);
        long k = f <= 0 ? 0 : (long)(f / req[i].v);
        cnt = k < cnt ? k : cnt;
    }
    return cnt;
}

int sched__reserver(const struct sched_view *v, const struct sv_node *n, int32_t prio, int self)
{
    int job = self >= 0 ? v->pods[self].job : -1;
    for (size_t i = 0; i < n->nnom; i++)
        if (reserves(&v->pods[n->nominated[i]], prio, &job, self >= 0))
            return v->pods[n->nominated[i]].job;
    return -1;
}

int64_t sched__free(const struct sched_view *v, const struct sv_node *n, int r, int32_t prio,
                    int self)
{
    int job = self >= 0 ? v->pods[self].job : -1;
    return sched__free_for(v, n, r, prio, &job, self >= 0);
}

int sched__fit_res(const struct sched_view *v, const struct sv_node *n, const struct sv_shape *sh,
                   int self)
{
    for (int i = 0; i < sh->nreq; i++) {
        int r = sh->req[i].res;
        if (n->nnom) {
            if (sh->req[i].v > sched__free(v, n, r, sh->priority, self))
                return i;
        } else if (sh->req[i].v > n->alloc[r] - n->used[r]) {
            return i;
        }
    }
    return -1;
}

double sched__score(const struct sched_view *v, const struct sv_node *n, const struct sv_shape *sh)
{
    double sum = 0;
    int cnt = 0;
    for (int i = 0; i < sh->nreq; i++) {
        int r = sh->req[i].res;
        if (n->alloc[r] <= 0)
            continue;
        sum += (double)(n->used[r] + sh->req[i].v) / (double)n->alloc[r];
        cnt++;
    }
    return cnt ? sum / cnt : 0;
}

static void cand_rebuild(struct sched_view *v, struct sv_shape *sh, int self)
{
    size_t n;
    const int *order = sched__view_node_order(v, &n);
    long aff0 = -1, taint0 = -1;
    XGROW(sh->cand, n + 1, sh->capcand);
    sh->ncand = 0;
    sh->soft = 0;
    for (size_t i = 0; i < n; i++) {
        const struct sv_node *nd = &v->nodes[order[i]];
        if (sched__fit_static(nd, sh) != SCHED_FIT_OK || sched__fit_res(v, nd, sh, self) >= 0)
            continue;
        sh->cand[sh->ncand++] = order[i];
        long aff, taints;
        static_prefs(nd, sh, &aff, &taints);
        if (aff0 < 0) {
            aff0 = aff;
            taint0 = taints;
        }
        sh->soft |= aff != aff0 || taints != taint0;
    }
    sh->cand_epoch = v->epoch;
}

/* The scanning pick: every candidate through the pod rules, then kube-scheduler's
 * score: each plugin's score normalized to 0..100 over the nodes that passed, weighted
 * as its default profile weighs them (NodeResourcesFit 1, here muster's binpack;
 * NodeAffinity 2; TaintToleration 3; InterPodAffinity 2; PodTopologySpread 2). Ties go
 * to the first name. */
struct sched_scan {
    int ni;
    double bin;
    long aff, taints, ipa, spread;
    int spread_ok;
};

enum { W_FIT = 1, W_NODE_AFFINITY = 2, W_TAINTS = 3, W_POD_AFFINITY = 2, W_SPREAD = 2 };

static int pick_scan(struct sched_view *v, struct sv_shape *sh, int pi, const struct sched_rules *r)
{
    XGROW(v->scan, sh->ncand + 1, v->capscan);
    struct sched_scan *sc = v->scan;
    size_t keep = 0, ns = 0;
    long max_aff = 0, max_taints = 0, ipa_lo = 0, ipa_hi = 0, sp_lo = 0, sp_hi = 0;
    int sp_any = 0;
    for (size_t i = 0; i < sh->ncand; i++) {
        int ni = sh->cand[i], by;
        const struct sv_node *n = &v->nodes[ni];
        if (sched__fit_res(v, n, sh, pi) >= 0)
            continue;
        sh->cand[keep++] = ni;
        if (r && sched__rules_filter(r, ni, &by) != SCHED_FIT_OK)
            continue;
        struct sched_scan *x = &sc[ns++];
        memset(x, 0, sizeof(*x));
        x->ni = ni;
        x->bin = 100.0 * sched__score(v, n, sh);
        static_prefs(n, sh, &x->aff, &x->taints);
        if (r) {
            x->ipa = sched__rules_affinity_score(r, ni);
            x->spread_ok = sched__rules_spread_score(r, ni, &x->spread);
        }
        max_aff = x->aff > max_aff ? x->aff : max_aff;
        max_taints = x->taints > max_taints ? x->taints : max_taints;
        ipa_lo = ns == 1 || x->ipa < ipa_lo ? x->ipa : ipa_lo;
        ipa_hi = ns == 1 || x->ipa > ipa_hi ? x->ipa : ipa_hi;
        if (x->spread_ok) {
            sp_lo = !sp_any || x->spread < sp_lo ? x->spread : sp_lo;
            sp_hi = !sp_any || x->spread > sp_hi ? x->spread : sp_hi;
            sp_any = 1;
        }
    }
    sh->ncand = keep;
    if (keep == 0)
        sh->fail_epoch = v->epoch;
    int best = -1;
    double best_score = -1;
    for (size_t i = 0; i < ns; i++) {
        const struct sched_scan *x = &sc[i];
        double na = max_aff ? 100.0 * (double)x->aff / (double)max_aff : 0;
        double tt = max_taints ? 100.0 - 100.0 * (double)x->taints / (double)max_taints : 100;
        double ipa =
            ipa_hi > ipa_lo ? 100.0 * (double)(x->ipa - ipa_lo) / (double)(ipa_hi - ipa_lo) : 0;
        double sp = !x->spread_ok ? 0
                    : sp_hi == 0  ? 100
                                  : 100.0 * (double)(sp_hi + sp_lo - x->spread) / (double)sp_hi;
        double total = W_FIT * x->bin + W_NODE_AFFINITY * na + W_TAINTS * tt +
                       W_POD_AFFINITY * ipa + W_SPREAD * sp;
        if (total > best_score) {
            best_score = total;
            best = x->ni;
        }
    }
    return best;
}

int sched__pick_node(struct sched_view *v, int pi)
{
    struct sv_shape *sh = &v->shapes[v->pods[pi].shape];
    if (sh->fail_epoch == v->epoch)
        return -1;
    struct sched_rules r;
    if (sched__rules_prepare(v, pi, &r)) {
        if (sh->cand_epoch != v->epoch)
            cand_rebuild(v, sh, pi);
        int ni = pick_scan(v, sh, pi, &r);
        sched__rules_release(&r);
        return ni;
    }
    sched__rules_release(&r);
    if (sh->cand_epoch != v->epoch)
        cand_rebuild(v, sh, pi);
    if (sh->soft)
        return pick_scan(v, sh, pi, NULL);
    return sched__pick_heap(v, sh, pi);
}
