/* test_store_bind.c - bindings kept in their own record (store_pod_bind): every reader sees
 * the bound pod, the indexes agree, and a full write, a delete, an abort and a restart
 * each leave the pod right. */
#include <check.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "err.h"
#include "store.h"
#include "store_util.h"

#define TS "2026-01-01T00:00:05Z"

static char *dir;
static struct store *st;

/* A pending pod with a nomination and a condition, so the binding has to edit both. */
static json_t *pending_pod(const char *name)
{
    json_t *p = store_util_pod("ns", name, NULL, "g", NULL);
    json_object_set_new(p, "status",
                        json_pack("{s:s,s:s,s:[{s:s,s:s,s:s}]}", "phase", "Pending",
                                  "nominatedNodeName", "n9", "conditions", "type", "PodScheduled",
                                  "status", "False", "reason", "Unschedulable"));
    return p;
}

/* Stores pod (stolen). */
static void put_pod(json_t *pod)
{
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    struct err err = ERR_INIT;
    ck_assert_msg(store_put(txn, MODEL_POD, pod, NULL, &err) == 0, "%s", err.msg);
    store_util_commit(&txn);
    json_decref(pod);
}

static void bind(const char *key, const char *node)
{
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    struct err err = ERR_INIT;
    ck_assert_msg(store_pod_bind(txn, key, node, TS, &err) == 0, "%s", err.msg);
    store_util_commit(&txn);
}

static json_t *get_pod(const char *key)
{
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    json_t *pod = NULL;
    ck_assert_int_eq(store_get(txn, MODEL_POD, key, &pod, NULL), 0);
    store_txn_abort(&txn);
    return pod;
}

/* The keys of an index scan, as one string "a,b". */
static char *scan(int which, const char *arg)
{
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    json_t *keys = json_array();
    int rc = which == 0   ? store_pods_pending(txn, store_util_collect_key, keys, NULL)
             : which == 1 ? store_pods_on_node(txn, arg, store_util_collect_key, keys, NULL)
                          : store_pods_of_group(txn, arg, store_util_collect_key, keys, NULL);
    ck_assert_int_eq(rc, 0);
    store_txn_abort(&txn);
    char *out = calloc(1, 1024);
    size_t i;
    json_t *k;
    json_array_foreach(keys, i, k)
    {
        strcat(out, i ? "," : "");
        strcat(out, json_string_value(k));
    }
    json_decref(keys);
    return out;
}

static void assert_scan(int which, const char *arg, const char *want)
{
    char *got = scan(which, arg);
    ck_assert_str_eq(got, want);
    free(got);
}

static void assert_same_text(json_t *got, json_t *want)
{
    char *g = json_dumps(got, JSON_COMPACT), *w = json_dumps(want, JSON_COMPACT);
    ck_assert_str_eq(g, w);
    free(g);
    free(w);
}

static int collect(void *ctx, const char *key, json_t *obj)
{
    json_object_set(ctx, key, obj);
    return 0;
}

START_TEST(test_store_bind_reads_as_set_bound)
{
    json_t *pod = pending_pod("p1"), *want = json_deep_copy(pod);
    put_pod(json_incref(pod));
    put_pod(pending_pod("p2"));
    bind("ns/p1", "n1");
    model_pod_set_bound(want, "n1", TS);

    json_t *got = get_pod("ns/p1");
    assert_same_text(got, want); /* byte for byte what a whole rewrite stored */
    ck_assert_ptr_null(json_object_get(json_object_get(got, "status"), "nominatedNodeName"));
    json_t *all = json_object();
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_each(txn, MODEL_POD, NULL, collect, all, NULL), 0);
    store_txn_abort(&txn);
    assert_same_text(json_object_get(all, "ns/p1"), want);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(all, "ns/p2"), "status"), "phase")),
                     "Pending");
    ck_assert_ptr_null(
        json_object_get(json_object_get(json_object_get(all, "ns/p2"), "spec"), "nodeName"));
    assert_scan(0, NULL, "ns/p2");
    assert_scan(1, "n1", "ns/p1");
    assert_scan(2, "ns/g", "ns/p1,ns/p2");
    json_decref(all);
    json_decref(got);
    json_decref(pod);
    json_decref(want);
}
END_TEST

/* A full write of the bound pod carries the binding; after a delete, a new pod of the same
 * name is pending again (the record went with the pod). */
