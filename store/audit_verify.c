/*
 * audit_verify.c - verifying the audit chain: one record walker used for the store
 * (store_audit_verify, store_audit_verify_signed, the start-up check) and for an NDJSON
 * export read offline, so both apply exactly the same rules.
 *
 * A checkpoint record n must name record n-1 and the hash the chain has for it; with a key,
 * its signature must verify. So a record rewritten before a checkpoint, with every later
 * hash recomputed, breaks at that checkpoint: the signed hash no longer matches.
 */
#include "internal.h"

#include <inttypes.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "audit_sig.h"
#include "err.h"

#define HASH_LEN STORE__HASH_LEN

struct walk {
    struct store_audit_verdict *out;
    const struct store_audit_key *key;
    unsigned char prev[HASH_LEN];
    int have_prev;    /* 0: the first record anchors the walk (offline) */
    uint64_t next;    /* the seq expected next; 0: any (offline, first record) */
    int rank;         /* the newest signing key met so far (store_audit_key_rank), -1: none */
    uint64_t rank_at; /* the checkpoint record that showed it */
    char *buf;
    size_t cap;
};

static int fail(struct walk *w, uint64_t seq, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct walk *w, uint64_t seq, const char *fmt, ...)
{
    va_list ap;

    w->out->ok = 0;
    w->out->first_bad = seq;
    va_start(ap, fmt);
    vsnprintf(w->out->reason, sizeof(w->out->reason), fmt, ap);
    va_end(ap);
    return 1;
}

/* A checkpoint record: it must sign the record before it with the hash the chain has (or,
 * as the first record of a pruned log or export, it sets that hash). */
static int check_ckpt(struct walk *w, uint64_t seq, json_t *rec)
{
    struct store_ckpt cp;
    struct err err = ERR_INIT;
    char got[2 * HASH_LEN + 1], want[2 * HASH_LEN + 1];

    if (store_ckpt_parse(json_object_get(rec, "checkpoint"), &cp, &err) < 0)
        return fail(w, seq, "record %" PRIu64 ": %s", seq, err.msg);
    if (cp.seq + 1 != seq)
        return fail(w, seq,
                    "record %" PRIu64 ": a checkpoint must sign the record before it, not "
                    "record %" PRIu64,
                    seq, cp.seq);
    if (w->key && store_ckpt_verify(w->key, &cp, &err) < 0)
        return fail(w, seq, "record %" PRIu64 ": %s", seq, err.msg);
    if (w->key) {
        int rank = store_audit_key_rank(w->key, cp.key);
        if (rank < w->rank)
            return fail(w, seq,
                        "record %" PRIu64 ": checkpoint signed by the retired key '%s' after "
                        "record %" PRIu64 " was signed by a newer key (a retired key signs "
                        "nothing after the rotation)",
                        seq, cp.key, w->rank_at);
        if (rank > w->rank) {
            w->rank = rank;
            w->rank_at = seq;
        }
    }
    if (w->have_prev && memcmp(cp.hash, w->prev, HASH_LEN) != 0) {
        store__hex(w->prev, 8, got);
        store__hex(cp.hash, 8, want);
        return fail(w, cp.seq,
                    "record %" PRIu64 ": hash %s... differs from %s... signed by the checkpoint "
                    "in record %" PRIu64 " (a record at or before %" PRIu64
                    " was rewritten and the hashes after it recomputed)",
                    cp.seq, got, want, seq, cp.seq);
    }
    memcpy(w->prev, cp.hash, HASH_LEN);
    w->have_prev = 1;
    w->out->checkpoints++;
    w->out->signed_to = cp.seq;
    return 0;
}

