/*
 * queue.c - the Queue kind (Volcano's scheduling.volcano.sh/v1beta1 shape): the built-in
 * default queue, validation of one document and the typed decode.
 *
 * Validation follows Volcano's queue webhook where it speaks of one object: a weight is a
 * positive integer, the guarantee never exceeds the capability in a resource both name.
 * Rules that need the other queues (the parent exists, no cycle, a queue with jobs is not
 * deleted) are the scheduler's, at apply (scheduler/admit_queue.c).
 */
#include "model_kind.h"
#include "model_quantity.h"
#include "model_objects.h"
#include "validate.h"
#include "decode.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"

json_t *model_queue_default_json(void)
{
    return json_pack("{s:s,s:s,s:{s:s},s:{s:i,s:b}}", "apiVersion",
                     model_kind_api_version(MODEL_QUEUE), "kind", model_kind_name(MODEL_QUEUE),
                     "metadata", "name", MODEL_QUEUE_DEFAULT, "spec", "weight", 1, "reclaimable",
                     1);
}

/* Volcano's CRD enum. muster tries every job of a queue in order (traverse); "fifo" is
 * refused at apply (admit_queue.c), since a mirrored queue cannot be refused. */
static const char *const dequeue_strategies[] = {"traverse", "fifo", NULL};

/* spec.guarantee.resource above spec.capability in a resource both list. */
static void check_guarantee(struct model__vctx *v, json_t *spec)
{
    json_t *cap = json_object_get(spec, "capability");
    json_t *gua = json_object_get(json_object_get(spec, "guarantee"), "resource");
    const char *res;
    json_t *q;
    json_object_foreach(gua, res, q)
    {
        json_t *c = json_object_get(cap, res);
        int milli = model_resource_is_milli(res);
        int64_t g, cv;
        if (!c || model_quantity_parse(json_string_value(q), milli, &g, NULL) < 0 ||
            model_quantity_parse(json_string_value(c), milli, &cv, NULL) < 0 || g <= cv)
            continue;
        char f[MODEL__PATH_MAX];
        snprintf(f, sizeof(f), "spec.guarantee.resource.%s", res);
        model__problem(v, f,
                       "%s is above spec.capability.%s (%s): a queue cannot be guaranteed more "
                       "than its capability",
                       json_string_value(q), res, json_string_value(c));
    }
}

void model__validate_queue(struct model__vctx *v, json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
    json_t *qs = json_object_get(ann, MODEL_ANN_QUEUEING_STRATEGY);
    if (qs && model_queueing_parse(json_string_value(qs)) < 0)
        model__problem(v, "metadata.annotations." MODEL_ANN_QUEUEING_STRATEGY,
                       "unknown queueing strategy '%s' (one of %s, %s)",
                       json_is_string(qs) ? json_string_value(qs) : "(not a string)",
                       model_queueing_name(0), model_queueing_name(1));
    model__want_duration_ann(v, ann, MODEL_ANN_MAX_WAIT);
    if (!model__want_object(v, spec, "spec", 0) || !spec)
        return;
    /* Volcano's CRD: weight 1..65535, default 1 (an explicit 0 is refused there too) */
    model__want_int(v, json_object_get(spec, "weight"), "spec.weight", 0, 1, 65535);
    model__want_quantities(v, spec, "capability", "spec.capability");
    json_t *gua = json_object_get(spec, "guarantee");
    if (model__want_object(v, gua, "spec.guarantee", 0) && gua)
        model__want_quantities(v, gua, "resource", "spec.guarantee.resource");
    model__want_bool(v, json_object_get(spec, "reclaimable"), "spec.reclaimable");
    json_t *parent = json_object_get(spec, "parent");
    if (model__want_string(v, parent, "spec.parent", 0) && parent) {
        const char *name =
            json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
        if (!model__dns_subdomain(json_string_value(parent)))
            model__problem(v, "spec.parent",
                           "invalid queue name '%s': must be a lowercase DNS-1123 subdomain",
                           json_string_value(parent));
        else if (name && !strcmp(name, json_string_value(parent)))
            model__problem(v, "spec.parent", "a queue cannot be its own parent");
    }
    model__want_enum(v, json_object_get(spec, "dequeueStrategy"), "spec.dequeueStrategy", 0,
                     dequeue_strategies);
    if (v->count == 0)
        check_guarantee(v, spec);
    model__want_object(v, json_object_get(obj, "status"), "status", 0);
}

