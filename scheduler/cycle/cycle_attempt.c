/*
 * cycle_attempt.c - one job attempt (a statement): gang rules, placement, outcome.
 *
 * Gang (DESIGN.md section 3): a PodGroup needs minMember pods placed (bound +
 * placed this cycle); with fewer member pods than minMember it is not tried; a
 * GangGroup (the groups annotation) succeeds only if every PodGroup in it
 * satisfies its own minMember; a gang already satisfied places later pods one
 * by one (partial placement is fine).
 *
 * Match policy (the PodGroup's match-policy annotation, model.h): which pods count toward
 * minMember. once-satisfied (the default) and waiting-and-running count bound (alive) and
 * placed pods, and a gang with minMember alive is satisfied; only-waiting counts only the
 * pods placed by the attempt, so it is never satisfied by what is bound.
 * Nominations are binding: a job whose pending pods are all nominated (a preemptor) is
 * placed on its nominated nodes (place_nominated), waiting while victims terminate there.
 * A pending pod that carries a field muster does not support (model_unsupported_field:
 * only mirrored pods can) blocks its job.
 *
 * The why never misleads: a job whose demand is larger than the whole cluster's
 * allocatable (or its MustGather layer's largest domain) is answered before any placement
 * (cycle_demand.c); preemption is tried only when it could help
 * (not when a pod the job needs fits no node even empty: a nodeSelector nobody carries, a
 * request larger than any node), and the why then says why it was not relevant.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle.h"
#include "fmt.h"
#include "place.h"
#include "plan.h"
#include "preempt.h"
#include "resv_record.h"
#include "why.h"
#include "why_msg.h"

static int cmp_job_id(const void *x, const void *y, void *ctx)
{
    const struct sched_view *v = ctx;
    return strcmp(v->jobs[*(const int *)x].id, v->jobs[*(const int *)y].id);
}

/* The job and every existing PodGroup of its GangGroup, in id order. */
static void collect_members(struct sched_cyc *c, int ji, struct sched_attempt *a)
{
    struct sched_view *v = c->v;
    const struct sv_job *j = &v->jobs[ji];
    size_t cap = 1 + (j->has_pg ? j->pg.ngroups : 0);
    a->rq.jobs = xcalloc(cap + 1, sizeof(int));
    a->rq.m = xcalloc(cap + 1, sizeof(*a->rq.m));
    a->rq.jobs[a->rq.njobs++] = ji;
    for (size_t g = 0; j->has_pg && g < j->pg.ngroups; g++) {
        int mj = sched__view_gang_job(v, j->pg.groups[g]);
        if (mj < 0 || !v->jobs[mj].has_pg)
            sched__blocker_add(&a->blockers, WHY_GROUP_MEMBER_MISSING,
                               json_pack("{s:s}", "podGroup", j->pg.groups[g]),
                               WHY_MSG_GROUP_MEMBER_MISSING, j->pg.groups[g]);
        else if (sched__place_member(&a->rq, mj) < 0)
            a->rq.jobs[a->rq.njobs++] = mj;
    }
    qsort_r(a->rq.jobs, a->rq.njobs, sizeof(int), cmp_job_id, v);
    sched__place_result_init(&a->res, a->rq.njobs);
}

/* Merges a member's usable spec: the narrowest MustGather wins, else the narrowest
 * PreferGather; the winner's podCountMultiple entries come with it (Koordinator uses one
 * gang's spec for the whole GangGroup). */
static void merge_spec(struct sched_attempt *a, const struct gather_spec *s)
{
    if (!a->rq.has_spec || s->must > a->rq.spec.must ||
        (a->rq.spec.must < 0 && s->prefer > a->rq.spec.prefer))
        a->rq.spec = *s;
    a->rq.has_spec = 1;
}

/* Members and the checks that need no placement: PodGroup present, GangGroup
 * complete, enough member pods, a usable topology spec. */
