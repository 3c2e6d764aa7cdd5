/*
 * cycle_attempt.c - one job attempt (a statement): gang rules, placement, outcome.
 *
 * Gang (DESIGN.md section 3): a PodGroup needs minMember pods placed (bound +
 * placed this cycle); with fewer member pods than minMember it is not tried; a
 * GangGroup (the groups annotation) succeeds only if every PodGroup in it
 * satisfies its own minMember; a gang already satisfied places later pods one
 * by one (partial placement is fine).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle.h"
#include "place.h"
#include "preempt.h"
#include "why.h"

void sched__attempt_blocker(struct sched_attempt *a, int code, json_t *extra, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    json_t *b = json_pack("{s:s,s:s,s:s}", "class", why_class_name(why_code_class(code)), "code",
                          why_code_name(code), "message", msg);
    if (extra)
        json_object_update(b, extra);
    json_decref(extra);
    json_array_append_new(a->blockers, b);
}

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

/* Members and the checks that need no placement: PodGroup present, GangGroup
 * complete, enough member pods, a parseable topology spec. */
static void members_and_checks(struct sched_cyc *c, int ji, struct sched_attempt *a)
{
    struct sched_view *v = c->v;
    const struct sv_job *j = &v->jobs[ji];
    a->jobs[a->njobs++] = ji;
    for (size_t g = 0; j->has_pg && g < j->pg.ngroups && a->njobs < 64; g++) {
        int mj = sched__view_gang_job(v, j->pg.groups[g]);
        if (mj < 0 || !v->jobs[mj].has_pg)
            sched__attempt_blocker(
                a, WHY_GROUP_MEMBER_MISSING, json_pack("{s:s}", "podGroup", j->pg.groups[g]),
                "PodGroup '%s' of the GangGroup does not exist", j->pg.groups[g]);
        else if (sched__attempt_member(a, mj) < 0)
            a->jobs[a->njobs++] = mj;
    }
    qsort_r(a->jobs, a->njobs, sizeof(int), cmp_job_id, v);
    for (size_t m = 0; m < a->njobs; m++) {
        struct sv_job *mj = &v->jobs[a->jobs[m]];
        mj->cycle_seen = c->cycle;
        a->fail_pod[m] = -1;
        for (size_t i = 0; i < mj->npods; i++) {
            const struct sv_pod *p = &v->pods[mj->pods[i]];
            a->bound[m] += model_pod_gang_bound(&p->m);
            a->pending[m] += sched__pod_pending(p);
        }
        int need = sched__job_min(mj);
        a->satisfied[m] = mj->has_pg && a->bound[m] >= need;
        if (mj->gang && !mj->has_pg)
            sched__attempt_blocker(a, WHY_PODGROUP_MISSING, json_pack("{s:s}", "podGroup", mj->id),
                                   "PodGroup '%s' does not exist", mj->id);
        else if (a->bound[m] + a->pending[m] < need)
            sched__attempt_blocker(a, WHY_MEMBERS_MISSING,
                                   json_pack("{s:s,s:i,s:i}", "podGroup", mj->id, "minMember", need,
                                             "members", a->bound[m] + a->pending[m]),
                                   "PodGroup '%s' has %d member pods, minMember %d", mj->id,
                                   a->bound[m] + a->pending[m], need);
        if (mj->has_pg && mj->pg.topology_spec) {
            struct gather_spec gs;
            char msg[256];
            int code =
                sched__gather_spec(sched__topo_get(v), mj->pg.topology_spec, &gs, msg, sizeof(msg));
            if (code >= 0)
                sched__attempt_blocker(a, code, json_pack("{s:s}", "podGroup", mj->id),
                                       "PodGroup '%s': %s", mj->id, msg);
        }
    }
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
        int m = sched__attempt_member(a, c->v->pods[pi].job);
        int ni = sched__pick_node(c->v, pi);
        if (ni >= 0) {
            sched__stmt_alloc(c, pi, ni);
            a->placed[m]++;
        } else if (a->fail_pod[m] < 0) {
            a->fail_pod[m] = pi;
        }
    }
    return 0;
}

/* Gather when a member asks for a strategy and some member still needs its gang; a
 * satisfied gang places later pods one by one. */
