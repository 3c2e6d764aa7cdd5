/*
 * manifest_json.c - JSON and NDJSON manifest bytes to jansson documents (manifest.c
 * dispatches here; YAML stays there).
 */
#include "model_manifest.h"
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"

/* A JSON manifest this long or longer that is an array or a List is read on two threads
 * (model__json_read_split): below it a thread costs more than it saves. */
#define SPLIT_BYTES ((size_t)1 << 20)

static const char *skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

/* The byte after the string whose opening quote is at p, or NULL when it does not end. */
static const char *skip_string(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/* The bracket closing the array or object opened at p, or NULL; *cut: the first comma
 * directly inside it at or after mid, else the last one before (NULL when it has none, or
 * when mid is NULL). */
static const char *skip_nested(const char *p, const char *end, const char *mid, const char **cut)
{
    int depth = 0;
    *cut = NULL;
    for (; p < end; p++) {
        if (*p == '"') {
            if (!(p = skip_string(p, end)))
                return NULL;
            p--;
        } else if (*p == '[' || *p == '{') {
            depth++;
        } else if (*p == ']' || *p == '}') {
            if (--depth == 0)
                return p;
        } else if (*p == ',' && depth == 1 && mid && (!*cut || *cut < mid)) {
            *cut = p;
        }
    }
    return NULL;
}

/* The byte after the value at p (a string, array, object or scalar), or NULL. */
static const char *skip_value(const char *p, const char *end)
{
    const char *cut;
    if (p < end && *p == '"')
        return skip_string(p, end);
    if (p < end && (*p == '[' || *p == '{')) {
        p = skip_nested(p, end, NULL, &cut);
        return p ? p + 1 : NULL;
    }
    while (p < end && !strchr(",}] \t\r\n", *p))
        p++;
    return p;
}

/* The '[' of the items of the List object at p (its first "items" member), or NULL. */
static const char *list_items(const char *p, const char *end)
{
    for (p = skip_ws(p + 1, end); p < end && *p == '"';) {
        const char *key = p + 1;
        if (!(p = skip_string(p, end)))
            return NULL;
        int items = p - 1 - key == 5 && !memcmp(key, "items", 5);
        p = skip_ws(p, end);
        if (p >= end || *p != ':')
            return NULL;
        p = skip_ws(p + 1, end);
        if (items)
            return p < end && *p == '[' ? p : NULL;
        if (!(p = skip_value(p, end)))
            return NULL;
        p = skip_ws(p, end);
        if (p >= end || *p != ',')
            return NULL;
        p = skip_ws(p + 1, end);
    }
    return NULL;
}

struct half {
    char *text;
    size_t len;
    json_t *v;
};

static void *read_half(void *arg)
{
    struct half *h = arg;
    h->v = model_json_read(h->text, h->len, 1);
    return NULL;
}

/* The bytes of a (na), b (nb) and c (nc) one after the other (the input may hold NULs: they
 * are copied, for the reader to refuse), new; *len their length. */
static char *joined(const char *a, size_t na, const char *b, size_t nb, const char *c, size_t nc,
                    size_t *len)
{
    char *t = xmalloc(na + nb + nc + 1);
    memcpy(t, a, na);
    memcpy(t + na, b, nb);
    memcpy(t + na + nb, c, nc);
    t[na + nb + nc] = '\0';
    *len = na + nb + nc;
    return t;
}

json_t *model__json_read_split(const char *buf, size_t len)
{
    const char *end = buf + len, *p = skip_ws(buf, end), *items = NULL, *cut, *close;
    if (p < end && *p == '[')
        items = p;
    else if (p < end && *p == '{')
        items = list_items(p, end);
    /* the items' end, and a comma between two of them near the middle of the text after
     * their start (most of which they are) */
    if (!items || !(close = skip_nested(items, end, items + (end - items) / 2, &cut)) || !cut)
        return NULL;
    /* an item on each side of the cut ("[1,2,]" does not read as "[1,2]" and "[]") */
    const char *before = cut;
    while (before > items && strchr(" \t\r\n", before[-1]))
        before--;
    if (before - 1 == items || skip_ws(cut + 1, end) == close)
        return NULL;
    /* the items' halves, each an array; the rest, the List with no items */
    struct half a = {0}, b = {0}, rest = {0};
    a.text = joined(items, (size_t)(cut - items), "]", 1, "", 0, &a.len);
    b.text = joined("[", 1, cut + 1, (size_t)(close - cut), "", 0, &b.len);
    if (items != p)
        rest.text = joined(buf, (size_t)(items - buf), "[]", 2, close + 1,
                           (size_t)(end - close - 1), &rest.len);
    else if (skip_ws(close + 1, end) != end) {
        free(a.text), free(b.text);
        return NULL; /* bytes after the array: the one reading names them */
    }
    pthread_t t;
    int two = pthread_create(&t, NULL, read_half, &b) == 0;
    read_half(&a);
    if (rest.text)
        read_half(&rest);
    if (two)
        pthread_join(t, NULL);
    else
        read_half(&b);
    json_t *v = NULL;
    if (a.v && b.v && json_array_extend(a.v, b.v) == 0) {
        if (!rest.text) {
            v = a.v;
            a.v = NULL;
        } else if (json_is_object(rest.v) && json_object_set(rest.v, "items", a.v) == 0) {
            v = rest.v;
            rest.v = NULL;
        }
    }
    json_decref(a.v);
    json_decref(b.v);
    json_decref(rest.v);
    free(a.text), free(b.text), free(rest.text);
    return v;
}

int model__json_parse(const char *buf, size_t len, struct model_manifest *out, struct err *err)
{
    json_error_t jerr;
    /* the reader where it can (a scalar at the top is jansson's: JSON_DECODE_ANY), a big
     * array or List on two threads */
    json_t *v = len >= SPLIT_BYTES ? model__json_read_split(buf, len) : NULL;
    if (!v)
        v = model_json_read(buf, len, 1);
    if (!v)
        v = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!v)
        return err_set(err, ERR_INVALID, "document 1: %s at line %d col %d", jerr.text, jerr.line,
                       jerr.column);
    model__manifest_add(out, v, NULL);
    return 0;
}

/* One JSON value a line; blank lines are skipped. Each document's position map holds its
 * line for the whole document (""), so every problem found in it names that line. */
int model__ndjson_parse(const char *buf, size_t len, struct model_manifest *out, struct err *err)
{
    const char *p = buf, *end = buf + len;
    for (int line = 1; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        const char *next_line = nl ? nl + 1 : end;
        size_t i = 0;
        while (i < n && strchr(" \t\r", p[i]))
            i++;
        if (i < n) {
            json_error_t jerr;
            json_t *v = model_json_read(p, n, 1);
            if (!v)
                v = json_loadb(p, n, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
            if (!v)
                return err_set(err, ERR_INVALID, "line %d: %s at col %d", line, jerr.text,
                               jerr.column);
            if (!json_is_object(v)) {
                json_decref(v);
                return err_set(err, ERR_INVALID, "line %d: an NDJSON line must be one object",
                               line);
            }
            json_t *pos = json_object();
            size_t first = out->n;
            model__manifest_add(out, v, pos);
            for (size_t d = first; d < out->n; d++) { /* the items of a List on the line */
                if (!out->docs[d].pos)
                    out->docs[d].pos = json_object();
                model__pos_set(out->docs[d].pos, "", line, 1);
            }
        }
        p = next_line;
    }
    return 0;
}
