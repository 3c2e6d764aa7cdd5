/*
 * pod_overlay.c - reading a pod's binding record (pod_bind.c says why bindings are kept
 * apart): applied to the pod on every read, dropped when the pod is written whole or
 * deleted. Below the object and document readers that apply it; calls only base.c.
 */
#include "internal.h"

#include <string.h>

#include "err.h"

int store__pod_overlay_read(const char *key, const void *rec, size_t len, const char **node,
                            const char **ts, struct err *err)
{
    const char *end = (const char *)rec + len;
    const char *nul = len ? memchr(rec, '\0', len) : NULL;
    if (!nul || nul == rec || end[-1] != '\0')
        return err_set(err, ERR_STORE, "corrupt binding of pod '%s'", key);
    *node = rec;
    *ts = nul + 1;
    return 0;
}

int store__pod_overlay_apply(const char *key, json_t *pod, const void *rec, size_t len,
                             struct err *err)
{
    const char *node = NULL, *ts = NULL;
    int rc = store__pod_overlay_read(key, rec, len, &node, &ts, err);
    if (rc == 0)
        model_pod_set_bound(pod, node, ts);
    return rc;
}

int store__pod_overlay(MDB_txn *txn, const char *key, json_t *pod, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_val k = {strlen(key), (void *)key}, v;
    int rc = store__get(txn, st->dbi[DBI_POD_BIND], &k, &v);
    if (rc == MDB_NOTFOUND)
        return 0;
    if (rc)
        return store__mdb_err(st, rc, err, "cannot read a binding");
    return store__pod_overlay_apply(key, pod, v.mv_data, v.mv_size, err);
}

int store__pod_overlay_drop(MDB_txn *txn, const char *key, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_val k = {strlen(key), (void *)key};
    int rc = store__del(txn, st->dbi[DBI_POD_BIND], &k, NULL);
    if (rc == MDB_NOTFOUND)
        return 0;
    return rc ? store__mdb_err(st, rc, err, "cannot drop a binding") : 1;
}
