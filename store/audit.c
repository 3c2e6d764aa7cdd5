/*
 * audit.c - the append-only audit log and its SHA-256 hash chain.
 *
 * hash(n) = SHA-256(raw hash(n-1) || canonical JSON of record n without "hash"),
 * with 32 zero bytes before the first record. Canonical = compact, keys sorted.
 * The chain head (last seq, raw hash) lives in meta and is written in the same
 * transaction as the record, so a commit never leaves a gap or a stale head.
 */
#include "internal.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "clock.h"
#include "names.h"
#include "numfmt.h"
#include "err.h"

#define HASH_LEN STORE__HASH_LEN
#define CANON STORE__CANON
#define META_HEAD STORE__META_HEAD

/* Whether txn is the writer's top-level transaction with no child open: the one whose audit
 * head is cached in the store and written to meta once, at its commit
 * (store__audit_head_flush). Checked first against write_txn, which other threads may read. */
static int head_cached(struct store *st, MDB_txn *txn)
{
    return txn == atomic_load(&st->write_txn) && atomic_load(&st->nchildren) == 0 &&
           !store__dry_of(txn);
}

/* The record number and hash metadata holds under name (the audit head's or base's, what)
 * into *h; *h as it was when there is none. 0 or ERR_*. */
static int seq_hash_get(MDB_txn *txn, const char *name, const char *what, struct store__head *h,
                        struct err *err)
{
    MDB_val v;
    int rc = store__meta_get(txn, name, &v, err);
    if (rc == ERR_NOT_FOUND)
        return 0;
    if (rc < 0)
        return rc;
    if (v.mv_size != 8 + HASH_LEN)
        return err_set(err, ERR_STORE, "corrupt audit %s in metadata (%zu bytes)", what, v.mv_size);
    h->seq = store__be64_get(v.mv_data);
    memcpy(h->hash, (unsigned char *)v.mv_data + 8, HASH_LEN);
    return 0;
}

int store__audit_head(MDB_txn *txn, struct store__head *h, struct err *err)
{
    struct store *st = store__of(txn);
    if (head_cached(st, txn) && st->head_txn == txn && st->head_full) {
        h->seq = st->head_seq;
        memcpy(h->hash, st->head_hash, HASH_LEN);
        return 0;
    }
    memset(h, 0, sizeof(*h));
    return seq_hash_get(txn, META_HEAD, "head", h, err);
}

static int head_put(MDB_txn *txn, const struct store__head *h, struct err *err)
{
    unsigned char hbuf[8 + HASH_LEN];
    store__be64_put(hbuf, h->seq);
    memcpy(hbuf + 8, h->hash, HASH_LEN);
    return store__meta_put(txn, META_HEAD, hbuf, sizeof(hbuf), err);
}

int store__audit_head_flush(MDB_txn *txn, struct err *err)
{
    struct store *st = store__of(txn);
    if (st->head_txn != txn || !st->head_dirty)
        return 0;
    struct store__head h = {.seq = st->head_seq};
    memcpy(h.hash, st->head_hash, HASH_LEN);
    st->head_dirty = 0;
    return head_put(txn, &h, err);
}

/* SHA-256, fetched once: OpenSSL 3 looks EVP_sha256() up again on every EVP_Digest, a
 * tenth of each record's hashing. */
static EVP_MD *sha256_md;
static pthread_key_t sha256_ctx_key; /* each thread's digest context, reused */
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void ctx_free(void *ctx)
{
    EVP_MD_CTX_free(ctx);
}

static void sha256_fetch(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
    if (pthread_key_create(&sha256_ctx_key, ctx_free) != 0)
        abort();
}

/* SHA-256 over buf, which holds the previous raw hash followed by the canonical record.
 * The context is the thread's, kept: a new one per record cost a fifth of the digest. */
static void digest(const char *buf, size_t len, unsigned char out[HASH_LEN])
{
    unsigned int n = HASH_LEN;
    pthread_once(&sha256_once, sha256_fetch);
    const EVP_MD *md = sha256_md ? sha256_md : EVP_sha256();
    EVP_MD_CTX *ctx = pthread_getspecific(sha256_ctx_key);
    if (!ctx) {
        ctx = EVP_MD_CTX_new();
        if (!ctx || pthread_setspecific(sha256_ctx_key, ctx) != 0)
            abort();
    }
    if (!EVP_DigestInit_ex2(ctx, md, NULL) || !EVP_DigestUpdate(ctx, buf, len) ||
        !EVP_DigestFinal_ex(ctx, out, &n))
        abort();
}

