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

/* One container's resources.requests into r->req; everything else skipped. */
static int container(struct model__scan *s, struct raw *r)
{
    int first = 1, rc;
    struct model__str k;
    unsigned m = 0;
    if (model__scan_open(s, '{') < 0)
        return -1;
    while ((rc = model__scan_member(s, &first, &k)) == 1) {
        if (!MODEL__IS(k, "resources")) {
            if (model__scan_skip(s, 0) < 0)
                return -1;
            continue;
        }
        int f2 = 1, r2;
        struct model__str k2;
        unsigned m2 = 0;
        if (model__scan_seen(&m, 1) < 0 || model__scan_open(s, '{') < 0)
            return -1;
        while ((r2 = model__scan_member(s, &f2, &k2)) == 1) {
            if (!MODEL__IS(k2, "requests")) {
                if (model__scan_skip(s, 0) < 0)
                    return -1;
                continue;
            }
            if (model__scan_seen(&m2, 1) < 0)
                return -1;
            struct model__kvs q = {0};
            int ok = model__scan_string_map(s, &q) == 0;
            for (size_t i = 0; ok && i < q.n; i++) {
                int64_t v;
                ok = model_quantity_parse(q.kv[i].value, model_resource_is_milli(q.kv[i].key), &v,
                                          NULL) == 0;
                if (ok)
                    model__res_add(&r->req, q.kv[i].key, v, MODEL__RES_SUM);
            }
            model__scan_kvs_free(&q);
            if (!ok)
                return -1;
        }
        if (r2 < 0)
            return -1;
    }
    return rc;
}

static int metadata(struct model__scan *s, void *ctx)
{
    struct raw *r = ctx;
    int first = 1, rc;
    struct model__str k;
    unsigned m = 0;
    if (model__scan_open(s, '{') < 0)
        return -1;
    while ((rc = model__scan_member(s, &first, &k)) == 1) {
        int ok;
        if (MODEL__IS(k, "name"))
            ok = !model__scan_seen(&m, 1) && !model__scan_string_or_null(s, &r->name);
        else if (MODEL__IS(k, "namespace"))
            ok = !model__scan_seen(&m, 2) && !model__scan_string_or_null(s, &r->ns);
        else if (MODEL__IS(k, "uid"))
            ok = !model__scan_seen(&m, 4) && !model__scan_string_or_null(s, &r->uid);
        else if (MODEL__IS(k, "creationTimestamp"))
            ok = !model__scan_seen(&m, 8) && !model__scan_string_or_null(s, &r->created);
        else if (MODEL__IS(k, "deletionTimestamp"))
            ok = !model__scan_seen(&m, 16) && !model__scan_string_or_null(s, &r->deleted);
        else if (MODEL__IS(k, "labels"))
            ok = !model__scan_seen(&m, 32) && !model__scan_string_map(s, &r->labels);
        else if (MODEL__IS(k, "annotations"))
            ok = !model__scan_seen(&m, 64) && !model__scan_string_map(s, &r->ann);
        else
            ok = !model__scan_skip(s, 0);
        if (!ok)
            return -1;
    }
    return rc;
}

