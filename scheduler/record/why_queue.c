/*
 * why_queue.c - a queue's part of the why document and the quantities the queue documents
 * show.
 */
#include "queue.h"
#include "why.h"

json_t *sched__queue_quantities(const struct sched_view *v, const int64_t *vec, int limited)
{
    json_t *o = json_object();
    for (size_t r = 1; r < v->nres; r++) {
        if (limited ? vec[r] < 0 : !vec[r])
            continue;
        char buf[32];
        model_quantity_format(vec[r], model_resource_is_milli(v->res[r]), buf, sizeof(buf));
        json_object_set_new(o, v->res[r], json_string(buf));
    }
    return o;
}

json_t *sched__queue_why(const struct sched_view *v, int qi)
{
    if (qi < 0)
        return NULL;
    const struct sv_queue *q = &v->queues[qi];
    int dom;
    double share = sched__queue_share(v, qi, &dom);
    return json_pack("{s:s,s:f,s:s?,s:i,s:o,s:o,s:o,s:o}", "name", q->m.name, "share", share,
                     "dominantResource", dom >= 0 ? v->res[dom] : NULL, "rank", q->rank,
                     "allocated", sched__queue_quantities(v, q->alloc, 0), "deserved",
                     sched__queue_quantities(v, q->deserved, 0), "capability",
                     sched__queue_quantities(v, q->realcap, 1), "guarantee",
                     sched__queue_quantities(v, q->guar, 0));
}
