/*
 * decode.c - typed views of validated Node and Pod documents.
 *
 * The scheduler works on these small structs rather than on JSON. Decoders are
 * still defensive (a document may come from an older store), so they return
 * ERR_INVALID with the field instead of trusting the input blindly.
 */
#include "model_kind.h"
#include "model_quantity.h"
#include "model_manifest.h"
#include "model_select.h"
#include "model_pod.h"
#include "model_objects.h"
#include "decode.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"

static char *dup_or_null(json_t *v)
{
    const char *s = json_string_value(v);
    return s && *s ? xstrdup(s) : NULL;
}

static const char *str_or(json_t *v, const char *dflt)
{
    const char *s = json_string_value(v);
    return s ? s : dflt;
}

static void decode_kv(json_t *map, struct model_kv **out, size_t *n)
{
    const char *k;
    json_t *v;
    *out = NULL;
    *n = 0;
    if (!json_is_object(map) || json_object_size(map) == 0)
        return;
    *out = xcalloc(json_object_size(map), sizeof(**out));
    json_object_foreach(map, k, v)
    {
        if (!json_is_string(v))
            continue;
        (*out)[*n].key = xstrdup(k);
        (*out)[(*n)++].value = xstrdup(json_string_value(v));
    }
}

static void free_kv(struct model_kv *kv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(kv[i].key);
        free(kv[i].value);
    }
    free(kv);
}

void model__res_add(struct model__res_acc *a, const char *name, int64_t value, int mode)
{
    for (size_t i = 0; i < a->n; i++) {
        if (strcmp(a->r[i].name, name) != 0)
            continue;
        if (mode == MODEL__RES_MAX)
            a->r[i].value = value > a->r[i].value ? value : a->r[i].value;
        else
            a->r[i].value = value > INT64_MAX - a->r[i].value ? INT64_MAX : a->r[i].value + value;
        return;
    }
    XGROW(a->r, a->n + 1, a->cap);
    a->r[a->n].name = xstrdup(name);
    a->r[a->n++].value = value;
}

/* Adds each quantity of map into a (a temp accumulator when mode is MAX per container). */
static int res_decode(json_t *map, struct model__res_acc *a, int mode, const char *field,
                      struct err *err)
{
    const char *k;
    json_t *q;
    if (!map)
        return 0;
    if (!json_is_object(map))
        return err_setf(err, ERR_INVALID, field, "%s: must be an object", field);
    json_object_foreach(map, k, q)
    {
        int64_t v;
        const char *s = json_string_value(q);
        if (model_quantity_parse(s, model_resource_is_milli(k), &v, err) < 0)
            return err_setf(err, ERR_INVALID, field, "%s.%s: invalid quantity '%s'", field, k,
                            s ? s : "");
        model__res_add(a, k, v, mode);
    }
    return 0;
}

static int res_cmp(const void *a, const void *b)
{
    return strcmp(((const struct model_res *)a)->name, ((const struct model_res *)b)->name);
}

/* What a node or pod claims, bounded (MODEL_QUANTITY_MAX). */
void model__res_bound(struct model__res_acc *a)
{
    for (size_t i = 0; i < a->n; i++)
        if (a->r[i].value > MODEL_QUANTITY_MAX)
            a->r[i].value = MODEL_QUANTITY_MAX;
}

void model__res_finish(struct model__res_acc *a, struct model_res **out, size_t *n)
{
    if (a->n)
        qsort(a->r, a->n, sizeof(*a->r), res_cmp);
    *out = a->r;
    *n = a->n;
}

static void free_res(struct model_res *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(r[i].name);
    free(r);
}

int model__res_list(json_t *map, const char *field, struct model_res **out, size_t *n,
                    struct err *err)
{
    struct model__res_acc a = {0};
    *out = NULL;
    *n = 0;
    if (res_decode(map, &a, MODEL__RES_SUM, field, err) < 0) {
        free_res(a.r, a.n);
        return ERR_INVALID;
    }
    model__res_finish(&a, out, n);
    return 0;
}

void model__res_free(struct model_res *r, size_t n)
{
    free_res(r, n);
}

/* The MODEL_COND_DISRUPTION_TARGET condition the scheduler sets on a preemption victim
 * (scheduler/preempt/preempt_evict.c), as the API server keeps it in bind mode. */
static int pod_preempted(json_t *status)
{
    size_t i;
    json_t *cd;
    json_array_foreach(json_object_get(status, "conditions"), i, cd)
    {
        const char *type = json_string_value(json_object_get(cd, "type"));
        const char *st = json_string_value(json_object_get(cd, "status"));
        const char *reason = json_string_value(json_object_get(cd, "reason"));
        if (type && !strcmp(type, MODEL_COND_DISRUPTION_TARGET) && st && !strcmp(st, "True") &&
            reason && !strcmp(reason, MODEL_REASON_PREEMPTION_BY_SCHEDULER))
            return 1;
    }
    return 0;
}