sched__placer sched__placer_for(struct sched_cyc *c, struct sched_attempt *a)
{
    int spec = 0, open = 0;
    for (size_t m = 0; m < a->njobs; m++) {
        const struct sv_job *j = &c->v->jobs[a->jobs[m]];
        spec |= j->has_pg && j->pg.topology_spec != NULL;
        open |= !a->satisfied[m];
    }
    return spec && open && sched__topo_get(c->v) ? sched__place_gather : place_binpack;
}

/* Blockers from the node filter of an unplaced pod (cached per shape within an epoch
 * and cycle, because thousands of jobs of one shape fail for the same reason). */
static void capacity_blockers(struct sched_cyc *c, struct sched_attempt *a, int pi, json_t **nf,
                              json_t **ahead)
{
    struct sv_shape *sh = &c->v->shapes[c->v->pods[pi].shape];
    if (!sh->nf || sh->nf_epoch != c->v->epoch || sh->nf_cycle != c->cycle) {
        json_decref(sh->nf);
        json_decref(sh->nf_ahead);
        sh->nf = sched__node_filter(c->v, pi, &sh->nf_code);
        sh->nf_ahead =
            sh->nf_code == WHY_INSUFFICIENT || sh->nf_code < 0 ? sched__ahead(c, pi) : json_array();
        sh->nf_epoch = c->v->epoch;
        sh->nf_cycle = c->cycle;
    }
    *nf = json_incref(sh->nf);
    *ahead = json_incref(sh->nf_ahead);
    const char *summary = json_string_value(json_object_get(sh->nf, "summary"));
    if (sh->nf_code == WHY_NO_NODES)
        sched__attempt_blocker(a, WHY_NO_NODES, NULL, "the cluster has no nodes");
    else if (sh->nf_code >= 0)
        sched__attempt_blocker(a, sh->nf_code,
                               json_pack("{s:O,s:O}", "nodes", json_object_get(sh->nf, "total"),
                                         "fit", json_object_get(sh->nf, "fit")),
                               "pod '%s': %s", c->v->pods[pi].key, summary);
    if (json_array_size(sh->nf_ahead))
        sched__attempt_blocker(
            a, WHY_TAKEN_BY_EARLIER, json_pack("{s:i}", "jobs", (int)json_array_size(sh->nf_ahead)),
            "%d jobs placed earlier in this cycle took nodes pod '%s' would fit on",
            (int)json_array_size(sh->nf_ahead), c->v->pods[pi].key);
}

static json_t *gang_json(struct sched_cyc *c, struct sched_attempt *a)
{
    json_t *g = json_array();
    for (size_t m = 0; m < a->njobs; m++) {
        const struct sv_job *j = &c->v->jobs[a->jobs[m]];
        if (!j->gang)
            continue;
        json_array_append_new(g, json_pack("{s:s,s:i,s:i,s:i,s:i}", "podGroup", j->id, "minMember",
                                           sched__job_min(j), "members", (int)j->npods, "bound",
                                           a->bound[m], "placeable", a->bound[m] + a->placed[m]));
    }
    return g;
}

static int primary_of(json_t *blockers)
{
    int best = -1;
    for (size_t i = 0; i < json_array_size(blockers); i++) {
        const char *code = json_string_value(json_object_get(json_array_get(blockers, i), "code"));
        for (int k = 0; k < WHY_CODE_COUNT; k++)
            if (!strcmp(why_code_name(k), code) && (best < 0 || k < best))
                best = k;
    }
    return best;
}

static int finish(struct sched_cyc *c, struct sched_attempt *a, int ok, json_t *placement,
                  json_t *nf, json_t *ahead, struct err *err)
{
    int rc = 0, primary = primary_of(a->blockers);
    json_t *gang = gang_json(c, a);
    if (!ok)
        c->unschedulable++;
    for (size_t m = 0; rc == 0 && m < a->njobs; m++) {
        struct sv_job *j = &c->v->jobs[a->jobs[m]];
        j->result = ok ? SV_RESULT_PLACED : SV_RESULT_FAILED;
        if (ok) {
            free(j->last_discard);
            j->last_discard = NULL;
        }
        struct sched_why_input in = {
            sched__job_state(c->s, j),         a->blockers, primary,      gang, nf, ahead,
            json_object_get(placement, j->id), a->topology, a->preemption};
        rc = sched__why_record(c, a->jobs[m], &in, err);
    }
    json_decref(gang);
    return rc;
}

