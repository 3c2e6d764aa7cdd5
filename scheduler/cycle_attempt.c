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
 * The why never misleads: a job whose demand (its bound pods plus the pending pods its
 * gangs still need) is larger than the whole cluster's allocatable is answered with
 * ExceedsClusterCapacity before any placement; preemption is tried only when it could help
 * (not when a pod the job needs fits no node even empty: a nodeSelector nobody carries, a
 * request larger than any node), and the why then says why it was not relevant.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle.h"
#include "place.h"
#include "preempt.h"
#include "why.h"

int sched__attempt_member(const struct sched_attempt *a, int ji)
{
    for (size_t i = 0; i < a->njobs; i++)
        if (a->jobs[i] == ji)
            return (int)i;
    return -1;
}

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
    a->jobs = xcalloc(cap + 1, sizeof(int));
    a->m = xcalloc(cap + 1, sizeof(*a->m));
    a->jobs[a->njobs++] = ji;
    for (size_t g = 0; j->has_pg && g < j->pg.ngroups; g++) {
        int mj = sched__view_gang_job(v, j->pg.groups[g]);
        if (mj < 0 || !v->jobs[mj].has_pg)
            sched__blocker_add(&a->blockers, WHY_GROUP_MEMBER_MISSING,
                               json_pack("{s:s}", "podGroup", j->pg.groups[g]),
                               "PodGroup '%s' of the GangGroup does not exist", j->pg.groups[g]);
        else if (sched__attempt_member(a, mj) < 0)
            a->jobs[a->njobs++] = mj;
    }
    qsort_r(a->jobs, a->njobs, sizeof(int), cmp_job_id, v);
}

/* Merges a member's usable spec: the narrowest MustGather wins, else the narrowest
 * PreferGather; the winner's podCountMultiple entries come with it (Koordinator uses one
 * gang's spec for the whole GangGroup). */
static void merge_spec(struct sched_attempt *a, const struct gather_spec *s)
{
    if (!a->has_spec || s->must > a->spec.must || (a->spec.must < 0 && s->prefer > a->spec.prefer))
        a->spec = *s;
    a->has_spec = 1;
}

/* Members and the checks that need no placement: PodGroup present, GangGroup
 * complete, enough member pods, a usable topology spec. */
static void members_and_checks(struct sched_cyc *c, int ji, struct sched_attempt *a)
{
    struct sched_view *v = c->v;
    collect_members(c, ji, a);
    a->spec.must = a->spec.prefer = a->spec.job = -1;
    for (size_t m = 0; m < a->njobs; m++) {
        struct sv_job *mj = &v->jobs[a->jobs[m]];
        struct sched_member *am = &a->m[m];
        mj->cycle_seen = c->cycle;
        am->fail_pod = -1;
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
                               json_pack("{s:s}", "pod", gated->key),
                               "pod '%s' has schedulingGates", gated->key);
        if (unsupported) /* mirrored: it could not be refused, so it is never placed */
            sched__blocker_add(&a->blockers, WHY_UNSUPPORTED_FIELD,
                               json_pack("{s:s,s:s}", "pod", unsupported->key, "field",
                                         unsupported->m.unsupported),
                               "pod '%s': %s: not supported by muster (%s)", unsupported->key,
                               unsupported->m.unsupported, unsupported->m.unsupported_why);
        int need = sched__job_min(mj);
        int only_waiting = mj->has_pg && mj->pg.match_policy == MODEL_MATCH_ONLY_WAITING;
        am->base = only_waiting ? 0 : am->bound;
        am->satisfied = mj->has_pg && !only_waiting && am->bound >= need;
        if (mj->gang && !mj->has_pg)
            sched__blocker_add(&a->blockers, WHY_PODGROUP_MISSING,
                               json_pack("{s:s}", "podGroup", mj->id),
                               "PodGroup '%s' does not exist", mj->id);
        else if (sched__job_class_missing(v, mj))
            sched__blocker_add(
                &a->blockers, WHY_PRIORITY_CLASS_MISSING,
                json_pack("{s:s,s:s}", "podGroup", mj->id, "priorityClass", mj->pg.priority_class),
                "PodGroup '%s' names PriorityClass '%s', which does not exist", mj->id,
                mj->pg.priority_class);
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
                               "PodGroup '%s' has %d member pods%s, minMember %d", mj->id,
                               am->base + am->pending,
                               only_waiting ? " pending (match policy only-waiting)" : "", need);
        if (mj->has_pg && mj->pg.has_spec) {
            struct gather_spec gs;
            char msg[256];
            int code = sched__gather_spec(sched__topo_get(v), &mj->pg, &gs, msg, sizeof(msg));
            if (code >= 0)
                sched__blocker_add(&a->blockers, code, json_pack("{s:s}", "podGroup", mj->id),
                                   "PodGroup '%s': %s", mj->id, msg);
            else {
                gs.job = a->jobs[m];
                merge_spec(a, &gs);
            }
        }
    }
}

