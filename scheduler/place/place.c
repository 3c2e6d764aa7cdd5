/*
 * place.c - the placers an attempt chooses between, and their results (place.h).
 *
 * Binpack, the default: each pod, in order, on the best node by score (place_pick.c).
 * Gather (place_nodeset.c) when a member asks for a strategy and some member still needs
 * its gang; a satisfied gang under MustGather binpacks inside the domain it runs in. Nominated: a
 * preemptor's pods on the nodes its preemption freed. The result and the members' gang counts are
 * place_req.c's.
 */

#include <stdlib.h>

#include "place.h"
#include "place_nodeset.h"
#include "why_msg.h"

/* Counts pod pi of rq placed on ni (allocated), or the member's first failure. */
static void outcome(struct sched_cyc *c, const struct place_req *rq, struct place_result *out,
                    int pi, int ni)
{
    int m = sched__place_member(rq, c->v->pods[pi].job);
    if (ni >= 0) {
        sched__stmt_alloc(c, pi, ni);
        out->placed[m]++;
    } else if (out->fail_pod[m] < 0) {
        out->fail_pod[m] = pi;
    }
}

static int place_binpack(struct sched_cyc *c, const struct place_req *rq, struct place_result *out)
{
    for (size_t i = 0; i < rq->npods; i++)
        outcome(c, rq, out, rq->pods[i], sched__pick_node(c->v, rq->pods[i]));
    return 0;
}

/* The domain of depth d holding node ni (d = nlayers: the node itself, as -2 - ni), -1
 * when the node lacks the layer's label. */
static int node_domain(const struct sched_topo *t, int ni, int d)
{
    if ((size_t)d == t->nlayers)
        return -2 - ni;
    int x = (size_t)ni < t->nnode_dom ? t->node_dom[ni] : -1;
    while (x >= 0 && t->doms[x].depth > d)
        x = t->doms[x].parent;
    return x >= 0 && t->doms[x].depth == d ? x : -1;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return x < y ? -1 : x > y;
}

/* The MustGather domain the members' bound pods run in: the one holding most of them
 * (the lowest index on ties), -1 when none is in a domain of the layer. */
static int gang_domain(const struct sched_view *v, const struct sched_topo *t,
                       const struct place_req *rq)
{
    size_t n = 0, cap = 0;
    int *xs = NULL, best = -1;
    for (size_t m = 0; m < rq->njobs; m++) {
        const struct sv_job *j = &v->jobs[rq->jobs[m]];
        for (size_t i = 0; i < j->npods; i++) {
            const struct sv_pod *p = &v->pods[j->pods[i]];
            int x = p->counted && p->node >= 0 ? node_domain(t, p->node, rq->spec.must) : -1;
            if (x == -1)
                continue;
            XGROW(xs, n + 1, cap);
            xs[n++] = x;
        }
    }
    qsort(xs, n, sizeof(int), cmp_int);
    for (size_t i = 0, run = 0, best_run = 0; i < n; i++) {
        run = i > 0 && xs[i] == xs[i - 1] ? run + 1 : 1;
        if (run > best_run) {
            best_run = run;
            best = xs[i];
        }
    }
    free(xs);
    return best;
}

static void mark_nodes(const struct sched_topo *t, int x, char *allowed)
{
    const struct tp_dom *dm = &t->doms[x];
    for (size_t i = 0; i < dm->nnodes; i++)
        allowed[dm->nodes[i]] = 1;
    for (size_t i = 0; i < dm->nkids; i++)
        mark_nodes(t, dm->kids[i], allowed);
}

/* A satisfied gang under MustGather places its later pods one by one inside the domain of
 * the layer its bound pods run in (Volcano's hard network topology keeps every task of a
 * job in one hyperNode of the allowed tier); a pod that fits none of its nodes is
 * TopologyNoDomain. Without such a domain (bound pods on nodes that lack the layer's
 * label), binpack anywhere. */
static int place_within(struct sched_cyc *c, const struct place_req *rq, struct place_result *out)
{
    struct sched_view *v = c->v;
    const struct sched_topo *t = sched__topo_get(v);
    int x = gang_domain(v, t, rq);
    if (x == -1)
        return place_binpack(c, rq, out);
    char *allowed = xcalloc(v->nnodes + 1, 1);
    if (x <= -2)
        allowed[-2 - x] = 1;
    else
        mark_nodes(t, x, allowed);
    const char *layer = sched__topo_layer_name(t, rq->spec.must);
    const char *name = x <= -2 ? v->nodes[-2 - x].name : t->doms[x].name;
    int missed = 0;
    for (size_t i = 0; i < rq->npods; i++) {
        int ni = sched__pick_node_in(v, rq->pods[i], allowed);
        outcome(c, rq, out, rq->pods[i], ni);
        if (ni < 0 && !missed++)
            sched__blocker_add(&out->blockers, WHY_TOPOLOGY_NO_DOMAIN,
                               json_pack("{s:s,s:s,s:s}", "layer", layer, "domain", name, "pod",
                                         v->pods[rq->pods[i]].key),
                               WHY_MSG_GATHER_SATISFIED, layer, layer, name,
                               v->pods[rq->pods[i]].key);
    }
    free(allowed);
    return 0;
}

int sched__place(struct sched_cyc *c, const struct place_req *rq, struct place_result *out,
                 struct err *err)
{
    int open = 0;
    for (size_t m = 0; m < rq->njobs; m++)
        open |= !rq->m[m].satisfied;
    if (rq->has_spec && open && sched__topo_get(c->v))
        return sched__place_gather(c, rq, out, err);
    if (rq->has_spec && rq->spec.must >= 0 && sched__topo_get(c->v))
        return place_within(c, rq, out);
    return place_binpack(c, rq, out);
}

int sched__place_nominated_all(const struct sched_view *v, const struct place_req *rq)
{
    for (size_t i = 0; i < rq->npods; i++)
        if (v->pods[rq->pods[i]].nominated < 0)
            return 0;
    return rq->npods > 0;
}

void sched__place_nominated(struct sched_cyc *c, const struct place_req *rq,
                            struct place_result *out)
{
    struct sched_view *v = c->v;
    for (size_t i = 0; i < rq->npods; i++) {
        int pi = rq->pods[i], ni = v->pods[pi].nominated, by;
        const struct sv_shape *sh = &v->shapes[v->pods[pi].shape];
        struct sched_rules r;
        int ok = sched__fit_static(&v->nodes[ni], sh) == SCHED_FIT_OK &&
                 sched__fit_count(v, &v->nodes[ni], sh->req, sh->nreq, sh->priority, rq->jobs,
                                  rq->njobs, 1) == 1;
        if (ok) {
            if (sched__rules_prepare(v, pi, &r))
                ok = sched__rules_filter(&r, ni, &by) == SCHED_FIT_OK;
            sched__rules_release(&r);
        }
        outcome(c, rq, out, pi, ok ? ni : -1);
    }
}
