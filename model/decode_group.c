/*
 * decode_group.c - typed views of PodGroup and ClusterNetworkTopology documents.
 */
#include "model_objects.h"
#include "decode.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"

static const char *const match_policy_names[] = {
#define MODEL__MP_NAME(name, str) str,
    MODEL_MATCH_POLICY_MAP(MODEL__MP_NAME)
#undef MODEL__MP_NAME
};

const char *model_match_policy_name(enum model_match_policy p)
{
    return (unsigned)p < MODEL_MATCH_POLICY_COUNT ? match_policy_names[p] : "unknown";
}

int model_match_policy_parse(const char *s)
{
    for (int i = 0; s && i < MODEL_MATCH_POLICY_COUNT; i++)
        if (!strcmp(s, match_policy_names[i]))
            return i;
    return -1;
}

static char *dup_or_null(json_t *v)
{
    const char *s = json_string_value(v);
    return s && *s ? xstrdup(s) : NULL;
}

static void add_group(struct model_podgroup *g, char *key)
{
    for (size_t i = 0; i < g->ngroups; i++) {
        if (!strcmp(g->groups[i], key)) {
            free(key);
            return;
        }
    }
    g->groups = xrealloc(g->groups, (g->ngroups + 1) * sizeof(*g->groups));
    g->groups[g->ngroups++] = key;
}

/* The groups annotation as "ns/name" keys; a bare name is in the PodGroup's namespace. */
static int decode_groups(struct model_podgroup *g, const char *raw, struct err *err)
{
    json_t *list = json_loads(raw, JSON_DECODE_ANY, NULL), *e;
    size_t i;
    int rc = 0;
    if (!json_is_array(list)) {
        rc = err_setf(err, ERR_INVALID, "metadata.annotations." MODEL_ANN_GROUPS,
                      "groups annotation must be a JSON array of \"namespace/name\" strings");
        goto out;
    }
    json_array_foreach(list, i, e)
    {
        const char *s = json_string_value(e);
        if (!s || !*s) {
            rc = err_setf(err, ERR_INVALID, "metadata.annotations." MODEL_ANN_GROUPS,
                          "groups annotation must be a JSON array of \"namespace/name\" strings");
            goto out;
        }
        add_group(g, strchr(s, '/') ? xstrdup(s) : xasprintf("%s/%s", g->ns, s));
    }
    add_group(g, xasprintf("%s/%s", g->ns, g->name));
out:
    json_decref(list);
    return rc;
}

/* The network-topology-spec annotation: {"gatherStrategy": [{"layer", "strategy",
 * "podCountMultiple"}]}. A podCountMultiple that is not an integer is a spec error (Koordinator
 * fails to unmarshal it); zero or negative means none, as Koordinator reads it. */
static void decode_spec(struct model_podgroup *g, const char *raw)
{
    json_error_t je;
    json_t *spec = json_loads(raw, 0, &je), *list, *e;
    size_t i;
    g->has_spec = 1;
    if (!json_is_object(spec)) {
        g->spec_error = xasprintf("network-topology-spec is not a JSON object%s%s",
                                  spec ? "" : ": ", spec ? "" : je.text);
        goto out;
    }
    list = json_object_get(spec, "gatherStrategy");
    if (list && !json_is_array(list)) {
        g->spec_error = xstrdup("network-topology-spec: gatherStrategy must be an array");
        goto out;
    }
    g->gather = xcalloc(json_array_size(list) + 1, sizeof(*g->gather));
    json_array_foreach(list, i, e)
    {
        const char *layer = json_string_value(json_object_get(e, "layer"));
        const char *strat = json_string_value(json_object_get(e, "strategy"));
        if (!layer || !strat) {
            g->spec_error =
                xasprintf("network-topology-spec: gatherStrategy[%zu] needs layer and strategy", i);
            goto out;
        }
        if (strcmp(strat, "MustGather") && strcmp(strat, "PreferGather")) {
            g->spec_error = xasprintf("network-topology-spec: unknown strategy '%s' (MustGather "
                                      "or PreferGather)",
                                      strat);
            goto out;
        }
        json_t *pcm = json_object_get(e, "podCountMultiple");
        if (pcm && !json_is_integer(pcm)) {
            g->spec_error = xasprintf("network-topology-spec: gatherStrategy[%zu]."
                                      "podCountMultiple must be a positive integer",
                                      i);
            goto out;
        }
        json_int_t m = pcm ? json_integer_value(pcm) : 1;
        if (m < 1)
            m = 1;
        if (m > INT32_MAX)
            m = INT32_MAX;
        g->gather[g->ngather++] =
            (struct model_gather){xstrdup(layer), !strcmp(strat, "MustGather"), (int32_t)m};
    }
out:
    json_decref(spec);
}

