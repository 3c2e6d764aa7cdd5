/*
 * store_util.h - helpers for tests that open a store: a fresh temporary data
 * directory, opening with checks, and small Kubernetes-shaped objects.
 *
 * Calling sequence (inside a forked Check test or a checked fixture):
 *
 *     char *dir = store_util_tmpdir();         new; mkdtemp under $TMPDIR or /tmp
 *     struct store *st = store_util_open(dir, 0, STORE_SYNC_NONE);   fails the test on error
 *     ...
 *     store_close(st);
 *     store_util_rmrf(dir);                    removes the tree and frees dir
 */
#ifndef MUSTER_TESTS_STORE_UTIL_H
#define MUSTER_TESTS_STORE_UTIL_H

#include <check.h>
#include <jansson.h>
#include <stddef.h>

#include "store.h"

char *store_util_tmpdir(void);
void store_util_rmrf(char *dir);
struct store *store_util_open(const char *dir, size_t map_size, enum store_sync sync);
/* A fresh temporary store for a checked fixture: *dir and *st are set (and released by
 * store_util_fixture_close, which also removes the directory). */
void store_util_fixture_open(char **dir, struct store **st);
void store_util_fixture_close(char **dir, struct store **st);
/* check_suite (check_run.h) with the fixture above: *dir and *st are a fresh store before
 * each test and released after it. A store suite's whole boilerplate:
 *
 *     static char *dir;
 *     static struct store *st;
 *     ...
 *     int main(void)
 *     {
 *         const TTest *tests[] = {test_x_one, test_x_two, NULL};
 *         return check_run(store_util_suite("x", &dir, &st, tests));
 *     }
 */
Suite *store_util_suite(const char *name, char **dir, struct store **st, const TTest *tests[]);
/* Begins a transaction or fails the test. */
MDB_txn *store_util_begin(struct store *st, int write);
/* Commits or fails the test; *txn is NULL afterwards. */
void store_util_commit(MDB_txn **txn);

/* A pod "ns/name"; node, group and phase may be NULL. New. */
json_t *store_util_pod(const char *ns, const char *name, const char *node, const char *group,
                       const char *phase);
/* A node with a cpu allocatable and a label. New. */
json_t *store_util_node(const char *name);

/* Collects keys from an index scan into a JSON array of strings (ctx is the array). */
int store_util_collect_key(void *ctx, const char *key);
/* store_put of obj (stolen) into txn; fails the test on error. */
void store_util_put(MDB_txn *txn, enum model_kind kind, json_t *obj);
/* Asserts an index scan returns exactly the expected keys (both stolen). */
void store_util_assert_keys(json_t *got, json_t *expected);
/* The keys of the pods the index lists on a node, of a PodGroup, pending (new arrays). */
json_t *store_util_on_node(MDB_txn *txn, const char *node);
json_t *store_util_of_group(MDB_txn *txn, const char *group);
json_t *store_util_pending(MDB_txn *txn);
/* Everything stored now, {"<kind number>": {key: object}} (new); the same as the object
 * history has it at record seq (store_history_each_at); why documents {key: doc} now. */
json_t *store_util_dump_live(MDB_txn *txn);
json_t *store_util_dump_at(MDB_txn *txn, uint64_t seq);
json_t *store_util_dump_whys(MDB_txn *txn);
/* Fails the test unless the store at record seq (history) equals live, and each why
 * document of whys equals the history's at seq. */
void store_util_assert_history(MDB_txn *txn, uint64_t seq, json_t *live, json_t *whys);

/* Builds a JSON array of strings from a NULL-terminated list. New. */
json_t *store_util_strings(const char *first, ...);

#endif
