/*
 * preempt.c - job-level preemption: eligibility, potential victims, the dry run and
 * the minimal victim set (DESIGN.md section 3, "Job-level preemption", steps 1-3).
 *
 * Everything happens on the view inside the job's statement: potential victims are
 * taken out of their nodes' usage (never out of the store), the job is re-planned with
 * the cycle's own placer (topology included) and every allocation is undone again.
 * Before sched__preempt returns the view is exactly as it was; only the chosen plan is
 * then executed by preempt_evict.c. A failure anywhere aborts the cycle (its transaction), so
 * a half-executed preemption never reaches the store.
 *
 * Minimal set: (a) a dry run that removes only victims whose eviction breaks no gang,
 * then, if the job does not fit, all of them (gang-aware: a plan that breaks no gang
 * wins); (b) whole nodes go back, the most expensive first (name breaks ties), while
 * the job still fits, so the cheapest nodes are the ones freed; a node the current plan
 * does not use goes back without a re-plan, so this costs one re-plan per node the job
 * really uses; (c) on each freed node, cheapest first, victims go back highest
 * priority first, then name, while the job still fits; (d) victims on nodes the final
 * plan does not use go back (pods there are never evicted); (e) a victim gang left below
 * minMember loses its remaining bound members too (complete_gangs): gangs go whole or not
 * at all, and pods already terminating for an earlier preemption are reused at no cost, so
 * a second preemption in a cycle does not break another gang when the first one's frees
 * the room.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "place.h"
#include "preempt.h"
#include "queue.h"
#include "why.h"
#include "why_msg.h"

static void pv_remove(struct preempt *pr, struct pv *x)
{
    struct sv_pod *p = &pr->c->v->pods[x->pod];
    sched__queue_pend(pr->c->v, p, -1);
    sched__view_usage(pr->c->v, p, -1);
    p->counted = 0;
    sched__queue_pend(pr->c->v, p, 1);
    x->removed = 1;
    sched__view_epoch_usage(pr->c->v);
}

static void pv_restore(struct preempt *pr, struct pv *x)
{
    struct sv_pod *p = &pr->c->v->pods[x->pod];
    sched__queue_pend(pr->c->v, p, -1);
    sched__view_usage(pr->c->v, p, 1);
    p->counted = 1;
    sched__queue_pend(pr->c->v, p, 1);
    x->removed = 0;
    sched__view_epoch_usage(pr->c->v);
}

/* Re-plans on the view as it is. 1 fits (pr->plan updated), 0 not, or ERR_*. */
static int try_plan(struct preempt *pr, struct err *err)
{
    struct sched_cyc *c = pr->c;
    int rc = pr->pj->replan(c, pr->pj->ctx, err);
    pr->replans++;
    /* the plan's pods are allocated now: its queues must stay within their capabilities */
    if (rc == 1 && pr->queue >= 0 && !sched__queue_within_cap(c->v, pr->queue, pr->asked, NULL))
        rc = 0;
    if (rc == 1) {
        XGROW(pr->plan, c->nops + 1, pr->capplan);
        memcpy(pr->plan, c->ops, c->nops * sizeof(*c->ops));
        pr->nplan = c->nops;
        pr->plan_need_ok = 0;
    }
    for (size_t i = c->nops; i-- > 0;)
        sched__view_unbind(c->v, c->ops[i].pod);
    c->nops = 0;
    return rc;
}

static int plan_uses(const struct preempt *pr, int node)
{
    for (size_t i = 0; i < pr->nplan; i++)
        if (pr->plan[i].node == node)
            return 1;
    return 0;
}

/* The plan's pods on node pass their pod rules (inter-pod affinity, topology spread) with
 * what is on it now: kube-scheduler's SelectVictimsOnNode runs every filter again when it
 * reprieves a victim, so a victim whose anti-affinity keeps the job off the node is never
 * reprieved on resources alone. Each pod is checked without the plan's other pods, so a
 * rule that needs them answers "no" and the caller re-plans. */
/* The job's queues stay within their capabilities with the plan's pods (not in the view:
 * only try_plan allocates them) added. */
