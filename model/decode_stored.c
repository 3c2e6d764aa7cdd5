/*
 * decode_stored.c - model_pod_decode_stored: a bound pod read straight from its stored JSON
 * text into a struct model_pod, without building the document (model_pod.h).
 *
 * A restart decodes every stored pod, half a million of them at 50,000 nodes, and parsing
 * each into a jansson tree, applying its binding record to that tree and walking the tree
 * for the decoder cost two thirds of the view's rebuild. Most stored pods are bound and
 * have one shape: metadata, containers with requests, perhaps labels, annotations, a node
 * selector, a status. This reader scans the bytes once (scan.h), keeps only what pod_decode
 * (decode.c) reads, and applies the binding as model_pod_set_bound would have (pod.c). The
 * rules it needs are decode.c's and pod.c's own (the resource accumulator, the RFC 3339 and
 * duration readers), and where the answer would need any other rule it gives up and the
 * caller takes the full path: an unbound pod (its unsupported field must be looked for,
 * which needs the document), affinity, spread constraints, tolerations, init containers,
 * overhead, scheduling gates, a read field that is not of the expected type, a repeated
 * read key, an escape in a read string, a byte outside printable ASCII in any string, a
 * number jansson might read otherwise, anything decode would refuse. So what it returns is
 * what model_pod_decode returns for the document with the binding applied, unsupported
 * aside (tests/test_decode_stored.c compares the two on generated and mutated pods).
 */
#include "model_pod.h"
#include "decode.h"
#include "model_objects.h"
#include "scan.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"

/* An RFC 3339 time in ms, 0 when null or not one (model__time_ms). */
static int64_t time_ms(struct model__str v)
{
    char buf[64];
    int64_t ms = 0;
    if (!v.s || v.n >= sizeof(buf))
        return 0;
    memcpy(buf, v.s, v.n);
    buf[v.n] = '\0';
    return clock_parse_rfc3339(buf, &ms, NULL) < 0 ? 0 : ms;
}

/* What the reader gathers before it builds the pod. */
struct raw {
    struct model__str name, ns, uid, created, deleted;
    struct model__kvs labels, ann, selector;
    struct model__res_acc req;
    int64_t priority, deadline;
    struct model__str policy, node, phase, nominated, started;
    int preempted;
};

/* One container's resources.requests, summed into r->req; everything else skipped. */
static int requests(struct model__scan *s, void *state)
{
    struct raw *r = state;
    struct model__kvs q = {0};
    int ok = model__scan_string_map(s, &q) == 0;
    for (size_t i = 0; ok && i < q.n; i++) {
        int64_t v;
        ok = model_quantity_parse(q.kv[i].value, model_resource_is_milli(q.kv[i].key), &v, NULL) ==
             0;
        if (ok)
            model__res_add(&r->req, q.kv[i].key, v, MODEL__RES_SUM);
    }
    model__scan_kvs_free(&q);
    return ok ? 0 : -1;
}

static int resources(struct model__scan *s, void *state)
{
    static const struct model__scan_field f[] = {MODEL__FIELD_FN("requests", requests), {0}};
    return model__scan_object(s, f, state) < 0 ? -1 : 0;
}

static int container(struct model__scan *s, void *state)
{
    static const struct model__scan_field f[] = {MODEL__FIELD_FN("resources", resources), {0}};
    return model__scan_object(s, f, state) < 0 ? -1 : 0;
}

static int containers(struct model__scan *s, void *state)
{
    return model__scan_array(s, container, state);
}

#define RAW(field) offsetof(struct raw, field)

static int metadata(struct model__scan *s, void *state)
{
    static const struct model__scan_field f[] = {
        MODEL__FIELD("name", MODEL__AS_STRING, RAW(name)),
        MODEL__FIELD("namespace", MODEL__AS_STRING, RAW(ns)),
        MODEL__FIELD("uid", MODEL__AS_STRING, RAW(uid)),
        MODEL__FIELD("creationTimestamp", MODEL__AS_STRING, RAW(created)),
        MODEL__FIELD("deletionTimestamp", MODEL__AS_STRING, RAW(deleted)),
        MODEL__FIELD("labels", MODEL__AS_MAP, RAW(labels)),
        MODEL__FIELD("annotations", MODEL__AS_MAP, RAW(ann)),
        {0}};
    return model__scan_object(s, f, state) < 0 ? -1 : 0;
}

