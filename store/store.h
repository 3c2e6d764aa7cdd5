/*
 * store.h - muster's durable state: an LMDB environment under a data directory.
 *
 * Databases: one per object kind (nodes, pods, podgroups, topologies, priorityclasses,
 * queues, poddisruptionbudgets; values are compact JSON in Kubernetes shape, keys "name"
 * or "namespace/name"), secondary indexes maintained by store_put/store_delete (pods by node, pods
 * by PodGroup, pending pods), pods' bindings (store_pod_bind: a small record per bound pod
 * that every read of the pod merges, so callers never see it), generic document databases (why
 * documents, preemption ledger, mirror state), a metadata database (schema version, counters, audit
 * chain head) and the append-only audit log keyed by a 64-bit big-endian sequence number.
 *
 * Calling sequence:
 *
 *     struct store *st;
 *     store_open(&opts, &st, &err);          takes <dir>/LOCK; ERR_BUSY if held
 *     MDB_txn *txn = NULL;
 *     store_txn_begin(st, STORE_WRITE, &txn, &err);
 *     store_put(txn, MODEL_POD, pod, NULL, &err);
 *     store_audit_append(txn, rec, &seq, &err);
 *     store_txn_commit(&txn, &err);           clears txn even on failure
 *     store_close(st);
 *
 * Transactions: only entry points (request handlers, a scheduler cycle) begin, commit or
 * abort; everything else takes `MDB_txn *txn` first. Write transactions are serialized by
 * LMDB. Read transactions may run in any thread concurrently with the writer (MDB_NOTLS); a
 * transaction ends (commit/abort) in the thread that began it. Do no network or disk I/O
 * while a write transaction is open.
 *
 * Growth: before each write transaction the map is doubled when more than half of it is
 * used; a transaction that still hits the limit fails with ERR_MAP_FULL, after which the map
 * has been grown and the caller may retry (store_write does this for you). Growing waits
 * until every read transaction has ended, so never wait for a lock while holding a read
 * transaction when a writer may hold that lock while it grows the map (the scheduler's view
 * lock: a reader holding one and waiting for the lock deadlocks with an apply that grows
 * the map under it).
 *
 * mdb_* calls happen only in store/. LMDB codes become ERR_* here.
 */
#ifndef MUSTER_STORE_H
#define MUSTER_STORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

typedef struct MDB_txn MDB_txn;
struct err;
struct store;

enum store_sync {
    STORE_SYNC_FULL, /* fsync data and meta page on every commit */
    STORE_SYNC_META, /* fsync data, meta page lazily (MDB_NOMETASYNC) */
    STORE_SYNC_NONE  /* no fsync (MDB_NOSYNC): fastest, loses recent commits on power loss */
};

struct store_options {
    const char *dir;      /* created if missing */
    size_t map_size;      /* initial map size in bytes; 0 means 64 MiB */
    enum store_sync sync; /* default STORE_SYNC_FULL */
    /* a scratch store: dir is a mkdtemp template ("/tmp/x-XXXXXX"), made at open and removed
     * with everything in it by store_close */
    int temporary;
};

/* Opens (creating if needed) the store. Returns 0, ERR_BUSY when another process holds the
 * directory ("data directory '/x' is in use by another musterd (pid 123)"), ERR_IO or
 * ERR_STORE. *out is new; release with store_close. */
int store_open(const struct store_options *opts, struct store **out, struct err *err);
/* Closes the environment and releases the lock. NULL-safe. No transaction may be open. */
void store_close(struct store *st);
/* Parses "full|meta|none". Returns 0 or ERR_INVALID. */
int store_sync_parse(const char *s, enum store_sync *out, struct err *err);
const char *store_sync_name(enum store_sync sync);
/* Forces a durable flush (used after STORE_SYNC_NONE batches and at shutdown). */
int store_sync(struct store *st, struct err *err);

struct store_stats {
    size_t map_size;   /* bytes */
    size_t used_bytes; /* pages in use * page size */
    size_t file_bytes; /* size of data.mdb on disk */
    uint64_t entries[MODEL_KIND_COUNT];
    uint64_t audit_last_seq;
};
int store_stats(struct store *st, struct store_stats *out, struct err *err);

/* ---- transactions ---- */

enum { STORE_READ = 0, STORE_WRITE = 1, STORE_READ_NOWAIT = 2 };

/* Begins a transaction. STORE_READ_NOWAIT: a read transaction, or ERR_BUSY at once where
 * STORE_READ would wait (the map is being grown or about to be: an event loop's read).
 * Returns 0, ERR_BUSY, ERR_STORE. */
