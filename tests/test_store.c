/* test_store.c - objects, indexes, documents, counters, transactions, locking, growth. */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "../store/internal.h" /* grow_lock: a growth pending, as a resize takes it */
#include "store.h"
#include "store_util.h"
#include "check_run.h"

static char *dir;
static struct store *st;

START_TEST(test_store_roundtrip)
{
    json_t *objs[MODEL_KIND_COUNT] = {
        store_util_node("n1"),
        store_util_pod("team-a", "w-0", NULL, "train", NULL),
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i}}", "apiVersion",
                  "scheduling.sigs.k8s.io/v1alpha1", "kind", "PodGroup", "metadata", "name",
                  "train", "namespace", "team-a", "spec", "minMember", 8),
        json_pack("{s:s, s:{s:s}, s:{s:[{s:s, s:s, s:[s]}]}}", "kind", "ClusterNetworkTopology",
                  "metadata", "name", "default", "spec", "networkTopologySpec", "topologyLayer",
                  "BlockLayer", "parentTopologyLayer", "SpineLayer", "labelKey", "block"),
        json_pack("{s:s, s:s, s:{s:s}, s:i}", "apiVersion", "scheduling.k8s.io/v1", "kind",
                  "PriorityClass", "metadata", "name", "high", "value", 1000),
        json_pack("{s:s, s:s, s:{s:s}, s:{s:i}}", "apiVersion", "scheduling.volcano.sh/v1beta1",
                  "kind", "Queue", "metadata", "name", "team-a", "spec", "weight", 2),
        json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:i}}", "apiVersion", "policy/v1", "kind",
                  "PodDisruptionBudget", "metadata", "name", "db", "namespace", "team-a", "spec",
                  "minAvailable", 1),
    };
    const char *keys[MODEL_KIND_COUNT] = {"n1",   "team-a/w-0", "team-a/train", "default",
                                          "high", "team-a",     "team-a/db"};
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    json_t *got = NULL;
    uint64_t n;

    for (int k = 0; k < MODEL_KIND_COUNT; k++)
        ck_assert_int_eq(store_put(txn, (enum model_kind)k, objs[k], NULL, &err), 0);
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_READ);
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        ck_assert_msg(store_get(txn, (enum model_kind)k, keys[k], &got, &err) == 0, "%s", err.msg);
        ck_assert(json_equal(got, objs[k]));
        ck_assert_int_eq(store_exists(txn, (enum model_kind)k, keys[k], &err), 1);
        json_decref(got);
        ck_assert_int_eq(store_count(txn, (enum model_kind)k, &n, &err), 0);
        ck_assert_uint_eq(n, 1);
        json_decref(objs[k]);
    }
    ck_assert_int_eq(store_exists(txn, MODEL_POD, "default/x", &err), 0);
    ck_assert_int_eq(store_exists(txn, MODEL_NODE, "team-a/w-0", &err), 0); /* kinds apart */
    ck_assert_int_eq(store_exists(txn, (enum model_kind)MODEL_KIND_COUNT, "n1", &err), ERR_INVALID);
    ck_assert_int_eq(store_get(txn, MODEL_POD, "default/x", &got, &err), ERR_NOT_FOUND);
    ck_assert_ptr_null(got);
    ck_assert_str_eq(err.msg, "pod 'default/x' not found");
    store_txn_abort(&txn);
    ck_assert_ptr_null(txn);
}
END_TEST

/* store_last_txn, read with no transaction, is the id a read transaction begun then has:
 * after opening, after a commit that changed something, after one that changed nothing,
 * after an abort, and after a nested transaction's commit (its parent's commit counts). */
static void assert_last_txn_is_a_readers(void)
{
    MDB_txn *r = store_util_begin(st, STORE_READ);
    ck_assert_uint_eq(store_last_txn(st), store_txn_id(r));
    store_txn_abort(&r);
}