static int cmp_task(const void *a, const void *b)
{
    return strcmp(((const struct model_task_min *)a)->task,
                  ((const struct model_task_min *)b)->task);
}

/* spec.minTaskMember: task name -> pods (Volcano's map[string]int32), sorted by task. */
static int decode_min_tasks(struct model_podgroup *g, json_t *map, struct err *err)
{
    const char *task;
    json_t *n;
    if (!json_object_size(map))
        return 0;
    g->min_tasks = xcalloc(json_object_size(map), sizeof(*g->min_tasks));
    json_object_foreach(map, task, n)
    {
        if (!json_is_integer(n) || json_integer_value(n) < 0 || json_integer_value(n) > INT32_MAX)
            return err_setf(err, ERR_INVALID, "spec.minTaskMember",
                            "podgroup '%s/%s': spec.minTaskMember.%s must be an integer >= 0",
                            g->ns, g->name, task);
        g->min_tasks[g->nmin_tasks++] =
            (struct model_task_min){xstrdup(task), (int32_t)json_integer_value(n)};
    }
    qsort(g->min_tasks, g->nmin_tasks, sizeof(*g->min_tasks), cmp_task);
    return 0;
}

int model_podgroup_decode(json_t *obj, struct model_podgroup *out, struct err *err)
{
    json_t *meta = json_object_get(obj, "metadata"), *spec = json_object_get(obj, "spec");
    json_t *ann = json_object_get(meta, "annotations");
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (!(out->name = dup_or_null(json_object_get(meta, "name")))) {
        rc = err_setf(err, ERR_INVALID, "metadata.name", "podgroup without a name");
        goto out;
    }
    out->ns = dup_or_null(json_object_get(meta, "namespace"));
    if (!out->ns)
        out->ns = xstrdup("default");
    json_t *min = json_object_get(spec, "minMember");
    /* Volcano's CRD has minMember optional with minimum 0 (a gang of none); validation
     * refuses both for scheduler-plugins' PodGroups. A job needs at least one pod. */
    if ((min && !json_is_integer(min)) || json_integer_value(min) < 0 ||
        json_integer_value(min) > INT32_MAX) {
        rc = err_setf(err, ERR_INVALID, "spec.minMember",
                      "podgroup '%s/%s': minMember must be a positive integer", out->ns, out->name);
        goto out;
    }
    out->min_member = json_integer_value(min) > 0 ? (int32_t)json_integer_value(min) : 1;
    if ((rc = model__res_list(json_object_get(spec, "minResources"), "spec.minResources",
                              &out->min_resources, &out->nmin_resources, err)) < 0 ||
        (rc = decode_min_tasks(out, json_object_get(spec, "minTaskMember"), err)) < 0)
        goto out;
    const char *groups = json_string_value(json_object_get(ann, MODEL_ANN_GROUPS));
    if (groups && (rc = decode_groups(out, groups, err)) < 0)
        goto out;
    const char *topo = json_string_value(json_object_get(ann, MODEL_ANN_TOPOLOGY_SPEC));
    if (topo && *topo)
        decode_spec(out, topo);
    out->priority_class = dup_or_null(json_object_get(spec, "priorityClassName"));
    const char *queue = json_string_value(json_object_get(spec, "queue"));
    out->queue = queue && *queue ? xstrdup(queue) : NULL;
    const char *ts = json_string_value(json_object_get(meta, "creationTimestamp"));
    if (ts && clock_parse_rfc3339(ts, &out->creation_ms, NULL) < 0)
        out->creation_ms = 0;
    /* Koordinator's fallbacks: an unknown policy or a bad wait time means the default (apply
     * refuses both, model__validate_podgroup; a mirrored PodGroup cannot be refused). */
    const char *mp = json_string_value(json_object_get(ann, MODEL_ANN_MATCH_POLICY));
    if (!mp || !*mp)
        mp = json_string_value(json_object_get(ann, MODEL_ANN_MATCH_POLICY_ALIAS));
    int policy = model_match_policy_parse(mp);
    out->match_policy = policy < 0 ? MODEL_MATCH_ONCE_SATISFIED : (enum model_match_policy)policy;
    json_t *sts = json_object_get(spec, "scheduleTimeoutSeconds");
    int64_t wait = 0;
    out->timeout_ms = MODEL_GANG_TIMEOUT_DEFAULT_MS;
    if (json_is_integer(sts) && json_integer_value(sts) > 0 && json_integer_value(sts) <= INT32_MAX)
        out->timeout_ms = (int64_t)json_integer_value(sts) * 1000;
    else if (model_duration_parse(json_string_value(json_object_get(ann, MODEL_ANN_WAITING_TIME)),
                                  &wait, NULL) == 0 &&
             wait > 0)
        out->timeout_ms = wait;
    if (model_duration_parse(json_string_value(json_object_get(ann, MODEL_ANN_MAX_WAIT)), &wait,
                             NULL) == 0 &&
        wait > 0)
        out->max_wait_ms = wait;
out:
    if (rc < 0)
        model_podgroup_release(out);
    return rc;
}

