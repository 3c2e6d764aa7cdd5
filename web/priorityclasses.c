/*
 * priorityclasses.c - GET /api/v1/priorityclasses[/{name}] and DELETE by name.
 *
 * The built-in classes (system-cluster-critical, system-node-critical) always exist:
 * served from model's table when not stored (a mirrored API server stores them), and
 * never deleted (409, from sched_delete).
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "handlers.h"
#include "http.h"
#include "lists.h"
#include "model.h"
#include "store.h"

static const char *name_of(json_t *obj)
{
    const char *n = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
    return n ? n : "";
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(name_of(*(json_t *const *)a), name_of(*(json_t *const *)b));
}

struct list_ctx {
    json_t **items;
    size_t n, cap;
};

static int collect(void *ctx, const char *key, json_t *obj)
{
    struct list_ctx *l = ctx;
    (void)key;
    XGROW(l->items, l->n + 1, l->cap);
    l->items[l->n++] = json_incref(obj);
    return 0;
}

void api__priorityclasses_list(struct req *r)
{
    struct err err = ERR_INIT;
    struct list_ctx l = {0};
    MDB_txn *txn = NULL;
    int rc = store_txn_begin(r->api->st, STORE_READ, &txn, &err);
    if (rc == 0)
        rc = store_each(txn, MODEL_PRIORITYCLASS, NULL, collect, &l, &err);
    store_txn_abort(&txn);
    size_t stored = l.n;
    json_t *b;
    for (size_t i = 0; rc == 0 && (b = model_priorityclass_builtin_json(i)) != NULL; i++) {
        int have = 0;
        for (size_t k = 0; k < stored && !have; k++)
            have = !strcmp(name_of(l.items[k]), name_of(b));
        if (!have)
            collect(&l, NULL, b);
        json_decref(b);
    }
    qsort(l.items, l.n, sizeof(*l.items), cmp_name);
    json_t *items = json_array();
    for (size_t i = 0; i < l.n; i++)
        json_array_append_new(items, l.items[i]);
    free(l.items);
    if (rc < 0) {
        json_decref(items);
        api__reply_error(r, &err);
        return;
    }
    api__reply_json(r, 200,
                    json_pack("{s:s, s:s, s:o}", "apiVersion",
                              model_kind_api_version(MODEL_PRIORITYCLASS), "kind",
                              "PriorityClassList", "items", items));
}

void api__priorityclass_get(struct req *r)
{
    const char *name = r->params[0];
    if (model_priorityclass_builtin(name)) {
        struct err err = ERR_INIT;
        MDB_txn *txn = NULL;
        json_t *obj = NULL;
        if (store_txn_begin(r->api->st, STORE_READ, &txn, &err) == 0)
            store_get(txn, MODEL_PRIORITYCLASS, name, &obj, &err);
        store_txn_abort(&txn);
        for (size_t i = 0; !obj && (obj = model_priorityclass_builtin_json(i)) != NULL; i++)
            if (strcmp(name_of(obj), name) != 0) {
                json_decref(obj);
                obj = NULL;
            }
        api__reply_json(r, 200, obj);
        return;
    }
    json_t *obj = api__object_or_reply(r, MODEL_PRIORITYCLASS, name);
    if (obj)
        api__reply_json(r, 200, obj);
}

void api__priorityclass_delete(struct req *r)
{
    api__object_delete(r, MODEL_PRIORITYCLASS, r->params[0]);
}
