/*
 * list.c - writing a list answer {"apiVersion", "kind", "items": [...], "metadata"?} item by
 * item: each item is encoded once into a buffer that goes out as a chunk whenever it holds
 * LIST_CHUNK bytes, so a big list is never built as one document. Until the first chunk
 * leaves, a failure is still an ordinary error reply; after it, the connection is closed
 * without the final chunk, so the client sees a truncated transfer, never a short list.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

#define LIST_CHUNK ((size_t)64 << 10)

static void put(struct api_list *l, const char *s, size_t n)
{
    XGROW(l->buf, l->len + n + 1, l->cap);
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void flush(struct api_list *l)
{
    if (l->gone || !l->len)
        return;
    if (!l->started) {
        api__stream_start(l->r, 200, "application/json");
        l->started = 1;
    }
    if (api__stream_chunk(l->r, l->buf, l->len) < 0)
        l->gone = 1;
    l->len = 0;
}

void api__list_begin(struct api_list *l, struct req *r, const char *api_version, const char *kind)
{
    *l = (struct api_list){.r = r};
    json_t *head = json_pack("{s:s?,s:s}", "apiVersion", api_version, "kind", kind);
    char *text = json_dumps(head, JSON_COMPACT);
    /* '{"apiVersion":..,"kind":..}' without its closing brace, then the items */
    put(l, text, strlen(text) - 1);
    put(l, ",\"items\":[", 10);
    free(text);
    json_decref(head);
}

int api__list_item(struct api_list *l, json_t *item)
{
    char *text = json_dumps(item, JSON_COMPACT);
    if (l->n++)
        put(l, ",", 1);
    put(l, text, strlen(text));
    free(text);
    if (l->len >= LIST_CHUNK)
        flush(l);
    return l->gone ? -1 : 0;
}

void api__list_end(struct api_list *l, json_t *metadata)
{
    put(l, "]", 1);
    if (metadata) {
        char *text = json_dumps(metadata, JSON_COMPACT);
        put(l, ",\"metadata\":", 12);
        put(l, text, strlen(text));
        free(text);
        json_decref(metadata);
    }
    put(l, "}\n", 2);
    if (!l->started) {
        /* small enough for one piece: an ordinary reply with a Content-Length */
        api__reply_raw(l->r, 200, "application/json", l->buf, l->len, NULL);
    } else {
        flush(l);
        if (!l->gone)
            api__stream_end(l->r);
    }
    free(l->buf);
    *l = (struct api_list){0};
}

void api__list_fail(struct api_list *l, const struct err *err)
{
    if (!l->started)
        api__reply_error(l->r, err);
    else
        api__force_close(l->r->conn);
    free(l->buf);
    *l = (struct api_list){0};
}
