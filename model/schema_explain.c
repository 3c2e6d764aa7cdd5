/*
 * schema_explain.c - a kind or one of its fields described from the field schema
 * (model_explain: `muster explain KIND[.field]`), so what the CLI explains is exactly what
 * validation checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"
#include "model_manifest.h"
#include "schema.h"

static const char *class_name(enum model__fclass c)
{
    return c == MODEL__HONOURED ? "honoured" : c == MODEL__UNSUPPORTED ? "unsupported" : "known";
}

/* The field's type as kubectl explain writes it: "string", "[]string", "map[string]string",
 * "Object", "PodSpec", "[]Container", "map[string]Type". New. */
static char *type_text(const struct model__field *f)
{
    const char *t = f->type ? f->type->name : "";
    switch (f->shape) {
    case MODEL__SCALAR:
        return xstrdup("scalar");
    case MODEL__LIST:
        return xstrdup("[]scalar");
    case MODEL__MAP:
        return xstrdup("map[string]scalar");
    case MODEL__ANY:
        return xstrdup("Object");
    case MODEL__OBJECT:
        return xstrdup(t);
    case MODEL__OBJECTS:
        return xasprintf("[]%s", t);
    case MODEL__MAP_OBJECTS:
        return xasprintf("map[string]%s", t);
    }
    return xstrdup("?");
}

static json_t *field_json(const struct model__field *f)
{
    char *type = type_text(f);
    json_t *o =
        json_pack("{s:s, s:s, s:s}", "name", f->name, "type", type, "class", class_name(f->cls));
    if (f->why)
        json_object_set_new(o, "why", json_string(f->why));
    free(type);
    return o;
}

static const struct model__field *find(const struct model__type *t, const char *name)
{
    for (size_t i = 0; t && i < t->n; i++)
        if (!strcmp(t->fields[i].name, name))
            return &t->fields[i];
    return NULL;
}

int model_explain(const char *what, json_t **out, struct err *err)
{
    char *copy = xstrdup(what), *save = NULL;
    char *kind_s = strtok_r(copy, ".", &save);
    enum model_kind kind;
    int rc = 0;
    *out = NULL;
    if (!kind_s || model_kind_from_resource(kind_s, &kind) < 0) {
        rc = err_set(err, ERR_INVALID, "unknown kind '%s'", kind_s ? kind_s : what);
        goto out;
    }
    const struct model__type *t = model__schema_root(kind);
    if (!t) {
        rc = err_set(err, ERR_INVALID, "kind '%s' has no field schema", model_kind_name(kind));
        goto out;
    }
    const struct model__field *f = NULL;
    char path[512] = "";
    for (char *name = strtok_r(NULL, ".", &save); name; name = strtok_r(NULL, ".", &save)) {
        const struct model__field *g = t ? find(t, name) : NULL;
        if (!g) {
            rc = err_set(err, ERR_INVALID, "%s has no field '%s%s%s'%s%s", model_kind_name(kind),
                         path, *path ? "." : "", name, t ? " (fields of " : "", t ? t->name : "");
            if (t)
                snprintf(err->msg + strlen(err->msg), sizeof(err->msg) - strlen(err->msg), ")");
            goto out;
        }
        snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s%s", *path ? "." : "", name);
        f = g;
        t = g->type; /* NULL for scalars, lists and maps: nothing below */
    }
    json_t *fields = json_array();
    for (size_t i = 0; t && i < t->n; i++)
        json_array_append_new(fields, field_json(&t->fields[i]));
    *out =
        json_pack("{s:s, s:s, s:o}", "kind", model_kind_name(kind), "path", path, "fields", fields);
    if (f) {
        json_t *self = field_json(f);
        json_object_update(*out, self);
        json_object_del(*out, "name");
        json_decref(self);
    } else {
        json_object_set_new(*out, "type", json_string(t ? t->name : model_kind_name(kind)));
    }
out:
    free(copy);
    return rc;
}