START_TEST(test_store_bind_then_put_and_delete)
{
    put_pod(pending_pod("p1"));
    bind("ns/p1", "n1");
    json_t *pod = get_pod("ns/p1");
    json_object_set_new(json_object_get(pod, "status"), "phase", json_string("Running"));
    put_pod(json_incref(pod));
    json_t *got = get_pod("ns/p1");
    ck_assert(json_equal(got, pod));
    assert_scan(1, "n1", "ns/p1");
    json_decref(got);

    /* put back a pending version: the binding must not come back with it */
    json_t *fresh = pending_pod("p1");
    put_pod(json_incref(fresh));
    got = get_pod("ns/p1");
    ck_assert(json_equal(got, fresh));
    assert_scan(0, NULL, "ns/p1");
    assert_scan(1, "n1", "");
    json_decref(got);

    bind("ns/p1", "n2");
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    json_t *old = NULL;
    ck_assert_int_eq(store_delete(txn, MODEL_POD, "ns/p1", &old, NULL), 0);
    store_util_commit(&txn);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(old, "spec"), "nodeName")),
                     "n2");
    assert_scan(1, "n2", "");
    put_pod(json_incref(fresh));
    got = get_pod("ns/p1");
    ck_assert(json_equal(got, fresh));
    assert_scan(0, NULL, "ns/p1");
    json_decref(got);
    json_decref(old);
    json_decref(fresh);
    json_decref(pod);
}
END_TEST

/* store_replace with the value store_get read (merged) drops the record too. */
START_TEST(test_store_bind_then_replace)
{
    put_pod(pending_pod("p1"));
    bind("ns/p1", "n1");
    json_t *old = get_pod("ns/p1"), *fresh = pending_pod("p1");
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    ck_assert_int_eq(store_replace(txn, MODEL_POD, fresh, old, NULL), 0);
    store_util_commit(&txn);
    json_t *got = get_pod("ns/p1");
    ck_assert(json_equal(got, fresh));
    assert_scan(0, NULL, "ns/p1");
    assert_scan(1, "n1", "");
    json_decref(got);
    json_decref(old);
    json_decref(fresh);
}
END_TEST

/* A pod that is not pending is bound in full; errors change nothing. */
START_TEST(test_store_bind_not_pending_and_errors)
{
    put_pod(pending_pod("p1"));
    bind("ns/p1", "n1");
    bind("ns/p1", "n2"); /* rebinding a bound pod: read, bound and written whole */
    json_t *got = get_pod("ns/p1");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(got, "spec"), "nodeName")),
                     "n2");
    assert_scan(1, "n1", "");
    assert_scan(1, "n2", "ns/p1");
    json_decref(got);

    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    ck_assert_int_eq(store_pod_bind(txn, "ns/nope", "n1", TS, &err), ERR_NOT_FOUND);
    ck_assert_msg(strstr(err.msg, "pod 'ns/nope' not found"), "%s", err.msg);
    err_clear(&err);
    ck_assert_int_eq(store_pod_bind(txn, "ns/p1", "", TS, &err), ERR_INVALID);
    ck_assert_msg(strstr(err.msg, "ns/p1"), "%s", err.msg);
    store_util_commit(&txn);
    assert_scan(1, "n2", "ns/p1");
}
END_TEST

/* Aborted, the binding is gone with the transaction; committed, it survives a restart. */
START_TEST(test_store_bind_abort_and_restart)
{
    put_pod(pending_pod("p1"));
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    ck_assert_int_eq(store_pod_bind(txn, "ns/p1", "n1", TS, NULL), 0);
    store_txn_abort(&txn);
    json_t *got = get_pod("ns/p1");
    ck_assert_ptr_null(json_object_get(json_object_get(got, "spec"), "nodeName"));
    assert_scan(0, NULL, "ns/p1");
    json_decref(got);

    bind("ns/p1", "n1");
    store_close(st);
    st = store_util_open(dir, 0, STORE_SYNC_FULL);
    got = get_pod("ns/p1");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(got, "spec"), "nodeName")),
                     "n1");
    assert_scan(1, "n1", "ns/p1");
    assert_scan(0, NULL, "");
    json_decref(got);
}
END_TEST

/* The pending index keeps a pod bound by its record (a read, not a delete, per binding):
 * the pod reads as not pending, and a full write, a delete or a second binding of it takes
 * it out, so no scan lists a pod that is not pending. */
START_TEST(test_store_bind_pending_index_left_to_the_record)
{
    put_pod(pending_pod("p1"));
    put_pod(pending_pod("p2"));
    put_pod(pending_pod("p3"));
    assert_scan(0, NULL, "ns/p1,ns/p2,ns/p3");
    bind("ns/p1", "n1");
    bind("ns/p2", "n1");
    bind("ns/p3", "n1");
    assert_scan(0, NULL, "");
    put_pod(get_pod("ns/p1")); /* written whole as it reads: the record goes */
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    ck_assert_int_eq(store_delete(txn, MODEL_POD, "ns/p2", NULL, NULL), 0);
    store_util_commit(&txn);
    bind("ns/p3", "n2"); /* bound already: read, bound and written whole */
    json_t *got = get_pod("ns/p3");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(got, "spec"), "nodeName")),
                     "n2");
    json_decref(got);
    assert_scan(1, "n1", "ns/p1");
    assert_scan(1, "n2", "ns/p3");
    txn = store_util_begin(st, STORE_READ); /* nothing left listed, with a record or without */
    MDB_dbi d;
    MDB_stat ms;
    ck_assert_int_eq(mdb_dbi_open(txn, "idx_pending", 0, &d), 0);
    ck_assert_int_eq(mdb_stat(txn, d, &ms), 0);
    store_txn_abort(&txn);
    ck_assert_uint_eq(ms.ms_entries, 0);
    assert_scan(0, NULL, "");
}
END_TEST

