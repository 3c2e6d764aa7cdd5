/*
 * decode_stored.c - model_pod_decode_stored: a bound pod read straight from its stored JSON
 * text into a struct model_pod, without building the document (model_pod.h).
 *
 * A restart decodes every stored pod, half a million of them at 50,000 nodes, and parsing
 * each into a jansson tree, applying its binding record to that tree and walking the tree
 * for the decoder cost two thirds of the view's rebuild. Most stored pods are bound and
 * have one shape: metadata, containers with requests, perhaps labels, annotations, a node
 * selector, a status. This reader scans the bytes once, keeps only what pod_decode
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

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"

#define MAX_DEPTH 32
#define MAX_INT_DIGITS 18 /* fits int64 whatever the digits */

struct sc {
    const char *p, *end;
};

/* A string as read: the bytes between the quotes (no escapes), or null (s NULL). */
struct str {
    const char *s;
    size_t n;
};

#define IS(k, lit) ((k).n == sizeof(lit) - 1 && memcmp((k).s, lit, sizeof(lit) - 1) == 0)

static void ws(struct sc *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\t' || *s->p == '\r'))
        s->p++;
}

static int at(struct sc *s, char c)
{
    return s->p < s->end && *s->p == c;
}

/* A string without escapes at s->p (its opening quote): 0, or -1 to give up. Printable
 * ASCII only: the reader then never has to agree with jansson on UTF-8. */
static int plain_string(struct sc *s, struct str *out)
{
    if (!at(s, '"'))
        return -1;
    const char *start = ++s->p;
    while (s->p < s->end && *s->p != '"') {
        unsigned char c = (unsigned char)*s->p;
        if (c < 0x20 || c >= 0x7f || c == '\\')
            return -1;
        s->p++;
    }
    if (s->p >= s->end)
        return -1;
    *out = (struct str){start, (size_t)(s->p++ - start)};
    return 0;
}

/* A string or null at s->p: 0 (out->s NULL for null), or -1 to give up. */
static int string_or_null(struct sc *s, struct str *out)
{
    if (s->end - s->p >= 4 && memcmp(s->p, "null", 4) == 0) {
        s->p += 4;
        *out = (struct str){NULL, 0};
        return 0;
    }
    return plain_string(s, out);
}

/* A JSON integer jansson reads as one (no fraction or exponent, at most 18 digits, no
 * leading zero) into *v: 0, or -1 to give up. */
static int integer(struct sc *s, int64_t *v)
{
    int neg = at(s, '-');
    s->p += neg;
    const char *d = s->p;
    int64_t x = 0;
    for (; s->p < s->end && *s->p >= '0' && *s->p <= '9'; s->p++)
        if (s->p - d < MAX_INT_DIGITS) /* past it: refused below, never overflowed */
            x = x * 10 + (*s->p - '0');
    size_t n = (size_t)(s->p - d);
    if (!n || n > MAX_INT_DIGITS || (n > 1 && *d == '0') ||
        (s->p < s->end && (*s->p == '.' || *s->p == 'e' || *s->p == 'E')))
        return -1;
    *v = neg ? -x : x;
    return 0;
}

static int skip_value(struct sc *s, int depth);

/* Skips a number: -?(0|[1-9][0-9]*)(.[0-9]+)? ; an exponent or a long one gives up (jansson
 * refuses an integer past int64 and a real past double, which this need not judge). */
static int skip_number(struct sc *s)
{
    const char *start = s->p;
    s->p += at(s, '-');
    const char *d = s->p;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
        s->p++;
    if (s->p == d || (s->p - d > 1 && *d == '0'))
        return -1;
    if (at(s, '.')) {
        const char *f = ++s->p;
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
            s->p++;
        if (s->p == f)
            return -1;
    }
    return s->p - start > MAX_INT_DIGITS || at(s, 'e') || at(s, 'E') ? -1 : 0;
}