/* Adds the demand of pod p to need[] (resources indexed as in the view). */
static void demand_add(const struct sv_pod *p, int64_t *need)
{
    for (int r = 0; r < p->nreq; r++)
        need[p->req[r].res] += p->req[r].v;
}

/* ExceedsClusterCapacity: the job's bound pods and the pending pods its unsatisfied gangs
 * still need ask for more of a resource than every schedulable node has together. */
static void cluster_check(struct sched_cyc *c, struct sched_attempt *a)
{
    struct sched_view *v = c->v;
    int64_t *need = xcalloc(v->nres + 1, sizeof(int64_t));
    for (size_t m = 0; m < a->njobs; m++) {
        const struct sv_job *j = &v->jobs[a->jobs[m]];
        long want = a->m[m].satisfied ? 0 : sched__job_min(j) - a->m[m].base;
        for (size_t i = 0; i < j->npods; i++) {
            const struct sv_pod *p = &v->pods[j->pods[i]];
            if (p->counted)
                demand_add(p, need);
            else if (want > 0 && sched__pod_pending(p)) {
                demand_add(p, need);
                want--;
            }
        }
    }
    const int64_t *have = sched__cyc_cluster(c);
    long nn = c->cluster_nodes, cordoned = c->cluster_cordoned;
    for (size_t r = 0; nn && r < v->nres; r++) {
        if (need[r] <= have[r])
            continue;
        char q_need[32], q_have[32];
        int milli = model_resource_is_milli(v->res[r]);
        model_quantity_format(need[r], milli, q_need, sizeof(q_need));
        model_quantity_format(have[r], milli, q_have, sizeof(q_have));
        char where[64] = "";
        if (cordoned)
            snprintf(where, sizeof(where), " on its %ld schedulable nodes", nn - cordoned);
        sched__blocker_add(&a->blockers, WHY_EXCEEDS_CLUSTER,
                           json_pack("{s:s,s:I,s:I}", "resource", v->res[r], "need",
                                     (json_int_t)need[r], "capacity", (json_int_t)have[r]),
                           "needs %s %s, the cluster has %s%s", q_need, v->res[r], q_have, where);
        break; /* the first resource says it; the others add nothing a user can act on */
    }
    free(need);
}

