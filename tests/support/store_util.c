#include "store_util.h"

#include <check.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_run.h"
#include "err.h"

char *store_util_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    char path[4096];

    snprintf(path, sizeof(path), "%s/muster-store-XXXXXX", base && *base ? base : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(path));
    return strdup(path);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

void store_util_rmrf(char *dir)
{
    if (!dir)
        return;
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(dir);
}

struct store *store_util_open(const char *dir, size_t map_size, enum store_sync sync)
{
    struct store_options opts = {.dir = dir, .map_size = map_size, .sync = sync};
    struct err err = ERR_INIT;
    struct store *st = NULL;
    int rc = store_open(&opts, &st, &err);

    ck_assert_msg(rc == 0, "store_open('%s'): %s", dir, err.msg);
    return st;
}

json_t *store_util_pod(const char *ns, const char *name, const char *node, const char *group,
                       const char *phase)
{
    json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:{}}, s:{s:[{s:s}]}, s:{}}", "apiVersion",
                            "v1", "kind", "Pod", "metadata", "name", name, "namespace", ns,
                            "labels", "spec", "containers", "name", "c", "status");

    if (node)
        json_object_set_new(json_object_get(pod, "spec"), "nodeName", json_string(node));
    if (group)
        json_object_set_new(json_object_get(json_object_get(pod, "metadata"), "labels"),
                            "pod-group.scheduling.sigs.k8s.io", json_string(group));
    if (phase)
        json_object_set_new(json_object_get(pod, "status"), "phase", json_string(phase));
    return pod;
}

json_t *store_util_node(const char *name)
{
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:{s:s, s:s}}}", "apiVersion", "v1", "kind",
                     "Node", "metadata", "name", name, "labels",
                     "network.topology.nvidia.com/block", "b1", "status", "allocatable", "cpu", "8",
                     "nvidia.com/gpu", "8");
}

int store_util_collect_key(void *ctx, const char *key)
{
    json_array_append_new(ctx, json_string(key));
    return 0;
}

json_t *store_util_strings(const char *first, ...)
{
    json_t *arr = json_array();
    va_list ap;

    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *))
        json_array_append_new(arr, json_string(s));
    va_end(ap);
    return arr;
}

void store_util_fixture_open(char **dir, struct store **st)
{
    *dir = store_util_tmpdir();
    *st = store_util_open(*dir, 0, STORE_SYNC_NONE);
}

void store_util_fixture_close(char **dir, struct store **st)
{
    store_close(*st);
    *st = NULL;
    store_util_rmrf(*dir);
    *dir = NULL;
}

/* Where store_util_suite's fixture puts the store of the test that runs: set in the parent
 * before the tests are forked, read in each child. */
static char **fixture_dir;
static struct store **fixture_st;

static void fixture_setup(void)
{
    store_util_fixture_open(fixture_dir, fixture_st);
}

static void fixture_teardown(void)
{
    store_util_fixture_close(fixture_dir, fixture_st);
}

Suite *store_util_suite(const char *name, char **dir, struct store **st, const TTest *tests[])
{
    fixture_dir = dir;
    fixture_st = st;
    return check_suite(name, fixture_setup, fixture_teardown, tests);
}

MDB_txn *store_util_begin(struct store *st, int write)
{
    struct err err = ERR_INIT;
    MDB_txn *txn = NULL;

    ck_assert_msg(store_txn_begin(st, write, &txn, &err) == 0, "%s", err.msg);
    return txn;
}

void store_util_commit(MDB_txn **txn)
{
    struct err err = ERR_INIT;

    ck_assert_msg(store_txn_commit(txn, &err) == 0, "%s", err.msg);
    ck_assert_ptr_null(*txn);
}

void store_util_put(MDB_txn *txn, enum model_kind kind, json_t *obj)
{
    struct err err = ERR_INIT;
    ck_assert_msg(store_put(txn, kind, obj, NULL, &err) == 0, "%s", err.msg);
    json_decref(obj);
}