static int spec(struct model__scan *s, void *state)
{
    static const struct model__scan_field f[] = {
        MODEL__FIELD_FN("containers", containers),
        MODEL__FIELD("priority", MODEL__AS_INT, RAW(priority)),
        MODEL__FIELD("preemptionPolicy", MODEL__AS_STRING, RAW(policy)),
        MODEL__FIELD("nodeSelector", MODEL__AS_MAP, RAW(selector)),
        MODEL__FIELD("nodeName", MODEL__AS_STRING, RAW(node)),
        MODEL__FIELD("activeDeadlineSeconds", MODEL__AS_INT, RAW(deadline)),
        /* decoded by rules this reader does not repeat */
        MODEL__FIELD_REFUSE("affinity"),
        MODEL__FIELD_REFUSE("topologySpreadConstraints"),
        MODEL__FIELD_REFUSE("tolerations"),
        MODEL__FIELD_REFUSE("initContainers"),
        MODEL__FIELD_REFUSE("overhead"),
        MODEL__FIELD_REFUSE("schedulingGates"),
        {0}};
    return model__scan_object(s, f, state) < 0 ? -1 : 0;
}

/* A condition: DisruptionTarget True for PreemptionByScheduler marks the pod preempted
 * (decode.c pod_preempted). */
struct cond {
    struct model__str type, status, reason;
};

static int condition(struct model__scan *s, void *state)
{
    static const struct model__scan_field f[] = {
        MODEL__FIELD("type", MODEL__AS_STRING, offsetof(struct cond, type)),
        MODEL__FIELD("status", MODEL__AS_STRING, offsetof(struct cond, status)),
        MODEL__FIELD("reason", MODEL__AS_STRING, offsetof(struct cond, reason)),
        {0}};
    struct cond c = {{0}, {0}, {0}};
    if (model__scan_object(s, f, &c) < 0)
        return -1;
    if (c.type.s && MODEL__IS(c.type, MODEL_COND_DISRUPTION_TARGET) && c.status.s &&
        MODEL__IS(c.status, "True") && c.reason.s &&
        MODEL__IS(c.reason, MODEL_REASON_PREEMPTION_BY_SCHEDULER))
        ((struct raw *)state)->preempted = 1;
    return 0;
}

static int conditions(struct model__scan *s, void *state)
{
    return model__scan_array(s, condition, state);
}

static int status(struct model__scan *s, void *state)
{
    static const struct model__scan_field f[] = {
        MODEL__FIELD("phase", MODEL__AS_STRING, RAW(phase)),
        MODEL__FIELD("nominatedNodeName", MODEL__AS_STRING, RAW(nominated)),
        MODEL__FIELD("startTime", MODEL__AS_STRING, RAW(started)),
        MODEL__FIELD_FN("conditions", conditions),
        {0}};
    return model__scan_object(s, f, state) < 0 ? -1 : 0;
}

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const struct model_kv *)a)->key, ((const struct model_kv *)b)->key);
}

/* A non-empty value of map[key], copied, or NULL. */
static char *kv_dup(const struct model__kvs *map, const char *key)
{
    const char *v = model__scan_kv_get(map, key);
    return v && *v ? xstrdup(v) : NULL;
}

/* The pod from what was read, as pod_decode builds it (decode.c), the binding applied as
 * model_pod_set_bound would (pod.c). 0, or -1 when decode would refuse it. */
