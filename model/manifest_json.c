/*
 * manifest_json.c - JSON and NDJSON manifest bytes to jansson documents (manifest.c
 * dispatches here; YAML is manifest_yaml.c's).
 */
#include "model_manifest.h"
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"

/* A JSON manifest this long or longer that is an array or a List is read on two threads
 * (model__json_read_split), and an NDJSON body in two parts: below it a thread costs more
 * than it saves. With musterd's allocator (jemalloc), two threads read an array of 1,200
 * pods (270 KB) in 2.4 ms instead of 2.8 and of 4,000 (900 KB) in 7.5 instead of 16. */
#define SPLIT_BYTES ((size_t)256 << 10)

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

/* The bracket closing the array or object opened at p, or NULL. */
static const char *skip_nested(const char *p, const char *end)
{
    int depth = 0;
    for (; p < end; p++) {
        if (*p == '"') {
            if (!(p = skip_string(p, end)))
                return NULL;
            p--;
        } else if (*p == '[' || *p == '{') {
            depth++;
        } else if ((*p == ']' || *p == '}') && --depth == 0) {
            return p;
        }
    }
    return NULL;
}

/* The byte after the value at p (a string, array, object or scalar), or NULL. */
static const char *skip_value(const char *p, const char *end)
{
    if (p < end && *p == '"')
        return skip_string(p, end);
    if (p < end && (*p == '[' || *p == '{')) {
        p = skip_nested(p, end);
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

/* A ',' near the middle of the items whose '[' is at items that likely ends one of them: the
 * first after the middle followed (past white space) by the bytes the first item starts with
 * (up to its first ':', at most 16), else the first after the middle, else the last before
 * it. A guess, which costs no scan of the half before it: the read of that half lands on it
 * only when it ends an item (model__json_read_elements). NULL when there is no ','. */
static const char *guess_cut(const char *items, const char *end)
{
    const char *mid = items + (end - items) / 2, *first = skip_ws(items + 1, end);
    size_t n = 0;
    while (first + n < end && n < 16 && first[n] != ':')
        n++;
    for (const char *q = mid; n && q < end && (q = memmem(q, (size_t)(end - q), first, n)); q++) {
        const char *c = q;
        while (c > mid && strchr(" \t\r\n", c[-1]))
            c--;
        if (c > mid && c[-1] == ',')
            return c - 1;
    }
    const char *after = memchr(mid, ',', (size_t)(end - mid));
    if (after || mid <= items + 1)
        return after;
    return memrchr(items + 1, ',', (size_t)(mid - items - 1));
}

/* The items after the cut, read on the second thread. */
struct after {
    const char *from, *end;
    int depth;
    json_t *items;
    const char *close; /* the items' ']' */
    int rc;
};

static void *read_after(void *arg)
{
    struct after *b = arg;
    b->rc = model__json_read_elements(b->from, b->end, NULL, b->depth, 1, b->items, &b->close);
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

/* The value of buf[0..len) whose items (read, their ']' at close) are at items: the array
 * itself, or the List read without them and given them. NULL when that does not read. */
static json_t *around(const char *buf, const char *end, const char *items, const char *close,
                      json_t *read)
{
    if (items == skip_ws(buf, end)) /* an array: nothing may follow it */
        return skip_ws(close + 1, end) == end ? json_incref(read) : NULL;
    size_t n;
    char *rest =
        joined(buf, (size_t)(items - buf), "[]", 2, close + 1, (size_t)(end - close - 1), &n);
    json_t *v = model_json_read(rest, n, 1);
    free(rest);
    if (!json_is_object(v) || json_object_set(v, "items", read) < 0) {
        json_decref(v);
        return NULL;
    }
    return v;
}

json_t *model__json_read_split(const char *buf, size_t len, int *tried)
{
    const char *end = buf + len, *p = skip_ws(buf, end), *items = NULL, *cut, *at;
    *tried = 0;
    if (p < end && *p == '[')
        items = p;
    else if (p < end && *p == '{')
        items = list_items(p, end);
    if (!items || !(cut = guess_cut(items, end)))
        return NULL;
    struct after b = {cut + 1, end, items == p ? 1 : 2, json_array(), NULL, -1};
    pthread_t t;
    if (pthread_create(&t, NULL, read_after, &b) != 0) {
        json_decref(b.items);
        return NULL;
    }
    *tried = 1;
    json_t *a = json_array(), *v = NULL;
    int landed = model__json_read_elements(items + 1, end, cut, b.depth, 1, a, &at);
    pthread_join(t, NULL);
    /* landed on the cut: the items after it are the second thread's; else this read went
     * past it (it was inside an item) to the items' end, or failed */
    if (landed == 1 && b.rc == 0 && json_array_extend(a, b.items) == 0)
        v = around(buf, end, items, b.close, a);
    else if (landed == 0)
        v = around(buf, end, items, at, a);
    json_decref(a);
    json_decref(b.items);
    return v;
}

int model__json_parse(const char *buf, size_t len, struct model_manifest *out, struct err *err)
{
    json_error_t jerr;
    /* the reader where it can (a scalar at the top is jansson's: JSON_DECODE_ANY), a big
     * array or List on two threads; a split read that failed is not read again whole, which
     * fails too: jansson then names what is wrong */
    int tried = 0;
    json_t *v = len >= SPLIT_BYTES ? model__json_read_split(buf, len, &tried) : NULL;
    if (!v && !tried)
        v = model_json_read(buf, len, 1);
    if (!v)
        v = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    if (!v)
        return err_set(err, ERR_INVALID, "document 1: %s at line %d col %d", jerr.text, jerr.line,
                       jerr.column);
    model__manifest_add(out, v, NULL);
    return 0;
}

int model__ndjson_read(const char *buf, size_t len, int first_line, struct model_manifest *out,
                       struct err *err)
{
    const char *p = buf, *end = buf + len;
    for (int line = first_line; p < end; line++) {
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

static int ndjson_part(const struct model__part *p, struct model_manifest *out, struct err *err)
{
    return model__ndjson_read(p->buf, p->len, p->first_line, out, err);
}

/* A big body's lines in two parts (each line is a document of its own, so the parts read as
 * the whole does, the second's documents numbered on and their lines counted from the
 * first's): 0, or -1 with out untouched when there is no line past the middle or a part does
 * not read (then the whole read decides, and names the first bad line). */
static int ndjson_read_split(const char *buf, size_t len, struct model_manifest *out)
{
    const char *end = buf + len, *nl = memchr(buf + len / 2, '\n', len - len / 2);
    if (!nl || nl + 1 == end)
        return -1;
    int lines = 1;
    for (const char *q = buf; (q = memchr(q, '\n', (size_t)(nl - q))); q++)
        lines++;
    const struct model__part part[2] = {
        {.buf = buf, .len = (size_t)(nl - buf), .first_line = 1},
        {.buf = nl + 1, .len = (size_t)(end - nl - 1), .first_line = lines + 1}};
    return model__read_parts(ndjson_part, part, out);
}

int model__ndjson_parse(const char *buf, size_t len, struct model_manifest *out, struct err *err)
{
    if (len >= SPLIT_BYTES && ndjson_read_split(buf, len, out) == 0)
        return 0;
    return model__ndjson_read(buf, len, 1, out, err);
}