START_TEST(test_store_last_txn_without_a_transaction)
{
    struct err err = ERR_INIT;
    assert_last_txn_is_a_readers();
    uint64_t at_open = store_last_txn(st);
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    store_util_put(txn, MODEL_NODE, store_util_node("n1"));
    store_util_commit(&txn);
    assert_last_txn_is_a_readers();
    ck_assert_uint_eq(store_last_txn(st), at_open + 1);
    txn = store_util_begin(st, STORE_WRITE); /* nothing written */
    store_util_commit(&txn);
    assert_last_txn_is_a_readers();
    txn = store_util_begin(st, STORE_WRITE);
    store_util_put(txn, MODEL_NODE, store_util_node("n2"));
    store_txn_abort(&txn);
    assert_last_txn_is_a_readers();
    ck_assert_uint_eq(store_last_txn(st), at_open + 1);
    txn = store_util_begin(st, STORE_WRITE);
    MDB_txn *child = NULL;
    ck_assert_int_eq(store_txn_child(txn, &child, &err), 0);
    store_util_put(child, MODEL_NODE, store_util_node("n3"));
    ck_assert_int_eq(store_txn_commit(&child, &err), 0);
    ck_assert_uint_eq(store_last_txn(st), at_open + 1); /* the parent has not committed */
    store_util_commit(&txn);
    assert_last_txn_is_a_readers();
    ck_assert_uint_eq(store_last_txn(st), at_open + 2);
}
END_TEST

/* STORE_READ_NOWAIT never waits: while the map's growth holds (or waits for) the grow
 * lock it answers ERR_BUSY at once, and begins as STORE_READ does otherwise. */
START_TEST(test_store_read_nowait_is_busy_while_growing)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = NULL;
    ck_assert_int_eq(pthread_rwlock_wrlock(&st->grow_lock), 0); /* as grow() does */
    ck_assert_int_eq(store_txn_begin(st, STORE_READ_NOWAIT, &txn, &err), ERR_BUSY);
    ck_assert_ptr_null(txn);
    ck_assert_int_eq(pthread_rwlock_unlock(&st->grow_lock), 0);
    err_clear(&err);
    ck_assert_int_eq(store_txn_begin(st, STORE_READ_NOWAIT, &txn, &err), 0);
    ck_assert_uint_eq(store_txn_id(txn), store_last_txn(st));
    store_txn_abort(&txn);
    /* the lock is free again: a growth can take it */
    ck_assert_int_eq(pthread_rwlock_trywrlock(&st->grow_lock), 0);
    ck_assert_int_eq(pthread_rwlock_unlock(&st->grow_lock), 0);
}
END_TEST

START_TEST(test_store_put_returns_old_and_delete)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    json_t *a = store_util_node("n1"), *b = store_util_node("n1"), *old = NULL;

    json_object_set_new(json_object_get(b, "metadata"), "uid", json_string("u2"));
    ck_assert_int_eq(store_put(txn, MODEL_NODE, a, &old, &err), 0);
    ck_assert_ptr_null(old);
    ck_assert_int_eq(store_put(txn, MODEL_NODE, b, &old, &err), 0);
    ck_assert(json_equal(old, a));
    json_decref(old);
    ck_assert_int_eq(store_delete(txn, MODEL_NODE, "n1", &old, &err), 0);
    ck_assert(json_equal(old, b));
    json_decref(old);
    ck_assert_int_eq(store_delete(txn, MODEL_NODE, "n1", &old, &err), ERR_NOT_FOUND);
    ck_assert_ptr_null(old);
    ck_assert_str_eq(err.msg, "node 'n1' not found");
    store_util_commit(&txn);
    json_decref(a);
    json_decref(b);
}
END_TEST

/* store_put keys an object by model_object_key (namespace "default" when absent or empty)
 * and refuses a missing or empty name and a key that does not fit. */
