/*
 * history.c - every version of every stored object, kept by the audit sequence it belongs
 * to, so the store can be read as it was at any record (store.h, "object history").
 *
 * Two databases. DBI_HISTORY_IX, the index, keyed per object and then by time:
 *
 *     [kind byte][object key]\0[be64 seq][be64 txn id][be32 n]  ->  [op][log key]
 *
 * and DBI_HISTORY, the log: [be64 seq][be64 txn id][be32 n] (the seq when written) ->
 * payload, appended in write order. kind byte: the model_kind, or HIST_DOC + store_db for a
 * why document. seq: the audit record the change leads up to: the next record its
 * transaction appends, or, for changes after the transaction's last record (or in a
 * transaction that appends none), the last record before them. A change is written with
 * seq = head + 1; at the top-level commit (store__history_settle) the index entries whose
 * record never came move to the head (the log keeps its key). So "the store at N" is the
 * store right after record N was appended, a transaction's trailing changes counted with
 * its last record: after a transaction whose last record is N commits, the committed store.
 * txn id and n (a counter of the writer) order the changes of one seq.
 * op: 'P' put (payload: the stored bytes, exactly as written), 'D' delete (no log entry),
 * 'B' a pod's binding record (payload: the record pod_bind.c wrote, a few bytes; the pod's
 * last 'P' before it is what it binds, and a binding is only ever written over a pending
 * pod, so at most one 'B' follows a 'P'), 'L' a put whose payload is the value stored under
 * the object's key now (store schema 4): a version longer than INLINE_MAX is not copied
 * into the log when it is written, only when it is written over or deleted
 * (store__history_unlive, which every writer of the objects and documents calls first,
 * turns the 'L' into a 'P' with its log copy). So an 'L' is always its object's last
 * version, and the object's value is its payload; a cycle's why documents and an apply's
 * objects, most of which are never written over, are written once, not twice.
 *
 * Keeping each object's versions together in the index makes "one object at N" one seek
 * and "everything at N" two seeks per object that ever existed, with nothing stored twice.
 * The payloads go to the log, whose appends touch only its last page: a cycle binding
 * thousands of pods dirties a few index pages of small entries, not the pages of the pods'
 * stored versions (bench/README.md has the cost). Writes happen inside the writer's
 * transaction, so an aborted statement's history goes with it.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"

#define HIST_DOC 0x40
#define SUFFIX (1 + 8 + 8 + 4) /* \0, seq, txn id, n */
#define LOGKEY 20              /* seq, txn id, n */
#define INLINE_MAX 192         /* payloads up to this size stay in the index entry */
#define KEY_MAX 480            /* an object key longer than this has no history */
#define META_HBASE "history_base"

static unsigned char doc_byte(enum store_db db)
{
    return (unsigned char)(HIST_DOC + db);
}

/* seq, txn id and n as a log key (LOGKEY bytes), which is also a version key's suffix. */
static void logkey_put(unsigned char *out, uint64_t seq, uint64_t txnid, uint32_t n)
{
    store__be64_put(out, seq);
    store__be64_put(out + 8, txnid);
    for (int i = 0; i < 4; i++)
        out[16 + i] = (unsigned char)(n >> (24 - 8 * i));
}

/* The key of one version into out (at least 1 + KEY_MAX + SUFFIX bytes). Returns its
 * length, or 0 when key is too long to be kept. */
static size_t hist_key(unsigned char *out, unsigned char kb, const char *key, uint64_t seq,
                       uint64_t txnid, uint32_t n)
{
    size_t kl = strlen(key);
    if (kl > KEY_MAX)
        return 0;
    out[0] = kb;
    memcpy(out + 1, key, kl);
    out[1 + kl] = '\0';
    logkey_put(out + 2 + kl, seq, txnid, n);
    return 1 + kl + SUFFIX;
}

/* The versions written by the current top-level transaction (kept to settle them). */
static void pend_reset(struct store *st, uint64_t id)
{
    st->hist_txn = id;
    st->hist_n = 0;
    st->hist_pend_len = 0;
}

