/* nodes.c - GET /api/v1/nodes[/{name}]: the stored nodes with the scheduler's usage and
 * pods (sched_node_usage), DELETE /api/v1/nodes/{name}.
 *
 * The stored nodes are read first (a snapshot), the usage after: a node deleted in
 * between has no usage any more and is left out of the list (404 for a single node), one
 * created in between is not in the snapshot. */
#include "internal.h"

/* Adds "usage" {allocatable, requested, free} and "pods" of u (a sched_node_usage
 * document, borrowed) to node. */
static void merge_usage(json_t *node, json_t *u)
{
    json_object_set_new(
        node, "usage",
        json_pack("{s:O, s:O, s:O}", "allocatable", json_object_get(u, "allocatable"), "requested",
                  json_object_get(u, "requested"), "free", json_object_get(u, "free")));
    json_object_set(node, "pods", json_object_get(u, "pods"));
}

struct list_ctx {
    struct sched *sched;
    struct api_list out;
    struct api_page page;
    json_t *usage; /* node name -> usage; NULL when paged: each node's own */
    struct err *err;
};

static int collect(void *ctx, const char *key, json_t *obj)
{
    struct list_ctx *l = ctx;
    json_t *u = l->usage ? json_incref(json_object_get(l->usage, key)) : NULL;

    /* a page asks for its own nodes' usage only, not the whole cluster's */
    if (!l->usage && sched_node_usage(l->sched, key, &u, l->err) < 0) {
        if (l->err->code != ERR_NOT_FOUND)
            return l->err->code;
        err_clear(l->err);
    }
    int rc = 0;
    if (u && !api__page_take(&l->page, key))
        rc = 1; /* the page is full and another node exists */
    else if (u) {
        merge_usage(obj, u);
        rc = api__list_item(&l->out, obj) < 0 ? 1 : 0;
    }
    json_decref(u);
    return rc;
}

void api__nodes_list(struct req *r)
{
    struct err err = ERR_INIT;
    struct list_ctx l = {.sched = r->api->sched, .err = &err};
    MDB_txn *txn = NULL;
    int rc;

    if (api__page_or_reply(r, "Node", &l.page) < 0)
        goto out;
    api__list_begin(&l.out, r, "v1", "NodeList");
    rc = store_txn_begin(r->api->st, STORE_READ, &txn, &err);
    if (rc == 0 && !l.page.limit)
        rc = sched_nodes_usage(r->api->sched, &l.usage, &err);
    if (rc == 0)
        rc = store_each_after(txn, MODEL_NODE, NULL, l.page.after, collect, &l, &err);
    store_txn_abort(&txn);
    json_decref(l.usage);
    if (rc < 0)
        api__list_fail(&l.out, &err);
    else
        api__list_end(&l.out, l.page.on ? api__page_meta(&l.page) : NULL);
out:
    api__page_release(&l.page);
}

void api__node_get(struct req *r)
{
    struct err err = ERR_INIT;
    json_t *usage = NULL;
    json_t *obj = api__object_or_reply(r, MODEL_NODE, r->params[0]);

    if (!obj)
        return;
    if (sched_node_usage(r->api->sched, r->params[0], &usage, &err) < 0) {
        json_decref(obj);
        api__reply_error(r, &err);
        return;
    }
    merge_usage(obj, usage);
    json_decref(usage);
    api__reply_json(r, 200, obj);
}

void api__node_delete(struct req *r)
{
    api__object_delete(r, MODEL_NODE, r->params[0]);
}
