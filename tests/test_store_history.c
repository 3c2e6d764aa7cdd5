/*
 * test_store_history.c - the object history (store/history.c): the store read as it was at
 * any audit record equals the live store as it was then, for puts, bindings, deletes,
 * re-creations, aborted statements, why documents, a reopen and a prune.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../store/internal.h" /* store__history_prune, the history database */
#include "check_run.h"
#include "clock.h"
#include "err.h"
#include "store_util.h"

static char *dir;
static struct store *st;

static void audit(MDB_txn *txn, const char *what)
{
    struct err err = ERR_INIT;
    json_t *rec = json_pack("{s:s,s:s}", "kind", "applied", "reason", what);
    ck_assert_int_eq(store_audit_append(txn, rec, NULL, &err), 0);
    json_decref(rec);
}

/* The live store now and its last seq, kept to compare with history later. */
struct point {
    uint64_t seq;
    json_t *live;
};

static void take(struct point *p)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_audit_last_seq(txn, &p->seq, &err), 0);
    p->live = store_util_dump_live(txn);
    store_txn_abort(&txn);
}

static void check_points(struct point *pts, int n)
{
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    for (int i = 0; i < n; i++) {
        json_t *then = store_util_dump_at(txn, pts[i].seq);
        char *a = json_dumps(then, JSON_SORT_KEYS | JSON_COMPACT),
             *b = json_dumps(pts[i].live, JSON_SORT_KEYS | JSON_COMPACT);
        ck_assert_msg(strcmp(a, b) == 0, "store at record %llu:\n  history %s\n  live    %s",
                      (unsigned long long)pts[i].seq, a, b);
        free(a);
        free(b);
        json_decref(then);
    }
    store_txn_abort(&txn);
}

START_TEST(test_store_history_each_at_equals_live)
{
    struct err err = ERR_INIT;
    struct point pts[8];
    int n = 0;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    store_util_put(txn, MODEL_NODE, store_util_node("n1"));
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "a", NULL, "g", NULL));
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "b", NULL, NULL, NULL));
    audit(txn, "one");
    store_util_commit(&txn);
    take(&pts[n++]);

    txn = store_util_begin(st, STORE_WRITE); /* a binding: a small record, merged */
    ck_assert_int_eq(store_pod_bind(txn, "ns/a", "n1", "2026-11-27T10:00:00Z", &err), 0);
    audit(txn, "two");
    store_util_commit(&txn);
    take(&pts[n++]);

    txn = store_util_begin(st, STORE_WRITE); /* an aborted statement leaves no version */
    MDB_txn *child = NULL;
    ck_assert_int_eq(store_txn_child(txn, &child, &err), 0);
    ck_assert_int_eq(store_delete(child, MODEL_POD, "ns/b", NULL, &err), 0);
    store_txn_abort(&child);
    json_t *a = NULL;
    ck_assert_int_eq(store_get(txn, MODEL_POD, "ns/a", &a, &err), 0);
    json_object_set_new(json_object_get(a, "status"), "phase", json_string("Running"));
    ck_assert_int_eq(store_put(txn, MODEL_POD, a, NULL, &err), 0);
    json_decref(a);
    audit(txn, "three");
    store_util_commit(&txn);
    take(&pts[n++]);

    txn = store_util_begin(st, STORE_WRITE); /* deleted, then the name used again */
    ck_assert_int_eq(store_delete(txn, MODEL_POD, "ns/a", NULL, &err), 0);
    audit(txn, "four");
    store_util_commit(&txn);
    take(&pts[n++]);
    txn = store_util_begin(st, STORE_WRITE);
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "a", NULL, NULL, "Pending"));
    store_util_put(txn, MODEL_NODE, store_util_node("n2"));
    audit(txn, "five");
    store_util_commit(&txn);
    take(&pts[n++]);

    /* a transaction without an audit record belongs to the last record */
    txn = store_util_begin(st, STORE_WRITE);
    ck_assert_int_eq(store_delete(txn, MODEL_NODE, "n2", NULL, &err), 0);
    store_util_commit(&txn);
    take(&pts[n++]);
    ck_assert_int_eq(pts[n - 1].seq, pts[n - 2].seq);
    n--;
    pts[n - 1].live = (json_decref(pts[n - 1].live), pts[n].live);

    check_points(pts, n);
    /* reopening changes nothing: history is not seeded again */
    store_close(st);
    st = store_util_open(dir, 0, STORE_SYNC_NONE);
    check_points(pts, n);
    for (int i = 0; i < n; i++)
        json_decref(pts[i].live);
}
END_TEST