static const char *const kind_names[] = {
#define STORE__AUDIT_NAME(name, str, meaning) str,
    STORE_AUDIT_KIND_MAP(STORE__AUDIT_NAME)
#undef STORE__AUDIT_NAME
};

const char *store_audit_kind_name(enum store_audit_kind kind)
{
    return (unsigned)kind < STORE_AUDIT_KIND_COUNT ? kind_names[kind] : "unknown";
}

int store_audit_kind_parse(const char *name, enum store_audit_kind *out, struct err *err)
{
    int k = names_parse(kind_names, STORE_AUDIT_KIND_COUNT, name, "audit kind", "kind", err);
    if (k < 0)
        return k;
    *out = (enum store_audit_kind)k;
    return 0;
}

/* 1 when the key starting at k (JSON-escaped, up to its closing quote) sorts after name. */
static int key_after(const char *k, const char *name)
{
    for (size_t j = 0;; j++) {
        if (k[j] == '"')
            return 0; /* a prefix of name, or name itself */
        if (!name[j])
            return 1;
        if (k[j] != name[j])
            return (unsigned char)k[j] > (unsigned char)name[j];
    }
}

/* Where each of the k names (in sorted order) goes among the top-level members of the
 * canonical object s[0..n): out[i], before the first key that sorts after names[i], or
 * before the closing brace. One pass over s. */
