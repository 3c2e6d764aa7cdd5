/*
 * validate_kinds.c - the kind-specific checks of Node, Pod, PodGroup (scheduler-plugins' and
 * Volcano's) and ClusterNetworkTopology, built from the typed checks in validate.c.
 */
#include "model_kind.h"
#include "model_pod.h"
#include "model_quantity.h"
#include "model_objects.h"
#include "validate.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "err.h"

static const char *const taint_effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", NULL};
static const char *const toleration_effects[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute",
                                                 NULL};
static const char *const toleration_ops[] = {"Equal", "Exists", NULL};
const char *const model__preemption_policies[] = {"PreemptLowerPriority", "Never", NULL};
static const char *const container_restart[] = {"Always", NULL};
static const char *const phases[] = {"Pending", "Running", "Succeeded", "Failed", "Unknown", NULL};

#define INT32_LO (-2147483647 - 1)
#define INT32_HI 2147483647

/* buf = base + "." + key; buf holds MODEL__PATH_MAX bytes. */
static void check_taint(struct model__vctx *v, json_t *t, const char *f)
{
    char p[MODEL__PATH_MAX];
    if (!model__want_object(v, t, f, 1))
        return;
    model__path(p, f, "key");
    json_t *key = json_object_get(t, "key");
    if (model__want_string(v, key, p, 1) && !*json_string_value(key))
        model__problem(v, p, "must not be empty");
    model__path(p, f, "value");
    model__want_string(v, json_object_get(t, "value"), p, 0);
    model__path(p, f, "effect");
    model__want_enum(v, json_object_get(t, "effect"), p, 1, taint_effects);
}

void model__validate_node(struct model__vctx *v, json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec"), *status = json_object_get(obj, "status"), *t;
    size_t i;
    if (model__want_object(v, spec, "spec", 0)) {
        model__want_bool(v, json_object_get(spec, "unschedulable"), "spec.unschedulable");
        json_t *taints = json_object_get(spec, "taints");
        if (model__want_array(v, taints, "spec.taints", 0))
            json_array_foreach(taints, i, t)
            {
                char f[MODEL__PATH_MAX];
                model__path_index(f, "spec.taints", i);
                check_taint(v, t, f);
            }
    }
    if (model__want_object(v, status, "status", 0)) {
        model__want_claims(v, status, "allocatable", "status.allocatable");
        model__want_claims(v, status, "capacity", "status.capacity");
    }
}

static void check_container(struct model__vctx *v, json_t *c, const char *f)
{
    char p[MODEL__PATH_MAX];
    if (!model__want_object(v, c, f, 1))
        return;
    model__path(p, f, "name");
    json_t *name = json_object_get(c, "name");
    if (model__want_string(v, name, p, 1) && !model__dns_label(json_string_value(name)))
        model__problem(v, p, "invalid container name '%s': must be a lowercase DNS-1123 label",
                       json_string_value(name));
    model__path(p, f, "restartPolicy");
    model__want_enum(v, json_object_get(c, "restartPolicy"), p, 0, container_restart);
    model__path(p, f, "resources");
    json_t *res = json_object_get(c, "resources");
    if (!model__want_object(v, res, p, 0))
        return;
    model__path(p, f, "resources.requests");
    model__want_claims(v, res, "requests", p);
    model__path(p, f, "resources.limits");
    model__want_claims(v, res, "limits", p);
}

static void check_containers(struct model__vctx *v, json_t *spec, const char *key, int required)
{
    char f[MODEL__PATH_MAX];
    json_t *list = json_object_get(spec, key), *c;
    size_t i;
    model__path(f, "spec", key);
    if (!model__want_array(v, list, f, required))
        return;
    if (required && json_array_size(list) == 0)
        model__problem(v, f, "must have at least one container");
    json_array_foreach(list, i, c)
    {
        char p[MODEL__PATH_MAX];
        model__path_index(p, f, i);
        check_container(v, c, p);
    }
}

