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
#include "err.h"

#define HASH_LEN STORE__HASH_LEN
#define CANON STORE__CANON
#define META_HEAD STORE__META_HEAD

void store__hex(const unsigned char *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

int store__unhex(const char *s, unsigned char *out, size_t n)
{
    if (!s || strlen(s) != 2 * n)
        return -1;
    for (size_t i = 0; i < 2 * n; i++) {
        int c = s[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return -1;
        out[i / 2] = (unsigned char)(i % 2 ? (out[i / 2] << 4) | d : d);
    }
    return 0;
}

int store__audit_head(MDB_txn *txn, struct store__head *h, struct err *err)
{
    MDB_val v;
    int rc = store__meta_get(txn, META_HEAD, &v, err);

    memset(h, 0, sizeof(*h));
    if (rc == ERR_NOT_FOUND)
        return 0;
    if (rc < 0)
        return rc;
    if (v.mv_size != 8 + HASH_LEN)
        return err_set(err, ERR_STORE, "corrupt audit head in metadata (%zu bytes)", v.mv_size);
    h->seq = store__be64_get(v.mv_data);
    memcpy(h->hash, (unsigned char *)v.mv_data + 8, HASH_LEN);
    return 0;
}

/* SHA-256, fetched once: OpenSSL 3 looks EVP_sha256() up again on every EVP_Digest, a
 * tenth of each record's hashing. */
static EVP_MD *sha256_md;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;

static void sha256_fetch(void)
{
    sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

/* SHA-256 over buf, which holds the previous raw hash followed by the canonical record. */
static void digest(const char *buf, size_t len, unsigned char out[HASH_LEN])
{
    unsigned int n = HASH_LEN;

    pthread_once(&sha256_once, sha256_fetch);
    EVP_Digest(buf, len, out, &n, sha256_md ? sha256_md : EVP_sha256(), NULL);
}

void store__now_rfc3339(char *buf, size_t n)
{
    clock_format_rfc3339_ms(clock_now_ms(), buf, n);
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

/* 1 when the key starting at k (JSON-escaped, up to its closing quote) sorts after "hash". */
static int key_after_hash(const char *k)
{
    static const char hash[] = "hash";
    for (size_t j = 0;; j++) {
        if (k[j] == '"')
            return 0; /* a prefix of "hash", or "hash" itself */
        if (j == sizeof(hash) - 1)
            return 1;
        if (k[j] != hash[j])
            return (unsigned char)k[j] > (unsigned char)hash[j];
    }
}

/* Where "hash" goes among the top-level members of the canonical object s[0..n): before
 * the first key that sorts after it, or before the closing brace. */
static size_t hash_slot(const char *s, size_t n)
{
    int depth = 0, in_str = 0, esc = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (in_str) {
            if (esc)
                esc = 0;
            else if (ch == '\\')
                esc = 1;
            else if (ch == '"')
                in_str = 0;
        } else if (ch == '"') {
            if (depth == 1 && (s[i - 1] == '{' || s[i - 1] == ',') && key_after_hash(s + i + 1))
                return i;
            in_str = 1;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            if (--depth == 0)
                return i;
        }
    }
    return n - 1;
}

/* The stored record: the canonical bytes at sc->buf + off (len of them) with "hash" spliced
 * in where a canonical dump would put it, in place. Returns the new length. Splicing instead
 * of dumping the record a second time: the stored bytes are the same, for half the cost. */
static size_t with_hash(struct store__scratch *sc, size_t off, size_t len, const char *hexhash)
{
    char member[2 * HASH_LEN + 16];
    size_t need = off + len + sizeof(member) + 1;
    if (sc->cap < need) {
        sc->cap = 2 * need;
        sc->buf = xrealloc(sc->buf, sc->cap);
    }
    char *s = sc->buf + off;
    size_t at = hash_slot(s, len);
    int last = s[at] == '}';
    size_t m = 0; /* [,]"hash":"<hex>"[,] */
    if (last && at > 1)
        member[m++] = ',';
    memcpy(member + m, "\"hash\":\"", 8);
    m += 8;
    memcpy(member + m, hexhash, 2 * HASH_LEN);
    m += 2 * HASH_LEN;
    member[m++] = '"';
    if (!last)
        member[m++] = ',';
    memmove(s + at + m, s + at, len - at);
    memcpy(s + at, member, m);
    return len + m;
}

int store_audit_append(MDB_txn *txn, json_t *rec, uint64_t *seq_out, struct err *err)
{
    struct store *st = store__of(txn);
    unsigned char kbuf[8], hbuf[8 + HASH_LEN];
    char ts[64], hexhash[2 * HASH_LEN + 1];
    struct store__head h;
    MDB_val k = {8, kbuf}, v;
    size_t len;
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
    /* The previous hash goes right before the canonical bytes: one digest call. */
    struct store__scratch *sc = store__scratch(txn);
    len = store__dump(sc, rec, CANON, HASH_LEN);
    memcpy(sc->buf, h.hash, HASH_LEN);
    digest(sc->buf, HASH_LEN + len, h.hash);
    store__hex(h.hash, HASH_LEN, hexhash);
    json_object_set_new(rec, "hash", json_string(hexhash));

    store__be64_put(kbuf, h.seq);
    v.mv_size = with_hash(sc, HASH_LEN, len, hexhash);
    v.mv_data = sc->buf + HASH_LEN;
    rc = store__put(txn, st->dbi[DBI_AUDIT], &k, &v, MDB_APPEND);
    if (rc == MDB_KEYEXIST) /* a stray record past the head (tampering): refuse, no overwrite */
        return err_set(err, ERR_STORE, "audit record %" PRIu64 " already exists past the head",
                       h.seq);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot append an audit record");
    store__be64_put(hbuf, h.seq);
    memcpy(hbuf + 8, h.hash, HASH_LEN);
    if ((rc = store__meta_put(txn, META_HEAD, hbuf, sizeof(hbuf), err)) < 0)
        return rc;
    if (!store__dry_of(txn)) { /* history.c's cache of the writer's head */
        st->head_txn = txn;
        st->head_seq = h.seq;
    }
    if (seq_out)
        *seq_out = h.seq;
    return 0;
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