START_TEST(test_store_put_key_rule)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    json_t *pod = store_util_pod("", "p", NULL, NULL, NULL), *got = NULL;
    char *key = model_object_key(MODEL_POD, pod);
    ck_assert_str_eq(key, "default/p");
    store_util_put(txn, MODEL_POD, pod);
    ck_assert_int_eq(store_get(txn, MODEL_POD, key, &got, &err), 0);
    json_decref(got);
    free(key);

    pod = store_util_pod("ns", "", NULL, NULL, NULL);
    ck_assert_int_eq(store_put(txn, MODEL_POD, pod, NULL, &err), ERR_INVALID);
    ck_assert_str_eq(err.msg, "pod without metadata.name");
    json_object_del(json_object_get(pod, "metadata"), "name");
    ck_assert_int_eq(store_put(txn, MODEL_POD, pod, NULL, &err), ERR_INVALID);
    ck_assert_str_eq(err.msg, "pod without metadata.name");
    json_decref(pod);

    char name[520];
    memset(name, 'a', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    json_t *node = store_util_node(name);
    ck_assert_int_eq(store_put(txn, MODEL_NODE, node, NULL, &err), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "' is too long"));
    json_decref(node);
    store_txn_abort(&txn);
}
END_TEST

/* store_replace takes the caller's copy of the stored value and keeps the indexes right */
START_TEST(test_store_replace_uses_callers_old_value)
{
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    json_t *old = store_util_pod("ns", "p1", NULL, "g", NULL), *got = NULL;
    store_util_put(txn, MODEL_POD, json_incref(old));
    store_util_commit(&txn);

    txn = store_util_begin(st, STORE_WRITE);
    json_t *bound = store_util_pod("ns", "p1", "n1", "g", NULL);
    ck_assert_int_eq(store_replace(txn, MODEL_POD, bound, old, NULL), 0);
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_READ);
    store_util_assert_keys(store_util_pending(txn), store_util_strings(NULL));
    store_util_assert_keys(store_util_on_node(txn, "n1"), store_util_strings("ns/p1", NULL));
    store_util_assert_keys(store_util_of_group(txn, "ns/g"), store_util_strings("ns/p1", NULL));
    ck_assert_int_eq(store_get(txn, MODEL_POD, "ns/p1", &got, NULL), 0);
    ck_assert(json_equal(got, bound));
    store_txn_abort(&txn);

    /* a new object (old NULL) is indexed too */
    txn = store_util_begin(st, STORE_WRITE);
    json_t *fresh = store_util_pod("ns", "p2", NULL, "h", NULL);
    ck_assert_int_eq(store_replace(txn, MODEL_POD, fresh, NULL, NULL), 0);
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_READ);
    store_util_assert_keys(store_util_pending(txn), store_util_strings("ns/p2", NULL));
    store_util_assert_keys(store_util_of_group(txn, "ns/h"), store_util_strings("ns/p2", NULL));
    store_txn_abort(&txn);
    json_decref(old);
    json_decref(bound);
    json_decref(fresh);
    json_decref(got);
}
END_TEST

/* The store's objects, the keys its pod indexes list on node n1, of group ns/g and pending,
 * as text (its members in the stored order; new). */
static char *stored_text(struct store *s)
{
    MDB_txn *txn = store_util_begin(s, STORE_READ);
    json_t *all = json_pack("[o,o,o,o]", store_util_dump_live(txn), store_util_on_node(txn, "n1"),
                            store_util_of_group(txn, "ns/g"), store_util_pending(txn));
    store_txn_abort(&txn);
    char *text = store_json_text(all, 0);
    json_decref(all);
    return text;
}

/* An object made ready ahead (store_ready_make) and put with its version (store_put_ready) is
 * stored as store_replace stores it: the same bytes, the version where it was, the same index
 * entries; what store_put refuses, store_ready_make refuses. */