static int plan_within_cap(struct preempt *pr)
{
    const struct sched_view *v = pr->c->v;
    if (!pr->capped) /* no capability on the job's queue chain */
        return 1;
    if (!pr->plan_need_ok) { /* the plan's requests, summed once per plan */
        memset(pr->plan_need, 0, v->nres * sizeof(int64_t));
        for (size_t i = 0; i < pr->nplan; i++) {
            const struct sv_pod *p = &v->pods[pr->plan[i].pod];
            for (int k = 0; k < p->nreq; k++)
                pr->plan_need[p->req[k].res] += p->req[k].v;
        }
        pr->plan_need_ok = 1;
    }
    return sched__queue_within_cap(v, pr->queue, pr->asked, pr->plan_need);
}

static int plan_rules_ok(struct preempt *pr, int node)
{
    struct sched_view *v = pr->c->v;
    int ok = 1;
    for (size_t i = 0; ok && i < pr->nplan; i++) {
        if (pr->plan[i].node != node)
            continue;
        struct sched_rules r;
        int by;
        if (sched__rules_prepare(v, pr->plan[i].pod, &r))
            ok = sched__rules_filter(&r, node, &by) == SCHED_FIT_OK;
        sched__rules_release(&r);
    }
    return ok;
}

/* The current plan still fits node pn with what is on it now (no re-plan needed). Free
 * capacity is what the placer sees: nominations of equal or higher priority (other than
 * the job's own) reserve theirs, for the lowest-priority pod the plan puts there; the pod
 * rules must pass (plan_rules_ok) and the job's queues stay within their capabilities (a
 * victim of its own queue coming back takes from them). */
static int plan_fits_node(struct preempt *pr, int node)
{
    struct sched_view *v = pr->c->v;
    const struct sv_node *n = &v->nodes[node];
    int32_t prio = INT32_MAX;
    for (size_t i = 0; i < pr->nplan; i++) {
        const struct sv_pod *p = &v->pods[pr->plan[i].pod];
        if (pr->plan[i].node == node && p->prio < prio)
            prio = p->prio;
    }
    for (size_t r = 0; r < v->nres; r++) {
        int64_t need = 0;
        for (size_t i = 0; i < pr->nplan; i++) {
            const struct sv_pod *p = &v->pods[pr->plan[i].pod];
            for (int k = 0; pr->plan[i].node == node && k < p->nreq; k++)
                need += p->req[k].res == (int)r ? p->req[k].v : 0;
        }
        if (need && need > sched__free_for(v, n, (int)r, prio, pr->pj->jobs, pr->pj->njobs))
            return 0;
    }
    if (pr->queue >= 0 && !plan_within_cap(pr))
        return 0;
    return plan_rules_ok(pr, node);
}

static int node_removed(const struct preempt *pr, const struct pnode *pn)
{
    for (size_t i = 0; i < pn->nv; i++)
        if (pr->pv[pn->v[i]].removed)
            return 1;
    return 0;
}

static void node_set(struct preempt *pr, struct pnode *pn, int remove)
{
    for (size_t i = 0; i < pn->nv; i++) {
        struct pv *x = &pr->pv[pn->v[i]];
        if (remove && !x->removed)
            pv_remove(pr, x);
        else if (!remove && x->removed)
            pv_restore(pr, x);
    }
}

/* Budget violations, then the lexicographic cost (highest rank first), then the latest
 * start of the highest-priority victims, then name; *by: the criterion that decided. */
static int cost_cmp_by(const struct preempt *pr, const struct pnode *a, const struct pnode *b,
                       enum preempt_criterion *by)
{
    *by = PREEMPT_BY_PDB;
    if (a->viol != b->viol)
        return a->viol < b->viol ? -1 : 1;
    *by = PREEMPT_BY_PRIORITY;
    for (int r = pr->nranks; r-- > 0;)
        if (a->cost[r] != b->cost[r])
            return a->cost[r] < b->cost[r] ? -1 : 1;
    *by = PREEMPT_BY_START;
    if (a->top_start != b->top_start)
        return a->top_start > b->top_start ? -1 : 1;
    *by = PREEMPT_BY_NAME;
    return strcmp(pr->c->v->nodes[a->node].name, pr->c->v->nodes[b->node].name);
}

