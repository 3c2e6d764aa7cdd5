/*
 * manifest_yaml.c - a YAML stream to jansson documents (internal.h model__yaml_read).
 *
 * YAML is read event by event with libyaml so that every node's position can be
 * kept in a per-document map (field path -> [line, col]) for precise validation
 * messages. Aliases are expanded as deep copies under a budget of bytes produced against
 * bytes read (a "billion laughs" document, or one that aliases a big string many times,
 * is refused before the copy is made, instead of eating memory); merge keys (<<) are
 * applied; duplicate keys are rejected, as the Kubernetes API server does.
 */
#include "internal.h"
#include "model_manifest.h"

#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "alloc.h"
#include "err.h"

/* What alias expansion may add to a stream, in bytes of the expanded values written as
 * JSON: ALIAS_FLOOR plus ALIAS_RATIO times the stream's own length. A node budget alone let
 * a 1 MB body alias a 1 MiB string 2,000 times (4 GB) and stay under it; go-yaml
 * (kube-apiserver) bounds aliasing by a ratio too. docs/security.md "YAML aliases". */
#define ALIAS_FLOOR (1024 * 1024)
#define ALIAS_RATIO 4
/* The YAML reader's recursion bound: deeper input stops here with its line; a document
 * past MODEL_MAX_DEPTH but within this is refused by model_too_deep with its path. */
#define MAX_DEPTH (4 * MODEL_MAX_DEPTH)

struct yp {
    yaml_parser_t parser;
    yaml_event_t ev;
    int have_ev;
    int doc; /* number of the document being read, for messages */
    json_t *pos;
    json_t *anchors; /* anchor name -> value */
    size_t budget;   /* bytes alias expansion may still add */
    size_t read;     /* the stream's length, for the message */
    int want_pos;
    struct err *err;
};

static int fail_at(struct yp *yp, yaml_mark_t mark, const char *fmt, const char *arg)
{
    char what[512];
    snprintf(what, sizeof(what), fmt, arg);
    return err_set(yp->err, ERR_INVALID, "document %d: %s at line %d col %d", yp->doc, what,
                   (int)mark.line + 1, (int)mark.column + 1);
}

static int next(struct yp *yp)
{
    if (yp->have_ev)
        yaml_event_delete(&yp->ev);
    yp->have_ev = 0;
    if (!yaml_parser_parse(&yp->parser, &yp->ev)) {
        const char *problem = yp->parser.problem ? yp->parser.problem : "invalid YAML";
        return fail_at(yp, yp->parser.problem_mark, "%s", problem);
    }
    yp->have_ev = 1;
    return 0;
}

static char *child_path(const char *path, const char *key)
{
    return *path ? xasprintf("%s.%s", path, key) : xstrdup(key);
}

/* The bytes of v written as JSON, roughly (stops counting past limit), and in *depth its
 * nesting depth. */
static size_t value_bytes(json_t *v, size_t limit, int *depth)
{
    size_t n = json_is_string(v) ? json_string_length(v) + 2 : 8;
    int d = 0, cd;
    const char *key;
    json_t *c;
    size_t i;

    json_object_foreach(v, key, c)
    {
        if (n > limit)
            break;
        n += strlen(key) + 4 + value_bytes(c, limit - n, &cd);
        d = cd > d ? cd : d;
    }
    json_array_foreach(v, i, c)
    {
        if (n > limit)
            break;
        n += 1 + value_bytes(c, limit - n, &cd);
        d = cd > d ? cd : d;
    }
    *depth = d + 1;
    return n;
}

static int parse_node(struct yp *yp, const char *path, int depth, json_t **out);

static int parse_scalar(struct yp *yp, json_t **out)
{
    yaml_event_t *ev = &yp->ev;
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    if (tag && !strcmp(tag, YAML_STR_TAG))
        *out = json_stringn(s, len);
    else if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
        *out = model__scalar_resolve(s, len);
    else
        *out = json_stringn(s, len);
    if (!*out)
        return fail_at(yp, ev->start_mark, "%s", "scalar is not valid UTF-8");
    return 0;
}