/* Skips a string whose escapes are single characters jansson reads (\uXXXX gives up). */
static int skip_string(struct sc *s)
{
    s->p++;
    while (s->p < s->end && *s->p != '"') {
        unsigned char c = (unsigned char)*s->p;
        if (c < 0x20 || c >= 0x7f)
            return -1;
        if (c == '\\') {
            if (s->p + 1 >= s->end || !strchr("\"\\/bfnrt", s->p[1]) || !s->p[1])
                return -1;
            s->p++;
        }
        s->p++;
    }
    if (s->p >= s->end)
        return -1;
    s->p++;
    return 0;
}

/* Object members: 1 with the key in *k and s->p at its value, 0 past the closing brace,
 * -1 to give up. *first starts at 1 just after the opening brace. */
static int member(struct sc *s, int *first, struct str *k)
{
    ws(s);
    if (at(s, '}')) {
        s->p++;
        return 0;
    }
    if (!*first) {
        if (!at(s, ','))
            return -1;
        s->p++;
        ws(s);
    }
    *first = 0;
    if (plain_string(s, k) < 0)
        return -1;
    ws(s);
    if (!at(s, ':'))
        return -1;
    s->p++;
    ws(s);
    return 1;
}

/* Array elements, as member. */
static int element(struct sc *s, int *first)
{
    ws(s);
    if (at(s, ']')) {
        s->p++;
        return 0;
    }
    if (!*first) {
        if (!at(s, ','))
            return -1;
        s->p++;
        ws(s);
    }
    *first = 0;
    return s->p < s->end ? 1 : -1;
}

/* Opens an object (or array, open '['): 0, or -1 when s->p is not at one. */
static int open_(struct sc *s, char open)
{
    if (!at(s, open))
        return -1;
    s->p++;
    return 0;
}

static int skip_value(struct sc *s, int depth)
{
    int first = 1, r;
    struct str k;
    if (s->p >= s->end || depth > MAX_DEPTH)
        return -1;
    switch (*s->p) {
    case '"':
        return skip_string(s);
    case '{':
        s->p++;
        while ((r = member(s, &first, &k)) == 1)
            if (skip_value(s, depth + 1) < 0)
                return -1;
        return r;
    case '[':
        s->p++;
        while ((r = element(s, &first)) == 1)
            if (skip_value(s, depth + 1) < 0)
                return -1;
        return r;
    case 't':
        return s->end - s->p >= 4 && !memcmp(s->p, "true", 4) ? (s->p += 4, 0) : -1;
    case 'f':
        return s->end - s->p >= 5 && !memcmp(s->p, "false", 5) ? (s->p += 5, 0) : -1;
    case 'n':
        return s->end - s->p >= 4 && !memcmp(s->p, "null", 4) ? (s->p += 4, 0) : -1;
    default:
        return skip_number(s);
    }
}

static char *dup(struct str v)
{
    return xstrndup(v.s, v.n);
}

/* A read string, non-empty, copied; NULL for null or "" (decode.c's dup_or_null). */
static char *dup_nonempty(struct str v)
{
    return v.s && v.n ? dup(v) : NULL;
}

/* An RFC 3339 time in ms, 0 when null or not one (model__time_ms). */
static int64_t time_ms(struct str v)
{
    char buf[64];
    int64_t ms = 0;
    if (!v.s || v.n >= sizeof(buf))
        return 0;
    memcpy(buf, v.s, v.n);
    buf[v.n] = '\0';
    return clock_parse_rfc3339(buf, &ms, NULL) < 0 ? 0 : ms;
}

/* The read keys of an object, each seen at most once: a repeated one gives up (jansson
 * keeps the last, which this reader would have to track). */
static int seen(unsigned *mask, unsigned bit)
{
    if (*mask & bit)
        return -1;
    *mask |= bit;
    return 0;
}

/* A map of strings (labels, annotations, nodeSelector) into kv, in document order; a value
 * that is not a string, or a key twice, gives up. */
struct kvs {
    struct model_kv *kv;
    size_t n, cap;
};

