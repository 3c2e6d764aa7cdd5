/*
 * meta.c - the store's metadata database: named values (the schema version, the audit
 * chain's head and base, counters such as the resourceVersion). Calls only the key-value
 * calls of dry.c.
 */
#include "internal.h"

#include <string.h>

#include "err.h"

int store__meta_get(MDB_txn *txn, const char *name, MDB_val *val, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_val k = {strlen(name), (void *)name};
    int rc = store__get(txn, st->dbi[DBI_META], &k, val);

    if (rc == MDB_NOTFOUND)
        return err_set(err, ERR_NOT_FOUND, "metadata '%s' not found", name);
    return rc ? store__mdb_err(st, rc, err, "cannot read metadata") : 0;
}

int store__meta_put(MDB_txn *txn, const char *name, const void *data, size_t len, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_val k = {strlen(name), (void *)name}, v = {len, (void *)data};
    int rc = store__put(txn, st->dbi[DBI_META], &k, &v, 0);

    if (rc) {
        rc = store__mdb_err(st, rc, err, "cannot write");
        err_prefix(err, "metadata '%s'", name);
    }
    return rc;
}

int store_meta_get_u64(MDB_txn *txn, const char *name, uint64_t *out, struct err *err)
{
    MDB_val v;
    int rc = store__meta_get(txn, name, &v, NULL);

    *out = 0;
    if (rc == ERR_NOT_FOUND)
        return 0;
    if (rc < 0)
        return store__meta_get(txn, name, &v, err);
    if (v.mv_size != 8)
        return err_set(err, ERR_STORE, "metadata '%s' is not a counter (%zu bytes)", name,
                       v.mv_size);
    *out = store__be64_get(v.mv_data);
    return 0;
}

int store_meta_put_u64(MDB_txn *txn, const char *name, uint64_t value, struct err *err)
{
    unsigned char buf[8];

    store__be64_put(buf, value);
    return store__meta_put(txn, name, buf, sizeof(buf), err);
}