START_TEST(test_store_history_get_and_why_docs)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "a", NULL, NULL, NULL));
    json_t *doc = json_pack("{s:s}", "primary", "NotTried");
    ck_assert_int_eq(store_doc_put(txn, STORE_DB_WHY, "ns/a", doc, &err), 0);
    json_decref(doc);
    audit(txn, "one"); /* 1 */
    doc = json_pack("{s:s}", "primary", "Placed");
    ck_assert_int_eq(store_doc_put(txn, STORE_DB_WHY, "ns/a", doc, &err), 0);
    json_decref(doc);
    ck_assert_int_eq(store_pod_bind(txn, "ns/a", "n1", "2026-11-27T10:00:00Z", &err), 0);
    audit(txn, "two"); /* 2 */
    ck_assert_int_eq(store_doc_delete(txn, STORE_DB_WHY, "ns/a", &err), 0);
    audit(txn, "three"); /* 3 */
    store_util_commit(&txn);

    txn = store_util_begin(st, STORE_READ);
    json_t *got = NULL;
    /* a change counts with the record that follows it in its transaction */
    ck_assert_int_eq(store_history_doc_at(txn, STORE_DB_WHY, "ns/a", 1, &got, &err), 0);
    ck_assert_str_eq(json_string_value(json_object_get(got, "primary")), "NotTried");
    json_decref(got);
    ck_assert_int_eq(store_history_doc_at(txn, STORE_DB_WHY, "ns/a", 2, &got, &err), 0);
    ck_assert_str_eq(json_string_value(json_object_get(got, "primary")), "Placed");
    json_decref(got);
    ck_assert_int_eq(store_history_doc_at(txn, STORE_DB_WHY, "ns/a", 3, &got, &err), ERR_NOT_FOUND);
    ck_assert_ptr_null(got);
    ck_assert_int_eq(store_history_doc_at(txn, STORE_DB_MIRROR, "x", 2, &got, &err), ERR_INVALID);
    /* a ledger document never written: no version */
    ck_assert_int_eq(store_history_doc_at(txn, STORE_DB_PREEMPTIONS, "x", 2, &got, &err),
                     ERR_NOT_FOUND);
    /* the pod: pending at 1, bound at 2 and on */
    ck_assert_int_eq(store_history_get_at(txn, MODEL_POD, "ns/a", 1, &got, &err), 0);
    ck_assert_ptr_null(json_object_get(json_object_get(got, "spec"), "nodeName"));
    json_decref(got);
    ck_assert_int_eq(store_history_get_at(txn, MODEL_POD, "ns/a", 3, &got, &err), 0);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(got, "spec"), "nodeName")),
                     "n1");
    json_decref(got);
    ck_assert_int_eq(store_history_get_at(txn, MODEL_NODE, "nope", 3, &got, &err), ERR_NOT_FOUND);
    ck_assert_ptr_nonnull(strstr(err.msg, "did not exist at record 3"));
    store_txn_abort(&txn);
}
END_TEST

static int count_entries(MDB_txn *txn, enum store_dbi dbi)
{
    struct store *s = store__of(txn);
    MDB_stat ms;
    ck_assert_int_eq(mdb_stat(txn, s->dbi[dbi], &ms), 0);
    return (int)ms.ms_entries;
}

/* A long value is read from its object while it stays ('L', store schema 4): written
 * once, copied into the log only when it is written over or deleted, a pod's binding
 * after it or not; the store at every record still equals the live store then. */