int store_txn_begin(struct store *st, int write, MDB_txn **txn, struct err *err);
/* Begins a nested write transaction under parent (for statements). */
int store_txn_child(MDB_txn *parent, MDB_txn **child, struct err *err);
/* The id of txn's snapshot: the number of write transactions committed before it began
 * (a write transaction: the one it will commit as). Equal ids mean the same contents. */
uint64_t store_txn_id(MDB_txn *txn);
/* The id a read transaction begun now would have (the last committed write transaction
 * of this process, or the store's when opened), without beginning one: it never waits,
 * not even for the map's growth, so an event loop may ask. */
uint64_t store_last_txn(struct store *st);
/* Commits and sets *txn to NULL, even on failure. Returns 0, ERR_MAP_FULL (map grown;
 * retry the whole transaction) or ERR_STORE. */
int store_txn_commit(MDB_txn **txn, struct err *err);
/* Aborts and sets *txn to NULL. NULL-safe. */
void store_txn_abort(MDB_txn **txn);

/* Runs fn in a write transaction and commits; on ERR_MAP_FULL (from fn or commit) grows the
 * map and runs fn again in a fresh transaction, so fn must only depend on txn. Returns fn's
 * error, or the commit's. */
typedef int (*store_write_fn)(MDB_txn *txn, void *ctx, struct err *err);
int store_write(struct store *st, store_write_fn fn, void *ctx, struct err *err);
#include "store_ahead.h" /* a writer's work off its transaction: beside the commit, ahead */
#include "store_dry.h"   /* dry sessions: what-ifs that write nothing */

/* ---- objects ---- */

/* Reads an object by key. *out is new. Returns 0, ERR_NOT_FOUND ("pod 'default/x' not found")
 * or ERR_STORE. store_exists: 1 when it is there, 0 when not (no message made), or ERR_*. */
int store_get(MDB_txn *txn, enum model_kind kind, const char *key, json_t **out, struct err *err);
int store_exists(MDB_txn *txn, enum model_kind kind, const char *key, struct err *err);
/* Creates or replaces an object (key from model_object_key) and updates the indexes.
 * obj is borrowed. *old_out, when not NULL, receives the previous value (new) or NULL. */
int store_put(MDB_txn *txn, enum model_kind kind, json_t *obj, json_t **old_out, struct err *err);
/* Like store_put for a caller that has just read the stored value in this transaction:
 * old (borrowed) is that value, or NULL when there was none, so the store need not read
 * and decode it again to update the indexes. Passing anything but the stored value
 * corrupts the indexes. Returns 0 or ERR_STORE / ERR_MAP_FULL. */
int store_replace(MDB_txn *txn, enum model_kind kind, json_t *obj, json_t *old, struct err *err);
/* Deletes an object and its index entries. *old_out as for store_put.
 * Returns 0, ERR_NOT_FOUND, ERR_STORE. */
int store_delete(MDB_txn *txn, enum model_kind kind, const char *key, json_t **old_out,
                 struct err *err);

/* Binds pod `key` to node at ts (RFC 3339): afterwards every read of the pod shows what
 * model_pod_set_bound(pod, node, ts) makes of it (spec.nodeName, phase Pending when it had
 * none, no nomination, PodScheduled True at ts) and the indexes agree. A pending pod's
 * binding is a record of a few bytes, whatever the pod's size; a pod that is not pending
 * (already bound, deleting) is read, bound and written whole. Returns 0, ERR_NOT_FOUND
 * ("pod 'ns/x' not found"), ERR_INVALID (empty or over-long node name), ERR_STORE or
 * ERR_MAP_FULL. */
int store_pod_bind(MDB_txn *txn, const char *key, const char *node, const char *ts,
                   struct err *err);

/* Callback for iteration. obj is borrowed for the call only. Return 0 to go on, 1 to stop
 * early (not an error), or a negative ERR_* to stop and have the iterator return it. */
typedef int (*store_obj_fn)(void *ctx, const char *key, json_t *obj);
typedef int (*store_key_fn)(void *ctx, const char *key);

/* Iterates objects of a kind in key order, only keys starting with prefix (NULL: all). */
int store_each(MDB_txn *txn, enum model_kind kind, const char *prefix, store_obj_fn fn, void *ctx,
               struct err *err);