static void pend_add(struct store *st, const unsigned char *k, size_t kl)
{
    if (st->hist_pend_len + kl + 2 > st->hist_pend_cap) {
        st->hist_pend_cap = 2 * (st->hist_pend_len + kl + 2) + 4096;
        st->hist_pend = xrealloc(st->hist_pend, st->hist_pend_cap);
    }
    st->hist_pend[st->hist_pend_len] = (unsigned char)(kl >> 8);
    st->hist_pend[st->hist_pend_len + 1] = (unsigned char)kl;
    memcpy(st->hist_pend + st->hist_pend_len + 2, k, kl);
    st->hist_pend_len += kl + 2;
}

/* The next log key of the writer (LOGKEY bytes into out): the seq a change is written
 * with, the transaction, the counter. Increasing, so the log is appended to. */
static void log_key(struct store *st, MDB_txn *txn, uint64_t seq, unsigned char *out)
{
    uint64_t id = (uint64_t)mdb_txn_id(txn);
    if (st->hist_txn != id)
        pend_reset(st, id);
    logkey_put(out, seq, id, st->hist_n++);
}

/* The database an object's (or document's) value is stored in: its kind byte's; 0 (no
 * database of ours) for a byte that names none. */
static MDB_dbi live_dbi(struct store *st, unsigned char kb)
{
    if (kb >= HIST_DOC)
        return kb - HIST_DOC < STORE_DB_COUNT ? st->dbi[store__doc_dbi[kb - HIST_DOC]] : 0;
    return kb < MODEL_KIND_COUNT ? st->dbi[store__kind_dbi[kb]] : 0;
}

/* Appends data (len bytes) to the log under lk (LOGKEY bytes). */
static int log_put(MDB_txn *txn, const unsigned char *lk_data, const void *data, size_t len,
                   struct err *err)
{
    struct store *st = store__of(txn);
    /* reserve, then copy: data may point into the writer's scratch buffer */
    MDB_val lk = {LOGKEY, (void *)lk_data}, lv = {len, NULL};
    int rc = store__put(txn, st->dbi[DBI_HISTORY], &lk, &lv, MDB_APPEND | MDB_RESERVE);
    if (rc == MDB_KEYEXIST) /* not past the last key: cannot happen, but never fail */
        rc = store__put(txn, st->dbi[DBI_HISTORY], &lk, &lv, MDB_RESERVE);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot write the object history");
    if (len)
        memcpy(lv.mv_data, data, len);
    return 0;
}

/* live: a 'P' whose data is the value just stored under key (store__history_add's), kept
 * there ('L') when too long to go inline. */
static int add_at(MDB_txn *txn, unsigned char kb, const char *key, char op, const void *data,
                  size_t len, uint64_t seq, int pend, int live, struct err *err)
{
    struct store *st = store__of(txn);
    unsigned char kbuf[1 + KEY_MAX + SUFFIX];
    uint64_t id = (uint64_t)mdb_txn_id(txn);
    int rc;

    if (st->hist_txn != id)
        pend_reset(st, id);
    size_t kl = hist_key(kbuf, kb, key, seq, id, st->hist_n++);
    if (!kl)
        return 0;
    unsigned char ival[1 + INLINE_MAX];
    size_t ilen = 1 + LOGKEY;
    ival[0] = (unsigned char)op;
    memcpy(ival + 1, kbuf + kl - LOGKEY, LOGKEY);
    if (op == 'D') {
        ilen = 1;
    } else if (len <= INLINE_MAX) { /* a binding, a small why: in the index entry itself */
        ival[0] = op == 'P' ? 'p' : 'b';
        memcpy(ival + 1, data, len);
        ilen = 1 + len;
    } else if (live && op == 'P') { /* read from the object itself until it changes */
        ival[0] = 'L';
        ilen = 1;
    } else {
        if ((rc = log_put(txn, ival + 1, data, len, err)) < 0)
            return rc;
    }
    MDB_val k = {kl, kbuf}, v = {ilen, ival};
    /* documents' versions and objects' are written in turn: a cursor on each */
    if ((rc = store__put_lane(txn, st->dbi[DBI_HISTORY_IX], kb >= HIST_DOC, &k, &v, 0)) != 0)
        return store__mdb_err(st, rc, err, "cannot write the object history");
    if (pend)
        pend_add(st, kbuf, kl);
    return 0;
}

/* st->head_seq as txn sees it (internal.h). */
static int head_of(struct store *st, MDB_txn *txn, struct err *err)
{
    if (st->head_txn == txn)
        return 0;
    struct store__head h;
    int rc = store__audit_head(txn, &h, err);
    if (rc < 0)
        return rc;
    st->head_txn = txn;
    st->head_seq = h.seq;
    st->head_full = 0;
    return 0;
}

