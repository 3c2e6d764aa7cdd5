/* nodes.c - GET /api/v1/nodes[/{name}] with usage and pods, DELETE /api/v1/nodes/{name}. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

struct node_ctx {
    MDB_txn *txn;
    json_t *pods;      /* keys of the pods bound to the node */
    json_t *requested; /* resource -> integer (thousandths for cpu) */
    struct err *err;
};

static void add_value(json_t *sum, const char *name, int64_t v)
{
    json_t *cur = json_object_get(sum, name);
    json_object_set_new(sum, name, json_integer((cur ? json_integer_value(cur) : 0) + v));
}

static int add_pod(void *ctx, const char *key)
{
    struct node_ctx *n = ctx;
    struct model_pod pod;
    json_t *obj = NULL;

    if (store_get(n->txn, MODEL_POD, key, &obj, n->err) < 0)
        return 0; /* the index and the object disagree only if the store is broken: skip */
    json_array_append_new(n->pods, json_string(key));
    if (model_pod_decode(obj, &pod, n->err) == 0) {
        /* terminal pods hold no resources, as in Kubernetes */
        if (!model_pod_terminal(&pod)) {
            /* the model counts the pod itself as a request of one "pods" */
            for (size_t i = 0; i < pod.nrequests; i++)
                add_value(n->requested, pod.requests[i].name, pod.requests[i].value);
        }
        model_pod_release(&pod);
    }
    json_decref(obj);
    return 0;
}

static json_t *format_all(json_t *values)
{
    json_t *out = json_object();
    const char *name;
    json_t *v;
    char buf[64];

    json_object_foreach(values, name, v)
    {
        model_quantity_format(json_integer_value(v), model_resource_is_milli(name), buf,
                              sizeof(buf));
        json_object_set_new(out, name, json_string(buf));
    }
    return out;
}

/* Adds "usage" and "pods" to a node object (modified in place). */
static int enrich(MDB_txn *txn, json_t *obj, struct err *err)
{
    struct node_ctx n = {txn, json_array(), json_object(), err};
    json_t *alloc = json_object(), *free_ = json_object();
    struct model_node node;
    const char *name;
    json_t *v;
    int rc;

    rc = model_node_decode(obj, &node, err);
    if (rc == 0) {
        for (size_t i = 0; i < node.nallocatable; i++)
            add_value(alloc, node.allocatable[i].name, node.allocatable[i].value);
        rc = store_pods_on_node(txn, node.name, add_pod, &n, err);
        model_node_release(&node);
    }
    json_object_foreach(alloc, name, v)
    {
        json_t *req = json_object_get(n.requested, name);
        int64_t left = json_integer_value(v) - (req ? json_integer_value(req) : 0);
        json_object_set_new(free_, name, json_integer(left > 0 ? left : 0));
    }
    json_object_set_new(obj, "usage",
                        json_pack("{s:o, s:o, s:o}", "allocatable", format_all(alloc), "requested",
                                  format_all(n.requested), "free", format_all(free_)));
    json_object_set_new(obj, "pods", n.pods);
    json_decref(alloc);
    json_decref(free_);
    json_decref(n.requested);
    return rc;
}

struct list_ctx {
    MDB_txn *txn;
    json_t *items;
    struct err *err;
};

static int collect(void *ctx, const char *key, json_t *obj)
{
    struct list_ctx *l = ctx;
    json_t *copy = json_deep_copy(obj);

    json_array_append_new(l->items, copy);
    return enrich(l->txn, copy, l->err);
}

void api__nodes_list(struct req *r)
{
    struct err err = ERR_INIT;
    struct list_ctx l = {NULL, json_array(), &err};
    int rc;

    rc = store_txn_begin(r->api->st, STORE_READ, &l.txn, &err);
    if (rc == 0)
        rc = store_each(l.txn, MODEL_NODE, NULL, collect, &l, &err);
    store_txn_abort(&l.txn);
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
    MDB_txn *txn = NULL;
    json_t *obj = NULL;
    int rc;

    rc = store_txn_begin(r->api->st, STORE_READ, &txn, &err);
    if (rc == 0)
        rc = store_get(txn, MODEL_NODE, r->params[0], &obj, &err);
    if (rc == 0)
        rc = enrich(txn, obj, &err);
    store_txn_abort(&txn);
    if (rc < 0) {
        json_decref(obj);
        api__reply_error(r, &err);
        return;
    }
    api__reply_json(r, 200, obj);
}

void api__node_delete(struct req *r)
{
    api__object_delete(r, MODEL_NODE, r->params[0]);
}
