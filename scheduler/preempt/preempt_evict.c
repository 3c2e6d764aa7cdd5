/*
 * preempt_evict.c - executing a preemption plan chosen by preempt.c, and the "evicted" record
 * when housekeeping removes a victim after its grace period.
 *
 * Victims stay bound (their requests still count) with a deletionTimestamp until
 * housekeeping removes them (standalone) or the mirror reports them gone; the
 * preemptor's pods carry status.nominatedNodeName, which place_fit.c turns into a reservation
 * against lower-priority pods. The preemptor binds in a later cycle, through the normal
 * attempt, once the room is really free (preempt_ledger.c records when).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "place.h"
#include "preempt.h"
#include "why.h"

#define DISRUPTION_MSG "muster: preempting to accommodate higher priority pods"

/* When the victim started: its PodScheduled condition, else its creation. */
static int64_t started_ms(json_t *pod, const struct sv_pod *p)
{
    int64_t ms;
    return model_pod_condition_time(pod, "PodScheduled", &ms) == 0 ? ms : p->m.creation_ms;
}

static int mark_victim(struct preempt *pr, struct pv *x, const char *msg, json_t *rs,
                       struct err *err)
{
    struct sched_cyc *c = pr->c;
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
    double secs = (double)(c->now_ms - started_ms(pod, p)) / 1000.0;
    for (int k = 0; k < p->nreq && secs > 0; k++) {
        const char *res = c->v->res[p->req[k].res];
        if (p->req[k].res == SV_RES_PODS)
            continue;
        double q = (double)p->req[k].v / (model_resource_is_milli(res) ? 1000.0 : 1.0);
        json_t *old = json_object_get(rs, res);
        json_object_set_new(rs, res, json_real((old ? json_real_value(old) : 0) + q * secs));
    }
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

static int in_plan_job(const struct preempt *pr, int job)
{
    for (size_t m = 0; m < pr->pj->njobs; m++)
        if (pr->pj->jobs[m] == job)
            return 1;
    return 0;
}

/* A lower-priority preemptor's nomination on a node of the plan (or on a node a
 * higher-priority job took, sched__preempt_displaced): its plan is void, so every
 * nomination of its job and GangGroup is cleared (cleared: pod keys; jobs: job id -> true,
 * for the ledger and the whys); by: the job that took the room. */
static int clear_job(struct sched_cyc *c, const char *by, int job, json_t *cleared, json_t *jobs,
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
            json_array_append_new(cleared, json_string(v->pods[pi].key));
            rc = sched__pod_nominate(c, pi, -1, err);
        }
        json_object_set_new(jobs, mj->id, json_true());
        free(mj->cleared_by);
        mj->cleared_by = xstrdup(by);
    }
    return rc;
}

/* Nominations for the plan; lower-priority nominations on its nodes are cleared with
 * their jobs' whole plans. Fills nodes (sorted names), cleared (pod keys) and
 * cleared_jobs. */
static int nominate(struct preempt *pr, json_t *nodes, json_t *pods, json_t *pod_nodes,
                    json_t *cleared, json_t *cleared_jobs, struct err *err)
{
    struct sched_cyc *c = pr->c;
    struct sched_view *v = c->v;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < pr->nplan; i++) {
        int ni = pr->plan[i].node;
        rc = sched__pod_nominate(c, pr->plan[i].pod, ni, err);
        json_array_append_new(pods, json_string(v->pods[pr->plan[i].pod].key));
        json_array_append_new(pod_nodes, json_string(v->nodes[ni].name));
        size_t k;
        json_t *e;
        int seen = 0;
        json_array_foreach(nodes, k, e) seen |= !strcmp(json_string_value(e), v->nodes[ni].name);
        if (seen)
            continue;
        json_array_append_new(nodes, json_string(v->nodes[ni].name));
        struct sv_node *n = &v->nodes[ni];
        for (size_t q = 0; rc == 0 && q < n->nnom;) {
            int pi = n->nominated[q];
            const struct sv_pod *p = &v->pods[pi];
            if (p->prio < pr->prio && !in_plan_job(pr, p->job)) {
                rc = clear_job(c, v->jobs[pr->pj->job].id, p->job, cleared, cleared_jobs,
                               err); /* removes [q] */
            } else {
                q++;
            }
        }
    }
    return rc;
}

static int audit(struct sched_cyc *c, json_t *rec, struct err *err)
{
    json_object_set_new(rec, "cycle", json_integer((json_int_t)c->cycle));
    int rc = store_audit_append(c->txn, rec, NULL, err);
    json_decref(rec);
    return rc;
}