/* Checks one record (seq from its key, or 0 offline) and advances. 0 good, 1 broken. */
static int walk_record(struct walk *w, uint64_t key_seq, const char *json, size_t len)
{
    unsigned char want[HASH_LEN], got[HASH_LEN];
    unsigned int dlen = HASH_LEN;
    json_error_t jerr;
    json_t *rec = store__json_load(json, len, &jerr), *jseq = json_object_get(rec, "seq");
    uint64_t seq = json_is_integer(jseq) ? (uint64_t)json_integer_value(jseq) : 0;
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    int bad, rc = 0;
    size_t n;

    if (!json_is_object(rec) || !seq) {
        rc = key_seq ? fail(w, key_seq, "record %" PRIu64 ": not a JSON object with a seq", key_seq)
                     : fail(w, w->next,
                            "line after record %" PRIu64
                            ": not an audit record (a JSON object with a seq)",
                            w->next ? w->next - 1 : 0);
        goto out;
    }
    if (key_seq && seq != key_seq) {
        rc = fail(w, key_seq, "record %" PRIu64 ": stored seq differs from its key", key_seq);
        goto out;
    }
    if (w->next && seq != w->next) {
        rc = seq > w->next
                 ? fail(w, w->next, "gap after record %" PRIu64 " (record %" PRIu64 " missing)",
                        w->next - 1, w->next)
                 : fail(w, seq, "record %" PRIu64 " out of order after record %" PRIu64, seq,
                        w->next - 1);
        goto out;
    }
    if (kind && !strcmp(kind, "checkpoint") && (rc = check_ckpt(w, seq, rec)) != 0)
        goto out;
    if (!w->have_prev && seq > 1) {
        rc = fail(w, seq,
                  "the records start at %" PRIu64 " with no checkpoint to anchor them "
                  "(records 1..%" PRIu64 " missing)",
                  seq, seq - 1);
        goto out;
    }
    bad = store__unhex(json_string_value(json_object_get(rec, "hash")), want, HASH_LEN);
    json_object_del(rec, "hash");
    /* the previous hash, then the record as the writer made it (json_dumps's canonical
     * bytes, from the store's writer: with jansson's reader and json_dumpb a long chain was
     * checked at 19 us a record, 86% of it those two) */
    struct store_jw jw = {w->buf, 0, w->cap};
    store_jw_raw(&jw, w->have_prev ? (const char *)w->prev : (const char[HASH_LEN]){0}, HASH_LEN);
    store_jw_value(&jw, rec, JSON_SORT_KEYS);
    w->buf = jw.buf;
    w->cap = jw.cap;
    n = jw.len;
    EVP_Digest(w->buf, n, got, &dlen, EVP_sha256(), NULL);
    if (bad || memcmp(got, want, HASH_LEN) != 0) {
        rc = fail(w, seq, "record %" PRIu64 ": hash mismatch", seq);
        goto out;
    }
    memcpy(w->prev, got, HASH_LEN);
    w->have_prev = 1;
    w->next = seq + 1;
    if (!w->out->checked++)
        w->out->from = seq;
    w->out->to = seq;
out:
    json_decref(rec);
    return rc;
}

/* The hash before `from`: the prune base's, or record from-1's stored hash. */
static int load_prev(MDB_txn *txn, struct walk *w, uint64_t from, const struct store__head *base,
                     struct err *err)
{
    struct store *st = store__of(txn);
    unsigned char kbuf[8];
    MDB_val k = {8, kbuf}, v;
    json_t *rec;
    int rc, bad;

    w->have_prev = 1;
    if (from <= base->seq) {
        memcpy(w->prev, base->hash, HASH_LEN);
        return 0;
    }
    store__be64_put(kbuf, from - 1);
    rc = mdb_get(txn, st->dbi[DBI_AUDIT], &k, &v);
    if (rc == MDB_NOTFOUND)
        return fail(w, from - 1, "record %" PRIu64 " (before the range) is missing", from - 1);
    if (rc)
        return store__mdb_err(st, rc, err, "cannot read the audit log");
    rec = json_loadb(v.mv_data, v.mv_size, 0, NULL);
    bad = store__unhex(json_string_value(json_object_get(rec, "hash")), w->prev, HASH_LEN);
    json_decref(rec);
    return bad ? fail(w, from - 1, "record %" PRIu64 " (before the range) has no valid hash",
                      from - 1)
               : 0;
}

/* Walks [from, end] of the store. 0 when all present and good, 1 broken, or ERR_*. */
static int walk_store(MDB_txn *txn, struct walk *w, uint64_t from, uint64_t end, int reaches_end,
                      uint64_t head, struct err *err)
{
    struct store *st = store__of(txn);
    unsigned char kbuf[8];
    MDB_cursor *cur = NULL;
    MDB_val k = {8, kbuf}, v;
    MDB_cursor_op op = MDB_SET_RANGE;
    int rc;

    w->next = from;
    store__be64_put(kbuf, from);
    if ((rc = mdb_cursor_open(txn, st->dbi[DBI_AUDIT], &cur)))
        return store__mdb_err(st, rc, err, "cannot open a cursor");
    for (; w->next <= end; op = MDB_NEXT) {
        rc = mdb_cursor_get(cur, &k, &v, op);
        if (rc == MDB_NOTFOUND)
            break;
        if (rc) {
            rc = store__mdb_err(st, rc, err, "cannot read the audit log");
            goto out;
        }
        uint64_t seq = k.mv_size == 8 ? store__be64_get(k.mv_data) : 0;
        if (seq > end)
            break;
        if ((rc = walk_record(w, seq, v.mv_data, v.mv_size)) != 0)
            goto out;
    }
    rc = 0;
    if (w->next <= end && reaches_end)
        rc = fail(w, w->next,
                  "head mismatch: metadata head is record %" PRIu64 " but the log ends at record "
                  "%" PRIu64 " (truncated)",
                  head, w->next - 1);
    else if (w->next <= end)
        rc = fail(w, w->next, "gap after record %" PRIu64 " (record %" PRIu64 " missing)",
                  w->next - 1, w->next);
out:
    mdb_cursor_close(cur);
    return rc;
}