/* Asserts an index scan returns exactly the expected keys (expected is stolen). */
void store_util_assert_keys(json_t *got, json_t *expected)
{
    char *g = json_dumps(got, JSON_COMPACT), *e = json_dumps(expected, JSON_COMPACT);

    ck_assert_msg(json_equal(got, expected), "got %s, want %s", g, e);
    free(g);
    free(e);
    json_decref(got);
    json_decref(expected);
}

json_t *store_util_on_node(MDB_txn *txn, const char *node)
{
    json_t *keys = json_array();
    ck_assert_int_eq(store_pods_on_node(txn, node, store_util_collect_key, keys, NULL), 0);
    return keys;
}

json_t *store_util_of_group(MDB_txn *txn, const char *group)
{
    json_t *keys = json_array();
    ck_assert_int_eq(store_pods_of_group(txn, group, store_util_collect_key, keys, NULL), 0);
    return keys;
}

json_t *store_util_pending(MDB_txn *txn)
{
    json_t *keys = json_array();
    ck_assert_int_eq(store_pods_pending(txn, store_util_collect_key, keys, NULL), 0);
    return keys;
}

static int dump_add(void *ctx, enum model_kind kind, const char *key, json_t *obj)
{
    char k[8];
    snprintf(k, sizeof(k), "%d", (int)kind);
    json_t *m = json_object_get(ctx, k);
    if (!m)
        json_object_set_new(ctx, k, m = json_object());
    json_object_set(m, key, obj);
    return 0;
}

struct dump_live {
    json_t *all;
    enum model_kind kind;
};

static int dump_live_add(void *ctx, const char *key, json_t *obj)
{
    struct dump_live *l = ctx;
    return dump_add(l->all, l->kind, key, obj);
}

json_t *store_util_dump_live(MDB_txn *txn)
{
    struct dump_live l = {json_object(), 0};
    struct err err = ERR_INIT;
    for (int k = 0; k < MODEL_KIND_COUNT; k++) {
        l.kind = (enum model_kind)k;
        ck_assert_msg(store_each(txn, l.kind, NULL, dump_live_add, &l, &err) == 0, "%s", err.msg);
    }
    return l.all;
}

json_t *store_util_dump_at(MDB_txn *txn, uint64_t seq)
{
    json_t *all = json_object();
    struct err err = ERR_INIT;
    ck_assert_msg(store_history_each_at(txn, seq, STORE_KINDS_ALL, dump_add, all, &err) == 0, "%s",
                  err.msg);
    return all;
}

static int why_add(void *ctx, const char *key, json_t *doc)
{
    json_object_set(ctx, key, doc);
    return 0;
}

json_t *store_util_dump_whys(MDB_txn *txn)
{
    json_t *all = json_object();
    struct err err = ERR_INIT;
    ck_assert_msg(store_doc_each(txn, STORE_DB_WHY, NULL, why_add, all, &err) == 0, "%s", err.msg);
    return all;
}

void store_util_assert_history(MDB_txn *txn, uint64_t seq, json_t *live, json_t *whys)
{
    struct err err = ERR_INIT;
    json_t *then = store_util_dump_at(txn, seq);
    char *a = json_dumps(then, JSON_SORT_KEYS | JSON_COMPACT),
         *b = json_dumps(live, JSON_SORT_KEYS | JSON_COMPACT);
    ck_assert_msg(strcmp(a, b) == 0, "store at record %llu:\n  history %s\n  live    %s",
                  (unsigned long long)seq, a, b);
    free(a);
    free(b);
    json_decref(then);
    const char *key;
    json_t *doc;
    json_object_foreach(whys, key, doc)
    {
        json_t *got = NULL;
        ck_assert_msg(store_history_doc_at(txn, STORE_DB_WHY, key, seq, &got, &err) == 0,
                      "why '%s' at record %llu: %s", key, (unsigned long long)seq, err.msg);
        ck_assert_msg(json_equal(got, doc), "why '%s' at record %llu differs", key,
                      (unsigned long long)seq);
        json_decref(got);
    }
}
