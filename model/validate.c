/*
 * validate.c - document-level validation, on top: kind, metadata and the schema walk,
 * then the validator of the document's kind (validate_kinds.c, pdb.c, priorityclass.c,
 * queue.c). The typed checks they are all built from are in validate_base.c.
 *
 * Every problem is collected, never just the first: a user fixing a manifest
 * should see the whole list at once. Messages carry the document number, the
 * object and, for YAML input, the line and column of the offending value (or of
 * its nearest present ancestor when the value is missing).
 */
#include "model_kind.h"
#include "model_manifest.h"
#include "validate.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "err.h"

static void check_labels(struct model__vctx *v, json_t *labels)
{
    const char *k;
    json_t *e;
    model__want_string_map(v, labels, "metadata.labels");
    if (!json_is_object(labels))
        return;
    json_object_foreach(labels, k, e)
    {
        char f[MODEL__PATH_MAX];
        model__path(f, "metadata.labels", k);
        if (!model__label_key_ok(k))
            model__problem(v, f, "invalid label key '%s'", k);
        else if (json_is_string(e) && !model__label_value_ok(json_string_value(e)))
            model__problem(v, f, "invalid label value '%s'", json_string_value(e));
    }
}

static void check_timestamp(struct model__vctx *v, json_t *meta, const char *key)
{
    char f[MODEL__PATH_MAX];
    json_t *t = json_object_get(meta, key);
    int64_t ms;
    model__path(f, "metadata", key);
    if (t && !json_is_null(t) && model__want_string(v, t, f, 0) &&
        clock_parse_rfc3339(json_string_value(t), &ms, NULL) < 0)
        model__problem(v, f, "invalid RFC 3339 timestamp '%s'", json_string_value(t));
}

static void check_metadata(struct model__vctx *v, json_t *obj, int known)
{
    json_t *meta = json_object_get(obj, "metadata");
    if (!model__want_object(v, meta, "metadata", 1))
        return;
    json_t *name = json_object_get(meta, "name");
    if (model__want_string(v, name, "metadata.name", 1) &&
        !model__dns_subdomain(json_string_value(name)))
        model__problem(v, "metadata.name",
                       "invalid name '%s': must be a lowercase DNS-1123 subdomain",
                       json_string_value(name));
    json_t *ns = json_object_get(meta, "namespace");
    if (model__want_string(v, ns, "metadata.namespace", 0) &&
        !model__dns_label(json_string_value(ns)))
        model__problem(v, "metadata.namespace",
                       "invalid namespace '%s': must be a lowercase DNS-1123 label",
                       json_string_value(ns));
    if (!ns && known && model_kind_namespaced(v->kind))
        json_object_set_new(meta, "namespace", json_string("default"));
    check_labels(v, json_object_get(meta, "labels"));
    model__want_string_map(v, json_object_get(meta, "annotations"), "metadata.annotations");
    model__want_string(v, json_object_get(meta, "uid"), "metadata.uid", 0);
    check_timestamp(v, meta, "creationTimestamp");
    check_timestamp(v, meta, "deletionTimestamp");
}

/* The label used in messages, known before any check runs. */
static void set_label(struct model__vctx *v, json_t *obj, int known)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    json_t *meta = json_object_get(obj, "metadata");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    snprintf(v->kind_name, sizeof(v->kind_name), "%s", kind ? kind : "");
    if (!name || !*name)
        v->name[0] = '\0';
    else if (known && model_kind_namespaced(v->kind))
        snprintf(v->name, sizeof(v->name), "%s/%s", ns && *ns ? ns : "default", name);
    else
        snprintf(v->name, sizeof(v->name), "%s", name);
}

/* fields: NULL, or the field validation mode (then warnings may collect its warnings). */
static int validate(struct model_doc *doc, json_t *errors, const enum model_fields *fields,
                    json_t *warnings)
{
    struct model__vctx v = {.doc = doc, .errors = errors};
    json_t *obj = doc->obj;
    struct err err = ERR_INIT;
    int known = 0;

    if (!json_is_object(obj)) {
        model__problem(&v, "", "must be an object");
        return v.count;
    }
    json_t *api = json_object_get(obj, "apiVersion"), *kind = json_object_get(obj, "kind");
    const char *as = json_string_value(api), *ks = json_string_value(kind);
    if (as && ks)
        known = model_kind_from_doc(ks, as, &v.kind, &err) == 0;
    doc->kinded = known; /* the apply reads it, not the document, for every scan */
    doc->kind = v.kind;
    set_label(&v, obj, known);
    model__want_string(&v, api, "apiVersion", 1);
    model__want_string(&v, kind, "kind", 1);
    if (err.code)
        model__problem(&v, err.field, "%s", err.msg);
    check_metadata(&v, obj, known);
    if (!known)
        return v.count;
    switch (v.kind) {
    case MODEL_NODE:
        model__validate_node(&v, obj);
        break;
    case MODEL_POD:
        model__validate_pod(&v, obj);
        break;
    case MODEL_PODGROUP:
        model__validate_podgroup(&v, obj);
        break;
    case MODEL_PRIORITYCLASS:
        model__validate_priorityclass(&v, obj);
        break;
    case MODEL_QUEUE:
        model__validate_queue(&v, obj);
        break;
    case MODEL_PDB:
        model__validate_pdb(&v, obj);
        break;
    default:
        model__validate_topology(&v, obj);
        break;
    }
    if (fields && v.kind == MODEL_POD) /* a mirrored pod is not refused: never placed */
        model__validate_pod_extended(&v, obj);
    if (fields)
        model__check_fields(&v, obj, *fields, warnings);
    return v.count;
}

int model_validate(struct model_doc *doc, json_t *errors)
{
    return validate(doc, errors, NULL, NULL);
}

int model_validate_fields(struct model_doc *doc, enum model_fields mode, json_t *errors,
                          json_t *warnings)
{
    return validate(doc, errors, &mode, warnings);
}
