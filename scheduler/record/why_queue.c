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

/* The members of vec sched__queue_quantities would hold, as the text of that object. */
static void quantities_text(const struct sched_view *v, const int64_t *vec, int limited,
                            struct store_jw *w)
{
    store_jw_lit(w, "{");
    for (size_t r = 1; r < v->nres; r++) {
        if (limited ? vec[r] < 0 : !vec[r])
            continue;
        char buf[32];
        model_quantity_format(vec[r], model_resource_is_milli(v->res[r]), buf, sizeof(buf));
        store_jw_key(w, v->res[r]);
        store_jw_str(w, buf);
    }
    store_jw_lit(w, "}");
}

void sched__queue_why_text(const struct sched_view *v, int qi, struct store_jw *w)
{
    if (qi < 0) {
        store_jw_lit(w, "null");
        return;
    }
    const struct sv_queue *q = &v->queues[qi];
    int dom;
    double share = sched__queue_share(v, qi, &dom);
    store_jw_lit(w, "{");
    store_jw_key(w, "name");
    store_jw_str(w, q->m.name);
    store_jw_key(w, "share");
    store_jw_real(w, share);
    if (dom >= 0) {
        store_jw_key(w, "dominantResource");
        store_jw_str(w, v->res[dom]);
    }
    store_jw_key(w, "rank");
    store_jw_int(w, q->rank);
    store_jw_key(w, "allocated");
    quantities_text(v, q->alloc, 0, w);
    store_jw_key(w, "deserved");
    quantities_text(v, q->deserved, 0, w);
    store_jw_key(w, "capability");
    quantities_text(v, q->realcap, 1, w);
    store_jw_key(w, "guarantee");
    quantities_text(v, q->guar, 0, w);
    store_jw_lit(w, "}");
}