static void member_slots(const char *s, size_t n, const char *const *names, size_t k, size_t *out)
{
    int depth = 0, in_str = 0;
    size_t next = 0; /* names before next are placed */
    for (size_t i = 0; i < n && next < k; i++) {
        char ch = s[i];
        if (in_str) { /* to the string's end: the next '"' after an even run of '\\' */
            const char *q = memchr(s + i, '"', n - i);
            if (!q)
                break;
            size_t bs = 0;
            while (q - bs > s + i && q[-1 - (ptrdiff_t)bs] == '\\')
                bs++;
            i = (size_t)(q - s);
            in_str = bs % 2 != 0;
        } else if (ch == '"') {
            if (depth == 1 && (s[i - 1] == '{' || s[i - 1] == ','))
                while (next < k && key_after(s + i + 1, names[next]))
                    out[next++] = i;
            in_str = 1;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if ((ch == '}' || ch == ']') && --depth == 0) {
            while (next < k)
                out[next++] = i;
        }
    }
    while (next < k)
        out[next++] = n - 1;
}

static size_t member_slot(const char *s, size_t n, const char *name)
{
    size_t at;
    member_slots(s, n, &name, 1, &at);
    return at;
}

/* The canonical bytes at sc->buf + off (len of them) with the member "name":value (value:
 * JSON text, vlen bytes) spliced in where a canonical dump would put it, in place. Returns
 * the new length; at: where it goes, SIZE_MAX: found. Splicing instead of dumping the
 * record again: the stored bytes are the same, for half the cost. */
static size_t splice(struct store__scratch *sc, size_t off, size_t len, size_t at, const char *name,
                     const char *value, size_t vlen)
{
    size_t nl = strlen(name), need = off + len + nl + vlen + 8;
    if (sc->cap < need) {
        sc->cap = 2 * need;
        sc->buf = xrealloc(sc->buf, sc->cap);
    }
    char *s = sc->buf + off;
    if (at == SIZE_MAX)
        at = member_slot(s, len, name);
    int last = s[at] == '}';
    size_t m = (last && at > 1) + nl + 3 + vlen + !last; /* [,]"name":value[,] */
    memmove(s + at + m, s + at, len - at);
    char *p = s + at;
    if (last && at > 1)
        *p++ = ',';
    *p++ = '"';
    memcpy(p, name, nl);
    p += nl;
    *p++ = '"';
    *p++ = ':';
    memcpy(p, value, vlen);
    p += vlen;
    if (!last)
        *p = ',';
    return len + m;
}

/* The record at sc->buf + HASH_LEN (len canonical bytes, "hash" not yet in), chained after
 * h (its seq already the record's): hashed, stored under h->seq, the head moved. hash_at:
 * where "hash" goes in it, SIZE_MAX: found. */
static int append_canon(MDB_txn *txn, struct store__head *h, size_t len, size_t hash_at,
                        json_t *rec, uint64_t *seq_out, struct err *err)
{
    struct store *st = store__of(txn);
    struct store__scratch *sc = store__scratch(txn);
    unsigned char kbuf[8];
    char hexhash[2 * HASH_LEN + 3];
    MDB_val k = {8, kbuf}, v;

    /* The previous hash goes right before the canonical bytes: one digest call. */
    memcpy(sc->buf, h->hash, HASH_LEN);
    digest(sc->buf, HASH_LEN + len, h->hash);
    hexhash[0] = '"';
    store__hex(h->hash, HASH_LEN, hexhash + 1);
    hexhash[2 * HASH_LEN + 1] = '"';
    if (rec)
        json_object_set_new(rec, "hash", json_stringn(hexhash + 1, 2 * HASH_LEN));
    store__be64_put(kbuf, h->seq);
    v.mv_size = splice(sc, HASH_LEN, len, hash_at, "hash", hexhash, 2 * HASH_LEN + 2);
    v.mv_data = sc->buf + HASH_LEN;
    int rc = store__put(txn, st->dbi[DBI_AUDIT], &k, &v, MDB_APPEND);
    if (rc == MDB_KEYEXIST) /* a stray record past the head (tampering): refuse, no overwrite */
        return err_set(err, ERR_STORE, "audit record %" PRIu64 " already exists past the head",
                       h->seq);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot append an audit record");
    if (head_cached(st, txn)) { /* meta's head is written once, at the commit */
        st->head_txn = txn;
        st->head_seq = h->seq;
        memcpy(st->head_hash, h->hash, HASH_LEN);
        st->head_full = 1;
        st->head_dirty = 1;
    } else if ((rc = head_put(txn, h, err)) < 0) {
        return rc;
    } else if (!store__dry_of(txn)) { /* history.c's cache of the writer's head */
        st->head_txn = txn;
        st->head_seq = h->seq;
        st->head_full = 0;
    }
    if (seq_out)
        *seq_out = h->seq;
    return 0;
}

int store_audit_append(MDB_txn *txn, json_t *rec, uint64_t *seq_out, struct err *err)
{
    char ts[64];
    struct store__head h;
    int rc;

    if (!json_is_object(rec))
        return err_set(err, ERR_INVALID, "audit record is not an object");
    enum store_audit_kind kind;
    if ((rc = store_audit_kind_parse(json_string_value(json_object_get(rec, "kind")), &kind, err)) <
        0)
        return rc;
    if ((rc = store__audit_head(txn, &h, err)) < 0)
        return rc;
    h.seq++;
    json_object_set_new(rec, "seq", json_integer((json_int_t)h.seq));
    if (!json_object_get(rec, "ts")) {
        store__now_rfc3339(ts, sizeof(ts));
        json_object_set_new(rec, "ts", json_string(ts));
    }
    json_object_del(rec, "hash");
    size_t len = store__dump(store__scratch(txn), rec, CANON, HASH_LEN);
    return append_canon(txn, &h, len, SIZE_MAX, rec, seq_out, err);
}

int store_audit_append_text(MDB_txn *txn, enum store_audit_kind kind, const char *canon, size_t len,
                            const char *ts, uint64_t *seq_out, struct err *err)
{
    struct store__head h;
    char buf[NUMFMT_INT64_LEN + 64], *end = buf + NUMFMT_INT64_LEN, *p;
    int rc;

    if ((unsigned)kind >= STORE_AUDIT_KIND_COUNT || len < 2 || canon[0] != '{')
        return err_set(err, ERR_INTERNAL, "audit record text is not a record");
    if ((rc = store__audit_head(txn, &h, err)) < 0)
        return rc;
    h.seq++;
    struct store__scratch *sc = store__scratch(txn);
    size_t need = HASH_LEN + len + 256;
    if (sc->cap < need) {
        sc->cap = 2 * need;
        sc->buf = xrealloc(sc->buf, sc->cap);
    }
    char now[64];
    if (!ts) {
        store__now_rfc3339(now, sizeof(now));
        ts = now;
    }
    size_t tl = strlen(ts);
    if (tl + 2 > sizeof(buf) - NUMFMT_INT64_LEN)
        return err_set(err, ERR_INVALID, "audit record time '%s' is too long", ts);
    p = numfmt_u64(end, h.seq);
    char *tq = end; /* "ts" value, quoted, after the digits */
    tq[0] = '"';
    memcpy(tq + 1, ts, tl);
    tq[tl + 1] = '"';
    /* "seq" and "ts" where a sorted dump puts them, found in one pass: canon, its members
     * up to seq's slot, seq, up to ts's slot, ts, the rest */
    static const char *const names[] = {"hash", "seq", "ts"};
    size_t slots[3], *at = slots + 1;
    member_slots(canon, len, names, 3, slots);
    const char *val[2] = {p, tq};
    size_t vlen[2] = {(size_t)(end - p), tl + 2};
    char *o = sc->buf + HASH_LEN;
    size_t from = 0;
    for (int i = 0; i < 2; i++) {
        memcpy(o, canon + from, at[i] - from);
        o += at[i] - from;
        from = at[i];
        int last = canon[at[i]] == '}', empty = o - (sc->buf + HASH_LEN) == 1;
        if (last && !empty)
            *o++ = ',';
        *o++ = '"';
        memcpy(o, names[i + 1], strlen(names[i + 1]));
        o += strlen(names[i + 1]);
        *o++ = '"';
        *o++ = ':';
        memcpy(o, val[i], vlen[i]);
        o += vlen[i];
        if (!last)
            *o++ = ',';
    }
    memcpy(o, canon + from, len - from);
    o += len - from;
    len = (size_t)(o - (sc->buf + HASH_LEN));
    /* "hash" sorts before "seq": its slot is where it was in canon */
    return append_canon(txn, &h, len, slots[0], NULL, seq_out, err);
}

int store_audit_last_seq(MDB_txn *txn, uint64_t *out, struct err *err)
{
    struct store__head h;
    int rc = store__audit_head(txn, &h, err);

    *out = rc < 0 ? 0 : h.seq;
    return rc;
}

int store_audit_scan(MDB_txn *txn, uint64_t from, uint64_t to, store_audit_fn fn, void *ctx,
                     struct err *err)
{
    struct store *st = store__of(txn);
    unsigned char kbuf[8];
    struct store__cur cur;
    MDB_val k = {8, kbuf}, v;
    MDB_cursor_op op = MDB_SET_RANGE;
    uint64_t seq;
    int rc;

    store__be64_put(kbuf, from);
    rc = store__cur_open(txn, st->dbi[DBI_AUDIT], &cur);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot open a cursor");
    for (;; op = MDB_NEXT) {
        rc = store__cur_get(&cur, &k, &v, op);
        if (rc == MDB_NOTFOUND) {
            rc = 0;
            break;
        }
        if (rc) {
            rc = store__mdb_err(st, rc, err, "cannot scan the audit log");
            break;
        }
        if (k.mv_size != 8)
            continue;
        seq = store__be64_get(k.mv_data);
        if (to && seq > to)
            break;
        if ((rc = fn(ctx, seq, v.mv_data, v.mv_size)) != 0) {
            rc = rc > 0 ? 0 : rc;
            break;
        }
    }
    store__cur_close(&cur);
    return rc;
}

int store__audit_put_raw(MDB_txn *txn, uint64_t seq, const char *json, size_t len, struct err *err)
{
    struct store *st = store__of(txn);
    unsigned char kbuf[8];
    MDB_val k = {8, kbuf}, v = {len, (void *)json};
    int rc;

    store__be64_put(kbuf, seq);
    rc = mdb_put(txn, st->dbi[DBI_AUDIT], &k, &v, 0);
    return rc ? store__mdb_err(st, rc, err, "cannot write an audit record") : 0;
}

int store__audit_del_raw(MDB_txn *txn, uint64_t seq, struct err *err)
{
    struct store *st = store__of(txn);
    unsigned char kbuf[8];
    MDB_val k = {8, kbuf};
    int rc;

    store__be64_put(kbuf, seq);
    rc = mdb_del(txn, st->dbi[DBI_AUDIT], &k, NULL);
    return rc ? store__mdb_err(st, rc, err, "cannot delete an audit record") : 0;
}

int store__audit_base(MDB_txn *txn, struct store__head *b, struct err *err)
{
    memset(b, 0, sizeof(*b));
    b->seq = 1;
    return seq_hash_get(txn, STORE__META_BASE, "base", b, err);
}

int store_audit_first_seq(MDB_txn *txn, uint64_t *out, struct err *err)
{
    struct store__head b;
    int rc = store__audit_base(txn, &b, err);

    *out = b.seq;
    return rc;
}