/* The preemption dry run re-plans with the same placer (topology included). */
static int replan(struct sched_cyc *c, void *ctx, struct err *err)
{
    struct sched_attempt *a = ctx;
    for (size_t m = 0; m < a->njobs; m++) {
        a->placed[m] = 0;
        a->fail_pod[m] = -1;
    }
    json_t *topo = a->topology; /* the why keeps the real attempt's topology part */
    a->topology = NULL;
    int rc = sched__placer_for(c, a)(c, a, err);
    json_decref(a->topology);
    a->topology = topo;
    for (size_t m = 0; rc == 0 && m < a->njobs; m++)
        if (!a->satisfied[m] &&
            a->bound[m] + a->placed[m] < sched__job_min(&c->v->jobs[a->jobs[m]]))
            return 0;
    return rc < 0 ? rc : 1;
}

static int preempt(struct sched_cyc *c, struct sched_attempt *a, int ji, int fp, struct err *err)
{
    int placed[64], fail_pod[64], blocker = -1;
    memcpy(placed, a->placed, sizeof(placed));
    memcpy(fail_pod, a->fail_pod, sizeof(fail_pod));
    struct sched_preempt_job pj = {ji, a->jobs, a->njobs, a->pods, a->npods, fp, replan, a};
    size_t nblockers = json_array_size(a->blockers);
    int rc = sched__preempt(c, &pj, &a->preemption, &blocker, err);
    while (json_array_size(a->blockers) > nblockers) /* the placer's, from the dry runs */
        json_array_remove(a->blockers, json_array_size(a->blockers) - 1);
    memcpy(a->placed, placed, sizeof(placed));
    memcpy(a->fail_pod, fail_pod, sizeof(fail_pod));
    if (rc == 0 && blocker >= 0)
        sched__attempt_blocker(a, blocker, NULL, "%s",
                               json_string_value(json_object_get(a->preemption, "reason")));
    return rc;
}

int sched__attempt(struct sched_cyc *c, int ji, struct err *err)
{
    struct sched_attempt a = {.blockers = json_array()};
    json_t *placement = NULL, *nf = NULL, *ahead = NULL;
    int rc = 0, ok = 1;
    members_and_checks(c, ji, &a);
    if (json_array_size(a.blockers)) {
        rc = finish(c, &a, 0, NULL, NULL, NULL, err);
        goto out;
    }
    collect_pods(c->v, &a);
    if ((rc = sched__placer_for(c, &a)(c, &a, err)) < 0)
        goto out;
    int fp = -1;
    char msg[256] = "";
    for (size_t m = 0; m < a.njobs; m++) {
        const struct sv_job *j = &c->v->jobs[a.jobs[m]];
        int need = sched__job_min(j), have = a.bound[m] + a.placed[m];
        if (fp < 0)
            fp = a.fail_pod[m];
        if (a.satisfied[m] || have >= need)
            continue;
        ok = 0;
        if (j->gang) {
            sched__attempt_blocker(
                &a, WHY_GANG_SHORTFALL,
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
        for (size_t m = 0; nominated && m < a.njobs; m++) {
            const char *id = c->v->jobs[a.jobs[m]].id;
            if ((rc = sched__ledger_bound(c, a.jobs[m], json_object_get(placement, id), err)) < 0)
                goto out;
        }
    } else {
        if ((rc = sched__stmt_discard(c, c->v->jobs[ji].id, WHY_GANG_SHORTFALL, msg, err)) < 0)
            goto out;
        if ((rc = preempt(c, &a, ji, fp, err)) < 0)
            goto out;
    }
    rc = finish(c, &a, ok, placement, nf, ahead, err);
out:
    json_decref(a.blockers);
    json_decref(a.topology);
    json_decref(a.preemption);
    json_decref(placement);
    json_decref(nf);
    json_decref(ahead);
    free(a.pods);
    return rc;
}