/* Volcano's group-name annotation, when it is what names the pod's PodGroup (model_pod.h:
 * no pod-group label): a PodGroup's name, so a DNS-1123 subdomain, or the pod would wait
 * for a group that cannot exist. Not in model_validate: a mirrored pod may carry any
 * annotation another scheduler ignores, and a bound one must be counted on its node. */
static void check_group_name(struct model__vctx *v, json_t *meta)
{
    const char *label =
        json_string_value(json_object_get(json_object_get(meta, "labels"), MODEL_LABEL_POD_GROUP));
    const char *g = json_string_value(
        json_object_get(json_object_get(meta, "annotations"), MODEL_ANN_GROUP_NAME));
    if ((label && *label) || !g || !*g || model__dns_subdomain(g))
        return;
    size_t n = strlen(g);
    model__problem(v, "metadata.annotations." MODEL_ANN_GROUP_NAME,
                   "invalid PodGroup name '%.100s%s' (%zu bytes): must be a lowercase DNS-1123 "
                   "subdomain of at most 253 characters",
                   g, n > 100 ? "..." : "", n);
}

void model__validate_pod_extended(struct model__vctx *v, json_t *obj)
{
    static const char *const lists[] = {"initContainers", "containers"};
    check_group_name(v, json_object_get(obj, "metadata"));
    json_t *spec = json_object_get(obj, "spec");
    for (size_t l = 0; l < 2; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(spec, lists[l]), i, c)
        {
            const char *which, *res;
            char msg[256], p[MODEL__PATH_MAX];
            if (!model_extended_check(json_object_get(c, "resources"), &which, &res, msg,
                                      sizeof(msg)))
                continue;
            snprintf(p, sizeof(p), "spec.%s[%zu].resources.%s.%s", lists[l], i, which, res);
            model__problem(v, p, "%s (an extended resource)", msg);
        }
    }
}

static void check_toleration(struct model__vctx *v, json_t *t, const char *f)
{
    char p[MODEL__PATH_MAX];
    if (!model__want_object(v, t, f, 1))
        return;
    json_t *key = json_object_get(t, "key"), *op = json_object_get(t, "operator");
    json_t *value = json_object_get(t, "value");
    model__path(p, f, "key");
    int key_ok = model__want_string(v, key, p, 0);
    model__path(p, f, "operator");
    int op_ok = model__want_enum(v, op, p, 0, toleration_ops);
    int exists = op_ok && !strcmp(json_string_value(op), "Exists");
    int empty_key = !key || (key_ok && !*json_string_value(key));
    if (empty_key && !exists && (!op || op_ok))
        model__problem(v, p, "must be Exists when the key is empty");
    model__path(p, f, "value");
    if (model__want_string(v, value, p, 0) && exists && *json_string_value(value))
        model__problem(v, p, "must be empty when the operator is Exists");
    model__path(p, f, "effect");
    model__want_enum(v, json_object_get(t, "effect"), p, 0, toleration_effects);
    model__path(p, f, "tolerationSeconds");
    model__want_int(v, json_object_get(t, "tolerationSeconds"), p, 0, LLONG_MIN, LLONG_MAX);
}

static void check_pod_status(struct model__vctx *v, json_t *status)
{
    json_t *conds = json_object_get(status, "conditions"), *c;
    size_t i;
    if (!model__want_object(v, status, "status", 0))
        return;
    model__want_enum(v, json_object_get(status, "phase"), "status.phase", 0, phases);
    model__want_string(v, json_object_get(status, "nominatedNodeName"), "status.nominatedNodeName",
                       0);
    if (!model__want_array(v, conds, "status.conditions", 0))
        return;
    json_array_foreach(conds, i, c)
    {
        char f[MODEL__PATH_MAX], p[MODEL__PATH_MAX];
        model__path_index(f, "status.conditions", i);
        if (!model__want_object(v, c, f, 1))
            continue;
        model__path(p, f, "type");
        model__want_string(v, json_object_get(c, "type"), p, 1);
        model__path(p, f, "status");
        model__want_string(v, json_object_get(c, "status"), p, 0);
    }
}