void model__node_hostname(struct model_node *n)
{
    if (model_label(n->labels, n->nlabels, MODEL_LABEL_HOSTNAME))
        return;
    /* the kubelet always sets it; a manifest node may leave it out */
    n->labels = xrealloc(n->labels, (n->nlabels + 1) * sizeof(*n->labels));
    n->labels[n->nlabels].key = xstrdup(MODEL_LABEL_HOSTNAME);
    n->labels[n->nlabels++].value = xstrdup(n->name);
}

int model_node_decode(json_t *obj, struct model_node *out, struct err *err)
{
    json_t *meta = json_object_get(obj, "metadata"), *spec = json_object_get(obj, "spec");
    json_t *status = json_object_get(obj, "status"), *t;
    struct model__res_acc acc = {0};
    size_t i;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (!(out->name = dup_or_null(json_object_get(meta, "name")))) {
        rc = err_setf(err, ERR_INVALID, "metadata.name", "node without a name");
        goto out;
    }
    decode_kv(json_object_get(meta, "labels"), &out->labels, &out->nlabels);
    model__node_hostname(out);
    json_t *alloc = json_object_get(status, "allocatable");
    if (!alloc)
        alloc = json_object_get(status, "capacity");
    rc = res_decode(alloc, &acc, MODEL__RES_SUM, "status.allocatable", err);
    model__res_bound(&acc);
    model__res_finish(&acc, &out->allocatable, &out->nallocatable);
    if (rc < 0)
        goto out;
    out->unschedulable = json_is_true(json_object_get(spec, "unschedulable"));
    json_array_foreach(json_object_get(status, "conditions"), i, t)
    {
        const char *type = json_string_value(json_object_get(t, "type"));
        const char *st = json_string_value(json_object_get(t, "status"));
        if (type && strcmp(type, "Ready") == 0)
            out->not_ready = !st || strcmp(st, "True") != 0;
    }
    json_t *taints = json_object_get(spec, "taints");
    if (json_array_size(taints))
        out->taints = xcalloc(json_array_size(taints), sizeof(*out->taints));
    json_array_foreach(taints, i, t)
    {
        struct model_taint *mt = &out->taints[out->ntaints++];
        mt->key = xstrdup(str_or(json_object_get(t, "key"), ""));
        mt->value = xstrdup(str_or(json_object_get(t, "value"), ""));
        mt->effect = xstrdup(str_or(json_object_get(t, "effect"), ""));
    }
out:
    if (rc < 0)
        model_node_release(out);
    return rc;
}

void model_node_release(struct model_node *n)
{
    if (!n)
        return;
    free(n->name);
    free_kv(n->labels, n->nlabels);
    free_res(n->allocatable, n->nallocatable);
    for (size_t i = 0; i < n->ntaints; i++) {
        free(n->taints[i].key);
        free(n->taints[i].value);
        free(n->taints[i].effect);
    }
    free(n->taints);
    memset(n, 0, sizeof(*n));
}

static int same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

int model_node_same(const struct model_node *a, const struct model_node *b)
{
    if (a->unschedulable != b->unschedulable || a->not_ready != b->not_ready ||
        a->nlabels != b->nlabels || a->nallocatable != b->nallocatable ||
        a->ntaints != b->ntaints || !same_str(a->name, b->name))
        return 0;
    for (size_t i = 0; i < a->nlabels; i++)
        if (!same_str(a->labels[i].key, b->labels[i].key) ||
            !same_str(a->labels[i].value, b->labels[i].value))
            return 0;
    for (size_t i = 0; i < a->nallocatable; i++)
        if (a->allocatable[i].value != b->allocatable[i].value ||
            !same_str(a->allocatable[i].name, b->allocatable[i].name))
            return 0;
    for (size_t i = 0; i < a->ntaints; i++)
        if (!same_str(a->taints[i].key, b->taints[i].key) ||
            !same_str(a->taints[i].value, b->taints[i].value) ||
            !same_str(a->taints[i].effect, b->taints[i].effect))
            return 0;
    return 1;
}

/* Adds every quantity of b into a (a += b). */
static void res_merge(struct model__res_acc *a, const struct model__res_acc *b, int mode)
{
    for (size_t i = 0; i < b->n; i++)
        model__res_add(a, b->r[i].name, b->r[i].value, mode);
}

void model__res_acc_free(struct model__res_acc *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->r[i].name);
    free(a->r);
    memset(a, 0, sizeof(*a));
}