int store__history_add(MDB_txn *txn, unsigned char kb, const char *key, char op, const void *data,
                       size_t len, struct err *err)
{
    struct store *st = store__of(txn);
    if (store__dry_of(txn)) /* a what-if's writes are no history (store_dry_begin) */
        return 0;
    int rc = head_of(st, txn, err);
    if (rc < 0)
        return rc;
    return add_at(txn, kb, key, op, data, len, st->head_seq + 1, 1, 1, err);
}

/* 1 when k is a version of the object whose key prefix (kind byte, key, \0) is p. */
static int same_object(const MDB_val *k, const unsigned char *p, size_t plen)
{
    return k->mv_size == plen + SUFFIX - 1 && memcmp(k->mv_data, p, plen) == 0;
}

/* The last version of object p (plen bytes: kind byte, key, \0) from cur: 0 with *k and
 * *v on it, MDB_NOTFOUND when it has none, or an LMDB code. */
static int last_version(MDB_cursor *cur, const unsigned char *p, size_t plen, MDB_val *k,
                        MDB_val *v)
{
    unsigned char probe[1 + KEY_MAX + SUFFIX];
    memcpy(probe, p, plen);
    memset(probe + plen, 0xff, SUFFIX - 1);
    *k = (MDB_val){plen + SUFFIX - 1, probe};
    int rc = mdb_cursor_get(cur, k, v, MDB_SET_RANGE);
    rc = rc == MDB_NOTFOUND ? mdb_cursor_get(cur, k, v, MDB_LAST)
         : rc == 0          ? mdb_cursor_get(cur, k, v, MDB_PREV)
                            : rc;
    if (rc == 0 && !same_object(k, p, plen))
        rc = MDB_NOTFOUND;
    return rc;
}

int store__history_unlive(MDB_txn *txn, unsigned char kb, const char *key, const MDB_val *stored,
                          struct err *err)
{
    struct store *st = store__of(txn);
    size_t kl = strlen(key);
    if (store__dry_of(txn) || kl > KEY_MAX)
        return 0;
    MDB_val k = {kl, (void *)key}, v = {0, NULL}, ik, iv;
    MDB_dbi dbi = live_dbi(st, kb);
    if (!dbi)
        return err_set(err, ERR_INTERNAL, "object history: no database for kind %u", kb);
    int rc = 0;
    if (stored)
        v = *stored;
    else if ((rc = store__get(txn, dbi, &k, &v)) == MDB_NOTFOUND)
        v.mv_data = NULL;
    else if (rc)
        return store__mdb_err(st, rc, err, "cannot read the object history");
    if (!v.mv_data || v.mv_size <= INLINE_MAX) /* none, or never kept as 'L' */
        return 0;
    unsigned char p[1 + KEY_MAX + 1], ikey[1 + KEY_MAX + SUFFIX], ival[1 + LOGKEY];
    p[0] = kb;
    memcpy(p + 1, key, kl + 1);
    MDB_cursor *cur = NULL;
    if ((rc = mdb_cursor_open(txn, st->dbi[DBI_HISTORY_IX], &cur)) != 0)
        return store__mdb_err(st, rc, err, "cannot open a cursor");
    rc = last_version(cur, p, kl + 2, &ik, &iv);
    /* a pod's binding versions come after the put they bind */
    while (rc == 0 && iv.mv_size &&
           (*(const char *)iv.mv_data == 'B' || *(const char *)iv.mv_data == 'b')) {
        rc = mdb_cursor_get(cur, &ik, &iv, MDB_PREV);
        if (rc == 0 && !same_object(&ik, p, kl + 2))
            rc = MDB_NOTFOUND;
    }
    int live = rc == 0 && iv.mv_size == 1 && *(const char *)iv.mv_data == 'L';
    if (live)
        memcpy(ikey, ik.mv_data, ik.mv_size);
    size_t iklen = ik.mv_size;
    mdb_cursor_close(cur);
    if (rc && rc != MDB_NOTFOUND)
        return store__mdb_err(st, rc, err, "cannot read the object history");
    if (!live)
        return 0;
    /* the value moves to the log, under a key of now; its version points there */
    char *copy = xmalloc(v.mv_size); /* v is in the map, which the puts may change */
    size_t len = v.mv_size;
    memcpy(copy, v.mv_data, len);
    if ((rc = head_of(st, txn, err)) == 0) {
        ival[0] = 'P';
        log_key(st, txn, st->head_seq + 1, ival + 1);
        rc = log_put(txn, ival + 1, copy, len, err);
    }
    free(copy);
    if (rc < 0)
        return rc;
    MDB_val nk = {iklen, ikey}, nv = {sizeof(ival), ival};
    rc = store__put_lane(txn, st->dbi[DBI_HISTORY_IX], kb >= HIST_DOC, &nk, &nv, 0);
    return rc ? store__mdb_err(st, rc, err, "cannot write the object history") : 0;
}

