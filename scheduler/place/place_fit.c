/*
 * place_fit.c - does a pod shape fit a node (place_fit.h).
 *
 * Fit (DESIGN.md section 3): every requested resource fits allocatable minus
 * requested by bound pods minus reservations of nominated pods of equal or
 * higher priority; the node is schedulable, the nodeSelector and the required node
 * affinity match, every NoSchedule and NoExecute taint is tolerated; and the pod
 * rules (place_rules.c) hold. The choice among the nodes that fit is place_pick.c's.
 */
#include <string.h>

#include "place_fit.h"

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

void sched__fit_prefs(const struct sv_node *n, const struct sv_shape *sh, long *aff, long *taints)
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
    if (n->resv && sched__view_resv_blocked(v, n))
        return 0; /* held for a starving job this one may not backfill (view_resv.h) */
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
        if (n->nnom || n->resv) {
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
