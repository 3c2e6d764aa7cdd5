/* nodes.c - GET /api/v1/nodes[/{name}]: the stored nodes with the scheduler's usage and
 * pods (sched_node_usage), DELETE /api/v1/nodes/{name}, GET /api/v1/nodemap (every node's
 * numbers and marks at once, from the view only: the UI's cluster map).
 *
 * The usage of a whole list is read first, the stored nodes after (a snapshot): a node
 * created in between has no usage yet and is left out, one deleted in between is not in
 * the snapshot. A page reads its nodes first and each one's usage after: a node deleted in
 * between is left out (404 for a single node). */
#include "cached_reads.h"
#include "handlers.h"
#include "http.h"
#include "lists.h"
#include "model.h"
#include "scheduler.h"
#include "store.h"

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
    struct api_page page;
    json_t *nodes; /* the page's stored nodes */
};

static int collect(void *ctx, const char *key, json_t *obj)
{
    struct list_ctx *l = ctx;

    if (!api__page_take(&l->page, key))
        return 1; /* the page is full and another node exists */
    json_array_append(l->nodes, obj);
    return 0;
}

/* The usage is read with no read transaction open (store.h: a reader must not wait for
 * the scheduler's lock inside one); a whole list asks for every node's usage at once, a
 * page for its own nodes' only. */
void api__nodes_list(struct req *r)
{
    struct err err = ERR_INIT;
    struct list_ctx l = {.nodes = json_array()};
    struct api_list out;
    json_t *usage = NULL, *node;
    MDB_txn *txn = NULL;
    size_t i;
    int rc;

    if (api__page_or_reply(r, "Node", &l.page) < 0)
        goto out;
    rc = l.page.limit ? 0 : sched_nodes_usage(r->api->sched, &usage, &err);
    if (rc == 0)
        rc = store_txn_begin(r->api->st, STORE_READ, &txn, &err);
    if (rc == 0)
        rc = store_each_after(txn, MODEL_NODE, NULL, l.page.after, collect, &l, &err);
    store_txn_abort(&txn);
    if (rc < 0) {
        api__reply_error(r, &err);
        goto out;
    }
    api__list_begin(&out, r, "v1", "NodeList");
    json_array_foreach(l.nodes, i, node)
    {
        const char *name =
            json_string_value(json_object_get(json_object_get(node, "metadata"), "name"));
        json_t *u = usage ? json_incref(json_object_get(usage, name)) : NULL;
        if (!usage && sched_node_usage(r->api->sched, name, &u, &err) < 0)
            err_clear(&err); /* deleted meanwhile: left out */
        if (!u)
            continue;
        merge_usage(node, u);
        json_decref(u);
        api__list_item(&out, node);
    }
    api__list_end(&out, l.page.on ? api__page_meta(&l.page) : NULL);
out:
    json_decref(usage);
    json_decref(l.nodes);
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

/* A cached read (reads.c): gzipped once per state, and a poll with resourceVersion=0 gets
 * the answer made last without waiting for a cycle. */
void api__nodemap(struct req *r)
{
    struct api_read q = {.kind = API_READ_NODEMAP};
    api__read_reply(r, &q);
}
