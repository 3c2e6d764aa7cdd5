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
    json_t *items;
    json_t *usage; /* node name -> usage */
};

static int collect(void *ctx, const char *key, json_t *obj)
{
    struct list_ctx *l = ctx;
    json_t *u = json_object_get(l->usage, key);

    if (u) {
        merge_usage(obj, u);
        json_array_append(l->items, obj);
    }
    return 0;
}

void api__nodes_list(struct req *r)
{
    struct err err = ERR_INIT;
    struct list_ctx l = {json_array(), NULL};
    MDB_txn *txn = NULL;
    int rc;

    rc = store_txn_begin(r->api->st, STORE_READ, &txn, &err);
    if (rc == 0)
        rc = sched_nodes_usage(r->api->sched, &l.usage, &err);
    if (rc == 0)
        rc = store_each(txn, MODEL_NODE, NULL, collect, &l, &err);
    store_txn_abort(&txn);
    json_decref(l.usage);
    if (rc < 0) {
        json_decref(l.items);
        api__reply_error(r, &err);
        return;
    }
    api__reply_json(
        r, 200,
        json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "NodeList", "items", l.items));
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