static void members_and_checks(struct sched_cyc *c, int ji, struct sched_attempt *a)
{
    struct sched_view *v = c->v;
    collect_members(c, ji, a);
    a->rq.spec.must = a->rq.spec.prefer = a->rq.spec.job = -1;
    for (size_t m = 0; m < a->rq.njobs; m++) {
        struct sv_job *mj = &v->jobs[a->rq.jobs[m]];
        struct place_member *am = &a->rq.m[m];
        mj->cycle_seen = c->cycle;
        const struct sv_pod *gated = NULL, *unsupported = NULL;
        char tmsg[256];
        for (size_t i = 0; i < mj->npods; i++) {
            const struct sv_pod *p = &v->pods[mj->pods[i]];
            am->bound += model_pod_gang_bound(&p->m);
            am->pending += sched__pod_pending(p);
            if (sched__pod_pending(p) && p->m.gated && !gated)
                gated = p;
            if (!unsupported && p->m.unsupported && sched__pod_pending(p))
                unsupported = p;
        }
        if (gated) /* as kube-scheduler, a gated pod waits; its gang waits with it */
            sched__blocker_add(&a->blockers, WHY_SCHEDULING_GATED,
                               json_pack("{s:s}", "pod", gated->key), WHY_MSG_SCHEDULING_GATED,
                               gated->key);
        if (unsupported) /* mirrored: it could not be refused, so it is never placed */
            sched__blocker_add(&a->blockers, WHY_UNSUPPORTED_FIELD,
                               json_pack("{s:s,s:s}", "pod", unsupported->key, "field",
                                         unsupported->m.unsupported),
                               WHY_MSG_UNSUPPORTED_FIELD, unsupported->key,
                               unsupported->m.unsupported, unsupported->m.unsupported_why);
        int need = sched__job_min(mj);
        int only_waiting = mj->has_pg && mj->pg.match_policy == MODEL_MATCH_ONLY_WAITING;
        am->base = only_waiting ? 0 : am->bound;
        am->satisfied = mj->has_pg && !only_waiting && am->bound >= need;
        if (mj->gang && !mj->has_pg)
            sched__blocker_add(&a->blockers, WHY_PODGROUP_MISSING,
                               json_pack("{s:s}", "podGroup", mj->id), WHY_MSG_PODGROUP_MISSING,
                               mj->id);
        else if (sched__job_class_missing(v, mj))
            sched__blocker_add(
                &a->blockers, WHY_PRIORITY_CLASS_MISSING,
                json_pack("{s:s,s:s}", "podGroup", mj->id, "priorityClass", mj->pg.priority_class),
                WHY_MSG_PRIORITY_CLASS_MISSING, mj->id, mj->pg.priority_class);
        else if (!am->satisfied && am->base + am->pending >= need &&
                 sched__job_tasks_short(v, mj, 1, tmsg, sizeof(tmsg)))
            sched__blocker_add(&a->blockers, WHY_MEMBERS_MISSING,
                               json_pack("{s:s,s:i,s:i}", "podGroup", mj->id, "minMember", need,
                                         "members", am->base + am->pending),
                               "%s", tmsg);
        else if (am->base + am->pending < need)
            sched__blocker_add(&a->blockers, WHY_MEMBERS_MISSING,
                               json_pack("{s:s,s:i,s:i}", "podGroup", mj->id, "minMember", need,
                                         "members", am->base + am->pending),
                               WHY_MSG_MEMBERS_MISSING, mj->id, am->base + am->pending,
                               WHY_PLURAL(am->base + am->pending),
                               only_waiting ? WHY_MSG_MEMBERS_ONLY_WAITING : "", need);
        if (mj->has_pg && mj->pg.has_spec) {
            struct gather_spec gs;
            char msg[256];
            int code = sched__gather_spec(sched__topo_get(v), &mj->pg, &gs, msg, sizeof(msg));
            if (code >= 0)
                sched__blocker_add(&a->blockers, code, json_pack("{s:s}", "podGroup", mj->id),
                                   WHY_MSG_PODGROUP_SPEC, mj->id, msg);
            else {
                gs.job = a->rq.jobs[m];
                merge_spec(a, &gs);
            }
        }
    }
}

/* 1 when some node that passes the shape's static filters could hold it empty. */
static int shape_can_fit(struct sched_cyc *c, const struct sv_shape *sh)
{
    struct sched_view *v = c->v;
    int code = sched__why_nf_code(c, (int)(sh - v->shapes));
    if (code != -2) /* the node filter of this cycle knows: nodes do not change within a cycle */
        return code != WHY_NO_NODES && code != WHY_NO_MATCHING_NODE &&
               code != WHY_EXCEEDS_ALLOCATABLE;
    size_t nn;
    const int *order = sched__view_node_order(v, &nn);
    for (size_t i = 0; i < nn; i++) {
        const struct sv_node *n = &v->nodes[order[i]];
        int ok = sched__fit_static(n, sh) == SCHED_FIT_OK;
        for (int k = 0; ok && k < sh->nreq; k++)
            ok = sh->req[k].v <= n->alloc[sh->req[k].res];
        if (ok)
            return 1;
    }
    return 0;
}

