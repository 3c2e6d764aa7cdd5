/* test_audit.c - the audit log: append, hash chain, verification, tampering, scans. */
#include <check.h>
#include <openssl/evp.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../store/internal.h" /* store__audit_put_raw / store__audit_del_raw */
#include "err.h"
#include "store.h"
#include "store_util.h"
#include "check_run.h"

static char *dir;
static struct store *st;

/* Appends records first..last in one transaction; checks the returned sequence numbers. */
static void append_range(int first, int last)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    uint64_t seq = 0;

    for (int i = first; i <= last; i++) {
        json_t *rec = json_pack("{s:i, s:s, s:s, s:[s, s], s:{s:i}}", "cycle", i, "kind", "placed",
                                "job", "default/train", "pods", "default/w-0", "default/w-1",
                                "details", "gpus", 8 * i);
        ck_assert_msg(store_audit_append(txn, rec, &seq, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(seq, (uint64_t)i);
        ck_assert_int_eq(json_integer_value(json_object_get(rec, "seq")), i);
        json_decref(rec);
    }
    store_util_commit(&txn);
}

static struct store_audit_verdict verify(uint64_t from, uint64_t to)
{
    struct store_audit_verdict v;
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_READ);

    ck_assert_msg(store_audit_verify(txn, from, to, &v, &err) == 0, "%s", err.msg);
    store_txn_abort(&txn);
    return v;
}

static int collect(void *ctx, uint64_t seq, const char *json, size_t len)
{
    json_t *rec = json_loadb(json, len, 0, NULL);

    ck_assert_ptr_nonnull(rec);
    ck_assert_int_eq(json_integer_value(json_object_get(rec, "seq")), (json_int_t)seq);
    json_array_append_new(ctx, rec);
    return 0;
}

/* The stored record seq, new. */
static json_t *record(uint64_t seq)
{
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    json_t *recs = json_array(), *rec;

    ck_assert_int_eq(store_audit_scan(txn, seq, seq, collect, recs, NULL), 0);
    store_txn_abort(&txn);
    ck_assert_uint_eq(json_array_size(recs), 1);
    rec = json_incref(json_array_get(recs, 0));
    json_decref(recs);
    return rec;
}

static void put_raw(uint64_t seq, json_t *rec)
{
    char *s = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);

    ck_assert_int_eq(store__audit_put_raw(txn, seq, s, strlen(s), NULL), 0);
    store_util_commit(&txn);
    free(s);
}

static void del_raw(uint64_t seq)
{
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);

    ck_assert_int_eq(store__audit_del_raw(txn, seq, NULL), 0);
    store_util_commit(&txn);
}

