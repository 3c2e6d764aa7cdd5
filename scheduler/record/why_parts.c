/*
 * why_parts.c - the blockers and the preemption verdict as the why document's JSON: made
 * once per attempt, where the documents are written; and the preemption part of a placed job
 * that took lower preemptors' nominated room.
 */
#include <stdio.h>
#include <stdlib.h>

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