/* Fills a->moot when preemption cannot help: a member still needs more pods than it has
 * pods that fit some node even with every other pod removed. */
static void moot_check(struct sched_cyc *c, struct sched_attempt *a)
{
    struct sched_view *v = c->v;
    signed char *can = xcalloc(v->nshapes + 1, 1); /* 0 unknown, 1 fits, -1 never */
    for (size_t m = 0; m < a->rq.njobs && !*a->moot; m++) {
        const struct sv_job *j = &v->jobs[a->rq.jobs[m]];
        if (a->rq.m[m].satisfied)
            continue;
        long usable = a->rq.m[m].base;
        int never = -1;
        for (size_t i = 0; i < a->rq.npods; i++) {
            const struct sv_pod *p = &v->pods[a->rq.pods[i]];
            if (p->job != a->rq.jobs[m])
                continue;
            if (!can[p->shape])
                can[p->shape] = shape_can_fit(c, &v->shapes[p->shape]) ? 1 : -1;
            if (can[p->shape] > 0)
                usable++;
            else if (never < 0)
                never = a->rq.pods[i];
        }
        if (never >= 0 && usable < sched__job_min(j))
            fmt_snprintf(a->moot, sizeof(a->moot), WHY_MSG_PREEMPT_MOOT, v->pods[never].key);
    }
    free(can);
}

static int cmp_pod_order(const void *x, const void *y, void *ctx)
{
    const struct sched_view *v = ctx;
    const struct sv_pod *a = &v->pods[*(const int *)x], *b = &v->pods[*(const int *)y];
    if (a->job != b->job)
        return strcmp(v->jobs[a->job].id, v->jobs[b->job].id);
    int64_t ia = a->m.topo_index < 0 ? INT64_MAX : a->m.topo_index;
    int64_t ib = b->m.topo_index < 0 ? INT64_MAX : b->m.topo_index;
    if (ia != ib)
        return ia < ib ? -1 : 1;
    return strcmp(a->m.name, b->m.name);
}

static void collect_pods(struct sched_view *v, struct sched_attempt *a)
{
    size_t total = 0;
    for (size_t m = 0; m < a->rq.njobs; m++)
        total += v->jobs[a->rq.jobs[m]].npods;
    a->rq.pods = xcalloc(total + 1, sizeof(int));
    for (size_t m = 0; m < a->rq.njobs; m++) {
        const struct sv_job *j = &v->jobs[a->rq.jobs[m]];
        for (size_t i = 0; i < j->npods; i++)
            if (sched__pod_pending(&v->pods[j->pods[i]]))
                a->rq.pods[a->rq.npods++] = j->pods[i];
    }
    qsort_r(a->rq.pods, a->rq.npods, sizeof(int), cmp_pod_order, v);
}

/* Places the attempt: on its nominated nodes when every pending pod has one. When they
 * do not hold the job yet and victims still terminate there, the job waits for them
 * (the attempt fails; preemption then says PreemptionWaiting); when nothing terminates
 * there any more, the nominations are stale and the job's own placer runs. */
static int place(struct sched_cyc *c, struct sched_attempt *a, struct err *err)
{
    if (!sched__place_nominated_all(c->v, &a->rq))
        return sched__place(c, &a->rq, &a->res, err);
    sched__place_nominated(c, &a->rq, &a->res);
    if (sched__place_members_met(c->v, &a->rq, &a->res) ||
        sched__preempt_terminating(c->v, a->rq.pods, a->rq.npods) > 0)
        return 0;
    sched__stmt_undo(c);
    sched__place_result_release(&a->res);
    sched__place_result_init(&a->res, a->rq.njobs);
    return sched__place(c, &a->rq, &a->res, err);
}

/* Blockers from the node filter of an unplaced pod (record/'s, cached per shape within an
 * epoch and cycle, because thousands of jobs of one shape fail for the same reason). */