static int all_digits(const char *s)
{
    if (!*s || strlen(s) > 18)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

static void check_pod_spec(struct model__vctx *v, json_t *spec);

void model__validate_pod(struct model__vctx *v, json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
    json_t *idx = json_object_get(ann, MODEL_ANN_TOPOLOGY_INDEX);
    if (json_is_string(idx) && !all_digits(json_string_value(idx)))
        model__problem(v, "metadata.annotations." MODEL_ANN_TOPOLOGY_INDEX,
                       "must be a non-negative integer string, got '%s'", json_string_value(idx));
    if (model__want_object(v, spec, "spec", 1))
        check_pod_spec(v, spec);
    check_pod_status(v, json_object_get(obj, "status"));
    model__want_duration_ann(v, ann, MODEL_ANN_EXPECTED_RUNTIME);
}

static void check_pod_spec(struct model__vctx *v, json_t *spec)
{
    json_t *t, *tols;
    size_t i;
    check_containers(v, spec, "containers", 1);
    check_containers(v, spec, "initContainers", 0);
    model__want_int(v, json_object_get(spec, "priority"), "spec.priority", 0, INT32_LO, INT32_HI);
    model__want_string(v, json_object_get(spec, "priorityClassName"), "spec.priorityClassName", 0);
    model__want_enum(v, json_object_get(spec, "preemptionPolicy"), "spec.preemptionPolicy", 0,
                     model__preemption_policies);
    model__want_string_map(v, json_object_get(spec, "nodeSelector"), "spec.nodeSelector");
    model__want_string(v, json_object_get(spec, "nodeName"), "spec.nodeName", 0);
    model__want_string(v, json_object_get(spec, "schedulerName"), "spec.schedulerName", 0);
    /* Kubernetes: a positive integer (ValidatePodSpec) */
    model__want_int(v, json_object_get(spec, "activeDeadlineSeconds"), "spec.activeDeadlineSeconds",
                    0, 1, INT32_HI);
    model__validate_affinity(v, spec);
    tols = json_object_get(spec, "tolerations");
    if (model__want_array(v, tols, "spec.tolerations", 0))
        json_array_foreach(tols, i, t)
        {
            char f[MODEL__PATH_MAX];
            model__path_index(f, "spec.tolerations", i);
            check_toleration(v, t, f);
        }
}

/* "ns/name" or "name", each part a valid name. */
static int group_ref_ok(const char *s)
{
    const char *slash = strchr(s, '/');
    if (!slash)
        return model__dns_subdomain(s);
    char *ns = xstrndup(s, (size_t)(slash - s));
    int ok = model__dns_label(ns) && model__dns_subdomain(slash + 1);
    free(ns);
    return ok;
}

static void check_groups(struct model__vctx *v, json_t *ann)
{
    const char *f = "metadata.annotations." MODEL_ANN_GROUPS;
    json_t *raw = json_object_get(ann, MODEL_ANN_GROUPS), *g;
    size_t i;
    if (!json_is_string(raw))
        return;
    json_t *list = json_loads(json_string_value(raw), JSON_DECODE_ANY, NULL);
    if (!json_is_array(list)) {
        model__problem(v, f, "must be a JSON array of \"namespace/name\" strings");
        goto out;
    }
    json_array_foreach(list, i, g)
    {
        if (!json_is_string(g)) {
            model__problem(v, f, "must be a JSON array of \"namespace/name\" strings");
            break;
        }
        if (!group_ref_ok(json_string_value(g)))
            model__problem(v, f, "invalid PodGroup reference '%s'", json_string_value(g));
    }
out:
    json_decref(list);
}

/* The gang annotations Koordinator reads with a fallback: muster refuses bad values on apply. */
static void check_gang_annotations(struct model__vctx *v, json_t *ann)
{
    const char *keys[] = {MODEL_ANN_MATCH_POLICY, MODEL_ANN_MATCH_POLICY_ALIAS};
    for (size_t i = 0; i < 2; i++) {
        const char *val = json_string_value(json_object_get(ann, keys[i]));
        char f[MODEL__PATH_MAX];
        model__path(f, "metadata.annotations", keys[i]);
        if (val && model_match_policy_parse(val) < 0)
            model__problem(v, f, "unknown match policy '%s' (one of %s, %s, %s)", val,
                           model_match_policy_name(0), model_match_policy_name(1),
                           model_match_policy_name(2));
    }
    const char *wait = json_string_value(json_object_get(ann, MODEL_ANN_WAITING_TIME));
    struct err e = ERR_INIT;
    int64_t ms;
    if (wait && model_duration_parse(wait, &ms, &e) < 0)
        model__problem(v, "metadata.annotations." MODEL_ANN_WAITING_TIME, "%s", e.msg);
    model__want_duration_ann(v, ann, MODEL_ANN_MAX_WAIT);
}

void model__want_duration_ann(struct model__vctx *v, json_t *ann, const char *key)
{
    json_t *val = json_object_get(ann, key);
    char f[MODEL__PATH_MAX];
    struct err e = ERR_INIT;
    int64_t ms = 0;
    if (!val)
        return;
    model__path(f, "metadata.annotations", key);
    if (!json_is_string(val))
        model__problem(v, f, "must be a Go duration string such as \"90m\"");
    else if (model_duration_parse(json_string_value(val), &ms, &e) < 0)
        model__problem(v, f, "%s", e.msg);
    else if (ms <= 0)
        model__problem(v, f, "must be a positive duration, got '%s'", json_string_value(val));
}

/* podCountMultiple of each gatherStrategy entry: a positive integer. The rest of the spec
 * is checked when the job is attempted (SpecInvalid), as for a mirrored PodGroup; a
 * podCountMultiple of 0 or less would be silently ignored there (Koordinator's reading),
 * so apply refuses it here. */
static void check_topology_spec(struct model__vctx *v, json_t *ann)
{
    const char *f = "metadata.annotations." MODEL_ANN_TOPOLOGY_SPEC;
    const char *raw = json_string_value(json_object_get(ann, MODEL_ANN_TOPOLOGY_SPEC));
    json_t *spec = raw ? json_loads(raw, 0, NULL) : NULL, *e;
    json_t *list = json_object_get(spec, "gatherStrategy");
    size_t i;
    json_array_foreach(list, i, e)
    {
        json_t *m = json_object_get(e, "podCountMultiple");
        if (m &&
            (!json_is_integer(m) || json_integer_value(m) < 1 || json_integer_value(m) > INT32_HI))
            model__problem(v, f, "gatherStrategy[%zu].podCountMultiple must be a positive integer",
                           i);
    }
    json_decref(spec);
}

/* apiVersion scheduling.volcano.sh/...: Volcano's PodGroup. */
static int is_volcano(json_t *obj)
{
    const char *api = json_string_value(json_object_get(obj, "apiVersion"));
    size_t n = strlen(MODEL_GROUP_VOLCANO);
    return api && !strncmp(api, MODEL_GROUP_VOLCANO, n) && api[n] == '/';
}

/* spec.minTaskMember: task name -> pods, an integer >= 0 (Volcano's map[string]int32). */
static void check_min_tasks(struct model__vctx *v, json_t *map)
{
    const char *task;
    json_t *n;
    if (!model__want_object(v, map, "spec.minTaskMember", 0))
        return;
    json_object_foreach(map, task, n)
    {
        char f[MODEL__PATH_MAX];
        model__path(f, "spec.minTaskMember", task);
        if (!*task)
            model__problem(v, f, "a task name must not be empty");
        else
            model__want_int(v, n, f, 1, 0, INT32_HI);
    }
}

void model__validate_podgroup(struct model__vctx *v, json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
    check_groups(v, ann);
    check_gang_annotations(v, ann);
    check_topology_spec(v, ann);
    if (!model__want_object(v, spec, "spec", 1))
        return;
    /* Volcano's CRD: minMember optional, minimum 0; scheduler-plugins': required, positive */
    int volcano = is_volcano(obj);
    model__want_int(v, json_object_get(spec, "minMember"), "spec.minMember", !volcano, !volcano,
                    INT32_HI);
    model__want_int(v, json_object_get(spec, "scheduleTimeoutSeconds"),
                    "spec.scheduleTimeoutSeconds", 0, 0, INT32_HI);
    model__want_string(v, json_object_get(spec, "priorityClassName"), "spec.priorityClassName", 0);
    json_t *queue = json_object_get(spec, "queue");
    if (model__want_string(v, queue, "spec.queue", 0) &&
        !model__dns_subdomain(json_string_value(queue)))
        model__problem(v, "spec.queue",
                       "invalid queue name '%s': must be a lowercase DNS-1123 "
                       "subdomain",
                       json_string_value(queue));
    model__want_quantities(v, spec, "minResources", "spec.minResources");
    check_min_tasks(v, json_object_get(spec, "minTaskMember"));
    model__want_object(v, json_object_get(obj, "status"), "status", 0);
}

/* Checks one layer entry; returns its name or NULL. */
static const char *check_layer(struct model__vctx *v, json_t *layers, size_t i, json_t *e)
{
    char f[MODEL__PATH_MAX], p[MODEL__PATH_MAX];
    model__path_index(f, "spec.networkTopologySpec", i);
    if (!model__want_object(v, e, f, 1))
        return NULL;
    json_t *name = json_object_get(e, "topologyLayer"), *parent;
    json_t *keys = json_object_get(e, "labelKey"), *k;
    size_t j;
    model__path(p, f, "topologyLayer");
    if (model__want_string(v, name, p, 1) && !*json_string_value(name))
        model__problem(v, p, "must not be empty");
    for (j = 0; j < i && json_is_string(name); j++) {
        const char *other =
            json_string_value(json_object_get(json_array_get(layers, j), "topologyLayer"));
        if (other && !strcasecmp(other, json_string_value(name)))
            model__problem(v, p, "duplicate layer '%s'", json_string_value(name));
    }
    parent = json_object_get(e, "parentTopologyLayer");
    model__path(p, f, "parentTopologyLayer");
    if (model__want_string(v, parent, p, i > 0)) {
        int found = 0;
        for (j = 0; j < i; j++) {
            const char *other =
                json_string_value(json_object_get(json_array_get(layers, j), "topologyLayer"));
            found |= other && !strcasecmp(other, json_string_value(parent));
        }
        if (!found)
            model__problem(v, p, "unknown parent layer '%s' (parents must be listed first)",
                           json_string_value(parent));
    }
    model__path(p, f, "labelKey");
    if (model__want_array(v, keys, p, 0))
        json_array_foreach(keys, j, k)
        {
            char q[MODEL__PATH_MAX];
            model__path_index(q, p, j);
            model__want_string(v, k, q, 1);
        }
    return json_string_value(name);
}

void model__validate_topology(struct model__vctx *v, json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec"), *e;
    const char *f = "spec.networkTopologySpec", *last = NULL;
    size_t i;
    if (!model__want_object(v, spec, "spec", 1))
        return;
    json_t *layers = json_object_get(spec, "networkTopologySpec");
    if (!model__want_array(v, layers, f, 1))
        return;
    json_array_foreach(layers, i, e) last = check_layer(v, layers, i, e);
    if (json_array_size(layers) == 0 || (last && strcasecmp(last, "NodeTopologyLayer") != 0))
        model__problem(v, f, "the last layer must be NodeTopologyLayer");
    model__want_object(v, json_object_get(obj, "status"), "status", 0);
}
