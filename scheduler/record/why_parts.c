/*
 * why_parts.c - the blockers and the preemption verdict as the why document's JSON: made
 * once per attempt, where the documents are written; and the preemption part of a placed job
 * that took lower preemptors' nominated room.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place.h"
#include "plan.h"
#include "why.h"
#include "why_msg.h"

json_t *sched__blockers_json(const struct sched_blockers *bs)
{
    json_t *out = json_array();
    for (size_t i = 0; i < bs->n; i++) {
        const struct sched_blocker *b = &bs->b[i];
        json_t *o = json_pack("{s:s,s:s,s:s}", "class", why_class_name(why_code_class(b->code)),
                              "code", why_code_name(b->code), "message", b->message);
        if (b->extra)
            json_object_update(o, b->extra);
        json_array_append_new(out, o);
    }
    return out;
}

/* ---- the preemption verdict ---- */

json_t *sched__preempt_verdict_json(const struct sched_preempt_verdict *v)
{
    json_t *o = json_pack("{s:b,s:b,s:s,s:s}", "attempted", v->attempted, "relevant", 1, "code",
                          why_code_name(v->code), "reason", v->reason);
    if (v->detail)
        json_object_update(o, v->detail);
    return o;
}

json_t *sched__displaced_json(const struct sched_view *v, const struct preempt_cleared *cl)
{
    if (!cl->njobs)
        return NULL;
    char *ids = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&ids, &len);
    json_t *jobs = json_array();
    for (size_t i = 0; i < cl->njobs; i++) {
        fprintf(f, "%s%s", i ? ", " : "", v->jobs[cl->jobs[i]].id);
        json_array_append_new(jobs, json_string(v->jobs[cl->jobs[i]].id));
    }
    fclose(f);
    char *reason = xasprintf(WHY_MSG_PREEMPT_DISPLACED, ids);
    json_t *o = json_pack("{s:b,s:b,s:s,s:o}", "attempted", 0, "relevant", 0, "reason", reason,
                          "nominationsCleared", jobs);
    free(reason);
    free(ids);
    return o;
}

/* The document's "gang": each gang member's counts. */
static json_t *gang_json(const struct sched_view *v, const struct sched_why_outcome *o)
{
    json_t *g = json_array();
    for (size_t m = 0; m < o->rq->njobs; m++) {
        const struct sv_job *j = &v->jobs[o->rq->jobs[m]];
        const struct place_member *am = &o->rq->m[m];
        if (!j->gang)
            continue;
        json_array_append_new(g, json_pack("{s:s,s:i,s:i,s:i,s:i}", "podGroup", j->id, "minMember",
                                           sched__job_min(j), "members", (int)j->npods, "bound",
                                           am->bound, "placeable", am->base + o->res->placed[m]));
    }
    return g;
}

void sched__why_shared(const struct sched_view *v, const struct sched_why_outcome *o,
                       struct sched_why_shared *out)
{
    out->gang = gang_json(v, o);
    out->blockers = sched__blockers_json(o->blockers);
    out->preemption =
        o->preempt->code >= 0 ? sched__preempt_verdict_json(o->preempt)
        : *o->moot ? json_pack("{s:b,s:b,s:s}", "attempted", 0, "relevant", 0, "reason", o->moot)
                   : NULL;
    if (!out->preemption) /* it took a lower preemptor's nominated room */
        out->preemption = sched__displaced_json(v, o->displaced);
    out->topology = sched__topology_json(o->res->topology);
}

void sched__why_shared_release(struct sched_why_shared *sh)
{
    json_decref(sh->gang);
    json_decref(sh->blockers);
    json_decref(sh->preemption);
    json_decref(sh->topology);
    memset(sh, 0, sizeof(*sh));
}

json_t *sched__topology_json(const struct place_topology *t)
{
    if (!t)
        return NULL;
    const char *layer = sched__topo_layer_name(t->tree, t->depth);
    json_t *best = json_array(), *tried = json_array();
    for (size_t i = 0; i < t->nbest; i++)
        json_array_append_new(best, json_pack("{s:s,s:s,s:i,s:s?}", "layer", layer, "name",
                                              t->best[i].name, "holds", (int)t->best[i].holds,
                                              "limit", t->best[i].limit));
    for (size_t i = 0; i < t->ntried; i++) {
        const struct place_topo_try *x = &t->tried[i];
        json_array_append_new(tried,
                              json_pack("{s:s,s:s,s:i,s:i,s:s}", "layer",
                                        sched__topo_layer_name(t->tree, x->depth), "name", x->name,
                                        "offerSlots", (int)x->offer, "placed", x->placed, "result",
                                        x->ok ? "placed" : "incomplete"));
    }
    json_t *part = json_pack("{s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:o,s:o,s:s}", "strategy",
                             t->must ? "MustGather" : "PreferGather", "layer", layer, "jobPods",
                             t->job_pods, "needed", t->needed, "candidates", t->candidates,
                             "domainsTried", (int)t->ntried, "domainsHolding", (int)t->holding,
                             "best", best, "tried", tried, "summary", t->summary);
    if (t->mult) {
        json_t *o = json_object();
        for (size_t d = 0; d < t->nmult; d++)
            if (t->mult[d] > 1)
                json_object_set_new(o, sched__topo_layer_name(t->tree, (int)d),
                                    json_integer(t->mult[d]));
        json_object_set_new(part, "podCountMultiple", o);
    }
    return part;
}
