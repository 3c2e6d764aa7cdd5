/* test_audit_object.c - the records of objects applied and deleted (scheduler/record/audit.c,
 * sched__audit_object), written as text: each is the canonical dump of the record it
 * stands for (kind, cycle, object, job and extra's members, extra's replacing the
 * others), with seq, ts and hash in their places, and the chain verifies. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "check_run.h"
#include "err.h"
#include "store.h"
#include "store_audit.h"
#include "store_util.h"

static char *dir;
static struct store *st;

struct expect {
    json_t *recs; /* the records as trees, seq, ts and hash not in */
    size_t at;
};

/* The record the tree path would write for these arguments (the reference). */
static json_t *tree_of(uint64_t cycle, enum store_audit_kind what, enum model_kind kind,
                       const char *key, const char *job, json_t *extra)
{
    json_t *rec =
        json_pack("{s:s,s:I,s:{s:s,s:s}}", "kind", store_audit_kind_name(what), "cycle",
                  (json_int_t)cycle, "object", "kind", model_kind_name(kind), "name", key);
    if (job)
        json_object_set_new(rec, "job", json_string(job));
    if (extra)
        json_object_update(rec, extra);
    return rec;
}

static int check_one(void *ctx, uint64_t seq, const char *text, size_t len)
{
    struct expect *e = ctx;
    json_error_t jerr;
    json_t *got = json_loadb(text, len, 0, &jerr);
    ck_assert_msg(got != NULL, "record %llu: %s", (unsigned long long)seq, jerr.text);
    char *canon = store_json_text(got, JSON_SORT_KEYS);
    ck_assert_msg(strlen(canon) == len && !memcmp(canon, text, len),
                  "record %llu is not canonical:\n%.*s\n%s", (unsigned long long)seq, (int)len,
                  text, canon);
    free(canon);
    json_t *want = json_deep_copy(json_array_get(e->recs, e->at++));
    ck_assert_ptr_nonnull(want);
    ck_assert_int_eq(json_integer_value(json_object_get(got, "seq")), (json_int_t)seq);
    ck_assert(json_is_string(json_object_get(got, "hash")));
    if (!json_object_get(want, "ts"))
        json_object_set(want, "ts", json_object_get(got, "ts"));
    json_object_set(want, "seq", json_object_get(got, "seq"));
    json_object_set(want, "hash", json_object_get(got, "hash"));
    char *a = json_dumps(got, JSON_SORT_KEYS), *b = json_dumps(want, JSON_SORT_KEYS);
    ck_assert_msg(json_equal(got, want), "record %llu:\n got %s\nwant %s", (unsigned long long)seq,
                  a, b);
    free(a);
    free(b);
    json_decref(want);
    json_decref(got);
    return 0;
}