static int spec(struct model__scan *s, void *ctx)
{
    struct raw *r = ctx;
    int first = 1, rc;
    struct model__str k;
    unsigned m = 0;
    if (model__scan_open(s, '{') < 0)
        return -1;
    while ((rc = model__scan_member(s, &first, &k)) == 1) {
        int ok;
        if (MODEL__IS(k, "containers")) {
            int f2 = 1, r2;
            ok = !model__scan_seen(&m, 1) && !model__scan_open(s, '[');
            while (ok && (r2 = model__scan_element(s, &f2)) == 1)
                ok = !container(s, r);
            ok = ok && r2 == 0;
        } else if (MODEL__IS(k, "priority")) {
            ok = !model__scan_seen(&m, 2) && !model__scan_integer(s, &r->priority);
        } else if (MODEL__IS(k, "preemptionPolicy")) {
            ok = !model__scan_seen(&m, 4) && !model__scan_string_or_null(s, &r->policy);
        } else if (MODEL__IS(k, "nodeSelector")) {
            ok = !model__scan_seen(&m, 8) && !model__scan_string_map(s, &r->selector);
        } else if (MODEL__IS(k, "nodeName")) {
            ok = !model__scan_seen(&m, 16) && !model__scan_string_or_null(s, &r->node);
        } else if (MODEL__IS(k, "activeDeadlineSeconds")) {
            ok = !model__scan_seen(&m, 32) && !model__scan_integer(s, &r->deadline);
        } else if (MODEL__IS(k, "affinity") || MODEL__IS(k, "topologySpreadConstraints") ||
                   MODEL__IS(k, "tolerations") || MODEL__IS(k, "initContainers") ||
                   MODEL__IS(k, "overhead") || MODEL__IS(k, "schedulingGates")) {
            ok = 0; /* decoded by rules this reader does not repeat */
        } else {
            ok = !model__scan_skip(s, 0);
        }
        if (!ok)
            return -1;
    }
    return rc;
}

/* A condition: DisruptionTarget True for PreemptionByScheduler marks the pod preempted
 * (decode.c pod_preempted). */
static int condition(struct model__scan *s, struct raw *r)
{
    int first = 1, rc;
    struct model__str k, type = {0}, st = {0}, reason = {0};
    unsigned m = 0;
    if (model__scan_open(s, '{') < 0)
        return -1;
    while ((rc = model__scan_member(s, &first, &k)) == 1) {
        int ok;
        if (MODEL__IS(k, "type"))
            ok = !model__scan_seen(&m, 1) && !model__scan_string_or_null(s, &type);
        else if (MODEL__IS(k, "status"))
            ok = !model__scan_seen(&m, 2) && !model__scan_string_or_null(s, &st);
        else if (MODEL__IS(k, "reason"))
            ok = !model__scan_seen(&m, 4) && !model__scan_string_or_null(s, &reason);
        else
            ok = !model__scan_skip(s, 0);
        if (!ok)
            return -1;
    }
    if (rc == 0 && type.s && MODEL__IS(type, MODEL_COND_DISRUPTION_TARGET) && st.s &&
        MODEL__IS(st, "True") && reason.s &&
        MODEL__IS(reason, MODEL_REASON_PREEMPTION_BY_SCHEDULER))
        r->preempted = 1;
    return rc;
}

static int status(struct model__scan *s, void *ctx)
{
    struct raw *r = ctx;
    int first = 1, rc;
    struct model__str k;
    unsigned m = 0;
    if (model__scan_open(s, '{') < 0)
        return -1;
    while ((rc = model__scan_member(s, &first, &k)) == 1) {
        int ok;
        if (MODEL__IS(k, "phase")) {
            ok = !model__scan_seen(&m, 1) && !model__scan_string_or_null(s, &r->phase);
        } else if (MODEL__IS(k, "nominatedNodeName")) {
            ok = !model__scan_seen(&m, 2) && !model__scan_string_or_null(s, &r->nominated);
        } else if (MODEL__IS(k, "startTime")) {
            ok = !model__scan_seen(&m, 4) && !model__scan_string_or_null(s, &r->started);
        } else if (MODEL__IS(k, "conditions")) {
            int f2 = 1, r2;
            ok = !model__scan_seen(&m, 8) && !model__scan_open(s, '[');
            while (ok && (r2 = model__scan_element(s, &f2)) == 1)
                ok = !condition(s, r);
            ok = ok && r2 == 0;
        } else {
            ok = !model__scan_skip(s, 0);
        }
        if (!ok)
            return -1;
    }
    return rc;
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
    static const struct model__scan_doc doc = {metadata, spec, status};
    int ok = model__scan_document(&s, &doc, &r) == 0 && r.name.s && r.name.n &&
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