START_TEST(test_store_put_ready_as_replace)
{
    char *dir2 = store_util_tmpdir();
    struct store *st2 = store_util_open(dir2, 0, STORE_SYNC_NONE);
    json_t *objs[] = {store_util_pod("ns", "bound", "n1", "g", NULL),
                      store_util_pod("ns", "waiting", NULL, "g", NULL),
                      store_util_pod("ns", "alone", NULL, NULL, "Running"), store_util_node("n1")};
    enum model_kind kinds[] = {MODEL_POD, MODEL_POD, MODEL_POD, MODEL_NODE};
    MDB_txn *a = store_util_begin(st, STORE_WRITE), *b = store_util_begin(st2, STORE_WRITE);
    for (size_t i = 0; i < sizeof(objs) / sizeof(*objs); i++) {
        json_t *meta = json_object_get(objs[i], "metadata"), *rv = json_string("0");
        json_object_set_new(meta, "resourceVersion", rv);
        json_object_set_new(meta, "uid", json_string("u")); /* after the version */
        struct store_ready r;
        ck_assert_int_eq(store_ready_make(&r, kinds[i], objs[i], rv, NULL), 0);
        ck_assert_int_eq(store_put_ready(b, &r, "1234", 4, NULL), 0);
        store_ready_release(&r);
        json_object_set_new(meta, "resourceVersion", json_string("1234"));
        ck_assert_int_eq(store_replace(a, kinds[i], objs[i], NULL, NULL), 0);
    }
    store_util_commit(&a);
    store_util_commit(&b);
    char *want = stored_text(st), *got = stored_text(st2);
    ck_assert_str_eq(got, want);
    ck_assert_ptr_nonnull(strstr(want, "\"resourceVersion\":\"1234\",\"uid\""));
    ck_assert_ptr_nonnull(strstr(want, "ns/waiting"));

    struct store_ready r;
    struct err err = ERR_INIT;
    json_t *nameless = json_pack("{s:{s:s}}", "metadata", "resourceVersion", "0");
    ck_assert_int_eq(
        store_ready_make(&r, MODEL_NODE, nameless,
                         json_object_get(json_object_get(nameless, "metadata"), "resourceVersion"),
                         &err),
        ERR_INVALID);
    ck_assert_str_eq(err.field, "metadata.name");
    json_decref(nameless);
    /* a version that is not the object's: nothing to replace */
    json_t *elsewhere = json_string("0");
    ck_assert_int_eq(store_ready_make(&r, MODEL_NODE, objs[3], elsewhere, &err), ERR_INTERNAL);
    ck_assert_ptr_null(r.text);
    json_decref(elsewhere);
    for (size_t i = 0; i < sizeof(objs) / sizeof(*objs); i++)
        json_decref(objs[i]);
    free(want);
    free(got);
    store_close(st2);
    store_util_rmrf(dir2);
}
END_TEST

static int collect_obj(void *ctx, const char *key, json_t *obj)
{
    ck_assert_ptr_nonnull(json_object_get(obj, "metadata"));
    json_array_append_new(ctx, json_string(key));
    return 0;
}

static int stop_after_one(void *ctx, const char *key, json_t *obj)
{
    json_array_append_new(ctx, json_string(key));
    return 1;
}

static int fail_cb(void *ctx, const char *key, json_t *obj)
{
    return ERR_CONFLICT;
}

START_TEST(test_store_each_prefix)
{
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    json_t *keys;

    store_util_put(txn, MODEL_POD, store_util_pod("a", "x", NULL, NULL, NULL));
    store_util_put(txn, MODEL_POD, store_util_pod("ab", "y", NULL, NULL, NULL));
    store_util_put(txn, MODEL_POD, store_util_pod("b", "z", NULL, NULL, NULL));
    store_util_put(txn, MODEL_POD, store_util_pod("a", "w", NULL, NULL, NULL));
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_READ);
    keys = json_array();
    ck_assert_int_eq(store_each(txn, MODEL_POD, "a/", collect_obj, keys, NULL), 0);
    store_util_assert_keys(keys, store_util_strings("a/w", "a/x", NULL));
    keys = json_array();
    ck_assert_int_eq(store_each(txn, MODEL_POD, NULL, collect_obj, keys, NULL), 0);
    store_util_assert_keys(keys, store_util_strings("a/w", "a/x", "ab/y", "b/z", NULL));
    keys = json_array();
    ck_assert_int_eq(store_each(txn, MODEL_POD, "c", collect_obj, keys, NULL), 0);
    store_util_assert_keys(keys, store_util_strings(NULL));
    keys = json_array();
    ck_assert_int_eq(store_each(txn, MODEL_POD, "a", stop_after_one, keys, NULL), 0);
    store_util_assert_keys(keys, store_util_strings("a/w", NULL));
    ck_assert_int_eq(store_each(txn, MODEL_POD, NULL, fail_cb, NULL, NULL), ERR_CONFLICT);
    store_txn_abort(&txn);
}
END_TEST