/* Iteration for a bulk load (store_each_par, each_par.c): decode(ctx, key, obj) runs on up
 * to nthreads threads (the caller's among them; 0: one per CPU, at most 4), in no order, on
 * each object of kind whose key starts with prefix (NULL: all); obj is borrowed for the
 * call, and decode must touch nothing shared (a model_*_decode into a new struct). Its
 * result goes to consume(ctx, key, res) on the calling thread, in key order, which takes
 * ownership of res and returns 0 or a negative ERR_* (which stops the iteration and is
 * returned). After a stop, and for a value that is not JSON (ERR_STORE), the results
 * already decoded are handed to consume with key NULL, to be released only. The
 * transaction must be a read transaction, used by no other thread meanwhile. Returns 0,
 * ERR_STORE, or consume's error.
 *
 * Two optional callbacks (NULL: none). raw is tried first, on the same threads as decode,
 * on the object's stored JSON text (json, len bytes, borrowed for the call; not parsed, so
 * it may not be JSON at all) and, for a pod, its binding record (bind_node and bind_ts,
 * both NULL when it has none; the record checked as every read checks it): it returns 1
 * with its result in *res, handed to consume as decode's would be, or 0 to have the object
 * parsed, the binding applied, and decoded. ahead(ctx, key, res) runs on the calling
 * thread a few results before consume gets that one (res borrowed; NULL for an object that
 * failed): a hint to fetch what consuming it will touch (a hash table's slots), so the
 * memory latency overlaps the consume of the results before it. */
typedef void *(*store_decode_fn)(void *ctx, const char *key, json_t *obj);
typedef int (*store_decode_raw_fn)(void *ctx, const char *key, const char *json, size_t len,
                                   const char *bind_node, const char *bind_ts, void **res);
typedef int (*store_consume_fn)(void *ctx, const char *key, void *res);
typedef void (*store_ahead_fn)(void *ctx, const char *key, const void *res);
struct store_par_fns {
    store_decode_raw_fn raw; /* optional */
    store_decode_fn decode;
    store_consume_fn consume;
    store_ahead_fn ahead; /* optional */
};
int store_each_par(MDB_txn *txn, enum model_kind kind, const char *prefix, int nthreads,
                   const struct store_par_fns *fns, void *ctx, struct err *err);
/* Like store_each, only keys that sort strictly after `after` (NULL: from the first): a
 * list page that continues where the last one ended seeks there instead of scanning. */
int store_each_after(MDB_txn *txn, enum model_kind kind, const char *prefix, const char *after,
                     store_obj_fn fn, void *ctx, struct err *err);
/* Iterates the keys of a kind's objects in key order, without reading the objects. */
int store_each_key(MDB_txn *txn, enum model_kind kind, store_key_fn fn, void *ctx, struct err *err);
/* Index scans, in key order: pod keys bound to a node, of a PodGroup ("ns/name"), pending
 * (no spec.nodeName, no deletionTimestamp, phase Pending, no binding record). */
int store_pods_on_node(MDB_txn *txn, const char *node, store_key_fn fn, void *ctx, struct err *err);
int store_pods_of_group(MDB_txn *txn, const char *group_key, store_key_fn fn, void *ctx,
                        struct err *err);
int store_pods_pending(MDB_txn *txn, store_key_fn fn, void *ctx, struct err *err);
/* Number of PodGroup keys pods name (*groups: each once, whether the PodGroup exists or not)
 * and of pods that name one (*grouped). Walks the group index's keys, not its pods. */
int store_pod_groups_count(MDB_txn *txn, uint64_t *groups, uint64_t *grouped, struct err *err);
/* Number of objects of a kind. */
int store_count(MDB_txn *txn, enum model_kind kind, uint64_t *out, struct err *err);

/* ---- generic documents (why, preemption ledger, mirror state, reservations) ---- */

/* STORE_DB_TIMESERIES: one sample per key, keyed by its time (scheduler/timeseries.c). */
/* STORE_DB_RESERVATIONS: one document per starving job's reservation, keyed by job id
 * (scheduler/record/reserve_record.c writes them, view_load reads them back). */
enum store_db {
    STORE_DB_WHY,
    STORE_DB_PREEMPTIONS,
    STORE_DB_MIRROR,
    STORE_DB_TIMESERIES,
    STORE_DB_RESERVATIONS,
    STORE_DB_COUNT
};

/* doc borrowed. Replaces any existing value. */
int store_doc_put(MDB_txn *txn, enum store_db db, const char *key, json_t *doc, struct err *err);
/* Like store_doc_put for a document already written as text (len bytes, compact JSON of
 * one object, as store_json_text writes it; not checked). */
int store_doc_put_text(MDB_txn *txn, enum store_db db, const char *key, const char *text,
                       size_t len, struct err *err);
/* store_doc_put_text if key has no document: 0, or 1 and *old (new) the one it has. */
int store_doc_add_text(MDB_txn *txn, enum store_db db, const char *key, const char *text,
                       size_t len, json_t **old, struct err *err);
