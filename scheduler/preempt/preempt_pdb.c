/*
 * preempt_pdb.c - PodDisruptionBudgets in the choice of victims (preempt.h), as kube-scheduler's
 * DefaultPreemption reads them (pkg/scheduler/framework/plugins/defaultpreemption/
 * default_preemption.go: filterPodsWithPDBViolation, SelectVictimsOnNode,
 * pickOneNodeForPreemption).
 *
 * A victim violates a budget when the budget selects it (same namespace, a non-empty selector
 * matching its labels), it is not in the budget's status.disruptedPods (its eviction was
 * processed already), and the budget's allowed disruptions are used up by the victims before
 * it, more important first (higher priority, then earlier start, then name). The allowed
 * disruptions are the budget's status.disruptionsAllowed when it has one (the disruption
 * controller's, mirror mode), less the disruptions the status does not know of yet: with
 * status.currentHealthy, the healthy pods it counts that are no longer healthy (terminating) and
 * whose eviction the API server has not recorded in disruptedPods (muster's own victims of this
 * cycle, until the API server processes them; then until the controller recounts, disruptedPods
 * covers them); without it, muster's victims (terminating, preempted) not in disruptedPods. Without
 * a status (standalone) they are computed as the disruption controller does, from the matching
 * bound pods (expected) and those not terminating (healthy): model_pdb_allowed.
 *
 * Budgets never make a plan impossible (kube-scheduler evicts through a violated budget when
 * nothing else fits); they order the choice: a node's violations are the first criterion of
 * its cost (the nodes that violate go back first), the first dry run removes only victims
 * that violate nothing, and victims that violate go back first on a node. A cluster without
 * budgets allocates nothing here (pr->pdb is NULL).
 */
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "preempt.h"

struct preempt_pdb {
    int64_t *allowed; /* [pdbs.n]: per slot, INT64_MIN until computed */
    int64_t *budget;  /* [pdbs.n]: scratch of one simulation */
    uint32_t *stamp;  /* [pdbs.n]: simulation that set budget[slot] */
    uint32_t sim;
};

void sched__pdb_begin(struct preempt *pr)
{
    const struct sched_view *v = pr->c->v;
    pr->pdb = NULL;
    if (!v->pdbs.live)
        return;
    struct preempt_pdb *d = xcalloc(1, sizeof(*d));
    size_t n = v->pdbs.n;
    d->allowed = xcalloc(n + 1, sizeof(int64_t));
    d->budget = xcalloc(n + 1, sizeof(int64_t));
    d->stamp = xcalloc(n + 1, sizeof(uint32_t));
    for (size_t i = 0; i < n; i++)
        d->allowed[i] = INT64_MIN;
    pr->pdb = d;
}

void sched__pdb_end(struct preempt *pr)
{
    if (!pr->pdb)
        return;
    free(pr->pdb->allowed);
    free(pr->pdb->budget);
    free(pr->pdb->stamp);
    free(pr->pdb);
    pr->pdb = NULL;
}

struct count_ctx {
    const struct model_pdb *b;
    int32_t expected, healthy;
    int32_t undisrupted;    /* healthy and not in disruptedPods (the controller's "healthy") */
    int32_t gone_disrupted; /* terminating, in disruptedPods */
    int32_t unprocessed;    /* terminating victims of muster's, not in disruptedPods */
};

static int count_pod(struct sched_view *v, int pi, void *ctx)
{
    struct count_ctx *k = ctx;
    const struct sv_pod *p = &v->pods[pi];
    if (strcmp(p->m.ns, k->b->ns) != 0 || p->node < 0)
        return 0;
    int disrupted = model_pdb_disrupted(k->b, p->m.name);
    k->expected++;
    if (!p->m.deletion_ms) {
        k->healthy++;
        k->undisrupted += !disrupted;
    } else if (disrupted) {
        k->gone_disrupted++;
    } else if (p->m.preempted) {
        k->unprocessed++;
    }
    return 0;
}

/* What a budget's status allows now (see the opening comment). */
static int64_t status_allowed(const struct model_pdb *b, const struct count_ctx *k)
{
    int64_t unknown = k->unprocessed;
    if (b->current_healthy >= 0) {
        unknown = (int64_t)b->current_healthy - k->undisrupted - k->gone_disrupted;
        unknown = unknown < 0 ? 0 : unknown;
    }
    return (int64_t)b->disruptions_allowed - unknown;
}

/* The disruptions budget slot allows before this preemption (>= 0). */
static int64_t allowed(struct preempt *pr, int slot)
{
    struct preempt_pdb *d = pr->pdb;
    if (d->allowed[slot] != INT64_MIN)
        return d->allowed[slot];
    struct sched_view *v = pr->c->v;
    const struct model_pdb *b = &v->pdbs.b[slot].m;
    struct count_ctx k = {.b = b};
    sched__view_pods_matching(v, &b->sel, count_pod, &k);
    int64_t a =
        b->has_status ? status_allowed(b, &k) : model_pdb_allowed(b, k.expected, k.healthy, NULL);
    d->allowed[slot] = a < 0 ? 0 : a;
    return d->allowed[slot];
}

/* The budget slots that count pod p's eviction (it is not in their disruptedPods) into out
 * (at most max); returns how many. */
static size_t pod_budgets(const struct sched_view *v, const struct sv_pod *p, int *out, size_t max)
{
    size_t n, k = 0;
    const int *slots = p->m.nlabels ? sched__view_pdbs_in(v, p->m.ns, &n) : NULL;
    for (size_t i = 0; slots && i < n && k < max; i++) {
        const struct model_pdb *b = &v->pdbs.b[slots[i]].m;
        if (model_selector_match(&b->sel, p->m.labels, p->m.nlabels) &&
            !model_pdb_disrupted(b, p->m.name))
            out[k++] = slots[i];
    }
    return k;
}