void model_podgroup_release(struct model_podgroup *g)
{
    if (!g)
        return;
    free(g->ns);
    free(g->name);
    for (size_t i = 0; i < g->ngroups; i++)
        free(g->groups[i]);
    free(g->groups);
    for (size_t i = 0; i < g->ngather; i++)
        free(g->gather[i].layer);
    free(g->gather);
    free(g->spec_error);
    free(g->priority_class);
    free(g->queue);
    model__res_free(g->min_resources, g->nmin_resources);
    for (size_t i = 0; i < g->nmin_tasks; i++)
        free(g->min_tasks[i].task);
    free(g->min_tasks);
    memset(g, 0, sizeof(*g));
}

static int decode_layer(json_t *e, struct model_layer *l, size_t i, struct err *err)
{
    json_t *keys = json_object_get(e, "labelKey"), *k;
    size_t j;
    if (!(l->name = dup_or_null(json_object_get(e, "topologyLayer"))))
        return err_setf(err, ERR_INVALID, "spec.networkTopologySpec",
                        "spec.networkTopologySpec[%zu].topologyLayer: missing", i);
    l->parent = dup_or_null(json_object_get(e, "parentTopologyLayer"));
    if (json_array_size(keys))
        l->label_keys = xcalloc(json_array_size(keys), sizeof(*l->label_keys));
    json_array_foreach(keys, j, k)
    {
        if (!json_is_string(k))
            return err_setf(err, ERR_INVALID, "spec.networkTopologySpec",
                            "spec.networkTopologySpec[%zu].labelKey[%zu]: must be a string", i, j);
        l->label_keys[l->nlabel_keys++] = xstrdup(json_string_value(k));
    }
    return 0;
}

int model_topology_decode(json_t *obj, struct model_topology *out, struct err *err)
{
    json_t *layers = json_object_get(json_object_get(obj, "spec"), "networkTopologySpec"), *e;
    size_t i;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (!(out->name = dup_or_null(json_object_get(json_object_get(obj, "metadata"), "name")))) {
        rc = err_setf(err, ERR_INVALID, "metadata.name", "topology without a name");
        goto out;
    }
    if (json_array_size(layers))
        out->layers = xcalloc(json_array_size(layers), sizeof(*out->layers));
    json_array_foreach(layers, i, e)
    {
        if ((rc = decode_layer(e, &out->layers[out->nlayers++], i, err)) < 0)
            goto out;
    }
out:
    if (rc < 0)
        model_topology_release(out);
    return rc;
}

void model_topology_release(struct model_topology *t)
{
    if (!t)
        return;
    free(t->name);
    for (size_t i = 0; i < t->nlayers; i++) {
        free(t->layers[i].name);
        free(t->layers[i].parent);
        for (size_t j = 0; j < t->layers[i].nlabel_keys; j++)
            free(t->layers[i].label_keys[j]);
        free(t->layers[i].label_keys);
    }
    free(t->layers);
    memset(t, 0, sizeof(*t));
}
