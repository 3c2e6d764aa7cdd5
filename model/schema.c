/*
 * schema.c - walks a document against the field schema (schema.h, schema_k8s.h).
 *
 * One walk serves both uses: checking an object sent to muster (unknown fields refused,
 * warned about or dropped; unsupported fields refused; shapes checked) and finding the
 * first unsupported field of a mirrored object, which cannot be refused. The walk is
 * linear in the document and allocates nothing until it has something to report: the
 * path is a stack of borrowed keys and indices, formatted only for a message.
 */
#include "schema.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "err.h"
#include "model_kind.h"
#include "model_manifest.h"
#include "validate.h"

/* Deeper than any path of the schema: the walk only descends where the schema does. */
#define WALK_MAX 48

struct seg {
    const char *key; /* NULL: an index */
    size_t index;
};

struct walk {
    struct model__vctx *v; /* NULL: only find the first unsupported field */
    enum model_fields mode;
    json_t *warnings;
    struct seg path[WALK_MAX];
    int depth;
    const struct model__field *found; /* the first unsupported field (find only) */
    char found_path[MODEL__PATH_MAX];
};

static const struct {
    const char *name;
    enum model_fields mode;
} modes[] = {
    {"Strict", MODEL_FIELDS_STRICT},
    {"Warn", MODEL_FIELDS_WARN},
    {"Ignore", MODEL_FIELDS_IGNORE},
};

int model_fields_parse(const char *s, enum model_fields *out, struct err *err)
{
    for (size_t i = 0; s && i < sizeof(modes) / sizeof(modes[0]); i++)
        if (!strcasecmp(s, modes[i].name)) {
            *out = modes[i].mode;
            return 0;
        }
    return err_setf(err, ERR_INVALID, "fieldValidation",
                    "invalid field validation '%s': must be Strict, Warn or Ignore", s ? s : "");
}

const char *model_fields_name(enum model_fields mode)
{
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
        if (modes[i].mode == mode)
            return modes[i].name;
    return "Unknown";
}

static const struct model__field *lookup(const struct model__type *t, const char *key)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(key, t->fields[mid].name);
        if (!c)
            return &t->fields[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

static void path_format(const struct walk *w, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < w->depth && len < n - 1; i++) {
        const struct seg *s = &w->path[i];
        int k = s->key ? snprintf(buf + len, n - len, "%s%s", len ? "." : "", s->key)
                       : snprintf(buf + len, n - len, "[%zu]", s->index);
        len = k < 0 || (size_t)k >= n - len ? n - 1 : len + (size_t)k;
    }
}

/* A value that asks for something: not null, false, 0, "", [] or {}. */
static int present(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_NULL:
    case JSON_FALSE:
        return 0;
    case JSON_INTEGER:
        return json_integer_value(v) != 0;
    case JSON_REAL:
        return json_real_value(v) != 0.0;
    case JSON_STRING:
        return json_string_length(v) > 0;
    case JSON_ARRAY:
        return json_array_size(v) > 0;
    case JSON_OBJECT:
        return json_object_size(v) > 0;
    default:
        return 1;
    }
}

/* Levenshtein distance of short strings, capped: only for "did you mean". */
static size_t distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b), row[65];
    if (na > 64 || nb > 64)
        return 99;
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[nb];
}

/* The type's field nearest to key ("requests" for "request"), or NULL. */
static const char *nearest(const struct model__type *t, const char *key)
{
    const char *best = NULL;
    size_t bd = 3;
    for (size_t i = 0; i < t->n; i++) {
        size_t d = distance(key, t->fields[i].name);
        if (d < bd || (d == bd && best && strcasecmp(key, t->fields[i].name) == 0))
            bd = d, best = t->fields[i].name;
    }
    return best;
}

/* An unknown key of obj (the walk's current path ends with it). */
static void unknown(struct walk *w, const struct model__type *t, json_t *obj, const char *key)
{
    char path[MODEL__PATH_MAX];
    if (!w->v)
        return; /* mirrored: kept as sent, never read */
    path_format(w, path, sizeof(path));
    if (w->mode == MODEL_FIELDS_STRICT) {
        const char *near = nearest(t, key);
        char hint[128] = "";
        if (near)
            snprintf(hint, sizeof(hint), "; did you mean '%s'?", near);
        model__problem(w->v, path, "unknown field (not in %s%s)", t->name, hint);
        return;
    }
    if (w->mode == MODEL_FIELDS_WARN && w->warnings)
        model__report(w->v, w->warnings, path, "unknown field (not in %s), dropped", t->name);
    json_object_del(obj, key); /* never stored in any mode */
}

