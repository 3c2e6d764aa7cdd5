/* test_store_dry.c - dry sessions (store_dry_begin): a thread's transactions are one
 * snapshot whose writes stay in memory; reads and iterations of the session see them over
 * the snapshot, in key order; nothing reaches the file or another thread, and the real
 * writer is not held up meanwhile. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "err.h"
#include "store.h"
#include "store_util.h"

static char *dir;
static struct store *st;

static void put_nodes(const char *const *names)
{
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    for (size_t i = 0; names[i]; i++)
        store_util_put(txn, MODEL_NODE, store_util_node(names[i]));
    store_util_commit(&txn);
}

static int collect(void *ctx, const char *key, json_t *obj)
{
    json_t *a = ctx;
    const char *label = json_string_value(
        json_object_get(json_object_get(json_object_get(obj, "metadata"), "annotations"), "v"));
    char buf[256];
    snprintf(buf, sizeof(buf), "%s%s%s", key, label ? "=" : "", label ? label : "");
    json_array_append_new(a, json_string(buf));
    return 0;
}

/* The nodes as "name[=annotation v]" joined by ",", read in txn. New. */
static char *nodes_in(MDB_txn *txn, const char *after)
{
    json_t *a = json_array(), *v;
    struct err err = ERR_INIT;
    int rc = after ? store_each_after(txn, MODEL_NODE, NULL, after, collect, a, &err)
                   : store_each(txn, MODEL_NODE, NULL, collect, a, &err);
    ck_assert_msg(rc == 0, "%s", err.msg);
    size_t i, len = 0;
    char *s = calloc(1, 4096);
    json_array_foreach(a, i, v) len +=
        (size_t)snprintf(s + len, 4096 - len, "%s%s", i ? "," : "", json_string_value(v));
    json_decref(a);
    return s;
}

static char *nodes_now(void)
{
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    char *s = nodes_in(txn, NULL);
    store_txn_abort(&txn);
    return s;
}

static json_t *annotated(const char *name, const char *v)
{
    json_t *n = store_util_node(name);
    json_object_set_new(json_object_get(n, "metadata"), "annotations", json_pack("{s:s}", "v", v));
    return n;
}

/* The session's writes: b added, c replaced, e deleted, f added. */
static void dry_writes(MDB_txn *txn)
{
    struct err err = ERR_INIT;
    store_util_put(txn, MODEL_NODE, annotated("b", "new"));
    store_util_put(txn, MODEL_NODE, annotated("c", "changed"));
    ck_assert_int_eq(store_delete(txn, MODEL_NODE, "e", NULL, &err), 0);
    store_util_put(txn, MODEL_NODE, annotated("f", "new"));
}

START_TEST(test_dry_reads_see_writes_in_order)
{
    struct err err = ERR_INIT;
    put_nodes((const char *[]){"a", "c", "e", NULL});
    ck_assert_int_eq(store_dry_begin(st, &err), 0);
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    dry_writes(txn);
    store_util_commit(&txn); /* ends nothing: the session keeps its writes */

    txn = store_util_begin(st, STORE_READ);
    char *s = nodes_in(txn, NULL);
    ck_assert_str_eq(s, "a,b=new,c=changed,f=new");
    free(s);
    s = nodes_in(txn, "b"); /* a seek into the merge */
    ck_assert_str_eq(s, "c=changed,f=new");
    free(s);
    json_t *obj = NULL;
    ck_assert_int_eq(store_get(txn, MODEL_NODE, "e", &obj, &err), ERR_NOT_FOUND);
    ck_assert_int_eq(store_delete(txn, MODEL_NODE, "e", NULL, &err), ERR_NOT_FOUND);
    ck_assert_int_eq(store_get(txn, MODEL_NODE, "b", &obj, &err), 0);
    json_decref(obj);
    uint64_t n = 0;
    ck_assert_int_eq(store_meta_get_u64(txn, "x", &n, &err), 0);
    ck_assert_int_eq(store_meta_put_u64(txn, "x", 7, &err), 0);
    ck_assert_int_eq(store_meta_get_u64(txn, "x", &n, &err), 0);
    ck_assert_int_eq(n, 7);
    MDB_txn *child = NULL;
    ck_assert_int_eq(store_txn_child(txn, &child, &err), ERR_INVALID);
    store_txn_abort(&txn);
    store_dry_end(st);

    s = nodes_now(); /* nothing reached the store */
    ck_assert_str_eq(s, "a,c,e");
    free(s);
    txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_meta_get_u64(txn, "x", &n, &err), 0);
    ck_assert_int_eq(n, 0);
    store_txn_abort(&txn);
}
END_TEST

