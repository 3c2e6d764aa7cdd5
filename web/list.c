/*
 * list.c - writing a list answer {"apiVersion", "kind", "items": [...], "metadata"?} item by
 * item: each item is encoded once, as it is read, into one text buffer (never a JSON tree
 * of the whole list), which goes out after the store's read transaction has ended, in
 * chunks of LIST_CHUNK bytes when it is bigger. Not sent while the transaction is open: a
 * client reading slowly would keep it open, and growing the map waits for every read
 * transaction to end, under the scheduler's lock (store.h).
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "http.h"
#include "lists.h"

#define LIST_CHUNK ((size_t)64 << 10)

static void put(struct api_list *l, const char *s, size_t n)
{
    XGROW(l->buf, l->len + n + 1, l->cap);
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

/* Sends the buffer as a chunked body, LIST_CHUNK bytes at a time. */
static void send_chunked(struct api_list *l)
{
    api__stream_start(l->r, 200, "application/json");
    for (size_t at = 0; at < l->len;) {
        size_t n = l->len - at < LIST_CHUNK ? l->len - at : LIST_CHUNK;
        if (api__stream_chunk(l->r, l->buf + at, n) < 0)
            return; /* the client went away */
        at += n;
    }
    api__stream_end(l->r);
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
    return 0;
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
    if (l->len <= LIST_CHUNK) /* one piece: an ordinary reply with a Content-Length */
        api__reply_raw(l->r, 200, "application/json", l->buf, l->len, NULL);
    else
        send_chunked(l);
    free(l->buf);
    *l = (struct api_list){0};
}

void api__list_fail(struct api_list *l, const struct err *err)
{
    api__reply_error(l->r, err);
    free(l->buf);
    *l = (struct api_list){0};
}
