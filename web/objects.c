/* objects.c - reads, lists and deletes shared by the per-resource handlers. */
#include <stdlib.h>

#include "access.h"
#include "alloc.h"
#include "clock.h"
#include "http.h"
#include "lists.h"
#include "model.h"
#include "scheduler.h"
#include "store.h"

char *api__ns_key(struct req *r)
{
    return xasprintf("%s/%s", r->params[0], r->params[1]);
}

json_t *api__object_or_reply(struct req *r, enum model_kind kind, const char *key)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = NULL;
    json_t *obj = NULL;

    if (store_txn_begin(r->api->st, STORE_READ, &txn, &err) == 0)
        store_get(txn, kind, key, &obj, &err);
    store_txn_abort(&txn);
    if (!obj)
        api__reply_error(r, &err);
    return obj;
}

struct list_ctx {
    struct api_list out;
    struct api_page page;
    api__keep_fn keep;
    void *ctx;
};

static int collect(void *ctx, const char *key, json_t *obj)
{
    struct list_ctx *l = ctx;

    if (l->keep && !l->keep(obj, l->ctx))
        return 0;
    if (!api__page_take(&l->page, key))
        return 1; /* the page is full and another item exists: stop */
    api__list_item(&l->out, obj);
    return 0;
}

/* A whole list (no limit, no continue) of a kind with LIST_PAR_MIN objects or more is read
 * by store_each_par: parsing each stored object, applying a pod's binding, the filter and
 * the encoding run on every core, and the texts join the list in key order on this thread.
 * A list of 50,000 pods took 0.50-0.55 s on one thread, most of it those parts
 * (bench/list.sh). A page stays on store_each_after, which seeks to where it starts and
 * stops where it is full. */
static void *item_text(void *ctx, const char *key, json_t *obj)
{
    struct list_ctx *l = ctx;
    struct store_jw *w = xcalloc(1, sizeof(*w)); /* empty: the filter dropped obj */
    (void)key;
    if (!l->keep || l->keep(obj, l->ctx))
        store_jw_value(w, obj, 0);
    return w;
}

static int item_add(void *ctx, const char *key, void *res)
{
    struct list_ctx *l = ctx;
    struct store_jw *w = res;
    if (key && w->len) /* a whole list: no page to count */
        api__list_text(&l->out, w->buf, w->len);
    store_jw_release(w);
    free(w);
    return 0;
}

static const struct store_par_fns item_fns = {.decode = item_text, .consume = item_add};

/* Kinds with fewer objects are listed by store_each_after: store_each_par starts no thread
 * below its first chunk (2,048 objects), and sets up more than a small list costs. */
#define LIST_PAR_MIN 2048

void api__object_list(struct req *r, enum model_kind kind, const char *prefix, api__keep_fn keep,
                      void *ctx)
{
    struct err err = ERR_INIT;
    struct list_ctx l = {.keep = keep, .ctx = ctx};
    MDB_txn *txn = NULL;
    int rc;

    if (api__page_or_reply(r, model_kind_name(kind), &l.page) < 0)
        goto out;
    char *list_kind = xasprintf("%sList", model_kind_name(kind));
    api__list_begin(&l.out, r, model_kind_api_version(kind), list_kind);
    free(list_kind);
    /* encoded as read, sent after the transaction ends (list.c) */
    rc = store_txn_begin(r->api->st, STORE_READ, &txn, &err);
    uint64_t count = 0;
    if (rc == 0 && !l.page.limit && !l.page.after)
        rc = store_count(txn, kind, &count, &err);
    if (rc == 0 && count >= LIST_PAR_MIN)
        rc = store_each_par(txn, kind, prefix, 0, &item_fns, &l, &err);
    else if (rc == 0)
        rc = store_each_after(txn, kind, prefix, l.page.after, collect, &l, &err);
    store_txn_abort(&txn);
    if (rc < 0)
        api__list_fail(&l.out, &err);
    else
        api__list_end(&l.out, l.page.on ? api__page_meta(&l.page) : NULL);
out:
    api__page_release(&l.page);
}

void api__object_delete(struct req *r, enum model_kind kind, const char *key)
{
    struct err err = ERR_INIT;
    struct sched_caller by = api__caller(r);

    if (sched_delete_by(r->api->sched, kind, key, clock_now_ms(), &by, &err) < 0) {
        api__reply_error(r, &err);
        return;
    }
    api__changed(r->api);
    api__reply_json(r, 200,
                    json_pack("{s:s, s:s, s:s}", "kind", model_kind_name(kind), "name", key,
                              "action", "deleted"));
}