static void capacity_blockers(struct sched_cyc *c, struct sched_attempt *a, int pi, json_t **nf,
                              json_t **ahead)
{
    const struct sched_nf *f = sched__why_nf(c, pi);
    *nf = json_incref(f->nf);
    *ahead = json_incref(f->ahead);
    const char *summary = json_string_value(json_object_get(f->nf, "summary"));
    if (f->code == WHY_NO_NODES)
        sched__blocker_add(&a->blockers, WHY_NO_NODES, NULL, WHY_MSG_NO_NODES);
    else if (f->code >= 0) {
        json_t *extra = json_object(); /* {"nodes","fit"}, without json_pack's parsing */
        json_object_set_nocheck(extra, "nodes", json_object_get(f->nf, "total"));
        json_object_set_nocheck(extra, "fit", json_object_get(f->nf, "fit"));
        sched__blocker_add(&a->blockers, f->code, extra, WHY_MSG_NODE_FILTER, c->v->pods[pi].key,
                           summary);
    }
    if (json_array_size(f->ahead))
        sched__blocker_add(&a->blockers, WHY_TAKEN_BY_EARLIER,
                           json_pack("{s:i}", "jobs", (int)json_array_size(f->ahead)),
                           WHY_MSG_TAKEN_BY_EARLIER, (int)json_array_size(f->ahead),
                           c->v->pods[pi].key);
}

/* A member's place among the waiting jobs (view_wait.c): a gang that timed out is tried
 * again next cycle; a member with pods still pending (unplaced, or a satisfied gang with
 * pods left over) waits for an event or its backoff; one placed whole leaves the pool. */
static void wait_after(struct sched_cyc *c, const struct sched_attempt *a, size_t m, int timed_out)
{
    struct sched_view *v = c->v;
    int ji = a->rq.jobs[m];
    const struct sv_job *j = &v->jobs[ji];
    int pending = 0;
    for (size_t i = 0; i < j->npods && !pending; i++)
        pending = sched__pod_pending(&v->pods[j->pods[i]]);
    if (timed_out)
        sched__wait_wake(v, ji);
    else if (!pending && j->result == SV_RESULT_PLACED)
        sched__wait_clear(v, ji);
    else
        sched__wait_park(v, ji, sched__wait_kinds(v, ji, a->preempt.code >= 0), c->now_ms);
}

/* The outcome of every member: its result and its why document (the blockers and the
 * preemption part serialised once for all members; a failing job whose outcome is the last
 * one's but for its id takes that one's texts: record/why_memo.c). */
static int finish(struct sched_cyc *c, struct sched_attempt *a, int ok, int timed_out, int placed,
                  json_t *nf, json_t *ahead, struct err *err)
{
    int rc = 0;
    struct sched_why_outcome o = {.rq = &a->rq,
                                  .res = &a->res,
                                  .blockers = &a->blockers,
                                  .preempt = &a->preempt,
                                  .moot = a->moot,
                                  .displaced = &a->displaced};
    struct sched_why_shared sh = {0};
    struct sched_why_input in = {
        .primary = sched__blockers_primary(&a->blockers), .nf = nf, .ahead = ahead};
    int memo = 0;
    if (a->rq.njobs == 1 && !ok) {
        struct sv_job *j = &c->v->jobs[a->rq.jobs[0]];
        j->result = timed_out ? SV_RESULT_TIMED_OUT : SV_RESULT_FAILED;
        in.state = sched__job_state(c->v, j);
        in.outcome = &o;
        memo = sched__why_memo_answer(c, &o, &in, j->id);
    }
    if (memo)
        c->s->met.why_reused++;
    else
        sched__why_shared(c->v, &o, &sh);
    if (!ok)
        c->unschedulable++;
    for (size_t m = 0; rc == 0 && m < a->rq.njobs; m++) {
        struct sv_job *j = &c->v->jobs[a->rq.jobs[m]];
        j->result = ok ? SV_RESULT_PLACED : timed_out ? SV_RESULT_TIMED_OUT : SV_RESULT_FAILED;
        if (ok)
            sched__audit_discard_forget(c, a->rq.jobs[m]);
        in.state = sched__job_state(c->v, j);
        in.blockers = sh.blockers;
        in.gang = sh.gang;
        in.placement = placed ? sched__stmt_placement(c, a->rq.jobs[m]) : NULL;
        in.topology = sh.topology;
        in.preemption = sh.preemption;
        in.backfill = ok ? c->backfill : NULL;
        rc = sched__why_record(c, a->rq.jobs[m], &in, err);
        in.mid = NULL; /* taken */
        wait_after(c, a, m, timed_out);
    }
    sched__why_mid_unref(in.mid);
    free(in.blockers_text);
    sched__why_shared_release(&sh);
    return rc;
}