/* Every row of the table round-trips; unknown and missing kinds are refused. */
START_TEST(test_audit_kind_table)
{
    static const char *const names[] = {"applied",
                                        "deleted",
                                        "cycle",
                                        "placed",
                                        "discarded",
                                        "unschedulable",
                                        "running",
                                        "preempted",
                                        "nominated",
                                        "evicted",
                                        "gang-timed-out",
                                        "reserved",
                                        "unreserved",
                                        "deadline-exceeded",
                                        "bound",
                                        "bind-refused",
                                        "nominate-acked",
                                        "nominate-refused",
                                        "evict-acked",
                                        "evict-refused",
                                        "deadline-acked",
                                        "deadline-refused",
                                        "writeback-abandoned",
                                        "started",
                                        "checkpoint",
                                        "leader"};
    ck_assert_int_eq(STORE_AUDIT_KIND_COUNT, (int)(sizeof(names) / sizeof(names[0])));
    for (int k = 0; k < STORE_AUDIT_KIND_COUNT; k++) {
        enum store_audit_kind back;
        ck_assert_str_eq(store_audit_kind_name(k), names[k]);
        ck_assert_int_eq(store_audit_kind_parse(names[k], &back, NULL), 0);
        ck_assert_int_eq(back, k);
    }
    struct err err = ERR_INIT;
    enum store_audit_kind k;
    ck_assert_int_eq(store_audit_kind_parse("nosuch", &k, &err), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown audit kind 'nosuch'"));
    ck_assert_ptr_nonnull(strstr(err.msg, "running"));
    ck_assert_ptr_nonnull(strstr(err.msg, "bind-refused"));
    ck_assert_str_eq(err.field, "kind");
    ck_assert_int_eq(store_audit_kind_parse(NULL, &k, NULL), ERR_INVALID);
}
END_TEST

/* The one writer enforces the table: a record of an unknown kind (or none) is refused
 * and nothing is appended. */
START_TEST(test_audit_append_refuses_unknown_kind)
{
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    struct err err = ERR_INIT;
    uint64_t seq = 0;
    json_t *bad = json_pack("{s:s}", "kind", "config"), *none = json_object();
    ck_assert_int_eq(store_audit_append(txn, bad, NULL, &err), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown audit kind 'config'"));
    ck_assert_int_eq(store_audit_append(txn, none, NULL, NULL), ERR_INVALID);
    ck_assert_int_eq(store_audit_last_seq(txn, &seq, NULL), 0);
    ck_assert_uint_eq(seq, 0);
    json_decref(bad);
    json_decref(none);
    store_util_commit(&txn);
}
END_TEST

START_TEST(test_audit_append_verify_ok)
{
    struct store_audit_verdict v;
    regex_t ts, hash;

    append_range(1, 20);
    v = verify(0, 0);
    ck_assert_msg(v.ok, "%s", v.reason);
    ck_assert_uint_eq(v.from, 1);
    ck_assert_uint_eq(v.to, 20);
    ck_assert_uint_eq(v.checked, 20);
    ck_assert_uint_eq(v.first_bad, 0);

    json_t *rec = record(7);
    ck_assert_int_eq(regcomp(&ts,
                             "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$",
                             REG_EXTENDED | REG_NOSUB),
                     0);
    ck_assert_int_eq(regcomp(&hash, "^[0-9a-f]{64}$", REG_EXTENDED | REG_NOSUB), 0);
    ck_assert_int_eq(regexec(&ts, json_string_value(json_object_get(rec, "ts")), 0, NULL, 0), 0);
    ck_assert_int_eq(regexec(&hash, json_string_value(json_object_get(rec, "hash")), 0, NULL, 0),
                     0);
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(rec, "details"), "gpus")),
                     56);
    regfree(&ts);
    regfree(&hash);
    json_decref(rec);

    uint64_t last = 0;
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_audit_last_seq(txn, &last, NULL), 0);
    store_txn_abort(&txn);
    ck_assert_uint_eq(last, 20);
}
END_TEST

static void sha256_hex(const unsigned char *prev, const char *canon, char out[65])
{
    size_t n = strlen(canon);
    unsigned char *buf = malloc(32 + n), md[32];
    unsigned int mdlen = 0;

    memcpy(buf, prev, 32);
    memcpy(buf + 32, canon, n);
    ck_assert_int_eq(EVP_Digest(buf, 32 + n, md, &mdlen, EVP_sha256(), NULL), 1);
    for (int i = 0; i < 32; i++)
        sprintf(out + 2 * i, "%02x", md[i]);
    free(buf);
}

/* The documented formula, recomputed here: the chain is checkable without muster. */
START_TEST(test_audit_hash_formula)
{
    unsigned char zero[32] = {0}, prev[32];
    char want[65];
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    json_t *r1 = json_pack("{s:s, s:s, s:s}", "kind", "applied", "ts", "2026-11-22T03:50:04.123Z",
                           "hash", "bogus");
    json_t *r2 = json_pack("{s:s, s:s}", "kind", "cycle", "ts", "2026-11-22T03:50:05.000Z");

    ck_assert_int_eq(store_audit_append(txn, r1, NULL, NULL), 0);
    ck_assert_int_eq(store_audit_append(txn, r2, NULL, NULL), 0);
    store_util_commit(&txn);

    sha256_hex(zero, "{\"kind\":\"applied\",\"seq\":1,\"ts\":\"2026-11-22T03:50:04.123Z\"}", want);
    ck_assert_str_eq(json_string_value(json_object_get(r1, "hash")), want);
    for (int i = 0; i < 32; i++)
        sscanf(want + 2 * i, "%2hhx", &prev[i]);
    sha256_hex(prev, "{\"kind\":\"cycle\",\"seq\":2,\"ts\":\"2026-11-22T03:50:05.000Z\"}", want);
    ck_assert_str_eq(json_string_value(json_object_get(r2, "hash")), want);

    /* stored bytes are the canonical record with its hash */
    json_t *stored = record(2);
    ck_assert(json_equal(stored, r2));
    json_decref(stored);
    json_decref(r1);
    json_decref(r2);
}
END_TEST