int store__history_doc_unlive(MDB_txn *txn, enum store_db db, const char *key, struct err *err)
{
    if (db == STORE_DB_MIRROR || store__dry_of(txn)) /* no history, as store__history_doc */
        return 0;
    return store__history_unlive(txn, doc_byte(db), key, NULL, err);
}

int store__history_settle(MDB_txn *txn, struct err *err)
{
    struct store *st = store__of(txn);
    struct store__head h;
    unsigned char kbuf[1 + KEY_MAX + SUFFIX];
    int rc;

    if (st->hist_txn != (uint64_t)mdb_txn_id(txn) || !st->hist_pend_len)
        return 0;
    if ((rc = store__audit_head(txn, &h, err)) < 0)
        return rc;
    for (size_t off = 0; off < st->hist_pend_len;) {
        size_t kl = (size_t)st->hist_pend[off] << 8 | st->hist_pend[off + 1];
        const unsigned char *k0 = st->hist_pend + off + 2;
        off += kl + 2;
        if (store__be64_get(k0 + kl - SUFFIX + 1) <= h.seq)
            continue; /* its record came */
        MDB_val k = {kl, (void *)k0}, v, nk = {kl, kbuf};
        unsigned char ival[1 + INLINE_MAX];
        rc = mdb_get(txn, st->dbi[DBI_HISTORY_IX], &k, &v);
        if (rc == MDB_NOTFOUND) /* written by a statement that was rolled back */
            continue;
        if (rc == 0 && (!v.mv_size || v.mv_size > sizeof(ival)))
            return err_set(err, ERR_STORE, "corrupt object history index entry");
        memcpy(kbuf, k0, kl);
        store__be64_put(kbuf + kl - SUFFIX + 1, h.seq);
        if (rc == 0)
            memcpy(ival, v.mv_data, v.mv_size);
        MDB_val nv = {rc == 0 ? v.mv_size : 0, ival};
        if (rc || (rc = mdb_del(txn, st->dbi[DBI_HISTORY_IX], &k, NULL)) != 0 ||
            (rc = mdb_put(txn, st->dbi[DBI_HISTORY_IX], &nk, &nv, 0)) != 0)
            return store__mdb_err(st, rc, err, "cannot settle the object history");
    }
    st->hist_pend_len = 0;
    return 0;
}

int store__history_doc(MDB_txn *txn, enum store_db db, const char *key, char op, const void *data,
                       size_t len, struct err *err)
{
    if (db == STORE_DB_MIRROR || store__dry_of(txn)) /* mirror state and what-ifs need none */
        return 0;
    return store__history_add(txn, doc_byte(db), key, op, data, len, err);
}

/* ---- reading ---- */

/* One object's versions up to seq, found from a cursor. */
struct found {
    const char *put; /* payload of the last 'P' at or before seq */
    size_t put_len;
    const char *bind; /* payload of a 'B' after it, or NULL */
    size_t bind_len;
};

/* The version of object p (plen bytes: kind byte, key, \0) at seq, from cur: *f filled and
 * 1 when it existed then, 0 when not. Leaves cur anywhere. */