/* One "preempted" record per victim job (job = the victim's job). */
static int audit_victims(struct preempt *pr, json_t *entry, json_t *victims, struct err *err)
{
    json_t *by_job = json_object();
    size_t i;
    json_t *x;
    json_array_foreach(victims, i, x)
    {
        const char *job = json_string_value(json_object_get(x, "job"));
        json_t *rec = json_object_get(by_job, job);
        if (!rec) {
            rec = json_pack("{s:s,s:s,s:O,s:O,s:O,s:[],s:[],s:s}", "kind",
                            store_audit_kind_name(STORE_AUDIT_PREEMPTED), "job", job, "preemptor",
                            json_object_get(entry, "preemptor"), "triggerPod",
                            json_object_get(entry, "triggerPod"), "ledger",
                            json_object_get(entry, "id"), "pods", "nodes", "reason",
                            MODEL_REASON_PREEMPTION_BY_SCHEDULER);
            json_object_set_new(by_job, job, rec);
        }
        json_array_append(json_object_get(rec, "pods"), json_object_get(x, "pod"));
        json_array_append(json_object_get(rec, "nodes"), json_object_get(x, "node"));
    }
    int rc = 0;
    const char *k;
    json_t *rec;
    json_object_foreach(by_job, k, rec)
    {
        if (rc == 0)
            rc = audit(pr->c, json_incref(rec), err);
    }
    json_decref(by_job);
    (void)pr;
    return rc;
}

static int gangs_broken(struct preempt *pr, json_t *broken)
{
    struct sched_view *v = pr->c->v;
    int n = 0;
    for (size_t i = 0; i < pr->npv; i++) {
        const struct sv_job *j = &v->jobs[v->pods[pr->pv[i].pod].job];
        if (!pr->pv[i].removed || pr->pv[i].terminating || !j->gang || !j->has_pg)
            continue;
        size_t k;
        json_t *e;
        int seen = 0;
        json_array_foreach(broken, k, e) seen |= !strcmp(json_string_value(e), j->id);
        if (seen)
            continue;
        int bound = 0, gone = 0;
        for (size_t q = 0; q < j->npods; q++) {
            const struct sv_pod *p = &v->pods[j->pods[q]];
            bound += p->node >= 0 && p->counted && !model_pod_terminal(&p->m) && !p->m.deletion_ms;
            for (size_t r = 0; r < pr->npv; r++)
                gone += pr->pv[r].removed && !pr->pv[r].terminating && pr->pv[r].pod == j->pods[q];
        }
        if (bound - gone < sched__job_min(j)) {
            json_array_append_new(broken, json_string(j->id));
            n++;
        }
    }
    return n;
}

/* The verdict of an executed plan (Preempting, or Reclaiming when a victim is of another
 * queue): what was preempted, what it waits for, whose nominations it cleared (cj), the
 * budgets it violates, with the ledger entry's id. */
static void executed_verdict(struct preempt *pr, json_t *entry, size_t nv, size_t nwait,
                             int nbroken, long nviol, json_t *nodes, json_t *cj, json_t *pdbs,
                             struct sched_preempt_verdict *out)
{
    char n1[32], n2[32], text[256];
    char n3[32];
    sched__preempt_count((long)(nv + nwait), n3, sizeof(n3));
    if (nv)
        snprintf(text, sizeof(text),
                 "preempted %s pods on %s nodes; waiting for %s victims to terminate",
                 sched__preempt_count((long)nv, n1, sizeof(n1)),
                 sched__preempt_count((long)json_array_size(nodes), n2, sizeof(n2)), n3);
    else
        snprintf(text, sizeof(text),
                 "nominated to %s nodes that earlier preemptions free; waiting for %s victims "
                 "to terminate",
                 sched__preempt_count((long)json_array_size(nodes), n2, sizeof(n2)), n3);
    if (json_array_size(cj)) {
        size_t len = strlen(text);
        snprintf(text + len, sizeof(text) - len, "; cleared the nominations of %s",
                 json_string_value(json_array_get(cj, 0)));
        len = strlen(text);
        if (json_array_size(cj) > 1)
            snprintf(text + len, sizeof(text) - len, " and %zu more lower-priority jobs",
                     json_array_size(cj) - 1);
    }
    if (nviol) {
        size_t len = strlen(text);
        snprintf(text + len, sizeof(text) - len,
                 "; %ld of them violating PodDisruptionBudget %s%s (no plan violated fewer)", nviol,
                 json_string_value(json_array_get(pdbs, 0)),
                 json_array_size(pdbs) > 1 ? " and others" : "");
    }
    if (pr->reclaim) {
        size_t len = strlen(text);
        snprintf(text + len, sizeof(text) - len, "; reclaimed from %s",
                 json_string_value(json_object_get(
                     json_array_get(json_object_get(entry, "victimQueues"), 0), "name")));
    }
    /* later cycles wait: PreemptionWaiting */
    out->code = pr->reclaim ? WHY_RECLAIMING : WHY_PREEMPTING;
    out->attempted = out->blocks = 1;
    snprintf(out->reason, sizeof(out->reason), "%s", text);
    out->detail = json_pack(
        "{s:O,s:i,s:i,s:O,s:O,s:O,s:i,s:O}", "ledger", json_object_get(entry, "id"), "victims",
        (int)nv, "gangsBroken", nbroken, "nominatedNodes", nodes, "clearedJobs", cj, "kind",
        json_object_get(entry, "kind"), "pdbViolations", (int)nviol, "pdbsViolated", pdbs);
}