/* 1 when some node that passes the shape's static filters could hold it empty. */
static int shape_can_fit(struct sched_cyc *c, const struct sv_shape *sh)
{
    struct sched_view *v = c->v;
    if (sh->nf && sh->nf_cycle == c->cycle) /* the node filter of this cycle knows: nodes
                                               do not change within a cycle */
        return sh->nf_code != WHY_NO_NODES && sh->nf_code != WHY_NO_MATCHING_NODE &&
               sh->nf_code != WHY_EXCEEDS_ALLOCATABLE;
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
    for (size_t m = 0; m < a->njobs && !*a->moot; m++) {
        const struct sv_job *j = &v->jobs[a->jobs[m]];
        if (a->m[m].satisfied)
            continue;
        long usable = a->m[m].base;
        int never = -1;
        for (size_t i = 0; i < a->npods; i++) {
            const struct sv_pod *p = &v->pods[a->pods[i]];
            if (p->job != a->jobs[m])
                continue;
            if (!can[p->shape])
                can[p->shape] = shape_can_fit(c, &v->shapes[p->shape]) ? 1 : -1;
            if (can[p->shape] > 0)
                usable++;
            else if (never < 0)
                never = a->pods[i];
        }
        if (never >= 0 && usable < sched__job_min(j))
            snprintf(a->moot, sizeof(a->moot),
                     "not relevant: pod '%s' fits no node even with every other pod removed",
                     v->pods[never].key);
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
    for (size_t m = 0; m < a->njobs; m++)
        total += v->jobs[a->jobs[m]].npods;
    a->pods = xcalloc(total + 1, sizeof(int));
    for (size_t m = 0; m < a->njobs; m++) {
        const struct sv_job *j = &v->jobs[a->jobs[m]];
        for (size_t i = 0; i < j->npods; i++)
            if (sched__pod_pending(&v->pods[j->pods[i]]))
                a->pods[a->npods++] = j->pods[i];
    }
    qsort_r(a->pods, a->npods, sizeof(int), cmp_pod_order, v);
}

/* The default placer: each pod, in order, on the best node by score. */
static int place_binpack(struct sched_cyc *c, struct sched_attempt *a, struct err *err)
{
    for (size_t i = 0; i < a->npods; i++) {
        int pi = a->pods[i];
        struct sched_member *m = &a->m[sched__attempt_member(a, c->v->pods[pi].job)];
        int ni = sched__pick_node(c->v, pi);
        if (ni >= 0) {
            sched__stmt_alloc(c, pi, ni);
            m->placed++;
        } else if (m->fail_pod < 0) {
            m->fail_pod = pi;
        }
    }
    return 0;
}

/* Nominations are binding: a preemptor whose every pending pod is nominated is placed on
 * its nominated nodes, each pod on its own (static filters, free capacity with the members'
 * own nominations not reserved against them, pod rules). */
static int nominated_all(const struct sched_view *v, const struct sched_attempt *a)
{
    for (size_t i = 0; i < a->npods; i++)
        if (v->pods[a->pods[i]].nominated < 0)
            return 0;
    return a->npods > 0;
}

static int place_nominated(struct sched_cyc *c, struct sched_attempt *a)
{
    struct sched_view *v = c->v;
    for (size_t i = 0; i < a->npods; i++) {
        int pi = a->pods[i], ni = v->pods[pi].nominated, by;
        struct sched_member *m = &a->m[sched__attempt_member(a, v->pods[pi].job)];
        const struct sv_shape *sh = &v->shapes[v->pods[pi].shape];
        struct sched_rules r;
        int ok = sched__fit_static(&v->nodes[ni], sh) == SCHED_FIT_OK &&
                 sched__fit_count(v, &v->nodes[ni], sh->req, sh->nreq, sh->priority, a->jobs,
                                  a->njobs, 1) == 1;
        if (ok) {
            if (sched__rules_prepare(v, pi, &r))
                ok = sched__rules_filter(&r, ni, &by) == SCHED_FIT_OK;
            sched__rules_release(&r);
        }
        if (ok) {
            sched__stmt_alloc(c, pi, ni);
            m->placed++;
        } else if (m->fail_pod < 0) {
            m->fail_pod = pi;
        }
    }
    return 0;
}

/* Places the attempt: on its nominated nodes when every pending pod has one. When they
 * do not hold the job yet and victims still terminate there, the job waits for them
 * (the attempt fails; preemption then says PreemptionWaiting); when nothing terminates
 * there any more, the nominations are stale and the job's own placer runs. */
static int place(struct sched_cyc *c, struct sched_attempt *a, struct err *err)
{
    if (!nominated_all(c->v, a))
        return sched__placer_for(c, a)(c, a, err);
    place_nominated(c, a);
    if (sched__attempt_members_met(c->v, a) ||
        sched__preempt_terminating(c->v, a->pods, a->npods) > 0)
        return 0;
    sched__stmt_undo(c);
    for (size_t m = 0; m < a->njobs; m++) {
        a->m[m].placed = 0;
        a->m[m].fail_pod = -1;
    }
    return sched__placer_for(c, a)(c, a, err);
}

/* Gather when a member asks for a strategy and some member still needs its gang; a
 * satisfied gang places later pods one by one. */
sched__placer sched__placer_for(struct sched_cyc *c, struct sched_attempt *a)
{
    int open = 0;
    for (size_t m = 0; m < a->njobs; m++)
        open |= !a->m[m].satisfied;
    return a->has_spec && open && sched__topo_get(c->v) ? sched__place_gather : place_binpack;
}

/* Blockers from the node filter of an unplaced pod (cached per shape within an epoch
 * and cycle, because thousands of jobs of one shape fail for the same reason). */
static void capacity_blockers(struct sched_cyc *c, struct sched_attempt *a, int pi, json_t **nf,
                              json_t **ahead)
{
    struct sv_shape *sh = &c->v->shapes[c->v->pods[pi].shape];
    if (!sh->nf || sh->nf_epoch != c->v->epoch || sh->nf_cycle != c->cycle) {
        int own;
        json_decref(sh->nf);
        json_decref(sh->nf_ahead);
        sh->nf = sched__node_filter(c->v, pi, &sh->nf_code, &own);
        sh->nf_ahead = sh->nf_code == WHY_INSUFFICIENT || sh->nf_code == WHY_CAPACITY_RESERVED ||
                               sh->nf_code < 0
                           ? sched__ahead(c, pi)
                           : json_array();
        sh->nf_epoch = own ? 0 : c->v->epoch; /* a pod's own rules: not for its shape */
        sh->nf_cycle = c->cycle;
    }
    *nf = json_incref(sh->nf);
    *ahead = json_incref(sh->nf_ahead);
    const char *summary = json_string_value(json_object_get(sh->nf, "summary"));
    if (sh->nf_code == WHY_NO_NODES)
        sched__blocker_add(&a->blockers, WHY_NO_NODES, NULL, "the cluster has no nodes");
    else if (sh->nf_code >= 0)
        sched__blocker_add(&a->blockers, sh->nf_code,
                           json_pack("{s:O,s:O}", "nodes", json_object_get(sh->nf, "total"), "fit",
                                     json_object_get(sh->nf, "fit")),
                           "pod '%s': %s", c->v->pods[pi].key, summary);
    if (json_array_size(sh->nf_ahead))
        sched__blocker_add(&a->blockers, WHY_TAKEN_BY_EARLIER,
                           json_pack("{s:i}", "jobs", (int)json_array_size(sh->nf_ahead)),
                           "%d jobs placed earlier in this cycle took nodes pod '%s' would fit on",
                           (int)json_array_size(sh->nf_ahead), c->v->pods[pi].key);
}

static json_t *gang_json(struct sched_cyc *c, struct sched_attempt *a)
{
    json_t *g = json_array();
    for (size_t m = 0; m < a->njobs; m++) {
        const struct sv_job *j = &c->v->jobs[a->jobs[m]];
        const struct sched_member *am = &a->m[m];
        if (!j->gang)
            continue;
        json_array_append_new(g, json_pack("{s:s,s:i,s:i,s:i,s:i}", "podGroup", j->id, "minMember",
                                           sched__job_min(j), "members", (int)j->npods, "bound",
                                           am->bound, "placeable", am->base + am->placed));
    }
    return g;
}

/* A member's place among the waiting jobs (view_wait.c): a gang that timed out is tried
 * again next cycle; a member with pods still pending (unplaced, or a satisfied gang with
 * pods left over) waits for an event or its backoff; one placed whole leaves the pool. */
static void wait_after(struct sched_cyc *c, const struct sched_attempt *a, size_t m, int timed_out)
{
    struct sched_view *v = c->v;
    int ji = a->jobs[m];
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
 * preemption part serialised once for all members). */
static int finish(struct sched_cyc *c, struct sched_attempt *a, int ok, int timed_out,
                  json_t *placement, json_t *nf, json_t *ahead, struct err *err)
{
    int rc = 0;
    json_t *gang = gang_json(c, a), *blockers = sched__blockers_json(&a->blockers);
    json_t *preemption =
        a->preempt.code >= 0 ? sched__preempt_verdict_json(&a->preempt)
        : *a->moot ? json_pack("{s:b,s:b,s:s}", "attempted", 0, "relevant", 0, "reason", a->moot)
                   : NULL;
    if (!preemption && a->displaced) { /* it took a lower preemptor's nominated room */
        char *ids = NULL;
        size_t len = 0, i;
        json_t *x;
        FILE *f = open_memstream(&ids, &len);
        json_array_foreach(a->displaced, i, x)
            fprintf(f, "%s%s", i ? ", " : "", json_string_value(x));
        fclose(f);
        char *reason = xasprintf("not needed: the job was placed, on nominated room of "
                                 "lower-priority %s, whose nominations were cleared",
                                 ids);
        preemption = json_pack("{s:b,s:b,s:s,s:O}", "attempted", 0, "relevant", 0, "reason", reason,
                               "nominationsCleared", a->displaced);
        free(reason);
        free(ids);
    }
    if (!ok)
        c->unschedulable++;
    for (size_t m = 0; rc == 0 && m < a->njobs; m++) {
        struct sv_job *j = &c->v->jobs[a->jobs[m]];
        j->result = ok ? SV_RESULT_PLACED : timed_out ? SV_RESULT_TIMED_OUT : SV_RESULT_FAILED;
        if (ok) {
            free(j->last_discard);
            j->last_discard = NULL;
        }
        struct sched_why_input in = {
            .state = sched__job_state(c->s, j),
            .primary = sched__blockers_primary(&a->blockers),
            .blockers = blockers,
            .gang = gang,
            .nf = nf,
            .ahead = ahead,
            .placement = json_object_get(placement, j->id),
            .topology = a->topology,
            .preemption = preemption,
        };
        rc = sched__why_record(c, a->jobs[m], &in, err);
        wait_after(c, a, m, timed_out);
    }
    json_decref(gang);
    json_decref(blockers);
    json_decref(preemption);
    return rc;
}

int sched__attempt_members_met(const struct sched_view *v, const struct sched_attempt *a)
{
    for (size_t m = 0; m < a->njobs; m++) {
        const struct sv_job *j = &v->jobs[a->jobs[m]];
        if (!a->m[m].satisfied && (a->m[m].base + a->m[m].placed < sched__job_min(j) ||
                                   sched__job_tasks_short(v, j, 0, NULL, 0)))
            return 0;
    }
    return 1;
}

/* The preemption dry run re-plans with the same placer (topology included). */
static int replan(struct sched_cyc *c, void *ctx, struct err *err)
{
    struct sched_attempt *a = ctx;
    for (size_t m = 0; m < a->njobs; m++) {
        a->m[m].placed = 0;
        a->m[m].fail_pod = -1;
    }
    json_t *topo = a->topology; /* the why keeps the real attempt's topology part */
    a->topology = NULL;
    int rc = sched__placer_for(c, a)(c, a, err);
    json_decref(a->topology);
    a->topology = topo;
    return rc < 0 ? rc : sched__attempt_members_met(c->v, a);
}

static int preempt(struct sched_cyc *c, struct sched_attempt *a, int ji, int fp, int capq,
                   struct err *err)
{
    struct sched_member *saved = xcalloc(a->njobs + 1, sizeof(*saved));
    memcpy(saved, a->m, a->njobs * sizeof(*saved));
    struct sched_preempt_job pj = {
        .job = ji,
        .jobs = a->jobs,
        .njobs = a->njobs,
        .pods = a->pods,
        .npods = a->npods,
        .trigger = fp,
        .must_layer = a->has_spec && a->spec.must >= 0 ? a->spec.layer : NULL,
        .replan = replan,
        .ctx = a,
        .cap_queue = capq,
    };
    size_t nblockers = a->blockers.n;
    int rc = sched__preempt(c, &pj, &a->preempt, err);
    sched__blockers_truncate(&a->blockers, nblockers); /* the placer's, from the dry runs */
    memcpy(a->m, saved, a->njobs * sizeof(*saved));
    free(saved);
    if (rc == 0 && a->preempt.blocks)
        sched__blocker_add(&a->blockers, a->preempt.code, NULL, "%s", a->preempt.reason);
    return rc;
}

int sched__attempt(struct sched_cyc *c, int ji, struct err *err)
{
    struct sched_attempt a = {.preempt = {.code = -1}};
    json_t *placement = NULL, *nf = NULL, *ahead = NULL;
    int rc = 0, ok = 1, timed_out = 0;
    members_and_checks(c, ji, &a);
    sched__attempt_queue_checks(c, &a);
    if (!a.blockers.n)
        cluster_check(c, &a);
    if (a.blockers.n) {
        rc = finish(c, &a, 0, 0, NULL, NULL, NULL, err);
        goto out;
    }
    collect_pods(c->v, &a);
    /* Over a queue's capability: not placed, but preemption inside that queue's subtree may
     * free what the queue needs (sched_preempt_job.cap_queue). */
    int capq = sched__attempt_capability(c, &a);
    if (capq < 0 && (rc = place(c, &a, err)) < 0)
        goto out;
    if (capq < 0)
        sched__attempt_trim_to_cap(c, &a);
    int fp = -1;
    char msg[256] = "";
    if (capq >= 0)
        ok = 0;
    for (size_t m = 0; capq < 0 && m < a.njobs; m++) {
        const struct sv_job *j = &c->v->jobs[a.jobs[m]];
        int need = sched__job_min(j), have = a.m[m].base + a.m[m].placed;
        if (fp < 0)
            fp = a.m[m].fail_pod;
        char task[256];
        if (a.m[m].satisfied)
            continue;
        if (have >= need && sched__job_tasks_short(c->v, j, 0, task, sizeof(task))) {
            ok = 0;
            sched__blocker_add(
                &a.blockers, WHY_GANG_SHORTFALL,
                json_pack("{s:s,s:i,s:i}", "podGroup", j->id, "minMember", need, "placeable", have),
                "%s", task);
            if (!*msg)
                snprintf(msg, sizeof(msg), "%s", task);
        }
        if (have >= need)
            continue;
        ok = 0;
        if (j->gang) {
            sched__blocker_add(
                &a.blockers, WHY_GANG_SHORTFALL,
                json_pack("{s:s,s:i,s:i}", "podGroup", j->id, "minMember", need, "placeable", have),
                "PodGroup '%s': minMember %d, placeable %d", j->id, need, have);
            if (!*msg)
                snprintf(msg, sizeof(msg), "PodGroup '%s': minMember %d, placeable %d", j->id, need,
                         have);
        }
    }
    /* The node filter is taken before a discard: it shows the cluster as this job's
     * unplaced pod saw it, with the job's own earlier pods already placed. */
    if (fp >= 0)
        capacity_blockers(c, &a, fp, &nf, &ahead);
    if (ok) {
        int nominated = sched__preempt_nominated_ops(c);
        if (c->nops && (rc = sched__stmt_commit(c, &placement, err)) < 0)
            goto out;
        /* The ledger entry is the preemptor's, any member of its GangGroup: every
         * member's placement goes to it, by pod key. */
        json_t *all = json_object(), *map, *node;
        const char *id, *name;
        json_object_foreach(placement, id, map)
        {
            int nslen = (int)strcspn(id, "/");
            json_object_foreach(map, name, node)
            {
                char *key = xasprintf("%.*s/%s", nslen, id, name);
                json_object_set(all, key, node);
                free(key);
            }
        }
        for (size_t m = 0; nominated && rc == 0 && m < a.njobs; m++)
            rc = sched__ledger_bound(c, a.jobs[m], json_object_size(all) ? all : NULL, err);
        json_decref(all);
        if (rc == 0) /* a lower preemptor's nominated room this job took */
            rc = sched__preempt_displaced(c, a.jobs, a.njobs, a.pods, a.npods, &a.displaced, err);
        if (rc < 0)
            goto out;
    } else {
        if ((rc = sched__stmt_discard(c, c->v->jobs[ji].id, WHY_GANG_SHORTFALL, msg, err)) < 0)
            goto out;
    }
    /* A gang that timed out is not preempted for: it is tried again at the next cycle. */
    if ((rc = sched__timeout(c, &a, ok, &timed_out, err)) < 0)
        goto out;
    if (!ok && !timed_out)
        moot_check(c, &a);
    if (!ok && !timed_out && !*a.moot && (rc = preempt(c, &a, ji, fp, capq, err)) < 0)
        goto out;
    if (!ok && !timed_out && !a.preempt.blocks)
        sched__attempt_queue_share(c, &a, ji);
    rc = finish(c, &a, ok, timed_out, placement, nf, ahead, err);
out:
    sched__blockers_release(&a.blockers);
    sched__preempt_verdict_release(&a.preempt);
    json_decref(a.topology);
    json_decref(a.displaced);
    json_decref(placement);
    json_decref(nf);
    json_decref(ahead);
    free(a.pods);
    free(a.jobs);
    free(a.m);
    return rc;
}