/* A store of schema 1 (no binding records) opens as it is and is marked schema 4. */
START_TEST(test_store_bind_schema_one_upgraded)
{
    MDB_txn *txn = store_util_begin(st, STORE_WRITE);
    ck_assert_int_eq(store_meta_put_u64(txn, "schema_version", 1, NULL), 0);
    store_util_commit(&txn);
    put_pod(pending_pod("p1"));
    store_close(st);
    st = store_util_open(dir, 0, STORE_SYNC_FULL);
    uint64_t v = 0;
    txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_meta_get_u64(txn, "schema_version", &v, NULL), 0);
    store_txn_abort(&txn);
    ck_assert_uint_eq(v, 4);
    assert_scan(0, NULL, "ns/p1");
}
END_TEST

/* A store of schema 2 kept the indexes by node and by group as DUPSORT databases
 * ("idx_pod_node", "idx_pod_group"): opened, they are gone and the pair-keyed ones hold
 * what the pods say (a bound record, a node in the pod, a group, a pod key too long to be
 * a key beside its node's name), read back by the scans. */
START_TEST(test_store_bind_schema_two_indexes_rebuilt)
{
    char longname[254], longns[64];
    memset(longname, 'x', 253);
    longname[253] = '\0';
    memset(longns, 'a', 63);
    longns[63] = '\0';
    char longnode[254];
    memset(longnode, 'n', 253);
    longnode[253] = '\0';
    put_pod(pending_pod("p1"));
    put_pod(pending_pod("p2"));
    put_pod(store_util_pod("ns", "p3", "n2", NULL, "Running"));
    put_pod(store_util_pod(longns, longname, longnode, "g", "Running"));
    bind("ns/p2", "n1");
    MDB_txn *txn = store_util_begin(st, STORE_WRITE); /* a schema 2 store, by hand */
    MDB_dbi d;
    static const char *const old[] = {"idx_pod_node", "idx_pod_group"};
    static const char *const now[] = {"pods_by_node", "pods_by_group"};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(mdb_dbi_open(txn, now[i], 0, &d), 0);
        ck_assert_int_eq(mdb_drop(txn, d, 0), 0);
        ck_assert_int_eq(mdb_dbi_open(txn, old[i], MDB_CREATE | MDB_DUPSORT, &d), 0);
        MDB_val k = {2, "n1"}, v = {5, "ns/zz"};
        ck_assert_int_eq(mdb_put(txn, d, &k, &v, 0), 0);
    }
    ck_assert_int_eq(store_meta_put_u64(txn, "schema_version", 2, NULL), 0);
    store_util_commit(&txn);
    store_close(st);
    st = store_util_open(dir, 0, STORE_SYNC_FULL);
    txn = store_util_begin(st, STORE_READ);
    uint64_t v = 0;
    ck_assert_int_eq(store_meta_get_u64(txn, "schema_version", &v, NULL), 0);
    ck_assert_uint_eq(v, 4);
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(mdb_dbi_open(txn, old[i], 0, &d), MDB_NOTFOUND);
    store_txn_abort(&txn);
    assert_scan(1, "n1", "ns/p2");
    assert_scan(1, "n2", "ns/p3");
    char want[600], group[80];
    snprintf(want, sizeof(want), "%s/%s", longns, longname);
    assert_scan(1, longnode, want);
    snprintf(group, sizeof(group), "%s/g", longns);
    assert_scan(2, group, want);
    assert_scan(2, "ns/g", "ns/p1,ns/p2");
    assert_scan(0, NULL, "ns/p1");
    uint64_t groups = 0, grouped = 0;
    txn = store_util_begin(st, STORE_READ);
    ck_assert_int_eq(store_pod_groups_count(txn, &groups, &grouped, NULL), 0);
    store_txn_abort(&txn);
    ck_assert_uint_eq(groups, 2);
    ck_assert_uint_eq(grouped, 3);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_store_bind_reads_as_set_bound,
                            test_store_bind_then_put_and_delete,
                            test_store_bind_then_replace,
                            test_store_bind_not_pending_and_errors,
                            test_store_bind_abort_and_restart,
                            test_store_bind_pending_index_left_to_the_record,
                            test_store_bind_schema_one_upgraded,
                            test_store_bind_schema_two_indexes_rebuilt,
                            NULL};
    return check_run(store_util_suite("store_bind", &dir, &st, tests));
}