/* The entry's "nominations" {pod: node} and "clearedJobs" [job] (returned, borrowed from
 * entry). */
static json_t *entry_nominations(json_t *entry, json_t *pods, json_t *pod_nodes,
                                 json_t *cleared_jobs)
{
    json_t *noms = json_object(), *cj = json_array(), *t;
    const char *cid;
    for (size_t i = 0; i < json_array_size(pods); i++)
        json_object_set(noms, json_string_value(json_array_get(pods, i)),
                        json_array_get(pod_nodes, i));
    json_object_set_new(entry, "nominations", noms);
    json_object_foreach(cleared_jobs, cid, t) json_array_append_new(cj, json_string(cid));
    json_object_set_new(entry, "clearedJobs", cj);
    return cj;
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

/* The ledger entry's "awaited": the terminating pods of earlier preemptions whose room
 * the plan reuses (*n of them). New. */
static json_t *awaited_json(struct preempt *pr, size_t *n)
{
    int *wix = chosen(pr, 1, n);
    json_t *awaited = json_array();
    for (size_t i = 0; i < *n; i++)
        json_array_append_new(awaited, json_string(pr->c->v->pods[pr->pv[wix[i]].pod].key));
    free(wix);
    return awaited;
}

/* The ledger entry's "victims": pod, job, node, priority and the budget its eviction
 * violates (pdb_of: pod key -> budget). New. */
static json_t *victims_json(struct preempt *pr, const int *vix, size_t nv, json_t *pdb_of)
{
    const struct sched_view *v = pr->c->v;
    json_t *victims = json_array();
    for (size_t i = 0; i < nv; i++) {
        const struct pv *x = &pr->pv[vix[i]];
        const struct sv_pod *p = &v->pods[x->pod];
        json_t *vo = json_pack("{s:s,s:s,s:s,s:i}", "pod", p->key, "job", v->jobs[p->job].id,
                               "node", v->nodes[x->node].name, "priority", (int)p->prio);
        json_t *budget = json_object_get(pdb_of, p->key);
        if (budget) /* its eviction violates this PodDisruptionBudget */
            json_object_set(vo, "pdbViolated", budget);
        json_array_append_new(victims, vo);
    }
    return victims;
}

int sched__evict_execute(struct preempt *pr, struct sched_preempt_verdict *out, struct err *err)
{
    pr->c->plan_epoch++; /* victims marked: remembered preemption failures no longer hold */
    struct sched_cyc *c = pr->c;
    struct sched_view *v = c->v;
    const char *job = v->jobs[pr->pj->job].id;
    int trig = pr->pj->trigger >= 0 ? pr->pj->trigger : pr->pj->pods[0];
    char *msg = xasprintf(DISRUPTION_MSG ", preemptor: %s, triggerpod: %s", job, v->pods[trig].key);
    size_t nv, nwait;
    int rc = 0, *vix = chosen(pr, 0, &nv);
    json_t *awaited = awaited_json(pr, &nwait);
    json_t *broken = json_array(), *pdbs = NULL, *pdb_of = NULL;
    int nbroken = gangs_broken(pr, broken); /* before the victims are marked */
    long nviol = sched__pdb_violations(pr, &pdbs, &pdb_of);
    json_t *victims = victims_json(pr, vix, nv, pdb_of), *rs = json_object(), *nodes = json_array(),
           *pods = json_array(), *cleared = json_array(), *pod_nodes = json_array(),
           *cleared_jobs = json_object();
    json_t *rq = json_pack("{s:O}", "victims", victims);
    sched__reclaim_entry(pr, rq); /* before the victims are marked: shares before and after */
    for (size_t i = 0; rc == 0 && i < nv; i++)
        rc = mark_victim(pr, &pr->pv[vix[i]], msg, rs, err);
    if (rc == 0)
        rc = nominate(pr, nodes, pods, pod_nodes, cleared, cleared_jobs, err);
    char ts[64];
    clock_format_rfc3339(c->now_ms, ts, sizeof(ts));
    json_t *entry = json_pack(
        "{s:I,s:s,s:I,s:s,s:s,s:i,s:O,s:O,s:O,s:{s:i,s:i,s:O,s:O,s:b},s:b,s:n,s:n,s:f,s:i}",
        "cycle", (json_int_t)c->cycle, "ts", ts, "tsMs", (json_int_t)c->now_ms, "preemptor", job,
        "triggerPod", v->pods[trig].key, "priority", (int)pr->prio, "victims", victims,
        "nominatedNodes", nodes, "nominatedPods", pods, "cost", "pods", (int)nv, "gangsBroken",
        nbroken, "brokenGangs", broken, "resourceSeconds", rs, "planBreaksNoGang", pr->nobreak_plan,
        "bound", 0, "boundAt", "latencyMs", "decisionMs", pr->decision_ms, "potentialVictims",
        (int)pr->npotential);
    json_object_set_new(entry, "awaited", awaited);
    json_object_set_new(entry, "pdbViolations", json_integer(nviol));
    json_object_set(entry, "pdbsViolated", pdbs);
    json_object_del(rq, "victims");
    json_object_update(entry, rq);
    json_decref(rq);
    json_object_set(entry, "clearedNominations", cleared);
    json_t *cj = entry_nominations(entry, pods, pod_nodes, cleared_jobs);
    const char *cid;
    json_t *t;
    if (rc == 0)
        rc = sched__ledger_add(c, entry, err);
    json_object_foreach(cleared_jobs, cid, t)
    {
        if (rc == 0)
            rc = sched__ledger_cleared(
                c, cid, job, (uint64_t)json_integer_value(json_object_get(entry, "id")), err);
    }
    if (rc == 0)
        rc = audit_victims(pr, entry, victims, err);
    if (rc == 0)
        rc = audit(c,
                   json_pack("{s:s,s:s,s:O,s:O,s:O,s:O}", "kind",
                             store_audit_kind_name(STORE_AUDIT_NOMINATED), "job", job, "pods", pods,
                             "nodes", pod_nodes, "cleared", cleared, "ledger",
                             json_object_get(entry, "id")),
                   err);
    for (size_t m = 0; rc == 0 && m < pr->pj->njobs; m++)
        starving(&v->jobs[pr->pj->jobs[m]]);
    if (rc == 0)
        executed_verdict(pr, entry, nv, nwait, nbroken, nviol, nodes, cj, pdbs, out);
    json_decref(entry);
    json_decref(victims);
    json_decref(rs);
    json_decref(nodes);
    json_decref(pods);
    json_decref(cleared);
    json_decref(cleared_jobs);
    json_decref(pod_nodes);
    json_decref(broken);
    json_decref(pdbs);
    json_decref(pdb_of);
    free(vix);
    free(msg);
    return rc;
}

/* ---- removal after the grace period ---- */

int sched__evict_removed(struct sched_cyc *c, const char *key, json_t *old, struct err *err)
{
    char *preemptor = NULL;
    int victim = 0;
    int rc = sched__ledger_victim_take(c->txn, c->opts, c->retain_scan_ms, key, c->now_ms, &victim,
                                       &preemptor, err);
    if (rc < 0 || !victim)
        return rc;
    char *job = sched__object_job(MODEL_POD, old);
    const char *node = json_string_value(json_object_get(json_object_get(old, "spec"), "nodeName"));
    json_t *rec =
        json_pack("{s:s,s:s?,s:[s],s:[s?],s:s?,s:s}", "kind",
                  store_audit_kind_name(STORE_AUDIT_EVICTED), "job", job, "pods", key, "nodes",
                  node, "preemptor", preemptor, "reason", MODEL_REASON_PREEMPTION_BY_SCHEDULER);
    free(preemptor);
    free(job);
    return audit(c, rec, err);
}

static int job_in(const int *jobs, size_t njobs, int job)
{
    for (size_t m = 0; m < njobs; m++)
        if (jobs[m] == job)
            return 1;
    return 0;
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
                             size_t npods, json_t **displaced, struct err *err)
{
    *displaced = NULL;
    struct sched_view *v = c->v;
    json_t *cleared = json_array(), *cleared_jobs = json_object();
    const char *by = v->jobs[jobs[0]].id;
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
                rc = clear_job(c, by, p->job, cleared, cleared_jobs, err); /* removes [q] */
            else
                q++;
        }
    }
    const char *cid;
    json_t *t;
    json_object_foreach(cleared_jobs, cid, t)
    {
        if (rc == 0)
            rc = sched__ledger_cleared(c, cid, by, 0, err);
        if (!*displaced)
            *displaced = json_array();
        json_array_append_new(*displaced, json_string(cid));
    }
    if (rc == 0 && json_array_size(cleared))
        rc = audit(c,
                   json_pack("{s:s,s:s,s:[],s:[],s:O}", "kind",
                             store_audit_kind_name(STORE_AUDIT_NOMINATED), "job", by, "pods",
                             "nodes", "cleared", cleared),
                   err);
    json_decref(cleared);
    json_decref(cleared_jobs);
    return rc;
}