START_TEST(test_audit_object_records_are_canonical)
{
    struct err err = ERR_INIT;
    json_t *pod = store_util_pod("team-a", "w-0", NULL, "train", NULL);
    json_t *by = json_pack("{s:s,s:s,s:s,s:s}", "name", "alice", "role", "operator", "address",
                           "10.0.0.1", "source", "api");
    json_t *extras[] = {
        NULL,
        json_pack("{s:s,s:i,s:O}", "action", "created", "document", 3, "by", by),
        json_pack("{s:s,s:i,s:s}", "action", "configured", "document", 0, "subresource", "status"),
        json_pack("{s:[s],s:[n],s:s,s:s,s:b}", "pods", "team-a/w-0", "nodes", "preemptor",
                  "team-b/big", "reason", "removed by the API server", "observed", 1),
        json_pack("{s:[],s:[s,s]}", "failedPods", "clearedNominations", "x/\"q\"", "y/\xc3\xa9"),
        json_pack("{s:s,s:i}", "job", "team-a/other", "cycle", 99), /* replace the record's */
        json_pack("{s:s,s:s}", "ts", "2026-01-02T03:04:05.000Z", "action", "created"), /* tree */
    };
    size_t n = sizeof(extras) / sizeof(extras[0]);
    struct expect e = {.recs = json_array()};
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    for (size_t i = 0; i < n; i++) {
        enum store_audit_kind what = i == 3   ? STORE_AUDIT_EVICTED
                                     : i == 4 ? STORE_AUDIT_DELETED
                                              : STORE_AUDIT_APPLIED;
        enum model_kind kind = i == 4 ? MODEL_NODE : MODEL_POD;
        const char *key = i == 4 ? "n1" : "team-a/w-0";
        json_t *obj = i == 4 ? NULL : pod;
        ck_assert_msg(sched__audit_object(txn, 7 + i, what, kind, key, obj, extras[i], &err) == 0,
                      "%s", err.msg);
        json_array_append_new(
            e.recs, tree_of(7 + i, what, kind, key, obj ? "team-a/train" : NULL, extras[i]));
        json_decref(extras[i]);
    }
    store_util_commit(&txn);

    txn = store_util_begin(st, STORE_READ);
    ck_assert_msg(store_audit_scan(txn, 1, 0, check_one, &e, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(e.at, n);
    struct store_audit_verdict v;
    ck_assert_int_eq(store_audit_verify(txn, 0, 0, &v, &err), 0);
    ck_assert_msg(v.ok, "%s", v.reason);
    ck_assert_uint_eq(v.checked, n);
    store_txn_abort(&txn);
    json_decref(e.recs);
    json_decref(by);
    json_decref(pod);
}
END_TEST

/* An apply's records written from their parts (sched__audit_applied_text) are the records
 * of the same members as an extra, to the byte: the caller's text, a status update, a node
 * (no job), names that need escaping. */
START_TEST(test_audit_applied_text_is_the_record)
{
    struct err err = ERR_INIT;
    struct sched_caller alice = {"alice \"a\"", "operator", "10.0.0.1", "tokens-file"};
    struct sched_caller anon = {NULL, NULL, "::1", NULL};
    char *by[] = {sched__caller_text(&alice), sched__caller_text(&anon), NULL};
    ck_assert_ptr_null(sched__caller_text(NULL));
    struct expect e = {.recs = json_array()};
    size_t n = 0;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    for (int i = 0; i < 3; i++)
        for (int status = 0; status < 2; status++)
            for (int node = 0; node < 2; node++) {
                const char *action = (const char *[]){"created", "configured", "unchanged"}[i];
                enum model_kind kind = node ? MODEL_NODE : MODEL_POD;
                const char *key = node ? "n\u00e9-1" : "team-a/w\t0",
                           *job = node ? NULL : "team-a/j";
                struct sched_applied a = {action, i * 1000 + 7, by[i], status};
                struct store_jw w = STORE_JW_INIT;
                sched__audit_applied_text(&w, 40 + n, kind, key, job, &a);
                ck_assert_msg(store_audit_append_text(txn, STORE_AUDIT_APPLIED, w.buf, w.len, NULL,
                                                      NULL, &err) == 0,
                              "%s", err.msg);
                store_jw_release(&w);
                json_t *extra = json_pack("{s:s,s:i}", "action", action, "document", a.document);
                if (by[i])
                    json_object_set_new(extra, "by", json_loads(by[i], 0, NULL));
                if (status)
                    json_object_set_new(extra, "subresource", json_string("status"));
                json_array_append_new(e.recs,
                                      tree_of(40 + n, STORE_AUDIT_APPLIED, kind, key, job, extra));
                json_decref(extra);
                n++;
            }
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_READ);
    ck_assert_msg(store_audit_scan(txn, 1, 0, check_one, &e, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(e.at, n);
    store_txn_abort(&txn);
    json_decref(e.recs);
    free(by[0]);
    free(by[1]);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_audit_object_records_are_canonical,
                            test_audit_applied_text_is_the_record, NULL};
    return check_run(store_util_suite("audit_object", &dir, &st, tests));
}