static int collect_doc(void *ctx, const char *key, json_t *doc)
{
    ck_assert(json_is_object(doc));
    json_array_append_new(ctx, json_string(key));
    return 0;
}

START_TEST(test_store_docs)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    json_t *got = NULL, *keys;

    for (int db = 0; db < STORE_DB_COUNT; db++) {
        json_t *doc = json_pack("{s:i, s:s}", "db", db, "reason", "GangMinMember");
        ck_assert_int_eq(store_doc_put(txn, (enum store_db)db, "ns/j1", doc, &err), 0);
        ck_assert_int_eq(store_doc_put(txn, (enum store_db)db, "ns/j2", doc, &err), 0);
        ck_assert_int_eq(store_doc_put(txn, (enum store_db)db, "other/j", doc, &err), 0);
        json_decref(doc);
    }
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_WRITE);
    for (int db = 0; db < STORE_DB_COUNT; db++) {
        ck_assert_int_eq(store_doc_get(txn, (enum store_db)db, "ns/j1", &got, &err), 0);
        ck_assert_int_eq(json_integer_value(json_object_get(got, "db")), db);
        json_decref(got);
        ck_assert_int_eq(store_doc_delete(txn, (enum store_db)db, "ns/j1", &err), 0);
        ck_assert_int_eq(store_doc_get(txn, (enum store_db)db, "ns/j1", &got, &err), ERR_NOT_FOUND);
        ck_assert_int_eq(store_doc_delete(txn, (enum store_db)db, "ns/j1", &err), ERR_NOT_FOUND);
        keys = json_array();
        ck_assert_int_eq(store_doc_each(txn, (enum store_db)db, "ns/", collect_doc, keys, &err), 0);
        store_util_assert_keys(keys, store_util_strings("ns/j2", NULL));
    }
    store_util_commit(&txn);
}
END_TEST

START_TEST(test_store_meta_counters)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    uint64_t v = 99;

    ck_assert_int_eq(store_meta_get_u64(txn, "cycles", &v, &err), 0);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(store_meta_put_u64(txn, "cycles", 1ull << 40, &err), 0);
    ck_assert_int_eq(store_meta_put_u64(txn, "other", 7, &err), 0);
    store_util_commit(&txn);
    txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_meta_get_u64(txn, "cycles", &v, &err), 0);
    ck_assert_uint_eq(v, 1ull << 40);
    ck_assert_int_eq(store_meta_get_u64(txn, "schema_version", &v, &err), 0);
    ck_assert_uint_eq(v, 4);
    store_txn_abort(&txn);
}
END_TEST

static int exists(MDB_txn *txn, const char *name)
{
    json_t *obj = NULL;
    int rc = store_get(txn, MODEL_NODE, name, &obj, NULL);

    json_decref(obj);
    ck_assert(rc == 0 || rc == ERR_NOT_FOUND);
    return rc == 0;
}

