/*
 * admit.c - admission of applied objects against the PriorityClasses, as the
 * Kubernetes Priority admission plugin (plugin/pkg/admission/priority) does it.
 *
 * Pods: on create, spec.priorityClassName resolves to spec.priority and
 * spec.preemptionPolicy; no class named takes the globalDefault class (its name too),
 * else nothing is written (priority 0). A pod that sets spec.priority or
 * spec.preemptionPolicy other than the class's is refused. Unlike Kubernetes, a pod
 * naming no class may carry its own spec.priority (muster's manifests set priorities
 * that way): it is kept. A replaced pod that names no class or the same one and no
 * spec.priority keeps what it was admitted with: admission happens once.
 *
 * Mirror mode: the API server admitted the object. Nothing is refused; a pod without
 * spec.priority (an API server without the plugin) takes its class's value when the
 * class is known.
 *
 * PriorityClasses (standalone): value and preemptionPolicy are immutable, and only one
 * class may be globalDefault. PodGroups (standalone): spec.priorityClassName must name
 * a class.
 *
 * Topology keys (standalone, not in Kubernetes): a pending pod whose required pod
 * (anti-)affinity term or DoNotSchedule spread constraint names a topologyKey that no node
 * carries (in the cluster or in the same manifest) is refused, because it could never be
 * placed as written; a cluster without any node yet refuses nothing.
 */
#include <stdio.h>
#include <string.h>

#include "core.h"

static const char *str_at(json_t *obj, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(obj, a), b));
}

static const char *policy_name(int never)
{
    return never ? "Never" : "PreemptLowerPriority";
}

/* A replaced pod keeps what it was admitted with; returns 1 when it did. */
static int keep_admitted(json_t *spec, json_t *old)
{
    json_t *ospec = json_object_get(old, "spec");
    const char *name = json_string_value(json_object_get(spec, "priorityClassName"));
    const char *oname = json_string_value(json_object_get(ospec, "priorityClassName"));
    if (!old || json_object_get(spec, "priority") || !json_object_get(ospec, "priority"))
        return 0;
    if (name && *name && (!oname || strcmp(name, oname) != 0))
        return 0;
    const char *keys[] = {"priority", "priorityClassName", "preemptionPolicy"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        json_t *ov = json_object_get(ospec, keys[i]);
        if (ov && !json_object_get(spec, keys[i]))
            json_object_set(spec, keys[i], ov);
    }
    return 1;
}

static int admit_pod(const struct sv_classes *cs, json_t *obj, json_t *old, int mirrored,
                     struct err *err)
{
    json_t *spec = json_object_get(obj, "spec");
    const char *name = json_string_value(json_object_get(spec, "priorityClassName"));
    json_t *prio = json_object_get(spec, "priority");
    json_t *policy = json_object_get(spec, "preemptionPolicy");
    const struct model_priorityclass *pc;

    if (!json_is_object(spec))
        return 0;
    if (mirrored) {
        pc = name && *name && !prio ? sched__class_find(cs, name) : NULL;
        if (pc) {
            json_object_set_new(spec, "priority", json_integer(pc->value));
            if (!policy)
                json_object_set_new(spec, "preemptionPolicy",
                                    json_string(policy_name(pc->preempt_never)));
        }
        return 0;
    }
    if (keep_admitted(spec, old))
        return 0;
    if (name && *name) {
        if (!(pc = sched__class_find(cs, name)))
            return err_setf(err, ERR_INVALID, "spec.priorityClassName",
                            "spec.priorityClassName: no PriorityClass with name '%s' was found",
                            name);
    } else if (prio) {
        return 0; /* muster's own: a bare spec.priority */
    } else if (!(pc = sched__class_default(cs))) {
        return 0;
    }
    if (prio && json_integer_value(prio) != pc->value)
        return err_setf(err, ERR_INVALID, "spec.priority",
                        "spec.priority: the integer value of priority (%" JSON_INTEGER_FORMAT
                        ") must not be provided in pod spec; priority admission controller "
                        "computed %d from the given PriorityClass name",
                        json_integer_value(prio), (int)pc->value);
    const char *want = policy_name(pc->preempt_never);
    if (policy && strcmp(json_string_value(policy), want) != 0)
        return err_setf(err, ERR_INVALID, "spec.preemptionPolicy",
                        "spec.preemptionPolicy: the string value of PreemptionPolicy (%s) must not "
                        "be provided in pod spec; priority admission controller computed %s from "
                        "the given PriorityClass name",
                        json_string_value(policy), want);
    json_object_set_new(spec, "priorityClassName", json_string(pc->name));
    json_object_set_new(spec, "priority", json_integer(pc->value));
    json_object_set_new(spec, "preemptionPolicy", json_string(want));
    return 0;
}