static int cmp_cost(const struct preempt *pr, const struct pnode *a, const struct pnode *b)
{
    enum preempt_criterion by;
    return cost_cmp_by(pr, a, b, &by);
}

static int cmp_pn_desc(const void *x, const void *y, void *ctx)
{
    const struct preempt *pr = ctx;
    return -cmp_cost(pr, &pr->pn[*(const int *)x], &pr->pn[*(const int *)y]);
}

/* Removed nodes (indexes into pr->pn), most expensive first. New. */
static int *removed_nodes(struct preempt *pr, size_t *n)
{
    int *ix = xcalloc(pr->npn + 1, sizeof(int));
    *n = 0;
    for (size_t i = 0; i < pr->npn; i++)
        if (node_removed(pr, &pr->pn[i]))
            ix[(*n)++] = (int)i;
    qsort_r(ix, *n, sizeof(int), cmp_pn_desc, pr);
    return ix;
}

/* (b) and the final check: victims on nodes the plan does not use go back. */
static int drop_unused(struct preempt *pr, struct err *err)
{
    int changed = 0, rc = 0;
    for (size_t i = 0; i < pr->npn; i++) {
        struct pnode *pn = &pr->pn[i];
        if (node_removed(pr, pn) && !plan_uses(pr, pn->node)) {
            node_set(pr, pn, 0);
            changed = 1;
        }
    }
    if (changed && (rc = try_plan(pr, err)) == 0) {
        /* The placer chose differently without them: free them one node at a time. */
        for (size_t i = 0; i < pr->npn && rc == 0; i++) {
            struct pnode *pn = &pr->pn[i];
            if (plan_uses(pr, pn->node))
                continue;
            node_set(pr, pn, 1);
            rc = try_plan(pr, err);
        }
        return rc < 0 ? rc : rc == 1 ? 0 : ERR_INTERNAL;
    }
    return rc < 0 ? rc : 0;
}

/* (c) whole nodes back, most expensive first, while the job still fits and its queues stay
 * within their capabilities (victims of its own queue, on nodes the plan does not use,
 * may be what keeps them there). */
static int drop_nodes(struct preempt *pr, struct err *err)
{
    size_t n;
    int *ix = removed_nodes(pr, &n), rc = 0;
    for (size_t i = 0; rc >= 0 && i < n; i++) {
        struct pnode *pn = &pr->pn[ix[i]];
        node_set(pr, pn, 0);
        if (!plan_uses(pr, pn->node)) { /* the plan holds, but its queues must too */
            if (pr->queue >= 0 && !plan_within_cap(pr))
                node_set(pr, pn, 1);
            continue;
        }
        if ((rc = try_plan(pr, err)) == 0)
            node_set(pr, pn, 1);
    }
    free(ix);
    return rc < 0 ? rc : 0;
}

static int cmp_victim_back(const void *x, const void *y, void *ctx)
{
    const struct preempt *pr = ctx;
    const struct pv *vx = &pr->pv[*(const int *)x], *vy = &pr->pv[*(const int *)y];
    const struct sv_pod *a = &pr->c->v->pods[vx->pod];
    const struct sv_pod *b = &pr->c->v->pods[vy->pod];
    if (vx->viol != vy->viol) /* SelectVictimsOnNode reprieves violating victims first */
        return vx->viol ? -1 : 1;
    return sched__more_important(pr, a, b);
}

/* (d) on each freed node, cheapest first, victims back while the job still fits: those that
 * violate a budget first, then the more important first (sched__more_important). */
static int add_back(struct preempt *pr, struct err *err)
{
    size_t n;
    int *ix = removed_nodes(pr, &n), rc = 0;
    for (size_t i = n; rc >= 0 && i-- > 0;) {
        struct pnode *pn = &pr->pn[ix[i]];
        /* With one victim, (c) already showed it cannot go back (fewer pods were
         * removed then than now). */
        if (pn->nv < 2)
            continue;
        qsort_r(pn->v, pn->nv, sizeof(int), cmp_victim_back, pr);
        for (size_t k = 0; rc >= 0 && k < pn->nv; k++) {
            struct pv *x = &pr->pv[pn->v[k]];
            pv_restore(pr, x);
            if (plan_fits_node(pr, pn->node))
                continue;
            if ((rc = try_plan(pr, err)) == 0)
                pv_remove(pr, x);
        }
    }
    free(ix);
    return rc < 0 ? rc : 0;
}