/* 1 when a problem at this field was already reported by the typed validators. */
static int reported(struct walk *w, const char *path)
{
    size_t i;
    json_t *e;
    json_array_foreach(w->v->errors, i, e)
    {
        const char *f = json_string_value(json_object_get(e, "field"));
        if (json_integer_value(json_object_get(e, "document")) == w->v->doc->index && f &&
            !strcmp(f, path))
            return 1;
    }
    return 0;
}

static void wrong_shape(struct walk *w, const char *what)
{
    char path[MODEL__PATH_MAX];
    if (!w->v)
        return;
    path_format(w, path, sizeof(path));
    if (!reported(w, path))
        model__problem(w->v, path, "must be %s", what);
}

static int push(struct walk *w, const char *key, size_t index)
{
    if (w->depth == WALK_MAX)
        return -1;
    w->path[w->depth++] = (struct seg){key, index};
    return 0;
}

static int walk_object(struct walk *w, const struct model__type *t, json_t *obj);

static int is_scalar(json_t *v)
{
    return !json_is_object(v) && !json_is_array(v);
}

/* Walks one element of a list or map; 1 stops the walk (found). */
static int walk_elem(struct walk *w, const struct model__field *f, json_t *e, const char *key,
                     size_t index)
{
    int stop = 0;
    if (json_is_null(e) || push(w, key, index) < 0)
        return 0;
    if (f->shape == MODEL__LIST || f->shape == MODEL__MAP) {
        if (!is_scalar(e))
            wrong_shape(w, "a string, number or boolean");
    } else if (!json_is_object(e)) {
        wrong_shape(w, "an object");
    } else {
        stop = walk_object(w, f->type, e);
    }
    w->depth--;
    return stop;
}

/* Walks the value of a known field; 1 stops the walk (found). */
static int walk_field(struct walk *w, const struct model__field *f, json_t *val)
{
    size_t i;
    const char *k;
    json_t *e;
    if (json_is_null(val))
        return 0;
    if (f->cls == MODEL__UNSUPPORTED && present(val)) {
        if (!w->v) {
            w->found = f;
            path_format(w, w->found_path, sizeof(w->found_path));
            return 1;
        }
        char path[MODEL__PATH_MAX];
        path_format(w, path, sizeof(path));
        model__problem(w->v, path, "not supported by muster (%s)", f->why);
        return 0;
    }
    switch (f->shape) {
    case MODEL__ANY:
        return 0;
    case MODEL__SCALAR:
        if (!is_scalar(val))
            wrong_shape(w, "a string, number or boolean");
        return 0;
    case MODEL__OBJECT:
        if (!json_is_object(val)) {
            wrong_shape(w, "an object");
            return 0;
        }
        return walk_object(w, f->type, val);
    case MODEL__LIST:
    case MODEL__OBJECTS:
        if (!json_is_array(val)) {
            wrong_shape(w, "a list");
            return 0;
        }
        json_array_foreach(val, i, e) if (walk_elem(w, f, e, NULL, i)) return 1;
        return 0;
    default: /* MAP, MAP_OBJECTS */
        if (!json_is_object(val)) {
            wrong_shape(w, "an object");
            return 0;
        }
        json_object_foreach(val, k, e) if (walk_elem(w, f, e, k, 0)) return 1;
        return 0;
    }
}

static int walk_object(struct walk *w, const struct model__type *t, json_t *obj)
{
    const char *key;
    json_t *val;
    void *tmp;
    json_object_foreach_safe(obj, tmp, key, val)
    {
        const struct model__field *f = lookup(t, key);
        int stop = 0;
        if (push(w, key, 0) < 0)
            return 0;
        if (!f)
            unknown(w, t, obj, key); /* may delete key and val */
        else
            stop = walk_field(w, f, val);
        w->depth--;
        if (stop)
            return 1;
    }
    return 0;
}

void model__check_fields(struct model__vctx *v, json_t *obj, enum model_fields mode,
                         json_t *warnings)
{
    const struct model__type *root = model__schema_root(v->kind);
    struct walk w = {.v = v, .mode = mode, .warnings = warnings};
    if (root && json_is_object(obj))
        walk_object(&w, root, obj);
}

char *model_unsupported_field(enum model_kind kind, json_t *obj, const char **why)
{
    const struct model__type *root = model__schema_root(kind);
    struct walk w = {0};
    if (!root || !json_is_object(obj) || !walk_object(&w, root, obj))
        return NULL;
    if (why)
        *why = w.found->why;
    return xstrdup(w.found_path);
}