/* The preemption dry run re-plans with the same placer (topology included), into a result
 * of its own: the attempt's stays the placement that counts. */
static int replan(struct sched_cyc *c, void *ctx, struct err *err)
{
    const struct place_req *rq = ctx;
    struct place_result dry;
    sched__place_result_init(&dry, rq->njobs);
    int rc = sched__place(c, rq, &dry, err);
    if (rc >= 0)
        rc = sched__place_members_met(c->v, rq, &dry);
    sched__place_result_release(&dry);
    return rc;
}

static int preempt(struct sched_cyc *c, struct sched_attempt *a, int ji, int fp, int capq,
                   struct err *err)
{
    const struct place_req *rq = &a->rq;
    struct sched_preempt_job pj = {
        .job = ji,
        .jobs = rq->jobs,
        .njobs = rq->njobs,
        .pods = rq->pods,
        .npods = rq->npods,
        .trigger = fp,
        .must_layer = rq->has_spec && rq->spec.must >= 0 ? rq->spec.layer : NULL,
        .replan = replan,
        .ctx = (void *)rq,
        .cap_queue = capq,
    };
    int rc = sched__preempt(c, &pj, &a->preempt, err);
    if (rc == 0 && a->preempt.blocks)
        sched__blocker_add(&a->blockers, a->preempt.code, NULL, "%s", a->preempt.reason);
    return rc;
}

/* A GangShortfall blocker's members {"podGroup","minMember","placeable"} (new): a failing gang
 * makes one per attempt, without json_pack's parsing. */
static json_t *shortfall_extra(const char *pg, int need, int have)
{
    json_t *o = json_object();
    json_object_set_new_nocheck(o, "podGroup", json_string(pg));
    json_object_set_new_nocheck(o, "minMember", json_integer(need));
    json_object_set_new_nocheck(o, "placeable", json_integer(have));
    return o;
}

/* Whether every member that still needs its gang got it from the placement: GangShortfall
 * (minMember, or a task short of its minimum) for each that did not, msg the first such
 * message. *fp: the first pod the placer could not place, -1. Returns 1 when all did. */
static int gangs_met(struct sched_cyc *c, struct sched_attempt *a, int *fp, char *msg, size_t n)
{
    int ok = 1;
    *fp = -1;
    for (size_t m = 0; m < a->rq.njobs; m++) {
        const struct sv_job *j = &c->v->jobs[a->rq.jobs[m]];
        int need = sched__job_min(j), have = a->rq.m[m].base + a->res.placed[m];
        if (*fp < 0)
            *fp = a->res.fail_pod[m];
        char task[256];
        if (a->rq.m[m].satisfied)
            continue;
        if (have >= need && sched__job_tasks_short(c->v, j, 0, task, sizeof(task))) {
            ok = 0;
            sched__blocker_add(&a->blockers, WHY_GANG_SHORTFALL, shortfall_extra(j->id, need, have),
                               "%s", task);
            if (!*msg)
                fmt_snprintf(msg, n, "%s", task);
        }
        if (have >= need)
            continue;
        ok = 0;
        if (j->gang) {
            sched__blocker_add(&a->blockers, WHY_GANG_SHORTFALL, shortfall_extra(j->id, need, have),
                               WHY_MSG_GANG_SHORTFALL, j->id, need, have);
            if (!*msg) /* the blocker's message: the discard record says it too */
                fmt_snprintf(msg, n, "%s", a->blockers.b[a->blockers.n - 1].message);
        }
    }
    return ok;
}

/* A preemptor's ledger entry (any member of its GangGroup) gets every member's placement,
 * by pod key. */
static int ledger_bound(struct sched_cyc *c, const struct sched_attempt *a, struct err *err)
{
    json_t *all = json_object();
    for (size_t k = 0; k < c->nplaced_jobs; k++)
        for (size_t i = 0; i < c->placed_jobs[k].n; i++) {
            const struct sched_op *op = &c->placed_jobs[k].ops[i];
            json_object_set_new(all, c->v->pods[op->pod].key,
                                json_string(c->v->nodes[op->node].name));
        }
    int rc = 0;
    for (size_t m = 0; rc == 0 && m < a->rq.njobs; m++)
        rc = sched__ledger_bound(c, a->rq.jobs[m], json_object_size(all) ? all : NULL, err);
    json_decref(all);
    return rc;
}