static const char *const queueing_names[] = {
#define MODEL__QS_NAME(name, str) str,
    MODEL_QUEUEING_MAP(MODEL__QS_NAME)
#undef MODEL__QS_NAME
        NULL};

const char *model_queueing_name(enum model_queueing q)
{
    return (unsigned)q < MODEL_QUEUEING_COUNT ? queueing_names[q] : "unknown";
}

int model_queueing_parse(const char *s)
{
    for (int i = 0; s && i < MODEL_QUEUEING_COUNT; i++)
        if (!strcmp(s, queueing_names[i]))
            return i;
    return -1;
}

int model_queue_decode(json_t *obj, struct model_queue *out, struct err *err)
{
    json_t *meta = json_object_get(obj, "metadata"), *spec = json_object_get(obj, "spec");
    const char *name = json_string_value(json_object_get(meta, "name"));
    json_t *weight = json_object_get(spec, "weight");
    const char *parent = json_string_value(json_object_get(spec, "parent"));
    const char *ts = json_string_value(json_object_get(meta, "creationTimestamp"));

    memset(out, 0, sizeof(*out));
    if (!name || !*name)
        return err_setf(err, ERR_INVALID, "metadata.name", "queue without a name");
    out->name = xstrdup(name);
    /* Volcano's mutating webhook makes a weight of 0 (unset) 1; a mirrored queue cannot
     * be refused, so anything below 1 is read as 1 */
    out->weight = json_is_integer(weight) && json_integer_value(weight) >= 1 &&
                          json_integer_value(weight) <= INT32_MAX
                      ? (int32_t)json_integer_value(weight)
                      : 1;
    out->reclaimable = !json_is_false(json_object_get(spec, "reclaimable"));
    out->parent = parent && *parent && strcmp(parent, MODEL_QUEUE_ROOT) ? xstrdup(parent) : NULL;
    if (ts && clock_parse_rfc3339(ts, &out->creation_ms, NULL) < 0)
        out->creation_ms = 0;
    json_t *ann = json_object_get(meta, "annotations");
    int qs =
        model_queueing_parse(json_string_value(json_object_get(ann, MODEL_ANN_QUEUEING_STRATEGY)));
    out->queueing = qs < 0 ? MODEL_QUEUEING_BEST_EFFORT_FIFO : (enum model_queueing)qs;
    out->queueing_set = qs >= 0;
    int64_t mw = 0;
    if (model_duration_parse(json_string_value(json_object_get(ann, MODEL_ANN_MAX_WAIT)), &mw,
                             NULL) == 0 &&
        mw > 0)
        out->max_wait_ms = mw;
    if (model__res_list(json_object_get(spec, "capability"), "spec.capability", &out->capability,
                        &out->ncapability, err) < 0 ||
        model__res_list(json_object_get(json_object_get(spec, "guarantee"), "resource"),
                        "spec.guarantee.resource", &out->guarantee, &out->nguarantee, err) < 0) {
        model_queue_release(out);
        return ERR_INVALID;
    }
    return 0;
}

void model_queue_release(struct model_queue *q)
{
    if (!q)
        return;
    free(q->name);
    free(q->parent);
    model__res_free(q->capability, q->ncapability);
    model__res_free(q->guarantee, q->nguarantee);
    memset(q, 0, sizeof(*q));
}