static int version_at(struct store *st, MDB_cursor *cur, const unsigned char *p, size_t plen,
                      uint64_t seq, struct found *f, struct err *err)
{
    unsigned char probe[1 + KEY_MAX + SUFFIX];
    MDB_val k, v;
    int rc;

    memset(f, 0, sizeof(*f));
    memcpy(probe, p, plen);
    memset(probe + plen, 0xff, SUFFIX - 1);
    store__be64_put(probe + plen, seq);
    k = (MDB_val){plen + SUFFIX - 1, probe};
    rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    if (rc == MDB_NOTFOUND)
        rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
    else if (rc == 0)
        rc = mdb_cursor_get(cur, &k, &v, MDB_PREV);
    for (; rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_PREV)) {
        if (!same_object(&k, p, plen) || store__be64_get((unsigned char *)k.mv_data + plen) > seq ||
            !v.mv_size)
            return 0;
        const char *d = v.mv_data;
        char op = d[0] == 'p' || d[0] == 'L' ? 'P' : d[0] == 'b' ? 'B' : d[0];
        if (op == 'D')
            return 0;
        if ((op != 'B' && op != 'P') || (op == 'B' && f->bind))
            continue;
        MDB_val lv = {v.mv_size - 1, (void *)(d + 1)}; /* inline */
        if (d[0] == 'L') { /* the object's value now (its last version) */
            MDB_val ok = {plen - 2, (void *)(p + 1)};
            MDB_dbi dbi = live_dbi(st, p[0]);
            int lrc = dbi ? mdb_get(mdb_cursor_txn(cur), dbi, &ok, &lv) : MDB_NOTFOUND;
            if (lrc)
                return lrc == MDB_NOTFOUND
                           ? err_set(err, ERR_STORE,
                                     "object history: a version's stored value is missing")
                           : store__mdb_err(st, lrc, err, "cannot read the object history");
        } else if (d[0] == 'P' || d[0] == 'B') { /* in the log */
            MDB_val lk = {LOGKEY, (void *)(d + 1)};
            int lrc = v.mv_size == 1 + LOGKEY
                          ? mdb_get(mdb_cursor_txn(cur), st->dbi[DBI_HISTORY], &lk, &lv)
                          : MDB_NOTFOUND;
            if (lrc)
                return lrc == MDB_NOTFOUND
                           ? err_set(err, ERR_STORE,
                                     "object history: a version's payload is missing")
                           : store__mdb_err(st, lrc, err, "cannot read the object history");
        }
        if (op == 'B') {
            f->bind = lv.mv_data;
            f->bind_len = lv.mv_size;
        } else {
            f->put = lv.mv_data;
            f->put_len = lv.mv_size;
            return 1;
        }
    }
    if (rc == MDB_NOTFOUND)
        return 0;
    return store__mdb_err(st, rc, err, "cannot read the object history");
}

/* The object f describes, as store_get would have returned it. New in *out. */
static int materialize(unsigned char kb, const char *key, const struct found *f, json_t **out,
                       struct err *err)
{
    json_error_t jerr;
    int rc;

    *out = store__json_load(f->put, f->put_len, &jerr);
    if (!*out)
        return err_set(err, ERR_STORE, "corrupt history of '%s': %s", key, jerr.text);
    if (kb == MODEL_POD && f->bind &&
        (rc = store__pod_overlay_apply(key, *out, f->bind, f->bind_len, err)) < 0) {
        json_decref(*out);
        *out = NULL;
        return rc;
    }
    return 0;
}

static int get_at(MDB_txn *txn, unsigned char kb, const char *key, uint64_t seq, json_t **out,
                  struct err *err)
{
    struct store *st = store__of(txn);
    unsigned char p[1 + KEY_MAX + 1];
    MDB_cursor *cur = NULL;
    struct found f;
    size_t kl = strlen(key);
    int rc;

    *out = NULL;
    if (kl > KEY_MAX)
        return err_set(err, ERR_NOT_FOUND, "'%.40s...' has no history", key);
    p[0] = kb;
    memcpy(p + 1, key, kl + 1);
    if ((rc = mdb_cursor_open(txn, st->dbi[DBI_HISTORY_IX], &cur)) != 0)
        return store__mdb_err(st, rc, err, "cannot open a cursor");
    rc = version_at(st, cur, p, kl + 2, seq, &f, err);
    if (rc == 1)
        rc = materialize(kb, key, &f, out, err);
    else if (rc == 0)
        rc = err_set(err, ERR_NOT_FOUND, "'%s' did not exist at record %" PRIu64, key, seq);
    mdb_cursor_close(cur);
    return rc;
}

int store_history_get_at(MDB_txn *txn, enum model_kind kind, const char *key, uint64_t seq,
                         json_t **out, struct err *err)
{
    if ((unsigned)kind >= MODEL_KIND_COUNT)
        return err_set(err, ERR_INVALID, "unknown object kind %d", (int)kind);
    return get_at(txn, (unsigned char)kind, key, seq, out, err);
}