static int is_sidecar(json_t *c)
{
    const char *rp = json_string_value(json_object_get(c, "restartPolicy"));
    return rp && !strcmp(rp, "Always");
}

/* The effective requests, as kube-scheduler counts them (component-helpers
 * resource.PodRequests): containers plus sidecars (init containers with restartPolicy
 * Always, which keep running); the max with each regular init container plus the
 * sidecars started before it; plus spec.overhead; pods=1 unless the manifest says
 * otherwise. */
static int pod_requests(json_t *spec, struct model_pod *out, struct err *err)
{
    struct model__res_acc sum = {0}, sidecars = {0}, init = {0}, one = {0};
    json_t *c;
    size_t i;
    int rc = 0;
    json_array_foreach(json_object_get(spec, "containers"), i, c)
    {
        json_t *req = json_object_get(json_object_get(c, "resources"), "requests");
        if ((rc = res_decode(req, &sum, MODEL__RES_SUM, "spec.containers.resources.requests",
                             err)) < 0)
            goto out;
    }
    json_array_foreach(json_object_get(spec, "initContainers"), i, c)
    {
        json_t *req = json_object_get(json_object_get(c, "resources"), "requests");
        model__res_acc_free(&one);
        if ((rc = res_decode(req, &one, MODEL__RES_SUM, "spec.initContainers.resources.requests",
                             err)) < 0)
            goto out;
        if (is_sidecar(c)) {
            res_merge(&sum, &one, MODEL__RES_SUM);
            res_merge(&sidecars, &one, MODEL__RES_SUM);
            model__res_acc_free(&one);
            res_merge(&one, &sidecars, MODEL__RES_SUM);
        } else {
            res_merge(&one, &sidecars, MODEL__RES_SUM);
        }
        res_merge(&init, &one, MODEL__RES_MAX);
    }
    res_merge(&sum, &init, MODEL__RES_MAX);
    if ((rc = res_decode(json_object_get(spec, "overhead"), &sum, MODEL__RES_SUM, "spec.overhead",
                         err)) < 0)
        goto out;
    model__res_add(&sum, "pods", 1, MODEL__RES_MAX);
out:
    model__res_acc_free(&sidecars);
    model__res_acc_free(&init);
    model__res_acc_free(&one);
    model__res_bound(&sum);
    model__res_finish(&sum, &out->requests, &out->nrequests);
    return rc;
}

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const struct model_kv *)a)->key, ((const struct model_kv *)b)->key);
}

static void pod_tolerations(json_t *spec, struct model_pod *out)
{
    json_t *list = json_object_get(spec, "tolerations"), *t;
    size_t i;
    if (!json_array_size(list))
        return;
    out->tolerations = xcalloc(json_array_size(list), sizeof(*out->tolerations));
    json_array_foreach(list, i, t)
    {
        struct model_toleration *mt = &out->tolerations[out->ntolerations++];
        mt->key = dup_or_null(json_object_get(t, "key"));
        mt->op = xstrdup(str_or(json_object_get(t, "operator"), "Equal"));
        mt->value = xstrdup(str_or(json_object_get(t, "value"), ""));
        mt->effect = dup_or_null(json_object_get(t, "effect"));
    }
}

/* The path of the first container resource that breaks Kubernetes' rule for extended
 * resources (model_extended_check; new), NULL when none: a mirrored pod could not be
 * refused, so it is never placed (UnsupportedField). */
static char *extended_invalid(json_t *spec, const char **why)
{
    static const char *const lists[] = {"initContainers", "containers"};
    for (size_t l = 0; l < 2; l++) {
        size_t i;
        json_t *c;
        json_array_foreach(json_object_get(spec, lists[l]), i, c)
        {
            const char *which, *name;
            char msg[128];
            if (!model_extended_check(json_object_get(c, "resources"), &which, &name, msg,
                                      sizeof(msg)))
                continue;
            *why = "an extended resource is a whole number, its request equal to its limit, as "
                   "Kubernetes validates it";
            return xasprintf("spec.%s[%zu].resources.%s.%s", lists[l], i, which, name);
        }
    }
    return NULL;
}