static int build(struct raw *r, const char *bind_node, const char *bind_ts, struct model_pod *out)
{
    const char *idx = model__scan_kv_get(&r->ann, MODEL_ANN_TOPOLOGY_INDEX);
    int64_t topo = -1;
    if (idx && *idx) {
        char *end;
        long long v = strtoll(idx, &end, 10);
        if (*end || v < 0)
            return -1; /* refused by decode, with its message */
        topo = v;
    }
    memset(out, 0, sizeof(*out));
    out->name = model__scan_dup(r->name);
    out->ns = r->ns.s && r->ns.n ? model__scan_dup(r->ns) : xstrdup("default");
    out->uid = model__scan_dup_nonempty(r->uid);
    const char *group = model__scan_kv_get(&r->labels, MODEL_LABEL_POD_GROUP);
    if (!group || !*group)
        group = model__scan_kv_get(&r->ann, MODEL_ANN_GROUP_NAME);
    out->group = group && *group ? xstrdup(group) : NULL;
    out->task = kv_dup(&r->ann, MODEL_ANN_TASK_SPEC);
    if (!out->task)
        out->task = kv_dup(&r->labels, MODEL_ANN_TASK_SPEC);
    out->queue = kv_dup(&r->ann, MODEL_ANN_QUEUE_NAME);
    out->topo_index = topo;
    out->labels = r->labels.kv;
    out->nlabels = r->labels.n;
    r->labels = (struct model__kvs){0};
    if (out->nlabels > 1)
        qsort(out->labels, out->nlabels, sizeof(*out->labels), kv_cmp);
    model__res_add(&r->req, "pods", 1, MODEL__RES_MAX);
    model__res_bound(&r->req);
    model__res_finish(&r->req, &out->requests, &out->nrequests);
    r->req = (struct model__res_acc){0};
    out->priority = (int32_t)r->priority;
    out->preempt_never = r->policy.s && MODEL__IS(r->policy, "Never");
    out->node_selector = r->selector.kv;
    out->nnode_selector = r->selector.n;
    r->selector = (struct model__kvs){0};
    out->node_name = bind_node ? xstrdup(bind_node) : model__scan_dup_nonempty(r->node);
    out->phase = r->phase.s && r->phase.n ? model__scan_dup(r->phase) : xstrdup("Pending");
    out->deletion_ms = time_ms(r->deleted);
    out->nominated_node = bind_node ? NULL : model__scan_dup_nonempty(r->nominated);
    out->creation_ms = time_ms(r->created);
    if (r->started.s) {
        out->start_ms = time_ms(r->started);
    } else if (bind_node) { /* the binding sets a missing startTime to its time */
        int64_t ms = 0;
        out->start_ms = clock_parse_rfc3339(bind_ts, &ms, NULL) < 0 ? 0 : ms;
    }
    if (r->deadline > 0 && r->deadline <= INT64_MAX / 1000)
        out->deadline_ms = r->deadline * 1000;
    int64_t est = 0;
    if (model_duration_parse(model__scan_kv_get(&r->ann, MODEL_ANN_EXPECTED_RUNTIME), &est, NULL) ==
            0 &&
        est > 0)
        out->expected_ms = est;
    out->preempted = r->preempted;
    return 0;
}

int model_pod_decode_stored(const char *json, size_t len, const char *bind_node,
                            const char *bind_ts, struct model_pod *out)
{
    struct raw r = {0};
    struct model__scan s = {json, json + len};
    /* an unbound pod is left to decode: known without the scan when the text names no
     * nodeName (as jansson writes it; any other spelling is only scanned first) */
    if (!bind_node && !memmem(json, len, "\"nodeName\":", 11)) {
        memset(out, 0, sizeof(*out));
        return 0;
    }
    static const struct model__scan_field doc[] = {MODEL__FIELD_FN("metadata", metadata),
                                                   MODEL__FIELD_FN("spec", spec),
                                                   MODEL__FIELD_FN("status", status),
                                                   {0}};
    int ok = model__scan_document(&s, doc, &r) == 0 && r.name.s && r.name.n &&
             (bind_node || (r.node.s && r.node.n));
    ok = ok && build(&r, bind_node, bind_ts, out) == 0;
    if (!ok)
        memset(out, 0, sizeof(*out));
    model__scan_kvs_free(&r.labels);
    model__scan_kvs_free(&r.ann);
    model__scan_kvs_free(&r.selector);
    model__res_acc_free(&r.req);
    return ok;
}
