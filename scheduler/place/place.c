/*
 * place.c - the placers an attempt chooses between, and their results (place.h).
 *
 * Binpack, the default: each pod, in order, on the best node by score (place_pick.c).
 * Gather (place_nodeset.c) when a member asks for a strategy and some member still needs
 * its gang. Nominated: a preemptor's pods on the nodes its preemption freed. The result
 * and the members' gang counts are place_req.c's.
 */

#include "place.h"
#include "place_nodeset.h"

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

int sched__place(struct sched_cyc *c, const struct place_req *rq, struct place_result *out,
                 struct err *err)
{
    int open = 0;
    for (size_t m = 0; m < rq->njobs; m++)
        open |= !rq->m[m].satisfied;
    if (rq->has_spec && open && sched__topo_get(c->v))
        return sched__place_gather(c, rq, out, err);
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
