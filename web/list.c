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

#include "http.h"
#include "lists.h"

#define LIST_CHUNK ((size_t)64 << 10)

/* Sends the answer as a chunked body, LIST_CHUNK bytes at a time. */
static void send_chunked(struct api_list *l)
{
    api__stream_start(l->r, 200, "application/json");
    for (size_t at = 0; at < l->w.len;) {
        size_t n = l->w.len - at < LIST_CHUNK ? l->w.len - at : LIST_CHUNK;
        if (api__stream_chunk(l->r, l->w.buf + at, n) < 0)
            return; /* the client went away */
        at += n;
    }
    api__stream_end(l->r);
}

void api__list_begin(struct api_list *l, struct req *r, const char *api_version, const char *kind)
{
    *l = (struct api_list){.r = r};
    store_jw_lit(&l->w, "{");
    if (api_version) {
        store_jw_key(&l->w, "apiVersion");
        store_jw_str(&l->w, api_version);
    }
    store_jw_key(&l->w, "kind");
    store_jw_str(&l->w, kind);
    store_jw_lit(&l->w, ",\"items\":[");
}

/* The items are written by the store's writer, jansson's compact text byte for byte: with
 * json_dumps a list of 50,000 pods spent two thirds of its time in printf. */
int api__list_item(struct api_list *l, json_t *item)
{
    if (l->n++)
        store_jw_lit(&l->w, ",");
    store_jw_value(&l->w, item, 0);
    return 0;
}

void api__list_text(struct api_list *l, const char *text, size_t len)
{
    if (l->n++)
        store_jw_lit(&l->w, ",");
    store_jw_raw(&l->w, text, len);
}

void api__list_end(struct api_list *l, json_t *metadata)
{
    store_jw_lit(&l->w, "]");
    if (metadata) {
        store_jw_key(&l->w, "metadata");
        store_jw_value(&l->w, metadata, 0);
        json_decref(metadata);
    }
    store_jw_lit(&l->w, "}\n");
    if (l->w.len <= LIST_CHUNK) /* one piece: an ordinary reply with a Content-Length */
        api__reply_raw(l->r, 200, "application/json", l->w.buf, l->w.len, NULL);
    else
        send_chunked(l);
    store_jw_release(&l->w);
    *l = (struct api_list){0};
}

void api__list_fail(struct api_list *l, const struct err *err)
{
    api__reply_error(l->r, err);
    store_jw_release(&l->w);
    *l = (struct api_list){0};
}
