/*
 * audit_ckpt.c - checkpoint records in the chain and pruning behind one.
 *
 * A checkpoint is appended in the same write transaction that reads the head it signs, so
 * it is always record head+1 and signs exactly the record before it. Signing is CPU work
 * only; the witness file is written by the caller after the commit.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "audit_sig.h"
#include "err.h"

#define HASH_LEN STORE__HASH_LEN
#define CKPT_MARK "\"kind\":\"checkpoint\""

/* 1 with *cp filled when the canonical record is a checkpoint record. */
static int parse_ckpt(const MDB_val *v, struct store_ckpt *cp)
{
    json_t *rec;
    int is;

    /* canonical JSON: a checkpoint's top-level kind reads exactly CKPT_MARK */
    if (!memmem(v->mv_data, v->mv_size, CKPT_MARK, sizeof(CKPT_MARK) - 1))
        return 0;
    rec = json_loadb(v->mv_data, v->mv_size, 0, NULL);
    is = rec && !strcmp(json_string_value(json_object_get(rec, "kind")) ?: "", "checkpoint") &&
         store_ckpt_parse(json_object_get(rec, "checkpoint"), cp, NULL) == 0;
    json_decref(rec);
    return is;
}

int store__audit_find_ckpt(MDB_txn *txn, uint64_t at, uint64_t *seq, struct store_ckpt *cp,
                           struct err *err)
{
    struct store *st = store__of(txn);
    struct store_ckpt tmp;
    unsigned char kbuf[8];
    MDB_cursor *cur = NULL;
    MDB_val k = {8, kbuf}, v;
    uint64_t s;
    int rc;

    *seq = 0;
    if ((rc = mdb_cursor_open(txn, st->dbi[DBI_AUDIT], &cur)))
        return store__mdb_err(st, rc, err, "cannot open a cursor");
    store__be64_put(kbuf, at);
    rc = at ? mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE) : MDB_NOTFOUND;
    if (rc == MDB_NOTFOUND)
        rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
    for (; rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_PREV)) {
        s = k.mv_size == 8 ? store__be64_get(k.mv_data) : 0;
        if (at && s > at)
            continue;
        if (parse_ckpt(&v, cp ? cp : &tmp)) {
            *seq = s;
            break;
        }
    }
    mdb_cursor_close(cur);
    if (rc && rc != MDB_NOTFOUND)
        return store__mdb_err(st, rc, err, "cannot read the audit log");
    return 0;
}

int store_audit_find_checkpoint(MDB_txn *txn, uint64_t at, uint64_t *seq, struct err *err)
{
    struct store__head base;
    int rc;

    if ((rc = store__audit_base(txn, &base, err)) < 0 ||
        (rc = store__audit_find_ckpt(txn, at, seq, NULL, err)) < 0)
        return rc;
    if (*seq < base.seq)
        *seq = 0;
    return 0;
}

int store_audit_ckpt_state(MDB_txn *txn, uint64_t *ckpt_record, uint64_t *head, struct err *err)
{
    struct store__head h;
    int rc;

    if ((rc = store__audit_head(txn, &h, err)) < 0)
        return rc;
    *head = h.seq;
    return store__audit_find_ckpt(txn, 0, ckpt_record, NULL, err);
}

int store_audit_checkpoint(MDB_txn *txn, const struct store_audit_key *key, struct store_ckpt *out,
                           struct err *err)
{
    struct store *st = store__of(txn);
    struct store__head h;
    unsigned char kbuf[8];
    MDB_val k = {8, kbuf}, v;
    json_t *rec;
    int rc;

    if ((rc = store__audit_head(txn, &h, err)) < 0)
        return rc;
    if (h.seq == 0)
        return 1;
    store__be64_put(kbuf, h.seq);
    rc = mdb_get(txn, st->dbi[DBI_AUDIT], &k, &v);
    if (rc && rc != MDB_NOTFOUND)
        return store__mdb_err(st, rc, err, "cannot read the audit log");
    /* a head checkpoint signed by a retired key is signed again: the rotation is recorded */
    if (rc == 0 && parse_ckpt(&v, out) && !strcmp(out->key, store_audit_key_id(key)))
        return 1;
    memset(out, 0, sizeof(*out));
    out->seq = h.seq;
    memcpy(out->hash, h.hash, HASH_LEN);
    if ((rc = store_ckpt_sign(key, out, err)) < 0)
        return rc;
    rec = json_pack("{s:s, s:o, s:s}", "kind", "checkpoint", "checkpoint", store_ckpt_json(out),
                    "ts", out->time);
    rc = store_audit_append(txn, rec, NULL, err);
    json_decref(rec);
    return rc;
}

/* Deletes records [from, before) in key order. */
static int delete_before(MDB_txn *txn, uint64_t before, uint64_t *deleted, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    int rc;

    *deleted = 0;
    if ((rc = mdb_cursor_open(txn, st->dbi[DBI_AUDIT], &cur)))
        return store__mdb_err(st, rc, err, "cannot open a cursor");
    while ((rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST)) == 0) {
        if (k.mv_size == 8 && store__be64_get(k.mv_data) >= before)
            break;
        if ((rc = mdb_cursor_del(cur, 0)) != 0)
            break;
        ++*deleted;
    }
    mdb_cursor_close(cur);
    if (rc && rc != MDB_NOTFOUND)
        return store__mdb_err(st, rc, err, "cannot prune the audit log");
    return 0;
}

int store_audit_prune(MDB_txn *txn, uint64_t before, const struct store_audit_key *key,
                      uint64_t *first_kept, uint64_t *deleted, struct err *err)
{
    struct store__head base;
    struct store_ckpt cp;
    unsigned char b[8 + HASH_LEN];
    uint64_t at = 0;
    int rc;

    *first_kept = *deleted = 0;
    if ((rc = store__audit_base(txn, &base, err)) < 0 ||
        (rc = store__audit_find_ckpt(txn, before, &at, &cp, err)) < 0)
        return rc;
    if (!at || at < base.seq)
        return err_setf(err, ERR_NOT_FOUND, "before",
                        "no checkpoint record at or before record %" PRIu64
                        ": nothing can be pruned (records start at %" PRIu64 ")",
                        before, base.seq);
    if (key && (rc = store_ckpt_verify(key, &cp, err)) < 0)
        return err_prefix(err, "cannot prune behind record %" PRIu64, at);
    *first_kept = at;
    if (at == base.seq)
        return 0;
    uint64_t versions;
    if ((rc = delete_before(txn, at, deleted, err)) < 0 ||
        (rc = store__history_prune(txn, at, &versions, err)) < 0)
        return rc;
    store__be64_put(b, at);
    memcpy(b + 8, cp.hash, HASH_LEN);
    return store__meta_put(txn, STORE__META_BASE, b, sizeof(b), err);
}

struct prune {
    uint64_t before, first_kept, deleted;
    const struct store_audit_key *key;
};

static int prune_txn(MDB_txn *txn, void *ctx, struct err *err)
{
    struct prune *p = ctx;
    return store_audit_prune(txn, p->before, p->key, &p->first_kept, &p->deleted, err);
}

int store_audit_prune_write(struct store *st, uint64_t before, const struct store_audit_key *key,
                            uint64_t *first_kept, uint64_t *deleted, struct err *err)
{
    struct prune p = {.before = before, .key = key};
    int rc = store_write(st, prune_txn, &p, err);
    if (rc == 0) {
        *first_kept = p.first_kept;
        *deleted = p.deleted;
    }
    return rc;
}
