/*
 * lists.h - what the resource handlers share for stored objects: a list answer encoded
 * item by item (list.c), Kubernetes pagination with ?limit= and ?continue= (page.c), and
 * generic reads, lists and deletes of one kind (objects.c, which uses both). They read the
 * store in short read transactions and change state only through the scheduler; they
 * reply through http.h.
 */
#ifndef MUSTER_WEB_LISTS_H
#define MUSTER_WEB_LISTS_H

#include <jansson.h>
#include <stddef.h>

#include "api_impl.h"
#include "err.h"
#include "model.h"
#include "store.h"

/* ---- list.c: a list answer encoded item by item, sent chunked when big ---- */
struct api_list {
    struct req *r;
    struct store_jw w; /* the answer so far */
    size_t n;          /* items written */
};
/* Calling sequence: begin, any number of items (inside a read transaction if need be:
 * nothing is sent before end), then end (after the transaction) or fail. */
void api__list_begin(struct api_list *l, struct req *r, const char *api_version, const char *kind);
/* Encodes item (borrowed) into the list. Returns 0. */
int api__list_item(struct api_list *l, json_t *item);
/* Adds an item already encoded (text, len bytes: jansson's compact text of it). */
void api__list_text(struct api_list *l, const char *text, size_t len);
/* Closes the list, with "metadata" (stolen, may be NULL), and sends it: with a
 * Content-Length up to 64 KiB, chunked above. */
void api__list_end(struct api_list *l, json_t *metadata);
/* Replies err instead of the list. */
void api__list_fail(struct api_list *l, const struct err *err);

/* ---- page.c: ?limit= and ?continue= on lists (Kubernetes pagination) ---- */
#define API_PAGE_MAX 10000 /* the largest limit */
struct api_page {
    const char *list; /* the list the tokens belong to ("pods"), borrowed */
    size_t limit;     /* 0: no limit */
    char *after;      /* the page starts after this key (new), NULL: at the first */
    int on;           /* limit or continue was given: the answer carries "metadata" */
    size_t n;         /* items taken */
    char *last;       /* the key of the last item taken (new) */
    int more;         /* an item was offered past the limit */
};
/* Reads limit and continue into *p: 0, or replies 400 naming the parameter (a limit that
 * is not 1..API_PAGE_MAX, a token that does not decode or is another list's) and returns
 * -1. Release *p with api__page_release either way. */
int api__page_or_reply(struct req *r, const char *list, struct api_page *p);
/* Offers the next item (keys strictly ascending, all after p->after): 1 to put it on the
 * page, 0 when the page is full (p->more is then set; offer nothing more). */
int api__page_take(struct api_page *p, const char *key);
/* {"continue": token} when p->more, else {} (new). */
json_t *api__page_meta(const struct api_page *p);
/* The continue token for the page of list that ends at last_key (new). */
char *api__page_token(const char *list, const char *last_key);
void api__page_release(struct api_page *p);

/* ---- objects.c: generic reads and deletes ---- */
/* The stored object (new), or replies 404 and returns NULL. */
json_t *api__object_or_reply(struct req *r, enum model_kind kind, const char *key);
/* Lists objects of kind with keys starting with prefix (NULL: all) into {"kind": "<Kind>List",
 * "items": [...]}, a page of them with ?limit= / ?continue= (page.c), written item by item
 * (list.c); keep (may be NULL) filters items: 1 keeps. Replies. */
typedef int (*api__keep_fn)(json_t *obj, void *ctx);
void api__object_list(struct req *r, enum model_kind kind, const char *prefix, api__keep_fn keep,
                      void *ctx);
/* Deletes through the scheduler and replies {"kind", "name", "action": "deleted"}. */
void api__object_delete(struct req *r, enum model_kind kind, const char *key);
/* "ns/name" from the first two path parameters (new). */
char *api__ns_key(struct req *r);

#endif
