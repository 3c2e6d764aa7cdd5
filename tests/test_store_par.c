/*
 * test_store_par.c - store_each_par (store/each_par.c) against store_each: the same
 * objects in the same order (pods with their binding records merged), whatever the thread
 * count and however the objects fall into chunks; a consume error stops it and every
 * decoded result is released.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "err.h"
#include "store.h"
#include "store_util.h"

static char *dir;
static struct store *st;

/* Pods "ns/pod-%05d" numbered from to to across two namespaces, so a prefix selects part
 * of them. */
static void put_pods(int from, int to)
{
    MDB_txn *txn = store_util_begin(st, 1);
    struct err err = ERR_INIT;
    for (int i = from; i < to; i++) {
        char name[32];
        snprintf(name, sizeof(name), "pod-%05d", i);
        json_t *p = store_util_pod(i % 3 ? "a" : "b", name, i % 2 ? "node-1" : NULL, NULL, NULL);
        ck_assert_msg(store_put(txn, MODEL_POD, p, NULL, &err) == 0, "%s", err.msg);
        json_decref(p);
    }
    store_util_commit(&txn);
}

/* Binds every fifth pending pod of from..to the cheap way: a binding record the readers
 * merge (store/pod_bind.c). */
static void bind_some(int from, int to)
{
    MDB_txn *txn = store_util_begin(st, 1);
    struct err err = ERR_INIT;
    for (int i = from; i < to; i++) {
        char key[48];
        snprintf(key, sizeof(key), "%s/pod-%05d", i % 3 ? "a" : "b", i);
        if (i % 2 == 0 && i % 5 == 0)
            ck_assert_msg(store_pod_bind(txn, key, "node-2", "2026-11-01T00:00:00Z", &err) == 0,
                          "%s", err.msg);
    }
    store_util_commit(&txn);
}

static int collect(void *ctx, const char *key, json_t *obj)
{
    json_array_append_new(ctx, json_pack("[s,O]", key, obj));
    return 0;
}

/* What decode makes: the key and the object, copied (the object is only borrowed). */
static void *decode(void *ctx, const char *key, json_t *obj)
{
    (void)ctx;
    return json_pack("[s,o]", key, json_deep_copy(obj));
}

struct sink {
    json_t *got;
    int released; /* results handed back with key NULL */
    int stop_at;  /* consume fails at this count (-1 never) */
};

static int consume(void *ctx, const char *key, void *res)
{
    struct sink *s = ctx;
    json_t *r = res;
    if (!key) {
        s->released++;
        json_decref(r);
        return 0;
    }
    ck_assert_str_eq(key, json_string_value(json_array_get(r, 0)));
    if ((int)json_array_size(s->got) == s->stop_at) {
        json_decref(r);
        return ERR_CONFLICT;
    }
    json_array_append_new(s->got, r);
    return 0;
}

static void check_equal(const char *prefix, int threads)
{
    MDB_txn *txn = store_util_begin(st, 0);
    struct err err = ERR_INIT;
    json_t *want = json_array();
    struct sink s = {.got = json_array(), .stop_at = -1};
    ck_assert_int_eq(store_each(txn, MODEL_POD, prefix, collect, want, &err), 0);
    ck_assert_msg(store_each_par(txn, MODEL_POD, prefix, threads, decode, consume, &s, &err) == 0,
                  "%s", err.msg);
    store_txn_abort(&txn);
    ck_assert_msg(json_equal(want, s.got), "prefix %s, %d threads: %zu objects, %zu wanted",
                  prefix ? prefix : "(none)", threads, json_array_size(s.got),
                  json_array_size(want));
    ck_assert_int_eq(s.released, 0);
    json_decref(want);
    json_decref(s.got);
}

START_TEST(test_store_par_equals_store_each)
{
    /* none, fewer than a chunk, several chunks and a partial one */
    int sizes[] = {0, 5, 2048, 7000};
    int done = 0;
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        put_pods(done, sizes[k]);
        bind_some(done, sizes[k]);
        done = sizes[k];
        int threads[] = {1, 2, 4, 0};
        for (size_t t = 0; t < 4; t++) {
            check_equal(NULL, threads[t]);
            check_equal("a/", threads[t]);
            check_equal("b/", threads[t]);
        }
    }
}
END_TEST

START_TEST(test_store_par_consume_error_stops_and_releases)
{
    put_pods(0, 6000);
    MDB_txn *txn = store_util_begin(st, 0);
    struct err err = ERR_INIT;
    struct sink s = {.got = json_array(), .stop_at = 3000};
    int rc = store_each_par(txn, MODEL_POD, NULL, 2, decode, consume, &s, &err);
    store_txn_abort(&txn);
    ck_assert_int_eq(rc, ERR_CONFLICT);
    ck_assert_int_eq((int)json_array_size(s.got), 3000);
    /* the rest of the failing chunk, and the chunk decoded ahead of it */
    ck_assert_int_gt(s.released, 0);
    ck_assert_int_le(3000 + 1 + s.released, 6000);
    json_decref(s.got);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_store_par_equals_store_each,
                            test_store_par_consume_error_stops_and_releases, NULL};
    return check_run(store_util_suite("store_par", &dir, &st, tests));
}