int64_t sched__pod_start(const struct preempt *pr, const struct sv_pod *p)
{
    return p->m.start_ms ? p->m.start_ms : pr->c->now_ms;
}

int sched__more_important(const struct preempt *pr, const struct sv_pod *a, const struct sv_pod *b)
{
    if (a->prio != b->prio)
        return a->prio > b->prio ? -1 : 1;
    int64_t sa = sched__pod_start(pr, a), sb = sched__pod_start(pr, b);
    if (sa != sb)
        return sa < sb ? -1 : 1;
    return strcmp(a->key, b->key);
}

static int cmp_importance(const void *x, const void *y, void *ctx)
{
    const struct preempt *pr = ctx;
    const struct sched_view *v = pr->c->v;
    return sched__more_important(pr, &v->pods[*(const int *)x], &v->pods[*(const int *)y]);
}

#define PDB_MAX_PER_POD 16

/* filterPodsWithPDBViolation over pods[0..n) (reordered, most important first) with fresh
 * budgets: the number of pods whose eviction violates a budget; viol[i] (may be NULL) marks
 * pods[i]; names (may be NULL) maps each pod that violates to the key of the budget. */
static long simulate(struct preempt *pr, int *pods, size_t n, char *viol, int *slot)
{
    struct sched_view *v = pr->c->v;
    struct preempt_pdb *d = pr->pdb;
    long count = 0;
    d->sim++;
    qsort_r(pods, n, sizeof(int), cmp_importance, pr);
    for (size_t i = 0; i < n; i++) {
        int slots[PDB_MAX_PER_POD];
        size_t ns = pod_budgets(v, &v->pods[pods[i]], slots, PDB_MAX_PER_POD);
        int violated = -1;
        for (size_t k = 0; k < ns && violated < 0; k++) {
            int s = slots[k];
            if (d->stamp[s] != d->sim) {
                d->stamp[s] = d->sim;
                d->budget[s] = allowed(pr, s);
            }
            if (d->budget[s] <= 0)
                violated = s;
            else
                d->budget[s]--;
        }
        if (viol)
            viol[i] = violated >= 0;
        if (slot)
            slot[i] = violated;
        count += violated >= 0;
    }
    return count;
}

/* Adds the bound, non-terminating pods of job j not in pods[0..*n) (the whole gang goes). */
static void add_gang(const struct sched_view *v, int j, int *pods, size_t *n)
{
    const struct sv_job *job = &v->jobs[j];
    for (size_t q = 0; q < job->npods; q++) {
        const struct sv_pod *gp = &v->pods[job->pods[q]];
        if (gp->node < 0 || gp->m.deletion_ms || model_pod_terminal(&gp->m))
            continue;
        size_t k = 0;
        while (k < *n && pods[k] != job->pods[q])
            k++;
        if (k == *n)
            pods[(*n)++] = job->pods[q];
    }
}

void sched__pdb_node_cost(struct preempt *pr, struct pnode *pn)
{
    const struct sched_view *v = pr->c->v;
    pn->viol = 0;
    if (!pr->pdb)
        return;
    size_t cap = pn->nv, n = 0;
    for (size_t k = 0; k < pn->nv; k++) {
        const struct pv *x = &pr->pv[pn->v[k]];
        cap += x->gang >= 0 ? v->jobs[x->gang].npods : 0;
    }
    int *pods = xcalloc(cap + 1, sizeof(int));
    char *viol = xcalloc(cap + 1, 1);
    for (size_t k = 0; k < pn->nv; k++) {
        const struct pv *x = &pr->pv[pn->v[k]];
        if (x->terminating)
            continue;
        if (x->gang >= 0)
            add_gang(v, x->gang, pods, &n);
        else
            pods[n++] = x->pod;
    }
    pn->viol = simulate(pr, pods, n, viol, NULL);
    for (size_t k = 0; k < pn->nv; k++) {
        struct pv *x = &pr->pv[pn->v[k]];
        for (size_t i = 0; i < n && !x->terminating; i++)
            if (pods[i] == x->pod)
                x->viol = viol[i];
    }
    free(pods);
    free(viol);
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void sched__pdb_violations(struct preempt *pr, struct preempt_plan *p)
{
    p->pdb_violations = 0;
    if (!pr->pdb)
        return;
    struct sched_view *v = pr->c->v;
    int *pods = xcalloc(p->nvictims + 1, sizeof(int)),
        *slot = xcalloc(p->nvictims + 1, sizeof(int));
    for (size_t i = 0; i < p->nvictims; i++)
        pods[i] = p->victims[i].pod;
    p->pdb_violations = simulate(pr, pods, p->nvictims, NULL, slot);
    p->pdbs = xcalloc(p->nvictims + 1, sizeof(char *));
    for (size_t i = 0; i < p->nvictims; i++) {
        if (slot[i] < 0)
            continue;
        const char *key = v->pdbs.b[slot[i]].key;
        for (size_t k = 0; k < p->nvictims; k++)
            if (p->victims[k].pod == pods[i])
                p->victims[k].pdb = key;
        size_t k = 0;
        while (k < p->npdbs && strcmp(p->pdbs[k], key) != 0)
            k++;
        if (k == p->npdbs)
            p->pdbs[p->npdbs++] = key;
    }
    qsort(p->pdbs, p->npdbs, sizeof(char *), cmp_key);
    free(slot);
    free(pods);
}
