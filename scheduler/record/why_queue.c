/*
 * why_queue.c - a queue's part of the why document and the quantities the queue documents
 * show.
 */
#include <stdlib.h>
#include <string.h>

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

/* The part's members that change only with the plan (deserved, capability, guarantee), as
 * text: written again only when one of the vectors it was written from changed, so a cycle
 * placing thousands of jobs of one queue formats them once. */
static const struct store_jw *tail_text(const struct sched_view *v, const struct sv_queue *q,
                                        struct sched_queue_tail *t)
{
    size_t n = 3 * v->nres;
    const int64_t *vec[3] = {q->deserved, q->realcap, q->guar};
    int same = t->q == q - v->queues && t->nres == v->nres && t->text.len;
    for (int i = 0; same && i < 3; i++)
        same = !memcmp(t->vec + i * v->nres, vec[i], v->nres * sizeof(int64_t));
    if (same)
        return &t->text;
    t->q = (int)(q - v->queues);
    t->nres = v->nres;
    t->vec = xrealloc(t->vec, (n + 1) * sizeof(int64_t));
    for (int i = 0; i < 3; i++)
        memcpy(t->vec + i * v->nres, vec[i], v->nres * sizeof(int64_t));
    t->text.len = 0;
    store_jw_lit(&t->text, ",\"deserved\":");
    quantities_text(v, q->deserved, 0, &t->text);
    store_jw_key(&t->text, "capability");
    quantities_text(v, q->realcap, 1, &t->text);
    store_jw_key(&t->text, "guarantee");
    quantities_text(v, q->guar, 0, &t->text);
    store_jw_lit(&t->text, "}");
    return &t->text;
}

void sched__queue_tail_release(struct sched_queue_tail *t)
{
    free(t->vec);
    store_jw_release(&t->text);
    *t = (struct sched_queue_tail){.q = -1};
}

void sched__queue_why_text(const struct sched_view *v, int qi, struct store_jw *w,
                           struct sched_queue_tail *cache)
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
    const struct store_jw *tail = tail_text(v, q, cache);
    store_jw_raw(w, tail->buf, tail->len); /* ,"deserved":..,"capability":..,"guarantee":..} */
}