static int count_rec(void *ctx, uint64_t seq, const char *json, size_t len)
{
    (void)seq, (void)json, (void)len;
    ++*(int *)ctx;
    return 0;
}

static void append(MDB_txn *txn, const char *kind, uint64_t *seq)
{
    struct err err = ERR_INIT;
    json_t *rec = json_pack("{s:s}", "kind", kind);
    ck_assert_msg(store_audit_append(txn, rec, seq, &err) == 0, "%s", err.msg);
    json_decref(rec);
}

START_TEST(test_dry_audit_continues_the_chain_in_memory)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    uint64_t seq = 0;
    append(txn, "applied", &seq);
    append(txn, "cycle", &seq);
    store_util_commit(&txn);

    ck_assert_int_eq(store_dry_begin(st, &err), 0);
    ck_assert_int_eq(store_dry_begin(st, &err), ERR_INTERNAL); /* one per thread */
    txn = store_util_begin(st, STORE_WRITE);
    append(txn, "placed", &seq);
    ck_assert_int_eq(seq, 3);
    int n = 0;
    ck_assert_int_eq(store_audit_scan(txn, 1, 0, count_rec, &n, &err), 0);
    ck_assert_int_eq(n, 3);
    struct store_audit_verdict vd;
    store_txn_abort(&txn);
    store_dry_end(st);

    txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_audit_last_seq(txn, &seq, &err), 0);
    ck_assert_int_eq(seq, 2);
    ck_assert_int_eq(store_audit_verify(txn, 0, 0, &vd, &err), 0);
    ck_assert_msg(vd.ok, "%s", vd.reason);
    store_txn_abort(&txn);
}
END_TEST

static void *real_write(void *arg)
{
    (void)arg;
    put_nodes((const char *[]){"z", NULL});
    return NULL;
}

START_TEST(test_dry_other_threads_see_nothing_and_write_freely)
{
    struct err err = ERR_INIT;
    put_nodes((const char *[]){"a", "c", "e", NULL});
    ck_assert_int_eq(store_dry_begin(st, &err), 0);
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    dry_writes(txn);
    /* another thread commits while the session is open: not blocked, not seen here */
    pthread_t t;
    pthread_create(&t, NULL, real_write, NULL);
    pthread_join(t, NULL);
    char *s = nodes_in(txn, NULL);
    ck_assert_str_eq(s, "a,b=new,c=changed,f=new");
    free(s);
    store_txn_abort(&txn);
    store_dry_end(st);
    s = nodes_now();
    ck_assert_str_eq(s, "a,c,e,z");
    free(s);
}
END_TEST

START_TEST(test_dry_docs_and_bindings)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "p", NULL, NULL, "Pending"));
    json_t *d = json_pack("{s:i}", "n", 1);
    ck_assert_int_eq(store_doc_put(txn, STORE_DB_WHY, "ns/a", d, &err), 0);
    store_util_commit(&txn);

    ck_assert_int_eq(store_dry_begin(st, &err), 0);
    txn = store_util_begin(st, STORE_WRITE);
    ck_assert_int_eq(store_pod_bind(txn, "ns/p", "n1", "2026-01-01T00:00:00Z", &err), 0);
    ck_assert_int_eq(store_doc_put(txn, STORE_DB_WHY, "ns/b", d, &err), 0);
    ck_assert_int_eq(store_doc_delete(txn, STORE_DB_WHY, "ns/a", &err), 0);
    json_t *pod = NULL, *doc = NULL;
    ck_assert_int_eq(store_get(txn, MODEL_POD, "ns/p", &pod, &err), 0);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName")),
                     "n1");
    json_decref(pod);
    ck_assert_int_eq(store_doc_get(txn, STORE_DB_WHY, "ns/a", &doc, &err), ERR_NOT_FOUND);
    ck_assert_int_eq(store_doc_get(txn, STORE_DB_WHY, "ns/b", &doc, &err), 0);
    json_decref(doc);
    store_txn_abort(&txn);
    store_dry_end(st);

    txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_get(txn, MODEL_POD, "ns/p", &pod, &err), 0);
    ck_assert_ptr_null(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    json_decref(pod);
    ck_assert_int_eq(store_doc_get(txn, STORE_DB_WHY, "ns/a", &doc, &err), 0);
    json_decref(doc);
    ck_assert_int_eq(store_doc_get(txn, STORE_DB_WHY, "ns/b", &doc, &err), ERR_NOT_FOUND);
    store_txn_abort(&txn);
    json_decref(d);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {
        test_dry_reads_see_writes_in_order, test_dry_audit_continues_the_chain_in_memory,
        test_dry_other_threads_see_nothing_and_write_freely, test_dry_docs_and_bindings, NULL};
    return check_run(store_util_suite("store_dry", &dir, &st, tests));
}
