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

#define HASH_LEN 32
#define CANON (JSON_COMPACT | JSON_SORT_KEYS)
#define META_HEAD "audit_head" /* 8-byte big-endian seq followed by the raw hash */

struct head {
    uint64_t seq;
    unsigned char hash[HASH_LEN];
};

static void hex(const unsigned char *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";

    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

static int unhex(const char *s, unsigned char *out, size_t n)
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

static int read_head(MDB_txn *txn, struct head *h, struct err *err)
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

/* SHA-256 over buf, which holds the previous raw hash followed by the canonical record. */
static void digest(const char *buf, size_t len, unsigned char out[HASH_LEN])
{
    unsigned int n = HASH_LEN;

    EVP_Digest(buf, len, out, &n, EVP_sha256(), NULL);
}

static void now_rfc3339_ms(char *buf, size_t n)
{
    int64_t ms = clock_now_ms();
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;

    size_t len;

    gmtime_r(&secs, &tm);
    len = strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + len, n - len, ".%03uZ", (unsigned)(ms % 1000));
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

int store_audit_append(MDB_txn *txn, json_t *rec, uint64_t *seq_out, struct err *err)
{
    struct store *st = store__of(txn);
    unsigned char kbuf[8], hbuf[8 + HASH_LEN];
    char ts[64], hexhash[2 * HASH_LEN + 1];
    struct head h;
    MDB_val k = {8, kbuf}, v;
    size_t len;
    int rc;

    if (!json_is_object(rec))
        return err_set(err, ERR_INVALID, "audit record is not an object");
    enum store_audit_kind kind;
    if ((rc = store_audit_kind_parse(json_string_value(json_object_get(rec, "kind")), &kind, err)) <
        0)
        return rc;
    if ((rc = read_head(txn, &h, err)) < 0)
        return rc;
    h.seq++;
    json_object_set_new(rec, "seq", json_integer((json_int_t)h.seq));
    if (!json_object_get(rec, "ts")) {
        now_rfc3339_ms(ts, sizeof(ts));
        json_object_set_new(rec, "ts", json_string(ts));
    }
    json_object_del(rec, "hash");
    /* The previous hash goes right before the canonical bytes: one digest call. */
    len = store__dump(st, rec, CANON, HASH_LEN);
    memcpy(st->buf, h.hash, HASH_LEN);
    digest(st->buf, HASH_LEN + len, h.hash);
    hex(h.hash, HASH_LEN, hexhash);
    json_object_set_new(rec, "hash", json_string(hexhash));

    store__be64_put(kbuf, h.seq);
    v.mv_size = store__dump(st, rec, CANON, 0);
    v.mv_data = st->buf;
    rc = mdb_put(txn, st->dbi[DBI_AUDIT], &k, &v, MDB_APPEND);
    if (rc == MDB_KEYEXIST) /* a stray record past the head (tampering): refuse, no overwrite */
        return err_set(err, ERR_STORE, "audit record %" PRIu64 " already exists past the head",
                       h.seq);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot append an audit record");
    store__be64_put(hbuf, h.seq);
    memcpy(hbuf + 8, h.hash, HASH_LEN);
    if ((rc = store__meta_put(txn, META_HEAD, hbuf, sizeof(hbuf), err)) < 0)
        return rc;
    if (seq_out)
        *seq_out = h.seq;
    return 0;
}

int store_audit_last_seq(MDB_txn *txn, uint64_t *out, struct err *err)
{
    struct head h;
    int rc = read_head(txn, &h, err);

    *out = rc < 0 ? 0 : h.seq;
    return rc;
}

int store_audit_scan(MDB_txn *txn, uint64_t from, uint64_t to, store_audit_fn fn, void *ctx,
                     struct err *err)
{
    struct store *st = store__of(txn);
    unsigned char kbuf[8];
    MDB_cursor *cur = NULL;
    MDB_val k = {8, kbuf}, v;
    MDB_cursor_op op = MDB_SET_RANGE;
    uint64_t seq;
    int rc;

    store__be64_put(kbuf, from);
    rc = mdb_cursor_open(txn, st->dbi[DBI_AUDIT], &cur);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot open a cursor");
    for (;; op = MDB_NEXT) {
        rc = mdb_cursor_get(cur, &k, &v, op);
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
    mdb_cursor_close(cur);
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

/* ---- verification (may run in any read txn, so it keeps its own buffer) ---- */

struct verify {
    struct store_audit_verdict *out;
    unsigned char prev[HASH_LEN];
    char *buf;
    size_t cap;
};

static int fail(struct verify *vf, uint64_t seq, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct verify *vf, uint64_t seq, const char *fmt, ...)
{
    va_list ap;

    vf->out->ok = 0;
    vf->out->first_bad = seq;
    va_start(ap, fmt);
    vsnprintf(vf->out->reason, sizeof(vf->out->reason), fmt, ap);
    va_end(ap);
    return 1;
}

/* Checks one record against vf->prev and advances it. Returns 0 when good, 1 on a
 * failure recorded in the verdict. */
static int check_record(struct verify *vf, uint64_t seq, const MDB_val *v)
{
    unsigned char want[HASH_LEN], got[HASH_LEN];
    json_t *rec, *jseq;
    size_t n;
    int bad;

    rec = json_loadb(v->mv_data, v->mv_size, 0, NULL);
    if (!json_is_object(rec)) {
        json_decref(rec);
        return fail(vf, seq, "record %" PRIu64 ": not a JSON object", seq);
    }
    jseq = json_object_get(rec, "seq");
    if (!json_is_integer(jseq) || (uint64_t)json_integer_value(jseq) != seq) {
        json_decref(rec);
        return fail(vf, seq, "record %" PRIu64 ": stored seq differs from its key", seq);
    }
    bad = unhex(json_string_value(json_object_get(rec, "hash")), want, HASH_LEN);
    json_object_del(rec, "hash");
    for (;;) {
        n = json_dumpb(rec, vf->buf + HASH_LEN, vf->cap - HASH_LEN, CANON);
        if (n <= vf->cap - HASH_LEN)
            break;
        vf->cap = 2 * (n + HASH_LEN);
        vf->buf = xrealloc(vf->buf, vf->cap);
    }
    json_decref(rec);
    memcpy(vf->buf, vf->prev, HASH_LEN);
    digest(vf->buf, HASH_LEN + n, got);
    if (bad || memcmp(got, want, HASH_LEN) != 0)
        return fail(vf, seq, "record %" PRIu64 ": hash mismatch", seq);
    memcpy(vf->prev, got, HASH_LEN);
    return 0;
}

/* The chain before `from` starts at record from-1's stored hash. */
static int load_prev(MDB_txn *txn, struct verify *vf, uint64_t from, struct err *err)
{
    struct store *st = store__of(txn);
    unsigned char kbuf[8];
    MDB_val k = {8, kbuf}, v;
    json_t *rec;
    int rc, bad;

    memset(vf->prev, 0, HASH_LEN);
    if (from <= 1)
        return 0;
    store__be64_put(kbuf, from - 1);
    rc = mdb_get(txn, st->dbi[DBI_AUDIT], &k, &v);
    if (rc == MDB_NOTFOUND)
        return fail(vf, from - 1, "record %" PRIu64 " (before the range) is missing", from - 1);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot read the audit log");
    rec = json_loadb(v.mv_data, v.mv_size, 0, NULL);
    bad = unhex(json_string_value(json_object_get(rec, "hash")), vf->prev, HASH_LEN);
    json_decref(rec);
    return bad ? fail(vf, from - 1, "record %" PRIu64 " (before the range) has no valid hash",
                      from - 1)
               : 0;
}

/* Walks [from, end]; returns 0 when all present and good, 1 on a recorded failure. */
static int walk(MDB_txn *txn, struct verify *vf, uint64_t from, uint64_t end, int reaches_end,
                uint64_t head, struct err *err)
{
    struct store *st = store__of(txn);
    unsigned char kbuf[8];
    MDB_cursor *cur = NULL;
    MDB_val k = {8, kbuf}, v;
    MDB_cursor_op op = MDB_SET_RANGE;
    uint64_t seq, expected = from;
    int rc;

    store__be64_put(kbuf, from);
    if ((rc = mdb_cursor_open(txn, st->dbi[DBI_AUDIT], &cur)))
        return store__mdb_err(st, rc, err, "cannot open a cursor");
    for (; expected <= end; op = MDB_NEXT) {
        rc = mdb_cursor_get(cur, &k, &v, op);
        if (rc == MDB_NOTFOUND)
            break;
        if (rc) {
            rc = store__mdb_err(st, rc, err, "cannot read the audit log");
            goto out;
        }
        seq = k.mv_size == 8 ? store__be64_get(k.mv_data) : 0;
        if (seq > end)
            break;
        if (seq != expected) {
            rc = fail(vf, expected, "gap after record %" PRIu64 " (record %" PRIu64 " missing)",
                      expected - 1, expected);
            goto out;
        }
        if ((rc = check_record(vf, seq, &v)) != 0)
            goto out;
        vf->out->checked++;
        expected++;
    }
    rc = 0;
    if (expected <= end && reaches_end)
        rc = fail(vf, expected,
                  "head mismatch: metadata head is record %" PRIu64 " but the log ends at record "
                  "%" PRIu64 " (truncated)",
                  head, expected - 1);
    else if (expected <= end)
        rc = fail(vf, expected, "gap after record %" PRIu64 " (record %" PRIu64 " missing)",
                  expected - 1, expected);
out:
    mdb_cursor_close(cur);
    return rc;
}

/* Past the head: no record may follow it, and its hash must be the one in metadata. */
static int check_head(MDB_txn *txn, struct verify *vf, const struct head *h, uint64_t last_checked,
                      struct err *err)
{
    struct store *st = store__of(txn);
    MDB_cursor *cur = NULL;
    MDB_val k, v;
    uint64_t last = 0;
    int rc;

    if ((rc = mdb_cursor_open(txn, st->dbi[DBI_AUDIT], &cur)))
        return store__mdb_err(st, rc, err, "cannot open a cursor");
    rc = mdb_cursor_get(cur, &k, &v, MDB_LAST);
    mdb_cursor_close(cur);
    if (rc && rc != MDB_NOTFOUND)
        return store__mdb_err(st, rc, err, "cannot read the audit log");
    if (rc == 0 && k.mv_size == 8)
        last = store__be64_get(k.mv_data);
    if (last > h->seq)
        return fail(vf, h->seq + 1,
                    "head mismatch: the log has record %" PRIu64 " past the metadata head %" PRIu64,
                    last, h->seq);
    if (h->seq && last_checked == h->seq && memcmp(vf->prev, h->hash, HASH_LEN) != 0)
        return fail(vf, h->seq, "head mismatch: record %" PRIu64 " differs from the metadata head",
                    h->seq);
    return 0;
}

int store_audit_verify(MDB_txn *txn, uint64_t from, uint64_t to, struct store_audit_verdict *out,
                       struct err *err)
{
    struct verify vf = {.out = out, .cap = 4096};
    struct head h;
    uint64_t end;
    int rc, reaches_end;

    memset(out, 0, sizeof(*out));
    if ((rc = read_head(txn, &h, err)) < 0)
        return rc;
    if (from == 0)
        from = 1;
    reaches_end = to == 0 || to >= h.seq;
    end = reaches_end ? h.seq : to;
    out->ok = 1;
    out->from = from;
    out->to = end;
    vf.buf = xmalloc(vf.cap);
    rc = from <= end ? load_prev(txn, &vf, from, err) : 0;
    if (rc == 0 && from <= end)
        rc = walk(txn, &vf, from, end, reaches_end, h.seq, err);
    /* The head check compares the hash of record `end` when the walk reached it. */
    if (rc == 0 && reaches_end)
        rc = check_head(txn, &vf, &h, from <= end ? end : 0, err);
    if (rc == 0)
        snprintf(out->reason, sizeof(out->reason), "%" PRIu64 " records verify", out->checked);
    free(vf.buf);
    return rc < 0 ? rc : 0;
}
