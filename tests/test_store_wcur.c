/* test_store_wcur.c - what the writer keeps by transaction handle (the cursors of
 * store/dry.c's store__put, the cached audit head): writes and deletes that follow each
 * other through them, children begun after them, and writers on two threads taking turns
 * (LMDB hands each the same transaction handle). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "store.h"
#include "store_audit.h"
#include "store_util.h"
#include "check_run.h"

static char *dir;
static struct store *st;

static int has_pod(MDB_txn *txn, const char *key)
{
    json_t *got = NULL;
    int rc = store_get(txn, MODEL_POD, key, &got, NULL);
    json_decref(got);
    return rc == 0;
}

static void audit_ok(void)
{
    struct store_audit_verdict v;
    struct err err = ERR_INIT;
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    ck_assert_msg(store_audit_verify(txn, 0, 0, &v, &err) == 0, "%s", err.msg);
    ck_assert_msg(v.ok, "%s", v.reason);
    store_txn_abort(&txn);
}

static void append(MDB_txn *txn, int i)
{
    char rec[64];
    struct err err = ERR_INIT;
    int n = snprintf(rec, sizeof(rec), "{\"cycle\":%d,\"kind\":\"cycle\"}", i);
    ck_assert_msg(
        store_audit_append_text(txn, STORE_AUDIT_CYCLE, rec, (size_t)n, NULL, NULL, &err) == 0,
        "%s", err.msg);
}

/* In one transaction: pods put in key order, every other one deleted again, others put
 * over, records appended between; then a child that writes and one that is aborted. */
START_TEST(test_store_wcur_puts_deletes_and_children)
{
    struct err err = ERR_INIT;
    char name[32], key[40];
    MDB_txn *txn = store_util_begin(st, STORE_WRITE), *child = NULL;

    for (int i = 0; i < 3000; i++) {
        snprintf(name, sizeof(name), "p-%05d", i);
        store_util_put(txn, MODEL_POD, store_util_pod("ns", name, NULL, "g", NULL));
        if (i % 7 == 0)
            append(txn, i);
    }
    for (int i = 0; i < 3000; i += 2) {
        snprintf(key, sizeof(key), "ns/p-%05d", i);
        ck_assert_int_eq(store_delete(txn, MODEL_POD, key, NULL, &err), 0);
    }
    for (int i = 1; i < 3000; i += 4) {
        snprintf(name, sizeof(name), "p-%05d", i);
        store_util_put(txn, MODEL_POD, store_util_pod("ns", name, "n1", "g", "Running"));
    }
    ck_assert_int_eq(store_txn_child(txn, &child, &err), 0);
    store_util_put(child, MODEL_POD, store_util_pod("ns", "child-kept", NULL, "g", NULL));
    store_util_commit(&child);
    ck_assert_int_eq(store_txn_child(txn, &child, &err), 0);
    store_util_put(child, MODEL_POD, store_util_pod("ns", "child-aborted", NULL, "g", NULL));
    store_txn_abort(&child);
    store_util_put(txn, MODEL_POD, store_util_pod("ns", "after", NULL, "g", NULL));
    append(txn, -1);
    store_util_commit(&txn);

    txn = store_util_begin(st, STORE_READ);
    uint64_t n = 0;
    ck_assert_int_eq(store_count(txn, MODEL_POD, &n, &err), 0);
    ck_assert_uint_eq(n, 1500 + 2);
    for (int i = 0; i < 3000; i++) {
        snprintf(key, sizeof(key), "ns/p-%05d", i);
        ck_assert_int_eq(has_pod(txn, key), i % 2);
    }
    json_t *on = store_util_on_node(txn, "n1");
    ck_assert_uint_eq(json_array_size(on), 750);
    json_decref(on);
    ck_assert(has_pod(txn, "ns/child-kept"));
    ck_assert(!has_pod(txn, "ns/child-aborted"));
    ck_assert(has_pod(txn, "ns/after"));
    store_txn_abort(&txn);
    audit_ok();
}
END_TEST

struct writer {
    int id, txns;
    char msg[1100];
};

static void *write_turns(void *arg)
{
    struct writer *w = arg;
    struct err err = ERR_INIT;
    char name[32], key[48], rec[64];
    for (int t = 0; t < w->txns && !w->msg[0]; t++) {
        MDB_txn *txn = NULL;
        if (store_txn_begin(st, STORE_WRITE, &txn, &err) < 0) {
            snprintf(w->msg, sizeof(w->msg), "begin: %s", err.msg);
            break;
        }
        snprintf(name, sizeof(name), "w%d-%05d", w->id, t);
        json_t *pod = store_util_pod("ns", name, NULL, "g", NULL);
        int n = snprintf(rec, sizeof(rec), "{\"cycle\":%d,\"kind\":\"cycle\"}", t);
        snprintf(key, sizeof(key), "ns/w%d-%05d", w->id, t - 1);
        int rc = store_put(txn, MODEL_POD, pod, NULL, &err);
        if (rc == 0 && t > 0 && t % 2 == 0)
            rc = store_delete(txn, MODEL_POD, key, NULL, &err);
        if (rc == 0)
            rc = store_audit_append_text(txn, STORE_AUDIT_CYCLE, rec, (size_t)n, NULL, NULL, &err);
        json_decref(pod);
        if (rc == 0)
            rc = store_txn_commit(&txn, &err);
        else
            store_txn_abort(&txn);
        if (rc < 0)
            snprintf(w->msg, sizeof(w->msg), "txn %d: %s", t, err.msg);
    }
    return NULL;
}

/* Two writers take turns: each commit ends the other's wait, and LMDB gives the next
 * writer the handle the last one had; a cursor kept from the last one would write into
 * freed memory (ASan) or pages that are no longer the tree's, and the last one's cleanup
 * after its commit wiped the next one's cached audit head (a sequence number used twice:
 * "already exists past the head"). */
START_TEST(test_store_wcur_writers_take_turns)
{
    struct writer w[2] = {{.id = 0, .txns = 1500}, {.id = 1, .txns = 1500}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, write_turns, &w[i]), 0);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        ck_assert_msg(!w[i].msg[0], "writer %d: %s", i, w[i].msg);
    }
    MDB_txn *txn = store_util_begin(st, STORE_READ);
    char key[48];
    uint64_t n = 0;
    ck_assert_int_eq(store_count(txn, MODEL_POD, &n, NULL), 0);
    ck_assert_uint_eq(n, 2 * 751); /* of each writer's 1,500: 749 deleted */
    for (int id = 0; id < 2; id++)
        for (int t = 0; t < 1500; t++) {
            snprintf(key, sizeof(key), "ns/w%d-%05d", id, t);
            ck_assert_int_eq(has_pod(txn, key), t % 2 == 0 || t == 1499);
        }
    uint64_t last = 0;
    ck_assert_int_eq(store_audit_last_seq(txn, &last, NULL), 0);
    ck_assert_uint_eq(last, 3000);
    store_txn_abort(&txn);
    audit_ok();
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_store_wcur_puts_deletes_and_children,
                            test_store_wcur_writers_take_turns, NULL};
    return check_run(store_util_suite("store_wcur", &dir, &st, tests));
}
