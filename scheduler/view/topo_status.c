/*
 * topo_status.c - keeps status.detailStatus of the stored ClusterNetworkTopology
 * 'default' equal to the domain tree of the stored nodes.
 *
 * Called inside the write transaction that changed nodes or the topology (apply,
 * delete), after the change, so the status is never behind what a reader sees.
 * It reads the nodes from the transaction, not from the view, because the view
 * takes the change only after the commit.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "store.h"
#include "topo.h"

struct nodes_ctx {
    struct model_node *v;
    size_t n, cap;
};

static int collect_node(void *ctx, const char *key, json_t *obj)
{
    struct nodes_ctx *c = ctx;
    struct err e = ERR_INIT;
    (void)key;
    XGROW(c->v, c->n + 1, c->cap);
    memset(&c->v[c->n], 0, sizeof(c->v[c->n]));
    /* A stored node that no longer decodes is left out, as the view leaves it out. */
    if (model_node_decode(obj, &c->v[c->n], &e) == 0)
        c->n++;
    return 0;
}

int sched__topo_status_sync(MDB_txn *txn, struct err *err)
{
    json_t *cnt = NULL, *detail = NULL;
    struct model_topology m = {0};
    struct nodes_ctx nodes = {0};
    int rc = store_get(txn, MODEL_TOPOLOGY, "default", &cnt, err);
    if (rc == ERR_NOT_FOUND) {
        err_clear(err);
        rc = 0;
        goto out;
    }
    if (rc < 0)
        goto out;
    if (model_topology_decode(cnt, &m, err) < 0) {
        err_clear(err); /* the view skips it too */
        goto out;
    }
    if ((rc = store_each(txn, MODEL_NODE, NULL, collect_node, &nodes, err)) < 0)
        goto out;
    detail = sched__topo_detail(&m, nodes.v, nodes.n);
    json_t *status = json_object_get(cnt, "status");
    if (json_equal(json_object_get(status, "detailStatus"), detail))
        goto out;
    if (!json_is_object(status)) {
        status = json_object();
        json_object_set_new(cnt, "status", status);
    }
    json_object_set(status, "detailStatus", detail);
    rc = store_put(txn, MODEL_TOPOLOGY, cnt, NULL, err);
out:
    for (size_t i = 0; i < nodes.n; i++)
        model_node_release(&nodes.v[i]);
    free(nodes.v);
    model_topology_release(&m);
    json_decref(detail);
    json_decref(cnt);
    return rc;
}