START_TEST(test_store_nested_abort_discards_only_child)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE), *child = NULL, *grandchild = NULL;

    store_util_put(txn, MODEL_NODE, store_util_node("parent"));
    ck_assert_int_eq(store_txn_child(txn, &child, &err), 0);
    store_util_put(child, MODEL_NODE, store_util_node("aborted"));
    ck_assert(exists(child, "parent"));
    store_txn_abort(&child);
    ck_assert_ptr_null(child);
    ck_assert(!exists(txn, "aborted"));

    ck_assert_int_eq(store_txn_child(txn, &child, &err), 0);
    store_util_put(child, MODEL_NODE, store_util_node("kept"));
    ck_assert_int_eq(store_txn_child(child, &grandchild, &err), 0);
    store_util_put(grandchild, MODEL_NODE, store_util_node("inner"));
    store_txn_abort(&grandchild);
    store_util_commit(&child);
    ck_assert(exists(txn, "kept"));
    store_util_commit(&txn);

    txn = store_util_begin(st, STORE_READ);
    ck_assert(exists(txn, "parent"));
    ck_assert(exists(txn, "kept"));
    ck_assert(!exists(txn, "aborted"));
    ck_assert(!exists(txn, "inner"));
    store_txn_abort(&txn);
}
END_TEST

START_TEST(test_store_abort_leaves_nothing)
{
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    uint64_t n = 1;

    store_util_put(txn, MODEL_NODE, store_util_node("n1"));
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "p", "n1", "g", NULL));
    ck_assert_int_eq(store_meta_put_u64(txn, "cycles", 5, NULL), 0);
    store_txn_abort(&txn);

    txn = store_util_begin(st, STORE_READ);
    ck_assert(!exists(txn, "n1"));
    ck_assert_int_eq(store_count(txn, MODEL_POD, &n, NULL), 0);
    ck_assert_uint_eq(n, 0);
    store_util_assert_keys(store_util_on_node(txn, "n1"), store_util_strings(NULL));
    store_util_assert_keys(store_util_of_group(txn, "ns/g"), store_util_strings(NULL));
    ck_assert_int_eq(store_meta_get_u64(txn, "cycles", &n, NULL), 0);
    ck_assert_uint_eq(n, 0);
    store_txn_abort(&txn);
}
END_TEST

START_TEST(test_store_restart_persists)
{
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);

    store_util_put(txn, MODEL_NODE, store_util_node("n1"));
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "p", NULL, "g", NULL));
    ck_assert_int_eq(store_meta_put_u64(txn, "cycles", 3, NULL), 0);
    store_util_commit(&txn);
    store_close(st);
    st = store_util_open(dir, 0, STORE_SYNC_FULL);

    uint64_t v = 0;
    txn = store_util_begin(st, STORE_READ);
    ck_assert(exists(txn, "n1"));
    store_util_assert_keys(store_util_pending(txn), store_util_strings("ns/p", NULL));
    store_util_assert_keys(store_util_of_group(txn, "ns/g"), store_util_strings("ns/p", NULL));
    ck_assert_int_eq(store_meta_get_u64(txn, "cycles", &v, NULL), 0);
    ck_assert_uint_eq(v, 3);
    store_txn_abort(&txn);
}
END_TEST

START_TEST(test_store_second_opener_busy)
{
    struct store_options opts = {.dir = dir};
    char want[512], got[ERR_MSG_MAX] = "";
    int fds[2], status;
    pid_t pid;

    ck_assert_int_eq(pipe(fds), 0);
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct err err = ERR_INIT;
        struct store *other = NULL;
        int rc = store_open(&opts, &other, &err);
        ssize_t w = write(fds[1], err.msg, strlen(err.msg));
        (void)w;
        _exit(rc == ERR_BUSY && other == NULL ? 0 : 1);
    }
    close(fds[1]);
    ssize_t n = read(fds[0], got, sizeof(got) - 1);
    got[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child got: %s", got);
    snprintf(want, sizeof(want), "data directory '%s' is in use by another musterd (pid %ld)", dir,
             (long)getpid());
    ck_assert_str_eq(got, want);
}
END_TEST