static json_t *long_pod(const char *name, const char *node, int v)
{
    char note[400];
    memset(note, 'a' + v % 26, sizeof(note) - 1);
    note[sizeof(note) - 1] = '\0';
    json_t *p = store_util_pod("ns", name, node, "g", NULL);
    json_object_set_new(json_object_get(p, "metadata"), "annotations",
                        json_pack("{s:s,s:i}", "note", note, "v", v));
    return p;
}

static void long_doc(MDB_txn *txn, const char *key, int v)
{
    struct err err = ERR_INIT;
    char text[512];
    int n =
        snprintf(text, sizeof(text), "{\"primary\":\"Waiting\",\"v\":%d,\"pad\":\"%0300d\"}", v, v);
    ck_assert_int_eq(store_doc_put_text(txn, STORE_DB_WHY, key, text, (size_t)n, &err), 0);
}

START_TEST(test_store_history_live_versions)
{
    struct err err = ERR_INIT;
    struct point pts[8];
    int n = 0;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    int logged = count_entries(txn, DBI_HISTORY);
    store_util_put(txn, MODEL_NODE, store_util_node("n1"));
    store_util_put(txn, MODEL_POD, long_pod("a", NULL, 0));
    store_util_put(txn, MODEL_POD, long_pod("b", NULL, 0));
    long_doc(txn, "ns/a", 0);
    audit(txn, "one");
    ck_assert_int_eq(count_entries(txn, DBI_HISTORY), logged); /* nothing copied */
    store_util_commit(&txn);
    take(&pts[n++]);

    txn = store_util_begin(st, STORE_WRITE); /* written over: the old versions copied */
    store_util_put(txn, MODEL_POD, long_pod("a", NULL, 1));
    long_doc(txn, "ns/a", 1);
    ck_assert_int_eq(count_entries(txn, DBI_HISTORY), logged + 2);
    audit(txn, "two");
    store_util_commit(&txn);
    take(&pts[n++]);

    txn = store_util_begin(st, STORE_WRITE); /* bound, then written whole after its binding */
    ck_assert_int_eq(store_pod_bind(txn, "ns/a", "n1", "2026-11-27T10:00:00Z", &err), 0);
    ck_assert_int_eq(store_pod_bind(txn, "ns/b", "n1", "2026-11-27T10:00:01Z", &err), 0);
    audit(txn, "three");
    store_util_commit(&txn);
    take(&pts[n++]);
    txn = store_util_begin(st, STORE_WRITE);
    store_util_put(txn, MODEL_POD, long_pod("a", "n1", 2));
    audit(txn, "four");
    store_util_commit(&txn);
    take(&pts[n++]);

    txn = store_util_begin(st, STORE_WRITE); /* written twice in one transaction, deleted */
    store_util_put(txn, MODEL_POD, long_pod("c", NULL, 3));
    store_util_put(txn, MODEL_POD, long_pod("c", NULL, 4));
    ck_assert_int_eq(store_delete(txn, MODEL_POD, "ns/b", NULL, &err), 0);
    ck_assert_int_eq(store_doc_delete(txn, STORE_DB_WHY, "ns/a", &err), 0);
    audit(txn, "five");
    store_util_commit(&txn);
    take(&pts[n++]);

    txn = store_util_begin(st, STORE_WRITE); /* an aborted child leaves the 'L' it found */
    MDB_txn *child = NULL;
    ck_assert_int_eq(store_txn_child(txn, &child, &err), 0);
    store_util_put(child, MODEL_POD, long_pod("c", NULL, 5));
    store_txn_abort(&child);
    audit(txn, "six");
    store_util_commit(&txn);
    take(&pts[n++]);

    check_points(pts, n);
    txn = store_util_begin(st, STORE_READ);
    json_t *got = NULL;
    ck_assert_int_eq(store_history_doc_at(txn, STORE_DB_WHY, "ns/a", pts[0].seq, &got, &err), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(got, "v")), 0);
    json_decref(got);
    ck_assert_int_eq(store_history_doc_at(txn, STORE_DB_WHY, "ns/a", pts[3].seq, &got, &err), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(got, "v")), 1);
    json_decref(got);
    ck_assert_int_eq(store_history_get_at(txn, MODEL_POD, "ns/c", pts[4].seq, &got, &err), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(
                         json_object_get(json_object_get(got, "metadata"), "annotations"), "v")),
                     4);
    json_decref(got);
    for (int i = 0; i < n; i++)
        json_decref(pts[i].live);
    store_txn_abort(&txn);
}
END_TEST

