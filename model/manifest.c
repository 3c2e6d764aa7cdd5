/*
 * manifest.c - manifest bytes (YAML stream, JSON or NDJSON) to jansson documents: the
 * format sniffed and its reader called (manifest_yaml.c, manifest_json.c; a big YAML
 * stream on two threads, manifest_yaml_split.c), then every document validated and
 * checked for depth.
 */
#include "model_manifest.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "err.h"
#include "thread.h"

static int parse(const char *buf, size_t len, enum model_format fmt, int want_pos,
                 struct model_manifest *out, struct err *err)
{
    size_t i = 0;
    int rc;
    out->docs = NULL;
    out->n = 0;
    out->validated = 0;
    out->fields_checked = 0;
    if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3))
        buf += 3, len -= 3;
    while (i < len && strchr(" \t\r\n", buf[i]))
        i++;
    if (fmt == MODEL_FMT_AUTO)
        fmt = i < len && (buf[i] == '{' || buf[i] == '[') ? MODEL_FMT_JSON : MODEL_FMT_YAML;
    if (fmt == MODEL_FMT_NDJSON)
        rc = model__ndjson_parse(buf, len, out, err);
    else if (fmt == MODEL_FMT_JSON)
        rc = model__json_parse(buf, len, out, err);
    else
        rc = model__yaml_stream_parse(buf, len, want_pos, out, err);
    if (rc < 0)
        model_manifest_free(out);
    return rc;
}

int model_manifest_parse(const char *buf, size_t len, enum model_format fmt,
                         struct model_manifest *out, struct err *err)
{
    return parse(buf, len, fmt, 0, out, err);
}

int model_manifest_parse_positions(const char *buf, size_t len, enum model_format fmt,
                                   struct model_manifest *out, struct err *err)
{
    return parse(buf, len, fmt, 1, out, err);
}

/* A manifest of this many documents or more is validated on two threads (validate_docs):
 * below it a thread costs more than it saves. */
#define MODEL_VALIDATE_SPLIT 2000

/* A manifest's documents validated in halves (validate_docs), each into its own problem
 * lists. */
struct vhalves {
    struct model_manifest *m;
    enum model_fields mode;
    json_t *errors[2], *warnings[2];
    int n[2];
};

static void validate_half(void *ctx, int half, size_t from, size_t to)
{
    struct vhalves *v = ctx;
    for (size_t i = from; i < to; i++)
        v->n[half] +=
            model_validate_fields(&v->m->docs[i], v->mode, v->errors[half], v->warnings[half]);
}

/* Every document validated, the second half of a big manifest on a thread of its own (the
 * documents share no values, and validating reads and changes only its own): the problems
 * in document order, as one pass gives them. Returns how many. */
static int validate_docs(struct model_manifest *m, enum model_fields mode, json_t *errors,
                         json_t *warnings)
{
    struct vhalves v = {
        m, mode, {errors, json_array()}, {warnings, warnings ? json_array() : NULL}, {0, 0}};
    thread_halves(m->n, MODEL_VALIDATE_SPLIT, validate_half, &v);
    json_array_extend(errors, v.errors[1]);
    if (warnings)
        json_array_extend(warnings, v.warnings[1]);
    json_decref(v.errors[1]);
    json_decref(v.warnings[1]);
    return v.n[0] + v.n[1];
}

int model_validate_all(struct model_manifest *m, const char *src, size_t len,
                       enum model_fields mode, json_t *errors, json_t *warnings)
{
    size_t before = json_array_size(errors);
    int n = validate_docs(m, mode, errors, warnings);
    m->validated = m->fields_checked = !n;
    if (!n || !src || (m->n && m->docs[0].pos))
        return n;
    struct model_manifest placed;
    if (model_manifest_parse_positions(src, len, MODEL_FMT_AUTO, &placed, NULL) < 0)
        return n;
    if (placed.n == m->n && placed.n && placed.docs[0].pos) {
        for (size_t i = 0; i < m->n; i++) {
            m->docs[i].pos = placed.docs[i].pos;
            placed.docs[i].pos = NULL;
        }
        /* validation is idempotent: the second pass gives the same problems, placed (the
         * unknown fields WARN and IGNORE dropped are gone, so warnings get none twice) */
        while (json_array_size(errors) > before)
            json_array_remove(errors, json_array_size(errors) - 1);
        n = 0;
        for (size_t i = 0; i < m->n; i++)
            n += model_validate_fields(&m->docs[i], mode, errors, warnings);
    }
    model_manifest_free(&placed);
    return n;
}

/* ---- depth ---- */

/* The path is built only on the way back from a find, so valid documents cost no
 * allocations. */
static int too_deep(json_t *v, int depth, char **path)
{
    const char *key;
    json_t *child;
    size_t i;

    if (!json_is_object(v) && !json_is_array(v))
        return 0;
    if (depth >= MODEL_MAX_DEPTH) {
        *path = xstrdup("");
        return 1;
    }
    json_object_foreach(v, key, child)
    {
        if (too_deep(child, depth + 1, path)) {
            char *p = xasprintf("%s%s%s", key, **path && **path != '[' ? "." : "", *path);
            free(*path);
            *path = p;
            return 1;
        }
    }
    json_array_foreach(v, i, child)
    {
        if (too_deep(child, depth + 1, path)) {
            char *p = xasprintf("[%zu]%s%s", i, **path && **path != '[' ? "." : "", *path);
            free(*path);
            *path = p;
            return 1;
        }
    }
    return 0;
}

int model_too_deep(json_t *v, char **path)
{
    return too_deep(v, 0, path);
}

/* A manifest's documents walked in halves for the first one too deep in each. */
struct dhalves {
    const struct model_manifest *m;
    size_t at[2];
    char *path[2]; /* the first one's, or NULL */
};

static void depth_half(void *ctx, int half, size_t from, size_t to)
{
    struct dhalves *d = ctx;
    for (size_t i = from; i < to && !d->path[half]; i++)
        if (too_deep(d->m->docs[i].obj, 0, &d->path[half]))
            d->at[half] = i;
}

int model_manifest_too_deep(const struct model_manifest *m, size_t *at, char **path)
{
    struct dhalves d = {m, {0, 0}, {NULL, NULL}};
    thread_halves(m->n, MODEL_VALIDATE_SPLIT, depth_half, &d); /* as validation */
    int half = d.path[0] ? 0 : 1;
    if (d.path[half]) {
        *at = d.at[half];
        *path = d.path[half];
    }
    if (half == 0)
        free(d.path[1]);
    return d.path[half] != NULL;
}