/* Past the head: no record may follow it, and its hash must be the one in metadata. */
static int check_head(MDB_txn *txn, struct walk *w, const struct store__head *h, int walked_to_head,
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
        return fail(w, h->seq + 1,
                    "head mismatch: the log has record %" PRIu64 " past the metadata head %" PRIu64,
                    last, h->seq);
    if (h->seq && walked_to_head && memcmp(w->prev, h->hash, HASH_LEN) != 0)
        return fail(w, h->seq, "head mismatch: record %" PRIu64 " differs from the metadata head",
                    h->seq);
    return 0;
}

int store_audit_verify_signed(MDB_txn *txn, uint64_t from, uint64_t to,
                              const struct store_audit_key *key, struct store_audit_verdict *out,
                              struct err *err)
{
    struct walk w = {.out = out, .key = key, .rank = -1, .cap = 4096};
    struct store__head h, base;
    uint64_t end;
    int rc, reaches_end;

    memset(out, 0, sizeof(*out));
    if ((rc = store__audit_head(txn, &h, err)) < 0 || (rc = store__audit_base(txn, &base, err)) < 0)
        return rc;
    if (from < base.seq)
        from = base.seq;
    reaches_end = to == 0 || to >= h.seq;
    end = reaches_end ? h.seq : to;
    out->ok = 1;
    w.buf = xmalloc(w.cap);
    rc = from <= end ? load_prev(txn, &w, from, &base, err) : 0;
    if (rc == 0 && from <= end)
        rc = walk_store(txn, &w, from, end, reaches_end, h.seq, err);
    if (rc == 0 && reaches_end)
        rc = check_head(txn, &w, &h, from <= end, err);
    out->from = from;
    out->to = end;
    if (rc == 0)
        snprintf(out->reason, sizeof(out->reason), "%" PRIu64 " records verify", out->checked);
    free(w.buf);
    return rc < 0 ? rc : 0;
}

int store_audit_verify(MDB_txn *txn, uint64_t from, uint64_t to, struct store_audit_verdict *out,
                       struct err *err)
{
    return store_audit_verify_signed(txn, from, to, NULL, out, err);
}

/* The witness's checkpoint against the log: signed, and record wc->seq still has its hash.
 * Returns 0 with *from set to the record after it (left 0 when a prune went past it),
 * 1 when broken (said in *out), or ERR_*. */
static int check_witness(MDB_txn *txn, const struct store_audit_key *key,
                         const struct store_ckpt *wc, const struct store__head *h,
                         const struct store__head *base, uint64_t *from,
                         struct store_audit_verdict *out, struct err *err)
{
    struct walk w = {.out = out};
    struct err e = ERR_INIT;
    struct store *st = store__of(txn);
    unsigned char kbuf[8], hash[HASH_LEN];
    MDB_val k = {8, kbuf}, v;
    json_t *rec;
    int rc, bad;

    if (key && store_ckpt_verify(key, wc, &e) < 0)
        return fail(&w, wc->seq, "the witness's %s", e.msg);
    if (wc->seq > h->seq)
        return fail(&w, h->seq + 1,
                    "the log ends at record %" PRIu64 " but the witness holds a signed checkpoint "
                    "of record %" PRIu64 " (records %" PRIu64 "..%" PRIu64 " were deleted)",
                    h->seq, wc->seq, h->seq + 1, wc->seq);
    if (wc->seq + 1 < base->seq)
        return 0; /* pruned past the witness: the base's checkpoint anchors instead */
    if (wc->seq + 1 == base->seq) {
        memcpy(hash, base->hash, HASH_LEN);
    } else {
        store__be64_put(kbuf, wc->seq);
        if ((rc = mdb_get(txn, st->dbi[DBI_AUDIT], &k, &v)) == MDB_NOTFOUND)
            return fail(&w, wc->seq,
                        "record %" PRIu64 " is missing but the witness holds a "
                        "signed checkpoint of it",
                        wc->seq);
        if (rc)
            return store__mdb_err(st, rc, err, "cannot read the audit log");
        rec = json_loadb(v.mv_data, v.mv_size, 0, NULL);
        bad = store__unhex(json_string_value(json_object_get(rec, "hash")), hash, HASH_LEN);
        json_decref(rec);
        if (bad)
            memset(hash, 0, HASH_LEN);
    }
    if (memcmp(hash, wc->hash, HASH_LEN) != 0)
        return fail(&w, wc->seq,
                    "record %" PRIu64 ": hash differs from the signed checkpoint in the witness "
                    "(a record at or before %" PRIu64
                    " was rewritten and the hashes after it recomputed)",
                    wc->seq, wc->seq);
    *from = wc->seq + 1;
    return 0;
}

