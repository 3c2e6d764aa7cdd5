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
    if (rc == 0)
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