int store_history_doc_at(MDB_txn *txn, enum store_db db, const char *key, uint64_t seq,
                         json_t **out, struct err *err)
{
    if (db != STORE_DB_WHY && db != STORE_DB_PREEMPTIONS) {
        *out = NULL;
        return err_set(err, ERR_INVALID, "document database %d keeps no history", (int)db);
    }
    return get_at(txn, doc_byte(db), key, seq, out, err);
}

/* Every object (or document) whose kind byte is in [lo, hi] and, for an object, in kinds,
 * that existed at seq: fn(ctx, kind byte, key, obj). */
static int each_at(MDB_txn *txn, uint64_t seq, unsigned char lo, unsigned char hi, unsigned kinds,
                   store_kind_obj_fn fn, void *ctx, struct err *err)
{
    struct store *st = store__of(txn);
    unsigned char p[1 + KEY_MAX + 1];
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    char key[KEY_MAX + 1];
    int rc = 0, mrc;

    if ((mrc = mdb_cursor_open(txn, st->dbi[DBI_HISTORY_IX], &cur)) != 0)
        return store__mdb_err(st, mrc, err, "cannot open a cursor");
    /* from one object to the next: seek past the current one's versions ("key\0" < "key\1") */
    p[0] = lo;
    k = (MDB_val){1, p};
    for (mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE); mrc == 0;
         mrc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE)) {
        const unsigned char *kd = k.mv_data;
        if (k.mv_size < SUFFIX + 1 || kd[0] > hi)
            break;
        size_t plen = k.mv_size - SUFFIX + 1, kl = plen - 2;
        unsigned char kb = kd[0];
        memcpy(p, kd, plen);
        struct found f;
        if (kb >= HIST_DOC || (kinds & (1u << kb))) {
            if ((rc = version_at(st, cur, p, plen, seq, &f, err)) < 0)
                goto out;
            if (rc == 1) {
                json_t *obj = NULL;
                memcpy(key, p + 1, kl);
                key[kl] = '\0';
                if ((rc = materialize(kb, key, &f, &obj, err)) == 0)
                    rc = fn(ctx, (enum model_kind)kb, key, obj);
                json_decref(obj);
                if (rc != 0) {
                    rc = rc > 0 ? 0 : rc;
                    goto out;
                }
            }
        }
        p[plen - 1] = 1;
        k = (MDB_val){plen, p};
    }
    rc = mrc == 0 || mrc == MDB_NOTFOUND
             ? 0
             : store__mdb_err(st, mrc, err, "cannot read the object history");
out:
    mdb_cursor_close(cur);
    return rc;
}

int store_history_each_at(MDB_txn *txn, uint64_t seq, unsigned kinds, store_kind_obj_fn fn,
                          void *ctx, struct err *err)
{
    return each_at(txn, seq, 0, HIST_DOC - 1, kinds, fn, ctx, err);
}

struct docs_fn {
    store_obj_fn fn;
    void *ctx;
};

static int doc_one(void *ctx, enum model_kind kb, const char *key, json_t *doc)
{
    struct docs_fn *d = ctx;
    (void)kb;
    return d->fn(d->ctx, key, doc);
}

int store_history_docs_at(MDB_txn *txn, enum store_db db, uint64_t seq, store_obj_fn fn, void *ctx,
                          struct err *err)
{
    if (db != STORE_DB_WHY && db != STORE_DB_PREEMPTIONS)
        return err_set(err, ERR_INVALID, "document database %d keeps no history", (int)db);
    struct docs_fn d = {fn, ctx};
    return each_at(txn, seq, doc_byte(db), doc_byte(db), 0, doc_one, &d, err);
}

/* ---- where history starts, times, pruning ---- */

int store_history_first_seq(MDB_txn *txn, uint64_t *out, struct err *err)
{
    uint64_t base = 0, first = 0;
    int rc = store_meta_get_u64(txn, META_HBASE, &base, err);
    if (rc == 0)
        rc = store_audit_first_seq(txn, &first, err);
    *out = base > first ? base : first;
    return rc;
}

