/*
 * decode_stored_node.c - model_node_decode_stored: a stored node read straight from its
 * JSON text into a struct model_node, without building the document (model_objects.h).
 *
 * A restart decodes every stored node, 50,000 of them in the benchmark, before the first of
 * its pods can be put into the view; parsing each into a jansson tree was a sixth of the
 * restart. This reader keeps what model_node_decode (decode.c) reads, with its rules: the
 * name, the labels (with the hostname label when the node has none), status.allocatable or
 * else status.capacity summed as decode.c's resource accumulator sums them, whether a
 * condition says it is not Ready, spec.unschedulable and its taints. Where the answer would
 * need anything else it gives up and the caller decodes the document: a value of another
 * type than it reads (decode.c would skip it, default it or refuse it), a quantity that
 * does not parse, the scanner's own refusals (scan.h). tests/test_decode_stored_node.c
 * compares it with model_node_decode on generated and mutated nodes.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "decode.h"
#include "model_objects.h"
#include "model_quantity.h"
#include "scan.h"

/* What the reader gathers before it builds the node. */
struct raw {
    struct model__str name;
    struct model__kvs labels, allocatable, capacity;
    int has_allocatable, unschedulable, not_ready;
    struct model_taint *taints;
    size_t ntaints, cap_taints;
};

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
        else if (MODEL__IS(k, "labels"))
            ok = !model__scan_seen(&m, 2) && !model__scan_string_map(s, &r->labels);
        else
            ok = !model__scan_skip(s, 0);
        if (!ok)
            return -1;
    }
    return rc;
}

/* A taint: its key, value and effect, "" when null or absent (decode.c). */
static int taint(struct model__scan *s, struct raw *r)
{
    int first = 1, rc;
    struct model__str k, f[3] = {{0}};
    unsigned m = 0;
    if (model__scan_open(s, '{') < 0)
        return -1;
    while ((rc = model__scan_member(s, &first, &k)) == 1) {
        int i = MODEL__IS(k, "key")      ? 0
                : MODEL__IS(k, "value")  ? 1
                : MODEL__IS(k, "effect") ? 2
                                         : -1;
        int ok = i < 0 ? !model__scan_skip(s, 0)
                       : !model__scan_seen(&m, 1u << i) && !model__scan_string_or_null(s, &f[i]);
        if (!ok)
            return -1;
    }
    if (rc == 0) {
        XGROW(r->taints, r->ntaints + 1, r->cap_taints);
        struct model_taint *t = &r->taints[r->ntaints++];
        t->key = f[0].s ? model__scan_dup(f[0]) : xstrdup("");
        t->value = f[1].s ? model__scan_dup(f[1]) : xstrdup("");
        t->effect = f[2].s ? model__scan_dup(f[2]) : xstrdup("");
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
        if (MODEL__IS(k, "unschedulable")) {
            char c = s->p < s->end ? *s->p : 0; /* true, false or null */
            ok = !model__scan_seen(&m, 1) && (c == 't' || c == 'f' || c == 'n') &&
                 !model__scan_skip(s, 0);
            r->unschedulable = c == 't';
        } else if (MODEL__IS(k, "taints")) {
            int f2 = 1, r2 = -1;
            ok = !model__scan_seen(&m, 2) && !model__scan_open(s, '[');
            while (ok && (r2 = model__scan_element(s, &f2)) == 1)
                ok = !taint(s, r);
            ok = ok && r2 == 0;
        } else {
            ok = !model__scan_skip(s, 0);
        }
        if (!ok)
            return -1;
    }
    return rc;
}

/* A condition: type Ready with a status other than "True" marks the node not ready, the
 * last Ready condition deciding (decode.c). */
static int condition(struct model__scan *s, struct raw *r)
{
    int first = 1, rc;
    struct model__str k, type = {0}, st = {0};
    unsigned m = 0;
    if (model__scan_open(s, '{') < 0)
        return -1;
    while ((rc = model__scan_member(s, &first, &k)) == 1) {
        int ok;
        if (MODEL__IS(k, "type"))
            ok = !model__scan_seen(&m, 1) && !model__scan_string_or_null(s, &type);
        else if (MODEL__IS(k, "status"))
            ok = !model__scan_seen(&m, 2) && !model__scan_string_or_null(s, &st);
        else
            ok = !model__scan_skip(s, 0);
        if (!ok)
            return -1;
    }
    if (rc == 0 && type.s && MODEL__IS(type, "Ready"))
        r->not_ready = !st.s || !MODEL__IS(st, "True");
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
        if (MODEL__IS(k, "allocatable")) {
            ok = !model__scan_seen(&m, 1) && !model__scan_string_map(s, &r->allocatable);
            r->has_allocatable = 1;
        } else if (MODEL__IS(k, "capacity")) {
            ok = !model__scan_seen(&m, 2) && !model__scan_string_map(s, &r->capacity);
        } else if (MODEL__IS(k, "conditions")) {
            int f2 = 1, r2 = -1;
            ok = !model__scan_seen(&m, 4) && !model__scan_open(s, '[');
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

/* The node from what was read, as model_node_decode builds it: 0, or -1 when a quantity
 * does not parse (decode refuses the node, with its message). */
static int build(struct raw *r, struct model_node *out)
{
    const struct model__kvs *q = r->has_allocatable ? &r->allocatable : &r->capacity;
    struct model__res_acc acc = {0};
    for (size_t i = 0; i < q->n; i++) {
        int64_t v;
        const char *name = q->kv[i].key;
        if (model_quantity_parse(q->kv[i].value, model_resource_is_milli(name), &v, NULL) < 0) {
            model__res_acc_free(&acc);
            return -1;
        }
        model__res_add(&acc, name, v, MODEL__RES_SUM);
    }
    memset(out, 0, sizeof(*out));
    out->name = model__scan_dup(r->name);
    out->labels = r->labels.kv;
    out->nlabels = r->labels.n;
    r->labels = (struct model__kvs){0};
    if (!model_label(out->labels, out->nlabels, MODEL_LABEL_HOSTNAME)) {
        out->labels = xrealloc(out->labels, (out->nlabels + 1) * sizeof(*out->labels));
        out->labels[out->nlabels].key = xstrdup(MODEL_LABEL_HOSTNAME);
        out->labels[out->nlabels++].value = xstrdup(out->name);
    }
    model__res_bound(&acc);
    model__res_finish(&acc, &out->allocatable, &out->nallocatable);
    out->unschedulable = r->unschedulable;
    out->not_ready = r->not_ready;
    out->taints = r->taints;
    out->ntaints = r->ntaints;
    r->taints = NULL;
    r->ntaints = 0;
    return 0;
}

int model_node_decode_stored(const char *json, size_t len, struct model_node *out)
{
    static const struct model__scan_doc doc = {metadata, spec, status};
    struct raw r = {0};
    struct model__scan s = {json, json + len};
    int ok = model__scan_document(&s, &doc, &r) == 0 && r.name.s && r.name.n && build(&r, out) == 0;
    if (!ok)
        memset(out, 0, sizeof(*out));
    model__scan_kvs_free(&r.labels);
    model__scan_kvs_free(&r.allocatable);
    model__scan_kvs_free(&r.capacity);
    for (size_t i = 0; i < r.ntaints; i++) {
        free(r.taints[i].key);
        free(r.taints[i].value);
        free(r.taints[i].effect);
    }
    free(r.taints);
    return ok;
}
