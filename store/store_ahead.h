/*
 * store_ahead.h - a writer's work kept off its transaction's thread and path: work of its
 * own beside the commit's fsync (store_write_beside), and objects made ready ahead of the
 * transaction on another thread (store_ready). Part of store.h, which includes it; a big
 * apply uses both (scheduler/sched_apply.c, apply_prep.c).
 */
#ifndef MUSTER_STORE_AHEAD_H
#define MUSTER_STORE_AHEAD_H

/* Work of the writer's own that runs beside a commit (its fsync is mostly a wait):
 * start(ctx) once fn succeeded, right before the commit, and end(ctx, committed) once the
 * commit ended, before fn may run again. start and end pair up on every attempt. */
struct store_beside {
    void (*start)(void *ctx);
    void (*end)(void *ctx, int committed);
};
/* store_write with b's work beside each commit (b may be NULL). */
int store_write_beside(struct store *st, store_write_fn fn, const struct store_beside *b, void *ctx,
                       struct err *err);
/* For tests of what a failed commit leaves: the next n write transactions' commits fail
 * with code (ERR_MAP_FULL: store_write runs fn again), their writes discarded. */
void store_test_fail_commits(struct store *st, int n, int code);

/* An object made ready to be written ahead of its transaction, on any thread (a big
 * apply's thread ahead, scheduler/apply_prep.c): its key, its text as store_put writes it,
 * and its pod indexes' keys, so that the transaction's thread only copies them in. Only the
 * transaction knows the object's metadata.resourceVersion: its value's text is at
 * [rv_at, rv_end) of text, and store_put_ready writes the real one there. */
struct store_ready {
    enum model_kind kind;
    char *key, *text;
    size_t len, rv_at, rv_end;
    char *node, *group; /* a pod's spec.nodeName and "ns/group" (NULL: none) */
    int pending;        /* a pod's model_pod_json_pending */
};
/* Makes *r of obj, whose metadata.resourceVersion is the string value rv (any value: it is
 * replaced), refusing what store_put refuses (no metadata.name, a key too long), and with
 * ERR_INTERNAL an rv that obj does not hold. */
int store_ready_make(struct store_ready *r, enum model_kind kind, json_t *obj, json_t *rv,
                     struct err *err);
void store_ready_release(struct store_ready *r);
/* store_replace(txn, kind, obj, NULL) of the obj r was made of, with its
 * metadata.resourceVersion the string rv (n bytes, no quotes or escapes): the same bytes,
 * history and indexes. */
int store_put_ready(MDB_txn *txn, const struct store_ready *r, const char *rv, size_t n,
                    struct err *err);

#endif
