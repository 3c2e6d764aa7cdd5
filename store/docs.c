/*
 * docs.c - iteration over a JSON database (pods with their bindings applied), the
 * generic document databases and the metadata counters. The helpers below it (the
 * store of a txn, error translation, big-endian keys, JSON loading) are in base.c.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"

const enum store_dbi store__doc_dbi[STORE_DB_COUNT] = {DBI_WHY, DBI_PREEMPTIONS, DBI_MIRROR,
                                                       DBI_TIMESERIES, DBI_RESERVATIONS};
static const char *const doc_name[STORE_DB_COUNT] = {
    "why document", "preemption record", "mirror record", "time series sample", "reservation"};

int store__each_json(MDB_txn *txn, MDB_dbi dbi, const char *prefix, const char *after,
                     store_obj_fn fn, void *ctx, struct err *err)
{
    struct store *st = store__of(txn);
    size_t plen = prefix ? strlen(prefix) : 0;
    /* start at the prefix, or at `after` when it sorts later (then skip `after` itself) */
    const char *from = after && (!prefix || strcmp(after, prefix) > 0) ? after : prefix;
    struct store__cur cur;
    MDB_val k = {from ? strlen(from) : 0, (void *)from}, v;
    char key[512];
    json_error_t jerr;
    int rc, op = k.mv_size ? MDB_SET_RANGE : MDB_FIRST;

    rc = store__cur_open(txn, dbi, &cur);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot open a cursor");
    for (;; op = MDB_NEXT) {
        rc = store__cur_get(&cur, &k, &v, (MDB_cursor_op)op);
        if (rc == MDB_NOTFOUND) {
            rc = 0;
            break;
        }
        if (rc) {
            rc = store__mdb_err(st, rc, err, "cannot iterate");
            break;
        }
        if (plen && (k.mv_size < plen || memcmp(k.mv_data, prefix, plen) != 0))
            break;
        if (k.mv_size >= sizeof(key)) /* LMDB keys are at most 511 bytes */
            continue;
        memcpy(key, k.mv_data, k.mv_size);
        key[k.mv_size] = '\0';
        if (after && strcmp(key, after) <= 0)
            continue;
        json_t *obj = store__json_load(v.mv_data, v.mv_size, &jerr);
        if (!obj) {
            rc = err_set(err, ERR_STORE, "corrupt value for '%s': %s", key, jerr.text);
            break;
        }
        if (dbi == st->dbi[DBI_PODS] && (rc = store__pod_overlay(txn, key, obj, err)) < 0) {
            json_decref(obj);
            break;
        }
        rc = fn(ctx, key, obj);
        json_decref(obj);
        if (rc != 0) {
            rc = rc > 0 ? 0 : rc;
            break;
        }
    }
    store__cur_close(&cur);
    return rc;
}

/* ---- generic documents ---- */

static int check_db(enum store_db db, struct err *err)
{
    if ((unsigned)db >= STORE_DB_COUNT)
        return err_set(err, ERR_INVALID, "unknown document database %d", (int)db);
    return 0;
}

static int put_bytes(MDB_txn *txn, enum store_db db, const char *key, const void *data, size_t len,
                     struct err *err)
{
    struct store *st = store__of(txn);
    MDB_val k = {strlen(key), (void *)key}, v = {len, (void *)data};
    int rc = store__history_doc_unlive(txn, db, key, err);
    if (rc < 0)
        return rc;
    rc = store__put(txn, st->dbi[store__doc_dbi[db]], &k, &v, 0);
    if (rc) {
        rc = store__mdb_err(st, rc, err, "cannot write");
        err_prefix(err, "%s '%s'", doc_name[db], key);
        return rc;
    }
    return store__history_doc(txn, db, key, 'P', data, len, err);
}