static int parse_sequence(struct yp *yp, const char *path, int depth, json_t **out)
{
    json_t *arr = json_array();
    int rc = 0;
    for (size_t i = 0;; i++) {
        if ((rc = next(yp)) < 0)
            goto out;
        if (yp->ev.type == YAML_SEQUENCE_END_EVENT)
            break;
        /* paths are only for positions: none built when they are not recorded */
        char *p = yp->want_pos ? xasprintf("%s[%zu]", path, i) : NULL;
        json_t *item = NULL;
        rc = parse_node(yp, p ? p : "", depth + 1, &item);
        free(p);
        if (rc < 0)
            goto out;
        json_array_append_new(arr, item);
    }
out:
    if (rc < 0)
        json_decref(arr);
    else
        *out = arr;
    return rc;
}

/* Merge values (<<) lose to keys written in the mapping itself, wherever they are. */
static int apply_merge(struct yp *yp, json_t *obj, json_t *merge, yaml_mark_t mark)
{
    size_t i;
    json_t *m;
    if (json_is_object(merge))
        return json_object_update_missing(obj, merge), 0;
    if (json_is_array(merge)) {
        json_array_foreach(merge, i, m)
        {
            if (!json_is_object(m))
                return fail_at(yp, mark, "%s", "merge key '<<' needs mappings");
            json_object_update_missing(obj, m);
        }
        return 0;
    }
    return fail_at(yp, mark, "%s", "merge key '<<' needs a mapping");
}

static int parse_mapping(struct yp *yp, const char *path, int depth, json_t **out)
{
    json_t *obj = json_object(), *merges = NULL; /* made at the first merge key */
    char kbuf[256], *key = kbuf, *p = NULL;      /* the key: most fit kbuf */
    size_t klen;
    int rc = 0;
    for (;;) {
        if ((rc = next(yp)) < 0)
            goto out;
        if (yp->ev.type == YAML_MAPPING_END_EVENT)
            break;
        yaml_mark_t kmark = yp->ev.start_mark;
        if (yp->ev.type != YAML_SCALAR_EVENT) {
            rc = fail_at(yp, kmark, "%s", "mapping keys must be strings");
            goto out;
        }
        int merge = yp->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                    !strcmp((const char *)yp->ev.data.scalar.value, "<<");
        const char *kv = (const char *)yp->ev.data.scalar.value;
        klen = strnlen(kv, yp->ev.data.scalar.length); /* up to a NUL, as jansson's keys */
        if (key != kbuf)
            free(key);
        key = klen < sizeof(kbuf) ? kbuf : xmalloc(klen + 1);
        memcpy(key, kv, klen);
        key[klen] = '\0';
        if (!merge && json_object_getn(obj, key, klen)) {
            rc = fail_at(yp, kmark, "duplicate key '%s'", key);
            goto out;
        }
        if ((rc = next(yp)) < 0)
            goto out;
        free(p);
        p = yp->want_pos ? child_path(path, key) : NULL;
        json_t *val = NULL;
        if ((rc = parse_node(yp, p ? p : "", depth + 1, &val)) < 0)
            goto out;
        if (merge) {
            if (!merges)
                merges = json_array();
            json_array_append_new(merges, val);
            json_array_append_new(merges, json_pack("[ii]", (int)kmark.line, (int)kmark.column));
        } else {
            json_object_setn_new(obj, key, klen, val);
        }
    }
    for (size_t i = 0; i + 1 < json_array_size(merges); i += 2) {
        json_t *mk = json_array_get(merges, i + 1);
        yaml_mark_t mark = {0, (size_t)json_integer_value(json_array_get(mk, 0)),
                            (size_t)json_integer_value(json_array_get(mk, 1))};
        if ((rc = apply_merge(yp, obj, json_array_get(merges, i), mark)) < 0)
            goto out;
    }
out:
    if (key != kbuf)
        free(key);
    free(p);
    json_decref(merges);
    if (rc < 0)
        json_decref(obj);
    else
        *out = obj;
    return rc;
}

/* An alias is a deep copy, so it counts against both the byte budget and the depth
 * limit: nesting aliases of nested anchors would otherwise build documents thousands
 * of levels deep, deeper than jansson reads back from the store. Both are checked before
 * the copy is made. */