START_TEST(test_store_history_seq_at_time)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    const char *ts[] = {"2026-11-27T10:00:00Z", "2026-11-27T10:00:05Z", "2026-11-27T10:00:05Z",
                        "2026-11-27T10:01:00Z"};
    for (int i = 0; i < 4; i++) {
        json_t *rec = json_pack("{s:s,s:s}", "kind", "cycle", "ts", ts[i]);
        ck_assert_int_eq(store_audit_append(txn, rec, NULL, &err), 0);
        json_decref(rec);
    }
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_READ);
    uint64_t seq;
    int64_t ms;
    ck_assert_int_eq(clock_parse_rfc3339("2026-11-27T09:59:59Z", &ms, &err), 0);
    ck_assert_int_eq(store_audit_seq_at(txn, ms, &seq, &err), 0);
    ck_assert_int_eq(seq, 0); /* before the first record */
    ck_assert_int_eq(clock_parse_rfc3339("2026-11-27T10:00:05Z", &ms, &err), 0);
    ck_assert_int_eq(store_audit_seq_at(txn, ms, &seq, &err), 0);
    ck_assert_int_eq(seq, 3);
    ck_assert_int_eq(store_audit_seq_at(txn, ms + 54999, &seq, &err), 0);
    ck_assert_int_eq(seq, 3);
    ck_assert_int_eq(store_audit_seq_at(txn, ms + 55000, &seq, &err), 0);
    ck_assert_int_eq(seq, 4);
    ck_assert_int_eq(store_audit_record_ms(txn, 4, &ms, &err), 0);
    int64_t want;
    ck_assert_int_eq(clock_parse_rfc3339(ts[3], &want, &err), 0);
    ck_assert_int_eq(ms, want);
    store_txn_abort(&txn);
}
END_TEST

static int count_versions(MDB_txn *txn)
{
    return count_entries(txn, DBI_HISTORY_IX);
}

/* Pruning keeps what a question at a kept record needs, and nothing before it. */
START_TEST(test_store_history_pruned)
{
    struct err err = ERR_INIT;
    uint64_t first;
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_history_first_seq(txn, &first, &err), 0);
    ck_assert_int_eq(first, 1); /* a fresh store: from the first record */
    store_txn_abort(&txn);

    /* many versions of one pod, a pod deleted early, checkpoints to prune behind */
    struct point pts[4];
    for (int i = 0; i < 6; i++) {
        txn = store_util_begin(st, STORE_WRITE);
        /* big enough for the log (small payloads stay in the index entry) */
        char note[400];
        memset(note, 'x', sizeof(note) - 1);
        note[sizeof(note) - 1] = '\0';
        json_t *p = store_util_pod("ns", "x", NULL, NULL, NULL);
        json_object_set_new(json_object_get(p, "metadata"), "labels", json_pack("{s:i}", "v", i));
        json_object_set_new(json_object_get(p, "metadata"), "annotations",
                            json_pack("{s:s}", "note", note));
        store_util_put(txn, MODEL_POD, p);
        if (i == 0) {
            json_t *g = store_util_pod("ns", "gone", NULL, NULL, NULL);
            json_object_set_new(json_object_get(g, "metadata"), "annotations",
                                json_pack("{s:s}", "note", note));
            store_util_put(txn, MODEL_POD, g);
        }
        if (i == 1)
            ck_assert_int_eq(store_delete(txn, MODEL_POD, "ns/gone", NULL, &err), 0);
        audit(txn, "step");
        store_util_commit(&txn);
        if (i >= 3)
            take(&pts[i - 3]);
    }
    uint64_t deleted = 0;
    txn = store_util_begin(st, STORE_WRITE);
    int before = count_versions(txn), payloads = count_entries(txn, DBI_HISTORY);
    /* a delete has no payload, nor x's last version: it is read from x itself */
    ck_assert_int_eq(payloads, 5 + 1);
    ck_assert_int_eq(before, 6 + 2); /* x six times, gone put and deleted */
    ck_assert_int_eq(store__history_prune(txn, pts[0].seq, &deleted, &err), 0);
    /* x: the versions of records 1..3 go (4's is the one at pts[0]); gone: both go */
    ck_assert_int_eq(deleted, 3 + 2);
    ck_assert_int_eq(count_versions(txn), before - 5);
    ck_assert_int_eq(count_entries(txn, DBI_HISTORY), payloads - 4); /* and their payloads */
    store_util_commit(&txn);
    check_points(pts, 3); /* what can still be asked is answered as before */
    /* the versions before the first kept record are gone, but one */
    txn = store_util_begin(st, STORE_READ);
    json_t *got = NULL;
    ck_assert_int_eq(store_history_get_at(txn, MODEL_POD, "ns/gone", 1, &got, &err), ERR_NOT_FOUND);
    store_txn_abort(&txn);
    for (int i = 0; i < 3; i++)
        json_decref(pts[i].live);
}
END_TEST