START_TEST(test_store_newer_schema_refused)
{
    struct store_options opts = {.dir = dir};
    struct err err = ERR_INIT;
    struct store *again = NULL;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);

    ck_assert_int_eq(store_meta_put_u64(txn, "schema_version", 5, NULL), 0);
    store_util_commit(&txn);
    store_close(st);
    st = NULL;
    ck_assert_int_eq(store_open(&opts, &again, &err), ERR_STORE);
    ck_assert_ptr_null(again);
    ck_assert_msg(strstr(err.msg, "schema version 5, newer than this musterd supports (4)"), "%s",
                  err.msg);
}
END_TEST

START_TEST(test_store_sync_modes)
{
    enum store_sync s = STORE_SYNC_FULL;
    struct err err = ERR_INIT;

    ck_assert_int_eq(store_sync_parse("meta", &s, &err), 0);
    ck_assert_int_eq(s, STORE_SYNC_META);
    ck_assert_int_eq(store_sync_parse("none", &s, &err), 0);
    ck_assert_int_eq(s, STORE_SYNC_NONE);
    ck_assert_str_eq(store_sync_name(STORE_SYNC_FULL), "full");
    ck_assert_int_eq(store_sync_parse("sometimes", &s, &err), ERR_INVALID);
    ck_assert_str_eq(err.msg, "invalid sync mode 'sometimes' (want full, meta or none)");
    ck_assert_int_eq(store_sync(st, &err), 0);
}
END_TEST

/* ---- map growth ---- */

struct batch {
    int first, n, calls;
    size_t pad;
};

static int write_batch(MDB_txn *txn, void *ctx, struct err *err)
{
    struct batch *b = ctx;
    char name[64], *pad = malloc(b->pad + 1);
    int rc = 0;

    b->calls++;
    memset(pad, 'x', b->pad);
    pad[b->pad] = '\0';
    for (int i = b->first; i < b->first + b->n && rc == 0; i++) {
        snprintf(name, sizeof(name), "p-%06d", i);
        json_t *pod = store_util_pod("ns", name, i % 2 ? "n1" : NULL, "g", NULL);
        json_object_set_new(json_object_get(pod, "metadata"), "annotations",
                            json_pack("{s:s}", "pad", pad));
        rc = store_put(txn, MODEL_POD, pod, NULL, err);
        json_decref(pod);
    }
    free(pad);
    return rc;
}

START_TEST(test_store_map_growth)
{
    struct err err = ERR_INIT;
    struct store_stats stats;
    struct batch b = {.pad = 4000};
    const int total = 5000; /* 5000 * ~4 KiB = ~20 MiB */
    uint64_t n = 0;

    store_close(st);
    store_util_rmrf(dir);
    dir = store_util_tmpdir();
    st = store_util_open(dir, 1 << 20, STORE_SYNC_NONE);

    /* One transaction bigger than the whole map: must fail with MAP_FULL and be retried. */
    b.first = 0;
    b.n = 1000;
    ck_assert_msg(store_write(st, write_batch, &b, &err) == 0, "%s", err.msg);
    ck_assert_int_gt(b.calls, 1);
    for (b.first = 1000; b.first < total; b.first += 250) {
        b.n = 250;
        ck_assert_msg(store_write(st, write_batch, &b, &err) == 0, "%s", err.msg);
    }
    ck_assert_int_eq(store_stats(st, &stats, &err), 0);
    ck_assert_uint_ge(stats.map_size, 20u << 20);
    ck_assert_uint_ge(stats.used_bytes, 20u << 20);
    ck_assert_uint_gt(stats.file_bytes, 0);
    ck_assert_uint_eq(stats.entries[MODEL_POD], total);

    store_close(st);
    st = store_util_open(dir, 1 << 20, STORE_SYNC_NONE);
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_count(txn, MODEL_POD, &n, NULL), 0);
    ck_assert_uint_eq(n, total);
    json_t *keys = store_util_of_group(txn, "ns/g");
    ck_assert_uint_eq(json_array_size(keys), total);
    json_decref(keys);
    keys = store_util_on_node(txn, "n1");
    ck_assert_uint_eq(json_array_size(keys), total / 2);
    json_decref(keys);
    json_t *pod = NULL;
    ck_assert_int_eq(store_get(txn, MODEL_POD, "ns/p-004999", &pod, &err), 0);
    ck_assert_uint_eq(
        strlen(json_string_value(json_object_get(
            json_object_get(json_object_get(pod, "metadata"), "annotations"), "pad"))),
        b.pad);
    json_decref(pod);
    store_txn_abort(&txn);
}
END_TEST