/* Dry-run tiers, tried in turn until the job fits: victims that break no gang and violate
 * no budget, then every victim that breaks no gang, then all (a tier that adds nobody is
 * skipped). */
static int in_tier(const struct pv *x, int tier)
{
    return tier == 2 || (x->gang < 0 && (tier == 1 || !x->viol));
}

/* The minimal victim set; on return pr->pv[].removed marks the victims and pr->plan
 * is a plan that fits once they are gone. *fits 0 when even all victims do not help. */
static int choose(struct preempt *pr, int *fits, struct err *err)
{
    int rc = 0;
    *fits = 0;
    for (int tier = 0; tier < 3 && rc != 1; tier++) {
        size_t added = 0;
        for (size_t i = 0; i < pr->npv; i++)
            if (!pr->pv[i].removed && in_tier(&pr->pv[i], tier)) {
                pv_remove(pr, &pr->pv[i]);
                added++;
            }
        if (added && (rc = try_plan(pr, err)) < 0)
            return rc;
        pr->nobreak_plan = rc == 1 && tier < 2;
    }
    if (rc != 1)
        return rc;
    *fits = 1;
    if ((rc = drop_nodes(pr, err)) < 0 || (rc = add_back(pr, err)) < 0)
        return rc;
    return drop_unused(pr, err);
}

/* pr->chosen_by: what decided the plan's nodes (those it evicts on) against the cheapest
 * candidate node it leaves alone: the criterion that ranks the dearest chosen node below it,
 * or the placement when the plan needed a dearer node. */
static void decide_by(struct preempt *pr)
{
    const struct pnode *worst = NULL, *best = NULL;
    for (size_t i = 0; i < pr->npn; i++) {
        const struct pnode *pn = &pr->pn[i];
        int chosen = 0, offers = 0;
        for (size_t k = 0; k < pn->nv; k++) {
            const struct pv *x = &pr->pv[pn->v[k]];
            chosen |= x->removed && !x->terminating;
            offers |= !x->terminating;
        }
        if (chosen && (!worst || cmp_cost(pr, pn, worst) > 0))
            worst = pn;
        else if (!chosen && offers && (!best || cmp_cost(pr, pn, best) < 0))
            best = pn;
    }
    enum preempt_criterion by = PREEMPT_BY_ONLY;
    if (!worst)
        pr->chosen_by = -1;
    else if (!best)
        pr->chosen_by = PREEMPT_BY_ONLY;
    else
        pr->chosen_by = cost_cmp_by(pr, worst, best, &by) < 0 ? (int)by : PREEMPT_BY_PLACEMENT;
}

/* ---- the entry point ---- */

static int any_removed(const struct preempt *pr)
{
    for (size_t i = 0; i < pr->npv; i++)
        if (pr->pv[i].removed)
            return 1;
    return 0;
}

/* A job whose nominations a higher-priority preemptor cleared says so in its verdict until
 * it binds or has a plan of its own again. */
static void cleared_note(struct sched_cyc *c, const struct sched_preempt_job *pj,
                         struct sched_preempt_verdict *out)
{
    const char *by = NULL;
    for (size_t m = 0; m < pj->njobs && !by; m++)
        by = c->v->jobs[pj->jobs[m]].cleared_by;
    if (!by || out->code < 0)
        return;
    size_t len = strlen(out->reason);
    snprintf(out->reason + len, sizeof(out->reason) - len, WHY_MSG_PREEMPT_CLEARED, len ? "; " : "",
             by);
    if (!out->detail)
        out->detail = json_object();
    json_object_set_new(out->detail, "nominationsClearedBy", json_string(by));
}

int sched__preempt_nominated_ops(struct sched_cyc *c)
{
    for (size_t i = 0; i < c->nops; i++)
        if (c->v->pods[c->ops[i].pod].m.nominated_node)
            return 1;
    return 0;
}