static int pod_decode(json_t *obj, struct model_pod *out, int walk, struct err *err)
{
    json_t *meta = json_object_get(obj, "metadata"), *spec = json_object_get(obj, "spec");
    json_t *status = json_object_get(obj, "status");
    json_t *ann = json_object_get(meta, "annotations");
    int rc = 0;

    memset(out, 0, sizeof(*out));
    out->topo_index = -1;
    if (!(out->name = dup_or_null(json_object_get(meta, "name")))) {
        rc = err_setf(err, ERR_INVALID, "metadata.name", "pod without a name");
        goto out;
    }
    out->ns = dup_or_null(json_object_get(meta, "namespace"));
    if (!out->ns)
        out->ns = xstrdup("default");
    out->uid = dup_or_null(json_object_get(meta, "uid"));
    const char *group = model_pod_group_name(obj);
    out->group = group ? xstrdup(group) : NULL;
    out->task = dup_or_null(json_object_get(ann, MODEL_ANN_TASK_SPEC));
    if (!out->task)
        out->task =
            dup_or_null(json_object_get(json_object_get(meta, "labels"), MODEL_ANN_TASK_SPEC));
    const char *queue = json_string_value(json_object_get(ann, MODEL_ANN_QUEUE_NAME));
    out->queue = queue && *queue ? xstrdup(queue) : NULL;
    decode_kv(json_object_get(meta, "labels"), &out->labels, &out->nlabels);
    if (out->nlabels > 1)
        qsort(out->labels, out->nlabels, sizeof(*out->labels), kv_cmp);
    const char *idx = json_string_value(json_object_get(ann, MODEL_ANN_TOPOLOGY_INDEX));
    if (idx && *idx) {
        char *end;
        long long v = strtoll(idx, &end, 10);
        if (*end || v < 0) {
            rc = err_setf(err, ERR_INVALID, "metadata.annotations." MODEL_ANN_TOPOLOGY_INDEX,
                          "invalid network-topology-index '%s'", idx);
            goto out;
        }
        out->topo_index = v;
    }
    if ((rc = pod_requests(spec, out, err)) < 0)
        goto out;
    out->priority = (int32_t)json_integer_value(json_object_get(spec, "priority"));
    const char *policy = json_string_value(json_object_get(spec, "preemptionPolicy"));
    out->preempt_never = policy && !strcmp(policy, "Never");
    decode_kv(json_object_get(spec, "nodeSelector"), &out->node_selector, &out->nnode_selector);
    pod_tolerations(spec, out);
    if ((rc = model__pod_affinity_decode(spec, out, err)) < 0)
        goto out;
    out->gated = json_array_size(json_object_get(spec, "schedulingGates")) > 0;
    struct model__pod_state state;
    model__pod_state(obj, &state);
    out->node_name = state.node_name ? xstrdup(state.node_name) : NULL;
    out->phase = xstrdup(state.phase ? state.phase : "Pending");
    out->deletion_ms = state.deletion_ms;
    out->nominated_node = dup_or_null(json_object_get(status, "nominatedNodeName"));
    out->creation_ms = model__time_ms(meta, "creationTimestamp");
    out->start_ms = model__time_ms(status, "startTime");
    json_t *ads = json_object_get(spec, "activeDeadlineSeconds");
    if (json_is_integer(ads) && json_integer_value(ads) > 0 &&
        json_integer_value(ads) <= INT64_MAX / 1000)
        out->deadline_ms = (int64_t)json_integer_value(ads) * 1000;
    int64_t est = 0;
    if (model_duration_parse(json_string_value(json_object_get(ann, MODEL_ANN_EXPECTED_RUNTIME)),
                             &est, NULL) == 0 &&
        est > 0)
        out->expected_ms = est;
    out->preempted = pod_preempted(status);
    if (walk)
        out->unsupported = model_unsupported_field(MODEL_POD, obj, &out->unsupported_why);
    if (walk && !out->unsupported)
        out->unsupported = extended_invalid(spec, &out->unsupported_why);
out:
    if (rc < 0)
        model_pod_release(out);
    return rc;
}

int model_pod_decode(json_t *obj, struct model_pod *out, struct err *err)
{
    return pod_decode(obj, out, 1, err);
}

int model_pod_decode_refused(json_t *obj, struct model_pod *out, struct err *err)
{
    return pod_decode(obj, out, 0, err);
}

void model_pod_release(struct model_pod *p)
{
    if (!p)
        return;
    free(p->ns);
    free(p->name);
    free(p->uid);
    free(p->group);
    free(p->task);
    free(p->queue);
    free_res(p->requests, p->nrequests);
    free_kv(p->node_selector, p->nnode_selector);
    for (size_t i = 0; i < p->ntolerations; i++) {
        free(p->tolerations[i].key);
        free(p->tolerations[i].op);
        free(p->tolerations[i].value);
        free(p->tolerations[i].effect);
    }
    free(p->tolerations);
    free_kv(p->labels, p->nlabels);
    model_affinity_unref(p->aff);
    free(p->node_name);
    free(p->phase);
    free(p->nominated_node);
    free(p->unsupported);
    memset(p, 0, sizeof(*p));
}