int store_doc_put(MDB_txn *txn, enum store_db db, const char *key, json_t *doc, struct err *err)
{
    struct store__scratch *sc = store__scratch(txn);
    int rc = check_db(db, err);
    if (rc < 0)
        return rc;
    size_t len = store__dump(sc, doc, JSON_COMPACT, 0);
    return put_bytes(txn, db, key, sc->buf, len, err);
}

int store_doc_put_text(MDB_txn *txn, enum store_db db, const char *key, const char *text,
                       size_t len, struct err *err)
{
    int rc = check_db(db, err);
    return rc < 0 ? rc : put_bytes(txn, db, key, text, len, err);
}

int store_doc_add_text(MDB_txn *txn, enum store_db db, const char *key, const char *text,
                       size_t len, json_t **old, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_val k = {strlen(key), (void *)key}, v = {len, (void *)text};
    json_error_t jerr;
    *old = NULL;
    int rc = check_db(db, err);
    if (rc < 0)
        return rc;
    rc = store__put(txn, st->dbi[store__doc_dbi[db]], &k, &v, MDB_NOOVERWRITE);
    if (rc == MDB_KEYEXIST) { /* v: the stored document */
        *old = store__json_load(v.mv_data, v.mv_size, &jerr);
        return *old ? 1
                    : err_set(err, ERR_STORE, "corrupt %s '%s': %s", doc_name[db], key, jerr.text);
    }
    if (rc) {
        rc = store__mdb_err(st, rc, err, "cannot write");
        return err_prefix(err, "%s '%s'", doc_name[db], key);
    }
    return store__history_doc(txn, db, key, 'P', text, len, err);
}

int store_doc_get(MDB_txn *txn, enum store_db db, const char *key, json_t **out, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_val k = {strlen(key), (void *)key}, v;
    json_error_t jerr;
    int rc;

    *out = NULL;
    if ((rc = check_db(db, err)) < 0)
        return rc;
    rc = store__get(txn, st->dbi[store__doc_dbi[db]], &k, &v);
    if (rc == MDB_NOTFOUND)
        return err_set(err, ERR_NOT_FOUND, "%s '%s' not found", doc_name[db], key);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot read");
    *out = store__json_load(v.mv_data, v.mv_size, &jerr);
    if (!*out)
        return err_set(err, ERR_STORE, "corrupt %s '%s': %s", doc_name[db], key, jerr.text);
    return 0;
}

int store_doc_exists(MDB_txn *txn, enum store_db db, const char *key)
{
    MDB_val k = {strlen(key), (void *)key}, v;
    return check_db(db, NULL) == 0 &&
           store__get(txn, store__of(txn)->dbi[store__doc_dbi[db]], &k, &v) == 0;
}

int store_doc_delete(MDB_txn *txn, enum store_db db, const char *key, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_val k = {strlen(key), (void *)key};
    int rc;

    if ((rc = check_db(db, err)) < 0 || (rc = store__history_doc_unlive(txn, db, key, err)) < 0)
        return rc;
    rc = store__del(txn, st->dbi[store__doc_dbi[db]], &k, NULL);
    if (rc == MDB_NOTFOUND)
        return err_set(err, ERR_NOT_FOUND, "%s '%s' not found", doc_name[db], key);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot delete");
    return store__history_doc(txn, db, key, 'D', NULL, 0, err);
}

int store_doc_each_after(MDB_txn *txn, enum store_db db, const char *after, store_obj_fn fn,
                         void *ctx, struct err *err)
{
    int rc = check_db(db, err);

    return rc < 0 ? rc
                  : store__each_json(txn, store__of(txn)->dbi[store__doc_dbi[db]], NULL, after, fn,
                                     ctx, err);
}

int store_doc_each(MDB_txn *txn, enum store_db db, const char *prefix, store_obj_fn fn, void *ctx,
                   struct err *err)
{
    int rc = check_db(db, err);

    return rc < 0 ? rc
                  : store__each_json(txn, store__of(txn)->dbi[store__doc_dbi[db]], prefix, NULL, fn,
                                     ctx, err);
}