static void preempt_free(struct preempt *pr)
{
    for (size_t i = 0; i < pr->npn; i++) {
        free(pr->pn[i].v);
        free(pr->pn[i].cost);
    }
    free(pr->pn);
    free(pr->pv);
    free(pr->plan);
    free(pr->shapes);
    free(pr->asked);
    free(pr->plan_need);
    free(pr->surplus);
    free(pr->surplus_job);
    free(pr->gang_ok);
    sched__reclaim_end(pr);
    sched__pdb_end(pr);
}

/* The preemptor's queue and what its pending pods ask for. */
static void preemptor_setup(struct preempt *pr)
{
    struct sched_view *v = pr->c->v;
    pr->queue = v->jobs[pr->pj->job].queue;
    pr->asked = xcalloc(v->nres + 1, sizeof(int64_t));
    pr->plan_need = xcalloc(v->nres + 1, sizeof(int64_t));
    for (size_t i = 0; i < pr->pj->npods; i++) {
        const struct sv_pod *p = &v->pods[pr->pj->pods[i]];
        for (int k = 0; k < p->nreq; k++)
            pr->asked[p->req[k].res] += p->req[k].v;
    }
    for (int q = pr->queue; q >= 0 && !pr->capped; q = v->queues[q].parent)
        for (size_t r = 0; r < v->nres; r++)
            pr->capped |= v->queues[q].realcap[r] >= 0;
}

/* Back to no search: the next search starts afresh (decision time and re-plans count on). */
static void preempt_reset(struct preempt *pr)
{
    preempt_free(pr);
    struct preempt keep = {.c = pr->c, .pj = pr->pj, .prio = pr->prio, .replans = pr->replans};
    *pr = keep;
    preemptor_setup(pr);
}

/* One search: potential victims (reclaim's wide or narrow pool, queue_reclaim.c), the
 * minimal set, whole gangs. Returns 1 when a plan fits, 0 when not (pr->npv 0: nobody to
 * evict), or ERR_*. The view is as it was. */
static int search(struct preempt *pr, int narrow, struct err *err)
{
    int fits = 0;
    sched__reclaim_begin(pr, narrow);
    sched__pdb_begin(pr);
    sched__collect_victims(pr);
    if (!pr->npv)
        return 0;
    int rc = choose(pr, &fits, err);
    for (size_t i = 0; i < pr->npv; i++)
        if (pr->pv[i].removed) {
            pv_restore(pr, &pr->pv[i]);
            pr->pv[i].removed = 1; /* still marks the victim */
        }
    if (rc < 0)
        return rc;
    if (fits) {
        decide_by(pr);
        sched__complete_gangs(pr);
    }
    return fits;
}

int sched__preempt(struct sched_cyc *c, const struct sched_preempt_job *pj,
                   struct sched_preempt_verdict *out, struct err *err)
{
    struct preempt pr = {.c = c, .pj = pj};
    int rc = 0;
    pr.prio = sched__job_priority(c->v, &c->v->jobs[pj->job]);
    if (sched__preempt_ineligible(c, pj, out))
        goto out;
    preemptor_setup(&pr);
    if (sched__memo_find(&pr, out))
        goto out;
    int64_t t0 = clock_mono_ns(); /* the decision: victims, dry run, minimal set */
    rc = search(&pr, 0, err);
    /* The wide pool let the search take a queue under its deserved share: search again on
     * the pool that cannot. */
    if (rc == 1 && pr.rec && !sched__reclaim_within(&pr)) {
        preempt_reset(&pr);
        rc = search(&pr, 1, err);
    }
    pr.decision_ms = (double)(clock_mono_ns() - t0) / 1e6;
    if (rc < 0)
        goto out;
    /* A plan that evicts nothing and awaits no victim would nominate the job to room that
     * is free already, where the placer failed: it would wait for nothing, forever. */
    if (rc == 1 && !any_removed(&pr))
        rc = 0;
    if (rc == 0 && !pr.npv)
        sched__preempt_no_victims(&pr, out);
    else if (rc == 0)
        sched__preempt_not_helpful(&pr, out);
    else
        rc = sched__evict_execute(&pr, out, err);
    if (rc == 0 && !out->attempted)
        sched__memo_put(&pr, out);
out:
    if (rc == 0)
        cleared_note(c, pj, out);
    preempt_free(&pr);
    return rc;
}
