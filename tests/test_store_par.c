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
#include "model_pod.h"
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
    int released;   /* results handed back with key NULL */
    int stop_at;    /* consume fails at this count (-1 never) */
    int raws;       /* results raw made (on any thread) */
    json_t *hinted; /* keys ahead was given, in order; NULL: not asked */
};

/* raw takes the odd-numbered pods from their stored text: parsed here, the binding given
 * applied with model_pod_set_bound (as every read applies it), which must make what
 * store_each reads; the even ones are left to decode. */
static int raw(void *ctx, const char *key, const char *json, size_t len, const char *node,
               const char *ts, void **res)
{
    struct sink *s = ctx;
    if (atoi(strrchr(key, '-') + 1) % 2 == 0)
        return 0;
    json_t *obj = json_loadb(json, len, 0, NULL);
    ck_assert_ptr_nonnull(obj);
    ck_assert_int_eq(node == NULL, ts == NULL);
    if (node)
        model_pod_set_bound(obj, node, ts);
    *res = json_pack("[s,o]", key, obj);
    __atomic_add_fetch(&s->raws, 1, __ATOMIC_RELAXED);
    return 1;
}

static void ahead(void *ctx, const char *key, const void *res)
{
    struct sink *s = ctx;
    ck_assert_ptr_nonnull(res);
    ck_assert_str_eq(key, json_string_value(json_array_get(res, 0)));
    json_array_append_new(s->hinted, json_string(key));
}

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
    if (s->hinted) /* told about before it is consumed, in the same order */
        ck_assert_str_eq(key,
                         json_string_value(json_array_get(s->hinted, json_array_size(s->got))));
    if ((int)json_array_size(s->got) == s->stop_at) {
        json_decref(r);
        return ERR_CONFLICT;
    }
    json_array_append_new(s->got, r);
    return 0;
}

static const struct store_par_fns plain = {.decode = decode, .consume = consume};
static const struct store_par_fns with_raw = {raw, decode, consume, ahead};

static void check_equal(const char *prefix, int threads, const struct store_par_fns *fns)
{
    MDB_txn *txn = store_util_begin(st, 0);
    struct err err = ERR_INIT;
    json_t *want = json_array();
    struct sink s = {.got = json_array(), .stop_at = -1};
    if (fns->ahead)
        s.hinted = json_array();
    ck_assert_int_eq(store_each(txn, MODEL_POD, prefix, collect, want, &err), 0);
    ck_assert_msg(store_each_par(txn, MODEL_POD, prefix, threads, fns, &s, &err) == 0, "%s",
                  err.msg);
    store_txn_abort(&txn);
    ck_assert_msg(json_equal(want, s.got), "prefix %s, %d threads: %zu objects, %zu wanted",
                  prefix ? prefix : "(none)", threads, json_array_size(s.got),
                  json_array_size(want));
    ck_assert_int_eq(s.released, 0);
    if (fns->raw) { /* the odd-numbered ones */
        int odd = 0;
        for (size_t i = 0; i < json_array_size(want); i++)
            odd +=
                atoi(strrchr(json_string_value(json_array_get(json_array_get(want, i), 0)), '-') +
                     1) %
                2;
        ck_assert_int_eq(s.raws, odd);
    }
    if (fns->ahead)
        ck_assert_int_eq(json_array_size(s.hinted), json_array_size(want));
    json_decref(want);
    json_decref(s.got);
    json_decref(s.hinted);
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
            for (int f = 0; f < 2; f++) {
                const struct store_par_fns *fns = f ? &with_raw : &plain;
                check_equal(NULL, threads[t], fns);
                check_equal("a/", threads[t], fns);
                check_equal("b/", threads[t], fns);
            }
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
    int rc = store_each_par(txn, MODEL_POD, NULL, 2, &plain, &s, &err);
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