static int string_map(struct sc *s, struct kvs *out)
{
    int first = 1, r;
    struct str k, v;
    if (open_(s, '{') < 0)
        return -1;
    while ((r = member(s, &first, &k)) == 1) {
        if (plain_string(s, &v) < 0)
            return -1;
        for (size_t i = 0; i < out->n; i++)
            if (strlen(out->kv[i].key) == k.n && !memcmp(out->kv[i].key, k.s, k.n))
                return -1;
        XGROW(out->kv, out->n + 1, out->cap);
        out->kv[out->n++] = (struct model_kv){dup(k), dup(v)};
    }
    return r;
}

static void kvs_free(struct kvs *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->kv[i].key);
        free(m->kv[i].value);
    }
    free(m->kv);
    memset(m, 0, sizeof(*m));
}

/* The value of key in m (borrowed), NULL when absent. */
static const char *kv_get(const struct kvs *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->kv[i].key, key))
            return m->kv[i].value;
    return NULL;
}

/* What the reader gathers before it builds the pod. */
struct raw {
    struct str name, ns, uid, created, deleted;
    struct kvs labels, ann, selector;
    struct model__res_acc req;
    int64_t priority, deadline;
    struct str policy, node, phase, nominated, started;
    int preempted;
};

/* One container's resources.requests into r->req; everything else skipped. */
static int container(struct sc *s, struct raw *r)
{
    int first = 1, rc;
    struct str k;
    unsigned m = 0;
    if (open_(s, '{') < 0)
        return -1;
    while ((rc = member(s, &first, &k)) == 1) {
        if (!IS(k, "resources")) {
            if (skip_value(s, 0) < 0)
                return -1;
            continue;
        }
        int f2 = 1, r2;
        struct str k2;
        unsigned m2 = 0;
        if (seen(&m, 1) < 0 || open_(s, '{') < 0)
            return -1;
        while ((r2 = member(s, &f2, &k2)) == 1) {
            if (!IS(k2, "requests")) {
                if (skip_value(s, 0) < 0)
                    return -1;
                continue;
            }
            if (seen(&m2, 1) < 0)
                return -1;
            struct kvs q = {0};
            int ok = string_map(s, &q) == 0;
            for (size_t i = 0; ok && i < q.n; i++) {
                int64_t v;
                ok = model_quantity_parse(q.kv[i].value, model_resource_is_milli(q.kv[i].key), &v,
                                          NULL) == 0;
                if (ok)
                    model__res_add(&r->req, q.kv[i].key, v, MODEL__RES_SUM);
            }
            kvs_free(&q);
            if (!ok)
                return -1;
        }
        if (r2 < 0)
            return -1;
    }
    return rc;
}

static int metadata(struct sc *s, struct raw *r)
{
    int first = 1, rc;
    struct str k;
    unsigned m = 0;
    if (open_(s, '{') < 0)
        return -1;
    while ((rc = member(s, &first, &k)) == 1) {
        int ok;
        if (IS(k, "name"))
            ok = !seen(&m, 1) && !string_or_null(s, &r->name);
        else if (IS(k, "namespace"))
            ok = !seen(&m, 2) && !string_or_null(s, &r->ns);
        else if (IS(k, "uid"))
            ok = !seen(&m, 4) && !string_or_null(s, &r->uid);
        else if (IS(k, "creationTimestamp"))
            ok = !seen(&m, 8) && !string_or_null(s, &r->created);
        else if (IS(k, "deletionTimestamp"))
            ok = !seen(&m, 16) && !string_or_null(s, &r->deleted);
        else if (IS(k, "labels"))
            ok = !seen(&m, 32) && !string_map(s, &r->labels);
        else if (IS(k, "annotations"))
            ok = !seen(&m, 64) && !string_map(s, &r->ann);
        else
            ok = !skip_value(s, 0);
        if (!ok)
            return -1;
    }
    return rc;
}