int store_audit_check_start(MDB_txn *txn, const struct store_audit_key *key,
                            const struct store_ckpt *wc, struct store_audit_verdict *out,
                            struct err *err)
{
    struct store__head h, base;
    uint64_t from = 0, checkpoints = 0, signed_to = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    out->ok = 1;
    if ((rc = store__audit_head(txn, &h, err)) < 0 || (rc = store__audit_base(txn, &base, err)) < 0)
        return rc;
    if (wc) {
        if ((rc = check_witness(txn, key, wc, &h, &base, &from, out, err)) != 0)
            return rc < 0 ? rc : 0;
        if (from) {
            checkpoints = 1;
            signed_to = wc->seq;
        }
    }
    /* without a witness that reaches the log: from the newest checkpoint record, which the
     * walk checks against the record before it */
    if (!from && (rc = store__audit_find_ckpt(txn, 0, &from, NULL, err)) < 0)
        return rc;
    if (h.seq && from > h.seq) /* the witness signs the head: check the head record alone */
        from = h.seq;
    if ((rc = store_audit_verify_signed(txn, from, 0, key, out, err)) < 0)
        return rc;
    out->checkpoints += checkpoints;
    if (!out->signed_to)
        out->signed_to = signed_to;
    return 0;
}

int store_audit_verify_witnessed(MDB_txn *txn, uint64_t from, uint64_t to,
                                 const struct store_audit_key *key, const struct store_ckpt *w,
                                 struct store_audit_verdict *out, struct err *err)
{
    struct store__head h, base;
    uint64_t after = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    out->ok = 1;
    if (w && (to == 0 || to >= w->seq)) {
        if ((rc = store__audit_head(txn, &h, err)) < 0 ||
            (rc = store__audit_base(txn, &base, err)) < 0)
            return rc;
        if ((rc = check_witness(txn, key, w, &h, &base, &after, out, err)) != 0) {
            out->from = from;
            out->to = to ? to : h.seq;
            return rc < 0 ? rc : 0;
        }
    }
    if ((rc = store_audit_verify_signed(txn, from, to, key, out, err)) < 0)
        return rc;
    if (after && out->ok && out->signed_to < w->seq)
        out->signed_to = w->seq;
    return 0;
}

/* ---- offline ---- */

struct store_audit_offline {
    struct walk w;
    struct store_audit_verdict v;
    int broken;
    struct store_ckpt expect; /* a witness's checkpoint the export must reach */
    int expecting, expect_met;
};

void store_audit_offline_expect(struct store_audit_offline *o, const struct store_ckpt *cp)
{
    o->expect = *cp;
    o->expecting = 1;
}

/* After record o->v.to verified: is it the witness's record, with the witness's hash? */
static int check_expect(struct store_audit_offline *o)
{
    if (!o->expecting || o->v.to != o->expect.seq)
        return 0;
    if (memcmp(o->w.prev, o->expect.hash, HASH_LEN) != 0)
        return fail(&o->w, o->expect.seq,
                    "record %" PRIu64 ": hash differs from the signed checkpoint in the witness "
                    "(a record at or before %" PRIu64
                    " was rewritten and the hashes after it recomputed)",
                    o->expect.seq, o->expect.seq);
    o->expect_met = 1;
    return 0;
}

struct store_audit_offline *store_audit_offline_new(const struct store_audit_key *key)
{
    struct store_audit_offline *o = xcalloc(1, sizeof(*o));

    o->v.ok = 1;
    o->w.out = &o->v;
    o->w.key = key;
    o->w.rank = -1;
    o->w.cap = 4096;
    o->w.buf = xmalloc(o->w.cap);
    return o;
}

int store_audit_offline_line(struct store_audit_offline *o, const char *line, size_t len)
{
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (o->broken || !len)
        return o->broken;
    o->broken = walk_record(&o->w, 0, line, len) || check_expect(o);
    return o->broken;
}

void store_audit_offline_finish(struct store_audit_offline *o, struct store_audit_verdict *out)
{
    if (!o->broken && !o->v.checked) {
        o->v.ok = 0;
        snprintf(o->v.reason, sizeof(o->v.reason), "the export holds no audit record");
    } else if (!o->broken && o->expecting && !o->expect_met && o->v.from <= o->expect.seq) {
        fail(&o->w, o->v.to + 1,
             "the export ends at record %" PRIu64 " but the witness holds a signed checkpoint "
             "of record %" PRIu64 " (records %" PRIu64 "..%" PRIu64 " are missing)",
             o->v.to, o->expect.seq, o->v.to + 1, o->expect.seq);
    } else if (!o->broken) {
        snprintf(o->v.reason, sizeof(o->v.reason), "%" PRIu64 " records verify", o->v.checked);
    }
    *out = o->v;
    free(o->w.buf);
    free(o);
}