START_TEST(test_audit_tamper_detected)
{
    append_range(1, 10);
    json_t *rec = record(5);
    json_object_set_new(rec, "job", json_string("default/other")); /* hash left as it was */
    put_raw(5, rec);
    json_decref(rec);

    struct store_audit_verdict v = verify(0, 0);
    ck_assert(!v.ok);
    ck_assert_uint_eq(v.first_bad, 5);
    ck_assert_str_eq(v.reason, "record 5: hash mismatch");
    ck_assert_uint_eq(v.checked, 4);
}
END_TEST

START_TEST(test_audit_seq_differs_from_key)
{
    append_range(1, 6);
    json_t *rec = record(4);
    json_object_set_new(rec, "seq", json_integer(5));
    put_raw(4, rec);
    json_decref(rec);

    struct store_audit_verdict v = verify(0, 0);
    ck_assert(!v.ok);
    ck_assert_uint_eq(v.first_bad, 4);
    ck_assert_str_eq(v.reason, "record 4: stored seq differs from its key");
}
END_TEST

START_TEST(test_audit_gap_detected)
{
    append_range(1, 10);
    del_raw(4);

    struct store_audit_verdict v = verify(0, 0);
    ck_assert(!v.ok);
    ck_assert_uint_eq(v.first_bad, 4);
    ck_assert_str_eq(v.reason, "gap after record 3 (record 4 missing)");
}
END_TEST

START_TEST(test_audit_truncation_detected)
{
    append_range(1, 10);
    del_raw(10); /* the head in meta still says 10 */

    struct store_audit_verdict v = verify(0, 0);
    ck_assert(!v.ok);
    ck_assert_uint_eq(v.first_bad, 10);
    ck_assert_str_eq(v.reason, "head mismatch: metadata head is record 10 but the log ends at "
                               "record 9 (truncated)");
    /* a range that stops before the head is unaffected */
    v = verify(1, 9);
    ck_assert_msg(v.ok, "%s", v.reason);
}
END_TEST

START_TEST(test_audit_record_past_head_detected)
{
    append_range(1, 3);
    json_t *rec = record(3);
    json_object_set_new(rec, "seq", json_integer(4));
    put_raw(4, rec);
    json_decref(rec);

    struct store_audit_verdict v = verify(0, 0);
    ck_assert(!v.ok);
    ck_assert_uint_eq(v.first_bad, 4);
    ck_assert_msg(strstr(v.reason, "past the metadata head 3"), "%s", v.reason);
    /* and appending refuses to overwrite it */
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    json_t *r = json_pack("{s:s}", "kind", "cycle");
    ck_assert_int_eq(store_audit_append(txn, r, NULL, NULL), ERR_STORE);
    json_decref(r);
    store_txn_abort(&txn);
}
END_TEST

START_TEST(test_audit_range_verify)
{
    append_range(1, 10);
    /* record 2's content is altered but its stored hash kept: a range starting at 3 chains
     * from that stored hash and still verifies; a range covering 2 does not */
    json_t *rec = record(2);
    json_object_set_new(rec, "kind", json_string("evicted"));
    put_raw(2, rec);
    json_decref(rec);

    struct store_audit_verdict v = verify(3, 7);
    ck_assert_msg(v.ok, "%s", v.reason);
    ck_assert_uint_eq(v.from, 3);
    ck_assert_uint_eq(v.to, 7);
    ck_assert_uint_eq(v.checked, 5);
    v = verify(3, 0);
    ck_assert(v.ok);
    ck_assert_uint_eq(v.to, 10);
    ck_assert_uint_eq(v.checked, 8);
    v = verify(1, 5);
    ck_assert(!v.ok);
    ck_assert_uint_eq(v.first_bad, 2);
    v = verify(11, 0); /* nothing past the head */
    ck_assert(v.ok);
    ck_assert_uint_eq(v.checked, 0);
}
END_TEST

static int stop_at_two(void *ctx, uint64_t seq, const char *json, size_t len)
{
    collect(ctx, seq, json, len);
    return json_array_size(ctx) == 2 ? 1 : 0;
}

static json_t *scan(uint64_t from, uint64_t to, store_audit_fn fn)
{
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    json_t *recs = json_array();

    ck_assert_int_eq(store_audit_scan(txn, from, to, fn, recs, NULL), 0);
    store_txn_abort(&txn);
    return recs;
}

static void assert_seqs(json_t *recs, int first, int last)
{
    ck_assert_int_eq((int)json_array_size(recs), last - first + 1);
    for (int i = first; i <= last; i++)
        ck_assert_int_eq(
            json_integer_value(json_object_get(json_array_get(recs, i - first), "seq")), i);
    json_decref(recs);
}