/* A store written before history was kept (its history databases empty, no history_base):
 * opening it makes what it holds the first versions, at its head, and questions before
 * that record are refused by first_seq. */
START_TEST(test_store_history_seeded_at_open)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    store_util_put(txn, MODEL_NODE, store_util_node("n1"));
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "a", NULL, "g", NULL));
    audit(txn, "one");
    audit(txn, "two");
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_WRITE);
    ck_assert_int_eq(store_pod_bind(txn, "ns/a", "n1", "2026-11-27T10:00:00Z", &err), 0);
    json_t *doc = json_pack("{s:s}", "primary", "Placed");
    ck_assert_int_eq(store_doc_put(txn, STORE_DB_WHY, "ns/a", doc, &err), 0);
    json_decref(doc);
    audit(txn, "three");
    /* forget history, as a store of an older musterd has none */
    struct store *s = store__of(txn);
    MDB_val k = {strlen("history_base"), "history_base"};
    ck_assert_int_eq(mdb_drop(txn, s->dbi[DBI_HISTORY], 0), 0);
    ck_assert_int_eq(mdb_drop(txn, s->dbi[DBI_HISTORY_IX], 0), 0);
    ck_assert_int_eq(mdb_del(txn, s->dbi[DBI_META], &k, NULL), 0);
    store_util_commit(&txn);
    store_close(st);
    st = store_util_open(dir, 0, STORE_SYNC_NONE);

    struct point now;
    take(&now);
    ck_assert_int_eq(now.seq, 3);
    txn = store_util_begin(st, STORE_READ);
    uint64_t first = 0;
    ck_assert_int_eq(store_history_first_seq(txn, &first, &err), 0);
    ck_assert_int_eq(first, 3);
    /* the binding record came along: the pod reads bound, as store_get has it */
    json_t *pod = NULL;
    ck_assert_int_eq(store_history_get_at(txn, MODEL_POD, "ns/a", 3, &pod, &err), 0);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName")),
                     "n1");
    json_decref(pod);
    ck_assert_int_eq(store_history_doc_at(txn, STORE_DB_WHY, "ns/a", 3, &doc, &err), 0);
    json_decref(doc);
    store_txn_abort(&txn);
    check_points(&now, 1);
    json_decref(now.live);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_store_history_each_at_equals_live,
                            test_store_history_get_and_why_docs,
                            test_store_history_seq_at_time,
                            test_store_history_pruned,
                            test_store_history_seeded_at_open,
                            test_store_history_live_versions,
                            NULL};
    return check_run(store_util_suite("store_history", &dir, &st, tests));
}
