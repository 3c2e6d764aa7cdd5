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
#include <stddef.h>
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

#define RAW(field) offsetof(struct raw, field)

static int metadata(struct model__scan *s, void *state)
{
    static const struct model__scan_field f[] = {MODEL__FIELD("name", MODEL__AS_STRING, RAW(name)),
                                                 MODEL__FIELD("labels", MODEL__AS_MAP, RAW(labels)),
                                                 {0}};
    return model__scan_object(s, f, state) < 0 ? -1 : 0;
}

/* A taint: its key, value and effect, "" when null or absent (decode.c). */
struct taint {
    struct model__str key, value, effect;
};

static int taint(struct model__scan *s, void *state)
{
    static const struct model__scan_field f[] = {
        MODEL__FIELD("key", MODEL__AS_STRING, offsetof(struct taint, key)),
        MODEL__FIELD("value", MODEL__AS_STRING, offsetof(struct taint, value)),
        MODEL__FIELD("effect", MODEL__AS_STRING, offsetof(struct taint, effect)),
        {0}};
    struct raw *r = state;
    struct taint t = {{0}, {0}, {0}};
    if (model__scan_object(s, f, &t) < 0)
        return -1;
    XGROW(r->taints, r->ntaints + 1, r->cap_taints);
    struct model_taint *mt = &r->taints[r->ntaints++];
    mt->key = t.key.s ? model__scan_dup(t.key) : xstrdup("");
    mt->value = t.value.s ? model__scan_dup(t.value) : xstrdup("");
    mt->effect = t.effect.s ? model__scan_dup(t.effect) : xstrdup("");
    return 0;
}

static int taints(struct model__scan *s, void *state)
{
    return model__scan_array(s, taint, state);
}

static int spec(struct model__scan *s, void *state)
{
    static const struct model__scan_field f[] = {
        MODEL__FIELD("unschedulable", MODEL__AS_BOOL, RAW(unschedulable)),
        MODEL__FIELD_FN("taints", taints),
        {0}};
    return model__scan_object(s, f, state) < 0 ? -1 : 0;
}

/* A condition: type Ready with a status other than "True" marks the node not ready, the
 * last Ready condition deciding (decode.c). */
struct cond {
    struct model__str type, status;
};

static int condition(struct model__scan *s, void *state)
{
    static const struct model__scan_field f[] = {
        MODEL__FIELD("type", MODEL__AS_STRING, offsetof(struct cond, type)),
        MODEL__FIELD("status", MODEL__AS_STRING, offsetof(struct cond, status)),
        {0}};
    struct cond c = {{0}, {0}};
    if (model__scan_object(s, f, &c) < 0)
        return -1;
    if (c.type.s && MODEL__IS(c.type, "Ready"))
        ((struct raw *)state)->not_ready = !c.status.s || !MODEL__IS(c.status, "True");
    return 0;
}

static int conditions(struct model__scan *s, void *state)
{
    return model__scan_array(s, condition, state);
}

static int status(struct model__scan *s, void *state)
{
    static const struct model__scan_field f[] = {
        MODEL__FIELD("allocatable", MODEL__AS_MAP, RAW(allocatable)),
        MODEL__FIELD("capacity", MODEL__AS_MAP, RAW(capacity)),
        MODEL__FIELD_FN("conditions", conditions),
        {0}};
    int m = model__scan_object(s, f, state);
    if (m < 0)
        return -1;
    ((struct raw *)state)->has_allocatable = m & 1; /* allocatable, else capacity */
    return 0;
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
    model__node_hostname(out);
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
    static const struct model__scan_field doc[] = {MODEL__FIELD_FN("metadata", metadata),
                                                   MODEL__FIELD_FN("spec", spec),
                                                   MODEL__FIELD_FN("status", status),
                                                   {0}};
    struct raw r = {0};
    struct model__scan s = {json, json + len};
    int ok = model__scan_document(&s, doc, &r) == 0 && r.name.s && r.name.n && build(&r, out) == 0;
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