/* Commits the placed attempt (*placed: 1 when it had pods to place), completes a
 * preemptor's ledger entry and clears the nominations of lower preemptors whose room it
 * took. */
static int commit(struct sched_cyc *c, struct sched_attempt *a, int *placed, struct err *err)
{
    int rc = 0, nominated = sched__preempt_nominated_ops(c);
    *placed = c->nops > 0;
    c->nplaced_jobs = 0; /* an earlier statement's are not this one's */
    if (*placed && (rc = sched__stmt_commit(c, err)) < 0)
        return rc;
    if (nominated && (rc = ledger_bound(c, a, err)) < 0)
        return rc;
    /* a lower preemptor's nominated room this job took */
    return sched__preempt_displaced(c, a->rq.jobs, a->rq.njobs, a->rq.pods, a->rq.npods,
                                    &a->displaced, err);
}

int sched__attempt(struct sched_cyc *c, int ji, struct err *err)
{
    struct sched_attempt a = {.preempt = {.code = -1}};
    json_t *nf = NULL, *ahead = NULL;
    int rc = 0, ok = 1, timed_out = 0, placed = 0;
    members_and_checks(c, ji, &a);
    sched__attempt_queue_checks(c, &a);
    if (!a.blockers.n)
        sched__attempt_demand_checks(c, &a);
    if (a.blockers.n) {
        rc = finish(c, &a, 0, 0, 0, NULL, NULL, err);
        goto out;
    }
    collect_pods(c->v, &a);
    /* Over a queue's capability: not placed, but preemption inside that queue's subtree may
     * free what the queue needs (sched_preempt_job.cap_queue). */
    int capq = sched__attempt_capability(c, &a);
    sched__reserve_gate_on(c, &a); /* off at out: preemption's dry runs respect it too */
    if (capq < 0 && (rc = place(c, &a, err)) < 0)
        goto out;
    sched__blockers_take(&a.blockers, &a.res.blockers); /* what the placer found */
    if (capq < 0) {
        sched__attempt_trim_to_cap(c, &a);
        sched__attempt_trim_to_share(c, &a);
    }
    int fp = -1;
    char msg[256] = "";
    if (capq >= 0)
        ok = 0;
    else
        ok = gangs_met(c, &a, &fp, msg, sizeof(msg));
    /* The node filter is taken before a discard: it shows the cluster as this job's
     * unplaced pod saw it, with the job's own earlier pods already placed. */
    if (fp >= 0)
        capacity_blockers(c, &a, fp, &nf, &ahead);
    if (ok)
        sched__reserve_backfill(c, &a);
    if (ok)
        rc = commit(c, &a, &placed, err);
    else
        rc = sched__stmt_discard(c, c->v->jobs[ji].id, WHY_GANG_SHORTFALL, msg, err);
    if (rc < 0)
        goto out;
    /* A gang that timed out is not preempted for: it is tried again at the next cycle. */
    if ((rc = sched__timeout(c, &a, ok, &timed_out, err)) < 0)
        goto out;
    if (!ok && !timed_out)
        moot_check(c, &a);
    if (!ok && !timed_out && !*a.moot && (rc = preempt(c, &a, ji, fp, capq, err)) < 0)
        goto out;
    if (!ok && !timed_out && !a.preempt.blocks)
        sched__attempt_queue_share(c, &a, ji);
    if ((rc = sched__reserve_after(c, &a, ok, err)) < 0)
        goto out;
    rc = finish(c, &a, ok, timed_out, placed, nf, ahead, err);
out:
    sched__reserve_gate_off(c);
    json_decref(c->backfill);
    c->backfill = NULL;
    sched__blockers_release(&a.blockers);
    sched__preempt_verdict_release(&a.preempt);
    sched__place_result_release(&a.res);
    sched__cleared_release(&a.displaced);
    json_decref(nf);
    json_decref(ahead);
    free(a.rq.pods);
    free(a.rq.jobs);
    free(a.rq.m);
    return rc;
}