START_TEST(test_audit_scan_range)
{
    append_range(1, 12);
    assert_seqs(scan(3, 6, collect), 3, 6);
    assert_seqs(scan(10, 0, collect), 10, 12);
    assert_seqs(scan(0, 0, collect), 1, 12);
    assert_seqs(scan(5, 0, stop_at_two), 5, 6);
    assert_seqs(scan(13, 0, collect), 1, 0);
}
END_TEST

START_TEST(test_audit_sequence_continues_after_reopen)
{
    append_range(1, 5);
    store_close(st);
    st = store_util_open(dir, 0, STORE_SYNC_FULL);
    append_range(6, 8);

    /* an aborted append leaves no gap: the next commit reuses the number */
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    json_t *rec = json_pack("{s:s}", "kind", "cycle");
    uint64_t seq = 0;
    ck_assert_int_eq(store_audit_append(txn, rec, &seq, NULL), 0);
    ck_assert_uint_eq(seq, 9);
    store_txn_abort(&txn);
    json_decref(rec);
    append_range(9, 9);

    struct store_audit_verdict v = verify(0, 0);
    ck_assert_msg(v.ok, "%s", v.reason);
    ck_assert_uint_eq(v.checked, 9);
}
END_TEST

/* Raw stored bytes of record seq (new). */
static int raw_of(void *ctx, uint64_t seq, const char *json, size_t len)
{
    *(char **)ctx = strndup(json, len);
    return 0;
}

static char *stored(struct store *s, uint64_t seq)
{
    char *out = NULL;
    MDB_txn *txn = store_util_begin(s, STORE_READ);
    ck_assert_int_eq(store_audit_scan(txn, seq, seq, raw_of, &out, NULL), 0);
    store_txn_abort(&txn);
    ck_assert_ptr_nonnull(out);
    return out;
}

/* A record appended as text is stored byte for byte as the same record appended as JSON,
 * chain included: records whose members sort before, between and after "hash", "seq" and
 * "ts", nested objects, escapes, an explicit time and the current one. */
START_TEST(test_audit_append_text_same_bytes)
{
    static const char *recs[] = {
        "{\"blockers\":[{\"a\":1,\"code\":\"X\",\"message\":\"q\\\"\\n\"}],\"cycle\":3,"
        "\"job\":\"default/a\",\"kind\":\"unschedulable\",\"reason\":\"NodeFilter\"}",
        "{\"cycle\":4,\"job\":\"default/b\",\"kind\":\"placed\",\"nodes\":[\"n1\"],"
        "\"pods\":[\"default/b-0\"],\"priority\":5,\"queue\":\"q\",\"submitted\":null,"
        "\"zz\":{\"b\":[],\"a\":{}}}",
        "{\"kind\":\"cycle\"}",
        "{\"aaa\":true,\"kind\":\"cycle\",\"sequence\":1,\"tt\":2}",
        /* strings ending in an escaped backslash, holding escaped quotes and member-like
         * text: the slots are found after them, not inside */
        "{\"blockers\":[{\"m\":\"a\\\\\",\"n\":\"\\\\\\\"hash\\\":1\"}],\"cycle\":5,"
        "\"job\":\"x\",\"kind\":\"unschedulable\",\"reason\":\"R\"}",
        "{\"a\":\"x\\\\\",\"kind\":\"cycle\",\"r\":\"\\\"seq\\\":\\\"\"}",
    };
    enum store_audit_kind kinds[] = {STORE_AUDIT_UNSCHEDULABLE, STORE_AUDIT_PLACED,
                                     STORE_AUDIT_CYCLE,         STORE_AUDIT_CYCLE,
                                     STORE_AUDIT_UNSCHEDULABLE, STORE_AUDIT_CYCLE};
    char *dir2 = store_util_tmpdir();
    struct store *st2 = store_util_open(dir2, 0, STORE_SYNC_NONE);
    MDB_txn *a = store_util_begin(st, STORE_WRITE), *b = store_util_begin(st2, STORE_WRITE);
    struct err err = ERR_INIT;
    for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++) {
        const char *ts = i % 2 ? NULL : "2026-11-27T10:00:00.125Z";
        json_t *rec = json_loads(recs[i], 0, NULL);
        ck_assert_ptr_nonnull(rec);
        if (!ts) /* the same "now" both ways: taken here, given to both */
            ts = "2026-11-27T10:00:01.000Z";
        json_object_set_new(rec, "ts", json_string(ts));
        uint64_t s1 = 0, s2 = 0;
        ck_assert_msg(store_audit_append(a, rec, &s1, &err) == 0, "%s", err.msg);
        json_t *canon = json_loads(recs[i], 0, NULL);
        char *text = json_dumps(canon, JSON_COMPACT | JSON_SORT_KEYS);
        ck_assert_msg(store_audit_append_text(b, kinds[i], text, strlen(text), ts, &s2, &err) == 0,
                      "%s", err.msg);
        ck_assert_uint_eq(s1, s2);
        free(text);
        json_decref(canon);
        json_decref(rec);
    }
    /* the head is cached while the transaction appends: both logs read their last seq */
    uint64_t last = 0;
    ck_assert_int_eq(store_audit_last_seq(b, &last, NULL), 0);
    ck_assert_uint_eq(last, sizeof(recs) / sizeof(recs[0]));
    store_util_commit(&a);
    store_util_commit(&b);
    for (uint64_t seq = 1; seq <= last; seq++) {
        char *x = stored(st, seq), *y = stored(st2, seq);
        ck_assert_str_eq(x, y);
        free(x);
        free(y);
    }
    /* the head written at the commit: the chain verifies, and the next append continues it */
    struct store_audit_verdict v;
    MDB_txn *r = store_util_begin(st2, STORE_READ);
    ck_assert_int_eq(store_audit_verify(r, 0, 0, &v, NULL), 0);
    store_txn_abort(&r);
    ck_assert_msg(v.ok, "%s", v.reason);
    ck_assert_uint_eq(v.checked, last);
    store_close(st2);
    store_util_rmrf(dir2);
}
END_TEST