static int spec(struct sc *s, struct raw *r)
{
    int first = 1, rc;
    struct str k;
    unsigned m = 0;
    if (open_(s, '{') < 0)
        return -1;
    while ((rc = member(s, &first, &k)) == 1) {
        int ok;
        if (IS(k, "containers")) {
            int f2 = 1, r2;
            ok = !seen(&m, 1) && !open_(s, '[');
            while (ok && (r2 = element(s, &f2)) == 1)
                ok = !container(s, r);
            ok = ok && r2 == 0;
        } else if (IS(k, "priority")) {
            ok = !seen(&m, 2) && !integer(s, &r->priority);
        } else if (IS(k, "preemptionPolicy")) {
            ok = !seen(&m, 4) && !string_or_null(s, &r->policy);
        } else if (IS(k, "nodeSelector")) {
            ok = !seen(&m, 8) && !string_map(s, &r->selector);
        } else if (IS(k, "nodeName")) {
            ok = !seen(&m, 16) && !string_or_null(s, &r->node);
        } else if (IS(k, "activeDeadlineSeconds")) {
            ok = !seen(&m, 32) && !integer(s, &r->deadline);
        } else if (IS(k, "affinity") || IS(k, "topologySpreadConstraints") ||
                   IS(k, "tolerations") || IS(k, "initContainers") || IS(k, "overhead") ||
                   IS(k, "schedulingGates")) {
            ok = 0; /* decoded by rules this reader does not repeat */
        } else {
            ok = !skip_value(s, 0);
        }
        if (!ok)
            return -1;
    }
    return rc;
}

/* A condition: DisruptionTarget True for PreemptionByScheduler marks the pod preempted
 * (decode.c pod_preempted). */
static int condition(struct sc *s, struct raw *r)
{
    int first = 1, rc;
    struct str k, type = {0}, st = {0}, reason = {0};
    unsigned m = 0;
    if (open_(s, '{') < 0)
        return -1;
    while ((rc = member(s, &first, &k)) == 1) {
        int ok;
        if (IS(k, "type"))
            ok = !seen(&m, 1) && !string_or_null(s, &type);
        else if (IS(k, "status"))
            ok = !seen(&m, 2) && !string_or_null(s, &st);
        else if (IS(k, "reason"))
            ok = !seen(&m, 4) && !string_or_null(s, &reason);
        else
            ok = !skip_value(s, 0);
        if (!ok)
            return -1;
    }
    if (rc == 0 && type.s && IS(type, MODEL_COND_DISRUPTION_TARGET) && st.s && IS(st, "True") &&
        reason.s && IS(reason, MODEL_REASON_PREEMPTION_BY_SCHEDULER))
        r->preempted = 1;
    return rc;
}

static int status(struct sc *s, struct raw *r)
{
    int first = 1, rc;
    struct str k;
    unsigned m = 0;
    if (open_(s, '{') < 0)
        return -1;
    while ((rc = member(s, &first, &k)) == 1) {
        int ok;
        if (IS(k, "phase")) {
            ok = !seen(&m, 1) && !string_or_null(s, &r->phase);
        } else if (IS(k, "nominatedNodeName")) {
            ok = !seen(&m, 2) && !string_or_null(s, &r->nominated);
        } else if (IS(k, "startTime")) {
            ok = !seen(&m, 4) && !string_or_null(s, &r->started);
        } else if (IS(k, "conditions")) {
            int f2 = 1, r2;
            ok = !seen(&m, 8) && !open_(s, '[');
            while (ok && (r2 = element(s, &f2)) == 1)
                ok = !condition(s, r);
            ok = ok && r2 == 0;
        } else {
            ok = !skip_value(s, 0);
        }
        if (!ok)
            return -1;
    }
    return rc;
}

static int document(struct sc *s, struct raw *r)
{
    int first = 1, rc;
    struct str k;
    unsigned m = 0;
    ws(s);
    if (open_(s, '{') < 0)
        return -1;
    while ((rc = member(s, &first, &k)) == 1) {
        int ok;
        if (IS(k, "metadata"))
            ok = !seen(&m, 1) && !metadata(s, r);
        else if (IS(k, "spec"))
            ok = !seen(&m, 2) && !spec(s, r);
        else if (IS(k, "status"))
            ok = !seen(&m, 4) && !status(s, r);
        else
            ok = !skip_value(s, 0);
        if (!ok)
            return -1;
    }
    ws(s);
    return rc == 0 && s->p == s->end && (m & 1) ? 0 : -1;
}

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const struct model_kv *)a)->key, ((const struct model_kv *)b)->key);
}

