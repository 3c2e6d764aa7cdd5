/*
 * pod_bind.c - bindings written cheaply: a pod's binding kept in its own small record.
 *
 * Binding a pending pod used to read its stored JSON, decode it, set spec.nodeName, the
 * phase, the PodScheduled condition, drop the nomination and dump it all again, so its
 * cost grew with the pod's size. store_pod_bind writes instead one record of a few bytes
 * in DBI_POD_BIND ("<node>\0<ts>") and adds the pod to the node index (the pending index
 * keeps it: it lists pods whose stored JSON is pending, and a binding record says the pod
 * is bound; a delete from it per binding was 4% of a cycle); every read of a pod
 * (store_get, store_each, store_delete's and store_put's old value) applies it with
 * model_pod_set_bound, the very edit the cycle made before, so readers see the same
 * document, byte for byte. Any full write of the pod (store_put, store_replace) carries
 * the merged fields and drops the record; store_delete drops it with the pod. The record
 * exists only for a bound pod, so a pod in the pending index never has one.
 */
#include "internal.h"

#include <string.h>

#include "err.h"

/* The slow way, for a pod that is not pending: read it whole, bind it, write it whole. */
static int bind_whole(MDB_txn *txn, const char *key, const char *node, const char *ts,
                      struct err *err)
{
    json_t *pod = NULL;
    int rc = store_get(txn, MODEL_POD, key, &pod, err);
    if (rc < 0)
        return rc;
    model_pod_set_bound(pod, node, ts);
    rc = store_put(txn, MODEL_POD, pod, NULL, err);
    json_decref(pod);
    return rc;
}

int store_pod_bind(MDB_txn *txn, const char *key, const char *node, const char *ts, struct err *err)
{
    struct store *st = store__of(txn);
    size_t nlen = strlen(node), tlen = strlen(ts);
    MDB_val k = {strlen(key), (void *)key}, v;
    char buf[512];
    int rc;

    if (!nlen || nlen + tlen + 2 > sizeof(buf))
        return err_set(err, ERR_INVALID, "cannot bind pod '%s' to node '%s'", key, node);
    rc = store__index_listed(txn, key, err); /* its stored JSON is pending */
    if (rc == ERR_NOT_FOUND) /* bound, deleting or past Pending: rare, done in full */
        return bind_whole(txn, key, node, ts, err);
    if (rc < 0)
        return rc;
    memcpy(buf, node, nlen + 1);
    memcpy(buf + nlen + 1, ts, tlen + 1);
    v = (MDB_val){nlen + tlen + 2, buf};
    rc = store__put(txn, st->dbi[DBI_POD_BIND], &k, &v, MDB_NOOVERWRITE);
    if (rc == MDB_KEYEXIST) /* bound already, by its record: done in full */
        return bind_whole(txn, key, node, ts, err);
    if (rc) {
        rc = store__mdb_err(st, rc, err, "cannot write a binding");
        return err_prefix(err, "pod '%s'", key);
    }
    if ((rc = store__history_add(txn, MODEL_POD, key, 'B', buf, nlen + tlen + 2, err)) < 0)
        return rc;
    return store__index_bind(txn, key, node, err);
}