struct readers {
    atomic_int stop;
    atomic_int errors;
    atomic_int loops;
};

static int count_obj(void *ctx, const char *key, json_t *obj)
{
    (*(int *)ctx)++;
    return 0;
}

static void *reader(void *arg)
{
    struct readers *r = arg;

    while (!atomic_load(&r->stop)) {
        struct err err = ERR_INIT;
        MDB_txn *txn = NULL;
        uint64_t n = 0;
        int seen = 0;

        if (store_txn_begin(st, STORE_READ, &txn, &err) < 0 ||
            store_count(txn, MODEL_POD, &n, &err) < 0 ||
            store_each(txn, MODEL_POD, "ns/p-0000", count_obj, &seen, &err) < 0)
            atomic_fetch_add(&r->errors, 1);
        store_txn_abort(&txn);
        atomic_fetch_add(&r->loops, 1);
    }
    return NULL;
}

/* Readers in other threads keep transactions open while the writer grows the map. */
START_TEST(test_store_growth_with_concurrent_readers)
{
    struct readers r = {0};
    struct batch b = {.pad = 4000, .n = 100};
    struct err err = ERR_INIT;
    struct store_stats stats;
    pthread_t th[2];

    store_close(st);
    st = store_util_open(dir, 1 << 20, STORE_SYNC_NONE);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, reader, &r), 0);
    for (b.first = 0; b.first < 2500; b.first += b.n)
        ck_assert_msg(store_write(st, write_batch, &b, &err) == 0, "%s", err.msg);
    atomic_store(&r.stop, 1);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    ck_assert_int_eq(atomic_load(&r.errors), 0);
    ck_assert_int_gt(atomic_load(&r.loops), 0);
    ck_assert_int_eq(store_stats(st, &stats, &err), 0);
    ck_assert_uint_eq(stats.entries[MODEL_POD], 2500);
    ck_assert_uint_ge(stats.map_size, 8u << 20);
}
END_TEST

/* A thread holding a read txn may still write (growth is deferred, not deadlocked). */
START_TEST(test_store_write_while_holding_read)
{
    struct batch b = {.pad = 10, .n = 10};
    struct err err = ERR_INIT;
    MDB_txn *rtxn = store_util_begin(st, STORE_READ);
    uint64_t n = 0;

    ck_assert_msg(store_write(st, write_batch, &b, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(store_count(rtxn, MODEL_POD, &n, NULL), 0);
    ck_assert_uint_eq(n, 0); /* the snapshot predates the write */
    store_txn_abort(&rtxn);
    rtxn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_count(rtxn, MODEL_POD, &n, NULL), 0);
    ck_assert_uint_eq(n, 10);
    store_txn_abort(&rtxn);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_store_roundtrip,
                            test_store_put_ready_as_replace,
                            test_store_last_txn_without_a_transaction,
                            test_store_read_nowait_is_busy_while_growing,
                            test_store_put_returns_old_and_delete,
                            test_store_put_key_rule,
                            test_store_replace_uses_callers_old_value,
                            test_store_each_prefix,
                            test_store_docs,
                            test_store_meta_counters,
                            test_store_nested_abort_discards_only_child,
                            test_store_abort_leaves_nothing,
                            test_store_restart_persists,
                            test_store_second_opener_busy,
                            test_store_newer_schema_refused,
                            test_store_sync_modes,
                            test_store_map_growth,
                            test_store_growth_with_concurrent_readers,
                            test_store_write_while_holding_read,
                            NULL};
    return check_run(store_util_suite("store", &dir, &st, tests));
}
