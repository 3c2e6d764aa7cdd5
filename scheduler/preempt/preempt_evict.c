/*
 * preempt_evict.c - executing a preemption plan chosen by preempt.c in the store and the
 * view, and clearing the nominations of lower preemptors whose room was taken.
 *
 * Victims stay bound (their requests still count) with a deletionTimestamp until
 * housekeeping removes them (standalone) or the mirror reports them gone; the
 * preemptor's pods carry status.nominatedNodeName, which place_fit.c turns into a reservation
 * against lower-priority pods. The preemptor binds in a later cycle, through the normal
 * attempt, once the room is really free (record/ledger.c records when).
 *
 * What it decided and did is a typed plan (record/plan.h); record/ledger_plan.c writes the
 * ledger entry, the audit records and the verdict from it. Nothing here builds JSON.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ledger.h"
#include "place.h"
#include "plan.h"
#include "preempt.h"

#define DISRUPTION_MSG "muster: preempting to accommodate higher priority pods"

/* When the victim started: its PodScheduled condition, else its creation. */
static int64_t started_ms(json_t *pod, const struct sv_pod *p)
{
    int64_t ms;
    return model_pod_condition_time(pod, "PodScheduled", &ms) == 0 ? ms : p->m.creation_ms;
}

/* Marks victim x (DisruptionTarget, a deletionTimestamp) in the store and the view, and
 * notes how long it ran. */
static int mark_victim(struct sched_cyc *c, struct preempt_victim *x, const char *msg,
                       struct err *err)
{
    struct sv_pod *p = &c->v->pods[x->pod];
    json_t *pod = NULL;
    int rc = store_get(c->txn, MODEL_POD, p->key, &pod, err);
    if (rc < 0)
        return rc;
    /* Milliseconds: the grace period is measured from this time, also after a rebuild. */
    char ts[64];
    clock_format_rfc3339_ms(c->now_ms, ts, sizeof(ts));
    model_pod_set_deletion(pod, ts);
    model_pod_set_condition(pod, MODEL_COND_DISRUPTION_TARGET, "True",
                            MODEL_REASON_PREEMPTION_BY_SCHEDULER, msg, ts);
    x->ran_s = (double)(c->now_ms - started_ms(pod, p)) / 1000.0;
    rc = store_put(c->txn, MODEL_POD, pod, NULL, err);
    json_decref(pod);
    /* The exact time, as stored (0 means "not deleting"). */
    if (rc == 0) {
        sched__view_pod_terminating(c->v, x->pod, c->now_ms > 0 ? c->now_ms : 1);
        p->m.preempted = 1;
    }
    return rc;
}

int sched__pod_nominate(struct sched_cyc *c, int pi, int ni, struct err *err)
{
    struct sched_view *v = c->v;
    c->plan_epoch++; /* reservations change: remembered preemption failures no longer hold */
    struct sv_pod *p = &v->pods[pi];
    json_t *pod = NULL;
    int rc = store_get(c->txn, MODEL_POD, p->key, &pod, err);
    if (rc < 0)
        return rc;
    model_pod_set_nominated(pod, ni >= 0 ? v->nodes[ni].name : NULL);
    rc = store_put(c->txn, MODEL_POD, pod, NULL, err);
    json_decref(pod);
    if (rc < 0)
        return rc;
    if (ni < 0 && p->nominated >= 0) /* reserved room is free for others again */
        sched__wait_freed(v, p->nominated);
    sched__view_set_nominated(v, pi, ni);
    return 0;
}

static int cmp_pv_key(const void *x, const void *y, void *ctx)
{
    const struct preempt *pr = ctx;
    return strcmp(pr->c->v->pods[pr->pv[*(const int *)x].pod].key,
                  pr->c->v->pods[pr->pv[*(const int *)y].pod].key);
}

static int job_in(const int *jobs, size_t njobs, int job)
{
    for (size_t m = 0; m < njobs; m++)
        if (jobs[m] == job)
            return 1;
    return 0;
}

/* A lower-priority preemptor's nomination on a node of the plan (or on a node a
 * higher-priority job took, sched__preempt_displaced): its plan is void, so every
 * nomination of its job and GangGroup is cleared (into cl); by: the job that took the
 * room. */
