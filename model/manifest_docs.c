/*
 * manifest_docs.c - the document list a manifest is read into: each decoded value added
 * as documents (a top-level array and a kind: List flattened into their items, their
 * positions re-keyed), positions recorded, and the list freed.
 *
 * The bottom of the manifest readers: the YAML reader (manifest_yaml.c) and the JSON readers
 * (manifest_json.c) both fill the list through here, and it calls neither.
 */
#include "internal.h"
#include "model_manifest.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"
#include "thread.h"

void model__pos_set(json_t *pos, const char *path, int line, int col)
{
    if (pos)
        json_object_set_new(pos, path, json_pack("[ii]", line, col));
}

/* Splits pos into one map per item: the entries under "<head>[i]" go to maps[i] with
 * that prefix taken off. One pass over pos, so that flattening a List of n items is not
 * n passes over every field of the stream (a 2.7 MB List took minutes). New array of
 * new maps; NULL when pos is. */
static json_t **pos_split(json_t *pos, const char *head, size_t n)
{
    if (!pos)
        return NULL;
    json_t **maps = xcalloc(n ? n : 1, sizeof(*maps)), *v;
    size_t hl = strlen(head);
    const char *k;
    for (size_t i = 0; i < n; i++)
        maps[i] = json_object();
    json_object_foreach(pos, k, v)
    {
        const char *p = k + hl + 1;
        size_t i = 0;
        if (strncmp(k, head, hl) != 0 || k[hl] != '[' || *p < '0' || *p > '9')
            continue;
        for (; *p >= '0' && *p <= '9' && i < n; p++)
            i = i * 10 + (size_t)(*p - '0');
        if (i >= n || *p++ != ']')
            continue;
        if (*p == '.')
            p++;
        else if (*p && *p != '[')
            continue;
        json_object_set(maps[i], p, v);
    }
    return maps;
}

static int is_list(json_t *obj)
{
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    return kind && !strcmp(kind, "List") && json_is_array(json_object_get(obj, "items"));
}

void model__manifest_push(struct model_manifest *out, struct model_doc d)
{
    /* capacity is the next power of two (implied by n): no copy per document */
    if ((out->n & (out->n - 1)) == 0)
        out->docs = xrealloc(out->docs, (out->n ? 2 * out->n : 1) * sizeof(*out->docs));
    out->docs[out->n++] = d;
}

/* a's documents, then b's numbered on after them, into out; a and b are left empty. */
static void join(struct model_manifest *out, struct model_manifest *a, struct model_manifest *b)
{
    *out = *a;
    for (size_t i = 0; i < b->n; i++) {
        struct model_doc d = b->docs[i];
        d.index += (int)a->n;
        model__manifest_push(out, d);
    }
    free(b->docs);
    *a = *b = (struct model_manifest){0};
}

struct parts {
    model__part_reader read;
    const struct model__part *part;
    struct model_manifest m[2];
    int rc[2];
};

static void read_part(void *ctx, int half, size_t from, size_t to)
{
    struct parts *p = ctx;
    struct err err = ERR_INIT; /* a part's error is not the stream's: the whole read words it */
    (void)from, (void)to;
    p->rc[half] = p->read(&p->part[half], &p->m[half], &err);
}

int model__read_parts(model__part_reader read, const struct model__part part[2],
                      struct model_manifest *out)
{
    struct parts p = {.read = read, .part = part};
    thread_halves(2, 2, read_part, &p);
    if (p.rc[0] < 0 || p.rc[1] < 0) {
        model_manifest_free(&p.m[0]);
        model_manifest_free(&p.m[1]);
        return -1;
    }
    join(out, &p.m[0], &p.m[1]);
    return 0;
}

void model__manifest_add(struct model_manifest *out, json_t *obj, json_t *pos)
{
    json_t *items = NULL, *item;
    const char *head = NULL;
    size_t i;
    if (json_is_array(obj)) {
        items = obj;
        head = "";
    } else if (json_is_object(obj) && is_list(obj)) {
        items = json_object_get(obj, "items");
        head = "items";
    }
    if (!items) {
        model__manifest_push(out,
                             (struct model_doc){.index = (int)out->n + 1, .obj = obj, .pos = pos});
        return;
    }
    json_t **maps = pos_split(pos, head, json_array_size(items));
    json_array_foreach(items, i, item)
        model__manifest_add(out, json_incref(item), maps ? maps[i] : NULL);
    free(maps);
    json_decref(obj);
    json_decref(pos);
}

int model_doc_kind(const struct model_doc *d, enum model_kind *kind, struct err *err)
{
    if (d->kinded) {
        *kind = d->kind;
        return 0;
    }
    return model_kind_from_doc(json_string_value(json_object_get(d->obj, "kind")),
                               json_string_value(json_object_get(d->obj, "apiVersion")), kind, err);
}

int model_doc_is(const struct model_doc *d, enum model_kind k)
{
    enum model_kind kind;
    return model_doc_kind(d, &kind, NULL) == 0 && kind == k;
}

void model_manifest_free(struct model_manifest *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        json_decref(m->docs[i].obj);
        json_decref(m->docs[i].pos);
    }
    free(m->docs);
    m->docs = NULL;
    m->n = 0;
    m->validated = m->fields_checked = 0;
}