static int admit_class(const struct sv_classes *cs, json_t *obj, json_t *old, struct err *err)
{
    const char *name = str_at(obj, "metadata", "name");
    json_t *value = json_object_get(obj, "value");
    if (old && !json_equal(value, json_object_get(old, "value")))
        return err_setf(
            err, ERR_INVALID, "value",
            "value: may not be changed in an update (PriorityClass '%s' has %" JSON_INTEGER_FORMAT
            ")",
            name, json_integer_value(json_object_get(old, "value")));
    const char *p = json_string_value(json_object_get(obj, "preemptionPolicy"));
    const char *op = json_string_value(json_object_get(old, "preemptionPolicy"));
    if (old && strcmp(p ? p : "PreemptLowerPriority", op ? op : "PreemptLowerPriority") != 0)
        return err_setf(err, ERR_INVALID, "preemptionPolicy",
                        "preemptionPolicy: field is immutable (PriorityClass '%s' has %s)", name,
                        op ? op : "PreemptLowerPriority");
    const struct model_priorityclass *d = sched__class_default(cs);
    if (json_is_true(json_object_get(obj, "globalDefault")) && d && strcmp(d->name, name) != 0)
        return err_setf(err, ERR_INVALID, "globalDefault",
                        "globalDefault: PriorityClass %s is already marked as default; only one "
                        "default can exist",
                        d->name);
    return 0;
}

int sched__admit(const struct sv_classes *cs, enum model_kind kind, json_t *obj, json_t *old,
                 int mirrored, struct err *err)
{
    if (kind == MODEL_POD)
        return admit_pod(cs, obj, old, mirrored, err);
    if (mirrored)
        return 0;
    if (kind == MODEL_PRIORITYCLASS)
        return admit_class(cs, obj, old, err);
    if (kind == MODEL_PDB)
        return model_pdb_admit(obj, err);
    const char *name = str_at(obj, "spec", "priorityClassName");
    if (kind == MODEL_PODGROUP && name && *name && !sched__class_find(cs, name))
        return err_setf(err, ERR_INVALID, "spec.priorityClassName",
                        "spec.priorityClassName: no PriorityClass with name '%s' was found", name);
    return 0;
}

/* The field of a topologyKey no node carries, or NULL. */
static int key_known(struct sched_view *v, const struct sched_strmap *keys, const char *key)
{
    return !key || sched__strmap_get(keys, key) >= 0 ||
           sched__view_nodes_labelled(v, key, NULL) != NULL;
}

static const char *const affinity_kinds[] = {"podAffinity", "podAntiAffinity"};

/* The required rules of kind k (affinity_kinds) of spec's affinity aff. */
static json_t *required_terms(json_t *aff, int k)
{
    return json_object_get(json_object_get(aff, affinity_kinds[k]),
                           "requiredDuringSchedulingIgnoredDuringExecution");
}

int sched__admit_topology_keys_named(json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec"), *aff = json_object_get(spec, "affinity");
    if (json_object_get(spec, "nodeName"))
        return 0;
    return json_array_size(required_terms(aff, 0)) || json_array_size(required_terms(aff, 1)) ||
           json_array_size(json_object_get(spec, "topologySpreadConstraints"));
}

int sched__admit_topology_keys(struct sched_view *v, const struct sched_strmap *keys, json_t *obj,
                               struct err *err)
{
    json_t *spec = json_object_get(obj, "spec"), *aff = json_object_get(spec, "affinity"), *t;
    size_t i;
    if (json_object_get(spec, "nodeName") || (!keys->count && !v->nnodes))
        return 0;
    for (int k = 0; k < 2; k++)
        json_array_foreach(required_terms(aff, k), i, t)
        {
            const char *key = json_string_value(json_object_get(t, "topologyKey"));
            if (!key_known(v, keys, key))
                return err_setf(err, ERR_INVALID, "spec.affinity",
                                "spec.affinity.%s.requiredDuringSchedulingIgnoredDuringExecution"
                                "[%zu].topologyKey: no node carries the label '%s'",
                                affinity_kinds[k], i, key);
        }
    json_array_foreach(json_object_get(spec, "topologySpreadConstraints"), i, t)
    {
        const char *key = json_string_value(json_object_get(t, "topologyKey"));
        const char *when = json_string_value(json_object_get(t, "whenUnsatisfiable"));
        if ((!when || !strcmp(when, "DoNotSchedule")) && !key_known(v, keys, key))
            return err_setf(err, ERR_INVALID, "spec.topologySpreadConstraints",
                            "spec.topologySpreadConstraints[%zu].topologyKey: no node carries "
                            "the label '%s'",
                            i, key);
    }
    return 0;
}
