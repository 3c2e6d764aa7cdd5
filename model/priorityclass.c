/*
 * priorityclass.c - the PriorityClass kind: the built-in classes, validation and the
 * typed decode.
 *
 * Validation follows Kubernetes (pkg/apis/scheduling/validation): a name with the
 * system- prefix must be one of the built-ins with its exact value and globalDefault
 * false; any other class has a value of at most 1e9. Rules that need the stored
 * classes (one globalDefault, value and preemptionPolicy immutable) are the
 * scheduler's, at apply (scheduler/sched_apply.c).
 */
#include "model_kind.h"
#include "model_objects.h"
#include "validate.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "err.h"

static const struct {
    struct model_priorityclass pc;
    const char *description;
} builtins[] = {
    {{"system-cluster-critical", 2000000000, 0, 0},
     "Used for system critical pods that must run in the cluster, but can be moved to another "
     "node if necessary."},
    {{"system-node-critical", 2000001000, 0, 0},
     "Used for system critical pods that must not be moved from their current node."},
};

#define NBUILTINS (sizeof(builtins) / sizeof(builtins[0]))

const struct model_priorityclass *model_priorityclass_builtin(const char *name)
{
    for (size_t i = 0; name && i < NBUILTINS; i++)
        if (!strcmp(builtins[i].pc.name, name))
            return &builtins[i].pc;
    return NULL;
}

json_t *model_priorityclass_builtin_json(size_t i)
{
    if (i >= NBUILTINS)
        return NULL;
    return json_pack("{s:s,s:s,s:{s:s},s:i,s:b,s:s,s:s}", "apiVersion",
                     model_kind_api_version(MODEL_PRIORITYCLASS), "kind",
                     model_kind_name(MODEL_PRIORITYCLASS), "metadata", "name", builtins[i].pc.name,
                     "value", (int)builtins[i].pc.value, "globalDefault", 0, "preemptionPolicy",
                     "PreemptLowerPriority", "description", builtins[i].description);
}

/* Why a system- name is refused, or NULL when it is a built-in as it must be. */
static const char *system_problem(const char *name, json_t *value, json_t *global, char *buf,
                                  size_t n)
{
    const struct model_priorityclass *b = model_priorityclass_builtin(name);
    if (!b)
        snprintf(buf, n, "name %s is not a known system priority class", name);
    else if (json_is_integer(value) && json_integer_value(value) != b->value)
        snprintf(buf, n, "value of %s PriorityClass must be %d", name, (int)b->value);
    else if (json_is_true(global))
        snprintf(buf, n, "globalDefault of %s PriorityClass must be false", name);
    else
        return NULL;
    return buf;
}

void model__validate_priorityclass(struct model__vctx *v, json_t *obj)
{
    json_t *value = json_object_get(obj, "value"), *global = json_object_get(obj, "globalDefault");
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    char why[256];
    int value_ok = model__want_int(v, value, "value", 1, INT32_MIN, INT32_MAX);
    model__want_bool(v, global, "globalDefault");
    model__want_enum(v, json_object_get(obj, "preemptionPolicy"), "preemptionPolicy", 0,
                     model__preemption_policies);
    model__want_string(v, json_object_get(obj, "description"), "description", 0);
    if (!name)
        return;
    size_t plen = strlen(MODEL_PRIORITY_SYSTEM_PREFIX);
    if (!strncmp(name, MODEL_PRIORITY_SYSTEM_PREFIX, plen)) {
        if (system_problem(name, value, global, why, sizeof(why)))
            model__problem(v, "metadata.name",
                           "priority class names with '%s' prefix are reserved for system use "
                           "only: %s",
                           MODEL_PRIORITY_SYSTEM_PREFIX, why);
    } else if (value_ok && json_integer_value(value) > MODEL_PRIORITY_USER_MAX) {
        model__problem(v, "value", "maximum allowed value of a user defined priority is %d",
                       MODEL_PRIORITY_USER_MAX);
    }
}

int model_priorityclass_decode(json_t *obj, struct model_priorityclass *out, struct err *err)
{
    const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    json_t *value = json_object_get(obj, "value");
    const char *policy = json_string_value(json_object_get(obj, "preemptionPolicy"));

    memset(out, 0, sizeof(*out));
    if (!name || !*name)
        return err_setf(err, ERR_INVALID, "metadata.name", "priorityclass without a name");
    if (!json_is_integer(value) || json_integer_value(value) < INT32_MIN ||
        json_integer_value(value) > INT32_MAX)
        return err_setf(err, ERR_INVALID, "value",
                        "priorityclass '%s': value must be a 32-bit integer", name);
    out->name = xstrdup(name);
    out->value = (int32_t)json_integer_value(value);
    out->global_default = json_is_true(json_object_get(obj, "globalDefault"));
    out->preempt_never = policy && !strcmp(policy, "Never");
    return 0;
}

void model_priorityclass_release(struct model_priorityclass *pc)
{
    if (!pc)
        return;
    free(pc->name);
    memset(pc, 0, sizeof(*pc));
}
