/*
 * cycle_demand.c - what a job asks for against what the cluster could ever hold, before
 * any placement (cycle.h, sched__attempt_demand_checks).
 *
 * A member's demand is its bound pods plus the pending pods its gang still needs
 * (minMember), raised in each resource to its PodGroup's spec.minResources, with "pods" at
 * least minMember (scheduler-plugins' coscheduling PreFilter checks minResources, pods
 * = minMember, against the cluster). A GangGroup's demand is its members' sum. Larger than
 * the allocatable of every schedulable node: ExceedsClusterCapacity. Under a MustGather
 * rule, a demand raised by minResources beyond the largest domain of that layer (the one
 * with the most of the resource): ExceedsDomainCapacity. A demand of pods alone that no
 * domain holds is left to the gather placer, whose TopologyNoDomain shows the domains.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cycle.h"
#include "why_msg.h"

/* Adds the demand of pod p to need[] (resources indexed as in the view). */
static void demand_add(const struct sv_pod *p, int64_t *need)
{
    for (int r = 0; r < p->nreq; r++)
        need[p->req[r].res] += p->req[r].v;
}

/* Member m's demand into pods[] (bound and needed pending pods) and need[] (raised to its
 * spec.minResources); both [v->nres], added to. *raised_by: the member whose minResources
 * raised a resource, unchanged when none did. */
static void member_demand(const struct sched_view *v, const struct sched_attempt *a, size_t m,
                          int64_t *pods, int64_t *need, int *raised_by)
{
    const struct sv_job *j = &v->jobs[a->rq.jobs[m]];
    int satisfied = a->rq.m[m].satisfied;
    long want = satisfied ? 0 : sched__job_min(j) - a->rq.m[m].base;
    int64_t *own = xcalloc(v->nres + 1, sizeof(int64_t));
    for (size_t i = 0; i < j->npods; i++) {
        const struct sv_pod *p = &v->pods[j->pods[i]];
        if (p->counted)
            demand_add(p, own);
        else if (want > 0 && sched__pod_pending(p)) {
            demand_add(p, own);
            want--;
        }
    }
    for (size_t r = 0; r < v->nres; r++) {
        int64_t min = 0;
        if (!satisfied && j->has_pg && r == 0) /* "pods": minMember, as coscheduling adds */
            min = sched__job_min(j);
        for (size_t k = 0; !satisfied && j->has_pg && k < j->pg.nmin_resources; k++)
            if (sched__strmap_get(&v->res_ix, j->pg.min_resources[k].name) == (int)r)
                min = j->pg.min_resources[k].value;
        pods[r] += own[r];
        need[r] += own[r] > min ? own[r] : min;
        if (min > own[r] && r != 0)
            *raised_by = a->rq.jobs[m];
    }
    free(own);
}

static void fmt_q(const struct sched_view *v, size_t r, int64_t x, char *buf, size_t n)
{
    model_quantity_format(x, model_resource_is_milli(v->res[r]), buf, n);
}

/* ExceedsClusterCapacity for the first resource need[] exceeds the cluster in. */
static int cluster_check(struct sched_cyc *c, struct sched_attempt *a, const int64_t *need,
                         const int64_t *pods)
{
    struct sched_view *v = c->v;
    const int64_t *have = sched__cyc_cluster(c);
    long nn = c->cluster_nodes, cordoned = c->cluster_cordoned;
    for (size_t r = 0; nn && r < v->nres; r++) {
        if (need[r] <= have[r])
            continue;
        char q_need[32], q_have[32], where[64] = "";
        fmt_q(v, r, need[r], q_need, sizeof(q_need));
        fmt_q(v, r, have[r], q_have, sizeof(q_have));
        if (cordoned)
            snprintf(where, sizeof(where), WHY_MSG_EXCEEDS_CLUSTER_WHERE, nn - cordoned);
        sched__blocker_add(&a->blockers, WHY_EXCEEDS_CLUSTER,
                           json_pack("{s:s,s:I,s:I,s:b}", "resource", v->res[r], "need",
                                     (json_int_t)need[r], "capacity", (json_int_t)have[r],
                                     "minResources", need[r] > pods[r]),
                           WHY_MSG_EXCEEDS_CLUSTER, q_need, v->res[r], q_have, where,
                           need[r] > pods[r] ? WHY_MSG_EXCEEDS_MIN_RESOURCES : "");
        return 1; /* the first resource says it; the others add nothing a user can act on */
    }
    return 0;
}

/* The domain of depth d (NodeTopologyLayer: a node) with the most of resource r: its
 * amount, *name its name (borrowed from the view). */
static int64_t largest(struct sched_view *v, const struct sched_topo *t, int d, size_t r,
                       const char **name)
{
    int64_t best = -1;
    *name = "";
    if ((size_t)d == t->nlayers) {
        for (size_t i = 0; i < v->nnodes; i++)
            if (v->nodes[i].alive && v->nodes[i].alloc[r] > best) {
                best = v->nodes[i].alloc[r];
                *name = v->nodes[i].name;
            }
        return best < 0 ? 0 : best;
    }
    for (size_t i = 0; i < t->ndoms; i++) {
        const struct tp_dom *dm = &t->doms[i];
        int64_t x = r < t->nres ? dm->alloc[r] : 0;
        if (dm->depth == d && x > best) {
            best = x;
            *name = dm->name;
        }
    }
    return best < 0 ? 0 : best;
}

/* ExceedsDomainCapacity: under MustGather, a demand minResources raised beyond the largest
 * domain of the layer. */
static void domain_check(struct sched_cyc *c, struct sched_attempt *a, const int64_t *need,
                         const int64_t *pods, int by)
{
    struct sched_view *v = c->v;
    struct sched_topo *t = sched__topo_get(v);
    int d = a->rq.has_spec ? a->rq.spec.must : -1;
    if (!t || d < 0 || by < 0)
        return;
    for (size_t r = 1; r < v->nres; r++) {
        const char *name;
        int64_t have = largest(v, t, d, r, &name);
        if (need[r] <= pods[r] || need[r] <= have)
            continue;
        char q_need[32], q_have[32];
        fmt_q(v, r, need[r], q_need, sizeof(q_need));
        fmt_q(v, r, have, q_have, sizeof(q_have));
        const char *layer = sched__topo_layer_name(t, d);
        sched__blocker_add(&a->blockers, WHY_EXCEEDS_DOMAIN,
                           json_pack("{s:s,s:s,s:s,s:I,s:s,s:I}", "podGroup", v->jobs[by].id,
                                     "resource", v->res[r], "layer", layer, "need",
                                     (json_int_t)need[r], "domain", name, "capacity",
                                     (json_int_t)have),
                           WHY_MSG_EXCEEDS_DOMAIN, v->jobs[by].id, q_need, v->res[r], layer,
                           v->res[r], name, q_have);
        return;
    }
}

void sched__attempt_demand_checks(struct sched_cyc *c, struct sched_attempt *a)
{
    struct sched_view *v = c->v;
    int64_t *need = xcalloc(v->nres + 1, sizeof(int64_t));
    int64_t *pods = xcalloc(v->nres + 1, sizeof(int64_t));
    int by = -1;
    for (size_t m = 0; m < a->rq.njobs; m++)
        member_demand(v, a, m, pods, need, &by);
    if (!cluster_check(c, a, need, pods))
        domain_check(c, a, need, pods, by);
    free(need);
    free(pods);
}