/* The ts of record seq in ms; 0 and *ms = 0 when it has none. */
static int record_ms(MDB_txn *txn, uint64_t seq, int64_t *ms, struct err *err)
{
    struct store *st = store__of(txn);
    unsigned char kb[8];
    MDB_val k = {8, kb}, v;
    static const char mark[] = "\"ts\":\"";
    store__be64_put(kb, seq);
    int rc = mdb_get(txn, st->dbi[DBI_AUDIT], &k, &v);
    *ms = 0;
    if (rc)
        return store__mdb_err(st, rc, err, "cannot read an audit record");
    /* canonical records: "ts" is a top-level string; nothing nested is named "ts" before it
     * in key order except inside details, so take the last occurrence */
    const char *s = v.mv_data, *end = s + v.mv_size, *at = NULL;
    for (const char *q = s; (q = memmem(q, (size_t)(end - q), mark, sizeof(mark) - 1)) != NULL; q++)
        at = q;
    if (!at)
        return 0;
    at += sizeof(mark) - 1;
    const char *close = memchr(at, '"', (size_t)(end - at));
    char buf[64];
    if (!close || (size_t)(close - at) >= sizeof(buf))
        return 0;
    memcpy(buf, at, (size_t)(close - at));
    buf[close - at] = '\0';
    struct err ignored = ERR_INIT;
    if (clock_parse_rfc3339(buf, ms, &ignored) < 0)
        *ms = 0;
    return 0;
}

int store_audit_seq_at(MDB_txn *txn, int64_t ms, uint64_t *out, struct err *err)
{
    uint64_t lo, hi;
    int64_t t;
    int rc;

    *out = 0;
    if ((rc = store_audit_first_seq(txn, &lo, err)) < 0 ||
        (rc = store_audit_last_seq(txn, &hi, err)) < 0)
        return rc;
    if (!hi || lo > hi)
        return 0;
    if ((rc = record_ms(txn, lo, &t, err)) < 0)
        return rc;
    if (t > ms)
        return 0;
    /* the last record with ts <= ms: records are appended in time order */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if ((rc = record_ms(txn, mid, &t, err)) < 0)
            return rc;
        if (t <= ms)
            lo = mid;
        else
            hi = mid - 1;
    }
    *out = lo;
    return 0;
}

int store_audit_record_ms(MDB_txn *txn, uint64_t seq, int64_t *ms, struct err *err)
{
    return record_ms(txn, seq, ms, err);
}

/* The first version of each object opens history at the current head: what was stored
 * before history was kept (a store from an older musterd) is its first version. */
static int seed_dbi(MDB_txn *txn, enum store_dbi dbi, unsigned char kb, uint64_t head,
                    struct err *err)
{
    struct store *st = store__of(txn);
    MDB_cursor *cur = NULL;
    MDB_val k, v, b;
    char key[KEY_MAX + 1];
    int rc = 0, mrc = mdb_cursor_open(txn, st->dbi[dbi], &cur);
    if (mrc)
        return store__mdb_err(st, mrc, err, "cannot open a cursor");
    for (MDB_cursor_op op = MDB_FIRST; rc == 0 && (mrc = mdb_cursor_get(cur, &k, &v, op)) == 0;
         op = MDB_NEXT) {
        if (k.mv_size > KEY_MAX)
            continue;
        memcpy(key, k.mv_data, k.mv_size);
        key[k.mv_size] = '\0';
        if ((rc = add_at(txn, kb, key, 'P', v.mv_data, v.mv_size, head, 0, 0, err)) < 0 ||
            dbi != DBI_PODS)
            continue;
        int brc = mdb_get(txn, st->dbi[DBI_POD_BIND], &k, &b);
        if (brc == 0)
            rc = add_at(txn, kb, key, 'B', b.mv_data, b.mv_size, head, 0, 0, err);
        else if (brc != MDB_NOTFOUND)
            rc = store__mdb_err(st, brc, err, "cannot read a binding");
    }
    mdb_cursor_close(cur);
    if (rc == 0 && mrc && mrc != MDB_NOTFOUND)
        rc = store__mdb_err(st, mrc, err, "cannot seed the object history");
    return rc;
}