/* *out new. ERR_NOT_FOUND when absent. */
int store_doc_get(MDB_txn *txn, enum store_db db, const char *key, json_t **out, struct err *err);
int store_doc_delete(MDB_txn *txn, enum store_db db, const char *key, struct err *err);
/* 1 when a document of key exists in db, 0 when not (or db is unknown); nothing is decoded. */
int store_doc_exists(MDB_txn *txn, enum store_db db, const char *key);
int store_doc_each(MDB_txn *txn, enum store_db db, const char *prefix, store_obj_fn fn, void *ctx,
                   struct err *err);
/* Every document whose key sorts after `after` (NULL: from the first), in key order. */
int store_doc_each_after(MDB_txn *txn, enum store_db db, const char *after, store_obj_fn fn,
                         void *ctx, struct err *err);

#include "store_json.h" /* store_json_text, struct store_jw: the store's JSON writer */

/* ---- object history (history.c) ----
 *
 * Every change of a stored object (store_put, store_replace, store_delete, store_pod_bind)
 * and of a why or ledger document (STORE_DB_WHY, STORE_DB_PREEMPTIONS) is also kept as a
 * version, in the same transaction,
 * keyed by the audit sequence it belongs to: the audit head when it was made. So "the
 * store at record N" is the store at the instant record N+1 was appended (for the last
 * record: now), and after a transaction that appended records up to N commits, the store
 * at N is the committed store. Versions go when the audit log is pruned behind them
 * (store_audit_prune keeps what a question at a kept record needs). A store written
 * before history was kept has its objects as first versions at the head it was opened
 * at ("history_base"): questions before it are refused.
 */

/* Called for each object that existed at the requested record, in kind order (model_kind),
 * then key order; obj borrowed for the call. Returns as store_obj_fn. */
typedef int (*store_kind_obj_fn)(void *ctx, enum model_kind kind, const char *key, json_t *obj);
#define STORE_KINDS_ALL ((1u << MODEL_KIND_COUNT) - 1)
#define STORE_KIND_BIT(kind) (1u << (kind))

/* Calls fn for every object of the kinds in mask `kinds` (STORE_KIND_BIT ORed, or
 * STORE_KINDS_ALL) that existed at record seq, exactly as store_get returned it then
 * (bindings merged): byte-equal once dumped. Two seeks per object that ever existed in
 * the history kept. The caller checks seq against store_history_first_seq. Returns 0,
 * fn's negative code, ERR_STORE. */
int store_history_each_at(MDB_txn *txn, uint64_t seq, unsigned kinds, store_kind_obj_fn fn,
                          void *ctx, struct err *err);
/* One object as it was at record seq. *out new. ERR_NOT_FOUND ("'ns/x' did not exist at
 * record 42") or ERR_STORE. */
int store_history_get_at(MDB_txn *txn, enum model_kind kind, const char *key, uint64_t seq,
                         json_t **out, struct err *err);
/* One why document or ledger document (db STORE_DB_WHY or STORE_DB_PREEMPTIONS, else
 * ERR_INVALID) as stored at record seq. */
int store_history_doc_at(MDB_txn *txn, enum store_db db, const char *key, uint64_t seq,
                         json_t **out, struct err *err);
/* Every document of db (STORE_DB_WHY or STORE_DB_PREEMPTIONS, else ERR_INVALID) that
 * existed at record seq, in key order, as stored then; fn as for store_doc_each. */
int store_history_docs_at(MDB_txn *txn, enum store_db db, uint64_t seq, store_obj_fn fn, void *ctx,
                          struct err *err);
/* The first record a question about the past may name: the later of the first audit
 * record kept and where history began (0 when both are unbounded: a fresh store). */
int store_history_first_seq(MDB_txn *txn, uint64_t *out, struct err *err);
/* The last audit record whose ts is at or before ms (epoch milliseconds), by binary search
 * over the kept records (appended in time order); *out 0 when the first kept record is
 * later, or the log is empty. */
int store_audit_seq_at(MDB_txn *txn, int64_t ms, uint64_t *out, struct err *err);
/* The ts of record seq in epoch ms (0 when it has none). ERR_NOT_FOUND when not kept. */
int store_audit_record_ms(MDB_txn *txn, uint64_t seq, int64_t *ms, struct err *err);

/* ---- metadata counters ---- */

/* Reads a named counter; 0 when absent. */
int store_meta_get_u64(MDB_txn *txn, const char *name, uint64_t *out, struct err *err);
int store_meta_put_u64(MDB_txn *txn, const char *name, uint64_t value, struct err *err);

#include "store_audit.h" /* the audit log */

#endif