static int clear_job(struct sched_cyc *c, int by, int job, struct preempt_cleared *cl,
                     struct err *err)
{
    struct sched_view *v = c->v;
    const struct sv_job *j = &v->jobs[job];
    int members[1 + 64], nm = 0, rc = 0;
    members[nm++] = job;
    for (size_t g = 0; j->has_pg && g < j->pg.ngroups && nm < 65; g++) {
        int mj = sched__view_gang_job(v, j->pg.groups[g]);
        if (mj >= 0 && mj != job)
            members[nm++] = mj;
    }
    for (int m = 0; rc == 0 && m < nm; m++) {
        struct sv_job *mj = &v->jobs[members[m]];
        for (size_t i = 0; rc == 0 && i < mj->npods; i++) {
            int pi = mj->pods[i];
            if (v->pods[pi].nominated < 0)
                continue;
            sched__cleared_add(cl, pi, members[m]);
            rc = sched__pod_nominate(c, pi, -1, err);
        }
        sched__cleared_add(cl, -1, members[m]);
        free(mj->cleared_by);
        mj->cleared_by = xstrdup(v->jobs[by].id);
    }
    return rc;
}

/* Nominations for the plan (p->noms, p->nodes); lower-priority nominations on its nodes
 * are cleared with their jobs' whole plans (p->cleared). */
static int nominate(struct preempt *pr, struct preempt_plan *p, struct err *err)
{
    struct sched_cyc *c = pr->c;
    struct sched_view *v = c->v;
    int rc = 0;
    p->noms = xcalloc(pr->nplan + 1, sizeof(*p->noms));
    p->nodes = xcalloc(pr->nplan + 1, sizeof(int));
    for (size_t i = 0; rc == 0 && i < pr->nplan; i++) {
        int ni = pr->plan[i].node;
        rc = sched__pod_nominate(c, pr->plan[i].pod, ni, err);
        p->noms[p->nnoms++] = pr->plan[i];
        if (job_in(p->nodes, p->nnodes, ni))
            continue;
        p->nodes[p->nnodes++] = ni;
        struct sv_node *n = &v->nodes[ni];
        for (size_t q = 0; rc == 0 && q < n->nnom;) {
            const struct sv_pod *np = &v->pods[n->nominated[q]];
            if (np->prio < pr->prio && !job_in(pr->pj->jobs, pr->pj->njobs, np->job))
                rc = clear_job(c, pr->pj->job, np->job, &p->cleared, err); /* removes [q] */
            else
                q++;
        }
    }
    return rc;
}

/* The gangs evicting the chosen victims leaves below minMember. */
static void gangs_broken(struct preempt *pr, struct preempt_plan *p)
{
    struct sched_view *v = pr->c->v;
    p->broken = xcalloc(pr->npv + 1, sizeof(int));
    for (size_t i = 0; i < pr->npv; i++) {
        int job = v->pods[pr->pv[i].pod].job;
        const struct sv_job *j = &v->jobs[job];
        if (!pr->pv[i].removed || pr->pv[i].terminating || !j->gang || !j->has_pg ||
            job_in(p->broken, p->nbroken, job))
            continue;
        int bound = 0, gone = 0;
        for (size_t q = 0; q < j->npods; q++) {
            const struct sv_pod *jp = &v->pods[j->pods[q]];
            bound +=
                jp->node >= 0 && jp->counted && !model_pod_terminal(&jp->m) && !jp->m.deletion_ms;
            for (size_t r = 0; r < pr->npv; r++)
                gone += pr->pv[r].removed && !pr->pv[r].terminating && pr->pv[r].pod == j->pods[q];
        }
        if (bound - gone < sched__job_min(j))
            p->broken[p->nbroken++] = job;
    }
}

/* A member of a preemptor with a plan: it starves (waits for its victims), on a plan of
 * its own. */
static void starving(struct sv_job *mj)
{
    mj->starving = 1;
    free(mj->cleared_by);
    mj->cleared_by = NULL;
}

/* The pods of the chosen victims (terminating: those of earlier preemptions whose room the
 * plan reuses, else those it evicts) as indexes into pr->pv, in key order; new. */
static int *chosen(struct preempt *pr, int terminating, size_t *n)
{
    int *ix = xcalloc(pr->npv + 1, sizeof(int));
    *n = 0;
    for (size_t i = 0; i < pr->npv; i++)
        if (pr->pv[i].removed && !pr->pv[i].terminating == !terminating)
            ix[(*n)++] = (int)i;
    qsort_r(ix, *n, sizeof(int), cmp_pv_key, pr);
    return ix;
}

