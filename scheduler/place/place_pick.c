/*
 * place_pick.c - which node a pod goes to: the best node by score among those that fit
 * (place_pick.h).
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
#include <string.h>

#include "place_fit.h"
#include "place_heap.h"
#include "place_pick.h"
#include "place_rules.h"

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
        sched__fit_prefs(nd, sh, &aff, &taints);
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

static int pick_scan(struct sched_view *v, struct sv_shape *sh, int pi, const struct sched_rules *r,
                     const char *allowed)
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
        if (allowed && !allowed[ni])
            continue;
        if (r && sched__rules_filter(r, ni, &by) != SCHED_FIT_OK)
            continue;
        struct sched_scan *x = &sc[ns++];
        memset(x, 0, sizeof(*x));
        x->ni = ni;
        x->bin = 100.0 * sched__score(v, n, sh);
        sched__fit_prefs(n, sh, &x->aff, &x->taints);
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

int sched__pick_node_in(struct sched_view *v, int pi, const char *allowed)
{
    struct sv_shape *sh = &v->shapes[v->pods[pi].shape];
    if (sh->fail_epoch == v->epoch)
        return -1;
    struct sched_rules r;
    if (sched__rules_prepare(v, pi, &r)) {
        if (sh->cand_epoch != v->epoch)
            cand_rebuild(v, sh, pi);
        int ni = pick_scan(v, sh, pi, &r, allowed);
        sched__rules_release(&r);
        return ni;
    }
    sched__rules_release(&r);
    if (sh->cand_epoch != v->epoch)
        cand_rebuild(v, sh, pi);
    if (sh->soft || allowed) /* the heap knows no node set */
        return pick_scan(v, sh, pi, NULL, allowed);
    return sched__pick_heap(v, sh, pi);
}

int sched__pick_node(struct sched_view *v, int pi)
{
    return sched__pick_node_in(v, pi, NULL);
}