int store__history_open(MDB_txn *txn, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_val v;
    struct store__head h;
    int rc = store__meta_get(txn, META_HBASE, &v, NULL);
    if (rc == 0)
        return 0;
    if (rc != ERR_NOT_FOUND)
        return store__meta_get(txn, META_HBASE, &v, err);
    if ((rc = store__audit_head(txn, &h, err)) < 0)
        return rc;
    for (int kind = 0; kind < MODEL_KIND_COUNT; kind++)
        if ((rc = seed_dbi(txn, store__kind_dbi[kind], (unsigned char)kind, h.seq, err)) < 0)
            return rc;
    if ((rc = seed_dbi(txn, DBI_WHY, doc_byte(STORE_DB_WHY), h.seq, err)) < 0 ||
        (rc = seed_dbi(txn, DBI_PREEMPTIONS, doc_byte(STORE_DB_PREEMPTIONS), h.seq, err)) < 0)
        return rc;
    (void)st;
    return store_meta_put_u64(txn, META_HBASE, h.seq, err);
}

/* Pruning: drop every version nobody can ask for any more. A question is about a record
 * at or after `keep`, so per object the last version at or before keep (with the put a
 * binding applies to) must stay and what came before it goes; when that version is a
 * delete, it goes too, with all before it. */
struct cut {
    unsigned char key[1 + KEY_MAX + SUFFIX];
    size_t len;
    int inclusive; /* delete the version at key too */
};

/* Where the object p's prunable versions end (cut->len 0: none). Returns an LMDB code. */
static int find_cut(MDB_cursor *cur, const unsigned char *p, size_t plen, uint64_t keep,
                    struct cut *cut)
{
    unsigned char probe[1 + KEY_MAX + SUFFIX];
    MDB_val k, v;
    memcpy(probe, p, plen);
    memset(probe + plen, 0xff, SUFFIX - 1);
    store__be64_put(probe + plen, keep);
    k = (MDB_val){plen + SUFFIX - 1, probe};
    cut->len = 0;
    int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    rc = rc == MDB_NOTFOUND ? mdb_cursor_get(cur, &k, &v, MDB_LAST)
         : rc == 0          ? mdb_cursor_get(cur, &k, &v, MDB_PREV)
                            : rc;
    for (; rc == 0 && same_object(&k, p, plen); rc = mdb_cursor_get(cur, &k, &v, MDB_PREV)) {
        char op = v.mv_size ? ((const char *)v.mv_data)[0] : 'D';
        op = op == 'p' || op == 'L' ? 'P' : op == 'b' ? 'B' : op;
        if (op == 'P' || op == 'D') {
            memcpy(cut->key, k.mv_data, k.mv_size);
            cut->len = k.mv_size;
            cut->inclusive = op == 'D';
            return 0;
        }
    }
    return rc == MDB_NOTFOUND ? 0 : rc;
}

int store__history_prune(MDB_txn *txn, uint64_t keep, uint64_t *deleted, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    unsigned char p[1 + KEY_MAX + 1];
    struct cut cut;
    int rc = mdb_cursor_open(txn, st->dbi[DBI_HISTORY_IX], &cur);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot open a cursor");
    *deleted = 0;
    for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0;) {
        if (k.mv_size < SUFFIX + 2) { /* not a version key: never written */
            rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
            continue;
        }
        size_t plen = k.mv_size - SUFFIX + 1;
        memcpy(p, k.mv_data, plen);
        if ((rc = find_cut(cur, p, plen, keep, &cut)) != 0)
            break;
        k = (MDB_val){plen, p};
        rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
        while (cut.len && rc == 0 && same_object(&k, p, plen)) {
            int c = memcmp(k.mv_data, cut.key, cut.len);
            if (c > 0 || (c == 0 && !cut.inclusive))
                break;
            char op = v.mv_size ? ((const char *)v.mv_data)[0] : 'D';
            if (v.mv_size == 1 + LOGKEY && (op == 'P' || op == 'B')) { /* its payload */
                MDB_val lk = {LOGKEY, (char *)v.mv_data + 1};
                rc = mdb_del(txn, st->dbi[DBI_HISTORY], &lk, NULL);
                if (rc && rc != MDB_NOTFOUND)
                    break;
            }
            if ((rc = mdb_cursor_del(cur, 0)) != 0)
                break;
            ++*deleted;
            rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT); /* after a delete: the next one */
        }
        if (rc && rc != MDB_NOTFOUND)
            break;
        p[plen - 1] = 1; /* past this object's versions */
        k = (MDB_val){plen, p};
        rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
    }
    mdb_cursor_close(cur);
    return rc == 0 || rc == MDB_NOTFOUND
               ? 0
               : store__mdb_err(st, rc, err, "cannot prune the object history");
}