static int parse_alias(struct yp *yp, int depth, json_t **out)
{
    const char *name = (const char *)yp->ev.data.alias.anchor;
    json_t *v = json_object_get(yp->anchors, name);
    int vdepth;
    if (!v)
        return fail_at(yp, yp->ev.start_mark, "unknown alias '*%s'", name);
    size_t n = value_bytes(v, yp->budget, &vdepth);
    if (n > yp->budget) {
        char what[400];
        snprintf(what, sizeof(what),
                 "alias '*%.100s' expands the document by more than %d times the %zu bytes read "
                 "(plus %d MiB): too much aliasing (an alias bomb)",
                 name, ALIAS_RATIO, yp->read, ALIAS_FLOOR / (1024 * 1024));
        return fail_at(yp, yp->ev.start_mark, "%s", what);
    }
    yp->budget -= n;
    if (depth + vdepth - 1 > MAX_DEPTH)
        return fail_at(yp, yp->ev.start_mark, "alias '*%s' makes the document nested too deeply",
                       name);
    *out = json_deep_copy(v);
    return 0;
}

/* Reads the node whose first event is yp->ev; leaves its last event in yp->ev. */
static int parse_node(struct yp *yp, const char *path, int depth, json_t **out)
{
    yaml_event_t *ev = &yp->ev;
    const char *anchor = NULL;
    int rc;
    if (depth > MAX_DEPTH)
        return fail_at(yp, ev->start_mark, "%s", "document is nested too deeply");
    model__pos_set(yp->pos, path, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1);
    char *anchor_copy = NULL;
    switch (ev->type) {
    case YAML_SCALAR_EVENT:
        anchor = (const char *)ev->data.scalar.anchor;
        anchor_copy = anchor ? xstrdup(anchor) : NULL;
        rc = parse_scalar(yp, out);
        break;
    case YAML_SEQUENCE_START_EVENT:
        anchor = (const char *)ev->data.sequence_start.anchor;
        anchor_copy = anchor ? xstrdup(anchor) : NULL;
        rc = parse_sequence(yp, path, depth, out);
        break;
    case YAML_MAPPING_START_EVENT:
        anchor = (const char *)ev->data.mapping_start.anchor;
        anchor_copy = anchor ? xstrdup(anchor) : NULL;
        rc = parse_mapping(yp, path, depth, out);
        break;
    case YAML_ALIAS_EVENT:
        rc = parse_alias(yp, depth, out);
        break;
    default:
        rc = fail_at(yp, ev->start_mark, "%s", "unexpected YAML event");
        break;
    }
    if (rc == 0 && anchor_copy)
        json_object_set(yp->anchors, anchor_copy, *out);
    free(anchor_copy);
    return rc;
}

static int parse_document(struct yp *yp, struct model_manifest *out)
{
    json_t *v = NULL;
    int rc;
    yp->pos = yp->want_pos ? json_object() : NULL;
    if ((rc = next(yp)) < 0 || (rc = parse_node(yp, "", 0, &v)) < 0 || (rc = next(yp)) < 0)
        goto out;
    if (yp->ev.type != YAML_DOCUMENT_END_EVENT) {
        rc = fail_at(yp, yp->ev.start_mark, "%s", "expected the end of the document");
        goto out;
    }
    if (json_is_null(v)) /* an empty document */
        goto out;
    model__manifest_add(out, v, yp->pos);
    v = NULL;
    yp->pos = NULL;
out:
    json_decref(v);
    json_decref(yp->pos);
    yp->pos = NULL;
    return rc;
}

size_t model__yaml_budget(size_t len)
{
    return ALIAS_FLOOR + ALIAS_RATIO * len;
}

int model__yaml_parse(const char *buf, size_t len, int want_pos, struct model_manifest *out,
                      struct err *err)
{
    return model__yaml_read(buf, len, model__yaml_budget(len), want_pos, out, err);
}

int model__yaml_read(const char *buf, size_t len, size_t budget, int want_pos,
                     struct model_manifest *out, struct err *err)
{
    struct yp yp = {.doc = 1, .budget = budget, .read = len, .want_pos = want_pos, .err = err};
    int rc;
    yaml_parser_initialize(&yp.parser);
    yaml_parser_set_input_string(&yp.parser, (const unsigned char *)buf, len);
    yp.anchors = json_object();
    if ((rc = next(&yp)) < 0)
        goto out;
    for (;;) {
        yp.doc = (int)out->n + 1;
        if ((rc = next(&yp)) < 0)
            goto out;
        if (yp.ev.type == YAML_STREAM_END_EVENT)
            break;
        /* anchors do not cross documents */
        json_object_clear(yp.anchors);
        if ((rc = parse_document(&yp, out)) < 0)
            goto out;
    }
out:
    if (yp.have_ev)
        yaml_event_delete(&yp.ev);
    yaml_parser_delete(&yp.parser);
    json_decref(yp.anchors);
    return rc;
}