/* The plan as the search left it, before anything is marked: victims, what it awaits, the
 * gangs it breaks, the budgets it violates, the queues' shares. */
static void plan_chosen(struct preempt *pr, struct preempt_plan *p)
{
    const struct sched_view *v = pr->c->v;
    int trig = pr->pj->trigger >= 0 ? pr->pj->trigger : pr->pj->pods[0];
    sched__plan_init(p, pr->pj->job, trig, pr->prio);
    size_t n;
    int *ix = chosen(pr, 0, &n);
    p->victims = xcalloc(n + 1, sizeof(*p->victims));
    for (size_t i = 0; i < n; i++) {
        const struct pv *x = &pr->pv[ix[i]];
        p->victims[i] = (struct preempt_victim){
            .pod = x->pod, .node = x->node, .queue = v->jobs[v->pods[x->pod].job].queue};
    }
    p->nvictims = n;
    free(ix);
    ix = chosen(pr, 1, &p->nawaited);
    p->awaited = xcalloc(p->nawaited + 1, sizeof(int));
    for (size_t i = 0; i < p->nawaited; i++)
        p->awaited[i] = pr->pv[ix[i]].pod;
    free(ix);
    gangs_broken(pr, p);
    sched__pdb_violations(pr, p);
    sched__reclaim_plan(pr, p); /* shares before and after */
    p->npotential = pr->npotential;
    p->nobreak = pr->nobreak_plan;
    p->chosen_by = pr->chosen_by;
    p->decision_ms = pr->decision_ms;
}

int sched__evict_execute(struct preempt *pr, struct sched_preempt_verdict *out, struct err *err)
{
    pr->c->plan_epoch++; /* victims marked: remembered preemption failures no longer hold */
    struct sched_cyc *c = pr->c;
    struct sched_view *v = c->v;
    struct preempt_plan p;
    plan_chosen(pr, &p);
    char *msg = xasprintf(DISRUPTION_MSG ", preemptor: %s, triggerpod: %s", v->jobs[p.job].id,
                          v->pods[p.trigger].key);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p.nvictims; i++)
        rc = mark_victim(c, &p.victims[i], msg, err);
    if (rc == 0)
        rc = nominate(pr, &p, err);
    if (rc == 0)
        rc = sched__record_preemption(c, &p, out, err);
    for (size_t m = 0; rc == 0 && m < pr->pj->njobs; m++) {
        starving(&v->jobs[pr->pj->jobs[m]]);
        rc = sched__ledger_starving(c, v->jobs[pr->pj->jobs[m]].id, err);
    }
    sched__plan_release(&p);
    free(msg);
    return rc;
}

/* Requested amount of resource r of the terminating pods on node ni (a walk of the pods:
 * only asked when a nomination seems displaced). */
static int64_t terminating_on(const struct sched_view *v, int ni, int r)
{
    int64_t sum = 0;
    for (size_t i = 0; i < v->npods; i++) {
        const struct sv_pod *p = &v->pods[i];
        if (!p->alive || p->node != ni || !p->counted || !p->m.deletion_ms)
            continue;
        for (int k = 0; k < p->nreq; k++)
            sum += p->req[k].res == r ? p->req[k].v : 0;
    }
    return sum;
}

int sched__preempt_displaced(struct sched_cyc *c, const int *jobs, size_t njobs, const int *pods,
                             size_t npods, struct preempt_cleared *cl, struct err *err)
{
    struct sched_view *v = c->v;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < npods; i++) {
        const struct sv_pod *placed = &v->pods[pods[i]];
        if (placed->node < 0)
            continue;
        struct sv_node *n = &v->nodes[placed->node];
        for (size_t q = 0; rc == 0 && q < n->nnom;) {
            const struct sv_pod *p = &v->pods[n->nominated[q]];
            /* the room it waits for: free now plus what terminating pods there release */
            int fits = 1;
            for (int k = 0; fits && k < p->nreq; k++) {
                int r = p->req[k].res;
                int64_t f = n->alloc[r] - n->used[r];
                if (p->req[k].v > f)
                    f += terminating_on(v, placed->node, r);
                fits = p->req[k].v <= f;
            }
            if (!fits && p->prio < placed->prio && !job_in(jobs, njobs, p->job))
                rc = clear_job(c, jobs[0], p->job, cl, err); /* removes [q] */
            else
                q++;
        }
    }
    if (rc == 0)
        rc = sched__record_displaced(c, jobs[0], cl, err);
    return rc;
}
