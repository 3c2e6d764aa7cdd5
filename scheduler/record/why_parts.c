/*
 * why_parts.c - the blockers and the preemption verdict as the why document's JSON: made
 * once per attempt, where the documents are written.
 */
#include "why.h"

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