/* A non-empty value of map[key], copied, or NULL. */
static char *kv_dup(const struct kvs *map, const char *key)
{
    const char *v = kv_get(map, key);
    return v && *v ? xstrdup(v) : NULL;
}

/* The pod from what was read, as pod_decode builds it (decode.c), the binding applied as
 * model_pod_set_bound would (pod.c). 0, or -1 when decode would refuse it. */
static int build(struct raw *r, const char *bind_node, const char *bind_ts, struct model_pod *out)
{
    const char *idx = kv_get(&r->ann, MODEL_ANN_TOPOLOGY_INDEX);
    int64_t topo = -1;
    if (idx && *idx) {
        char *end;
        long long v = strtoll(idx, &end, 10);
        if (*end || v < 0)
            return -1; /* refused by decode, with its message */
        topo = v;
    }
    memset(out, 0, sizeof(*out));
    out->name = dup(r->name);
    out->ns = r->ns.s && r->ns.n ? dup(r->ns) : xstrdup("default");
    out->uid = dup_nonempty(r->uid);
    const char *group = kv_get(&r->labels, MODEL_LABEL_POD_GROUP);
    if (!group || !*group)
        group = kv_get(&r->ann, MODEL_ANN_GROUP_NAME);
    out->group = group && *group ? xstrdup(group) : NULL;
    out->task = kv_dup(&r->ann, MODEL_ANN_TASK_SPEC);
    if (!out->task)
        out->task = kv_dup(&r->labels, MODEL_ANN_TASK_SPEC);
    out->queue = kv_dup(&r->ann, MODEL_ANN_QUEUE_NAME);
    out->topo_index = topo;
    out->labels = r->labels.kv;
    out->nlabels = r->labels.n;
    r->labels = (struct kvs){0};
    if (out->nlabels > 1)
        qsort(out->labels, out->nlabels, sizeof(*out->labels), kv_cmp);
    model__res_add(&r->req, "pods", 1, MODEL__RES_MAX);
    model__res_bound(&r->req);
    model__res_finish(&r->req, &out->requests, &out->nrequests);
    r->req = (struct model__res_acc){0};
    out->priority = (int32_t)r->priority;
    out->preempt_never = r->policy.s && IS(r->policy, "Never");
    out->node_selector = r->selector.kv;
    out->nnode_selector = r->selector.n;
    r->selector = (struct kvs){0};
    out->node_name = bind_node ? xstrdup(bind_node) : dup_nonempty(r->node);
    out->phase = r->phase.s && r->phase.n ? dup(r->phase) : xstrdup("Pending");
    out->deletion_ms = time_ms(r->deleted);
    out->nominated_node = bind_node ? NULL : dup_nonempty(r->nominated);
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
    if (model_duration_parse(kv_get(&r->ann, MODEL_ANN_EXPECTED_RUNTIME), &est, NULL) == 0 &&
        est > 0)
        out->expected_ms = est;
    out->preempted = r->preempted;
    return 0;
}

int model_pod_decode_stored(const char *json, size_t len, const char *bind_node,
                            const char *bind_ts, struct model_pod *out)
{
    struct raw r = {0};
    struct sc s = {json, json + len};
    /* an unbound pod is left to decode: known without the scan when the text names no
     * nodeName (as jansson writes it; any other spelling is only scanned first) */
    if (!bind_node && !memmem(json, len, "\"nodeName\":", 11)) {
        memset(out, 0, sizeof(*out));
        return 0;
    }
    int ok = document(&s, &r) == 0 && r.name.s && r.name.n && (bind_node || (r.node.s && r.node.n));
    ok = ok && build(&r, bind_node, bind_ts, out) == 0;
    if (!ok)
        memset(out, 0, sizeof(*out));
    kvs_free(&r.labels);
    kvs_free(&r.ann);
    kvs_free(&r.selector);
    model__res_acc_free(&r.req);
    return ok;
}