/* Appends in the writer's transaction keep the head in memory; a child transaction begun
 * after them sees it in meta, an abort forgets it, and a reopened store has the committed
 * one. */
START_TEST(test_audit_head_cached_until_commit)
{
    append_range(1, 2);
    MDB_txn *txn = store_util_begin(st, STORE_WRITE), *child = NULL;
    json_t *rec = json_pack("{s:s}", "kind", "cycle");
    uint64_t seq = 0;
    ck_assert_int_eq(store_audit_append(txn, rec, &seq, NULL), 0);
    ck_assert_uint_eq(seq, 3);
    ck_assert_int_eq(store_txn_child(txn, &child, NULL), 0);
    ck_assert_int_eq(store_audit_last_seq(child, &seq, NULL), 0);
    ck_assert_uint_eq(seq, 3);
    json_object_del(rec, "seq");
    json_object_del(rec, "ts");
    json_object_del(rec, "hash");
    ck_assert_int_eq(store_audit_append(child, rec, &seq, NULL), 0);
    ck_assert_uint_eq(seq, 4);
    ck_assert_int_eq(store_txn_commit(&child, NULL), 0);
    ck_assert_int_eq(store_audit_last_seq(txn, &seq, NULL), 0);
    ck_assert_uint_eq(seq, 4);
    store_util_commit(&txn);
    json_decref(rec);

    txn = store_util_begin(st, STORE_WRITE);
    rec = json_pack("{s:s}", "kind", "cycle");
    ck_assert_int_eq(store_audit_append(txn, rec, &seq, NULL), 0);
    ck_assert_uint_eq(seq, 5);
    store_txn_abort(&txn);
    json_decref(rec);

    store_close(st);
    st = store_util_open(dir, 0, STORE_SYNC_FULL);
    append_range(5, 5);
    struct store_audit_verdict v = verify(0, 0);
    ck_assert_msg(v.ok, "%s", v.reason);
    ck_assert_uint_eq(v.checked, 5);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_audit_append_verify_ok,
                            test_audit_hash_formula,
                            test_audit_tamper_detected,
                            test_audit_seq_differs_from_key,
                            test_audit_gap_detected,
                            test_audit_truncation_detected,
                            test_audit_record_past_head_detected,
                            test_audit_range_verify,
                            test_audit_kind_table,
                            test_audit_append_refuses_unknown_kind,
                            test_audit_scan_range,
                            test_audit_sequence_continues_after_reopen,
                            test_audit_append_text_same_bytes,
                            test_audit_head_cached_until_commit,
                            NULL};
    return check_run(store_util_suite("audit", &dir, &st, tests));
}
