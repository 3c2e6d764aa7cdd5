/*
 * internal.h - what the files of store/ share: the store struct, database
 * handles, error translation, the serialization buffer and test hooks.
 *
 * Every function that takes `MDB_txn *txn` finds its store through
 * mdb_env_get_userctx(mdb_txn_env(txn)) (store__of). The scratch buffer
 * belongs to the one write transaction LMDB allows at a time: only code
 * running inside a write transaction may use it.
 */
#ifndef MUSTER_STORE_INTERNAL_H
#define MUSTER_STORE_INTERNAL_H

#include <lmdb.h>
#include <pthread.h>
#include <stdatomic.h>

#include "audit_sig.h"
#include "store.h"

/* 2: pods may have a binding record (DBI_POD_BIND, pod_bind.c) that readers merge; a
 * musterd of schema 1 would not, so it refuses such a store. 3: the pod indexes by node
 * and by group are keyed "<node or group>\0<pod key>" in plain databases (objects.c). */
#define STORE_SCHEMA_VERSION 4
#define STORE_MAX_CHILDREN 32

enum store_dbi {
    DBI_NODES,
    DBI_PODS,
    DBI_PODGROUPS,
    DBI_TOPOLOGIES,
    DBI_PRIORITYCLASSES,
    DBI_QUEUES,
    DBI_PDBS,
    DBI_IDX_POD_NODE,
    DBI_IDX_POD_GROUP,
    DBI_IDX_PENDING,
    DBI_POD_BIND,
    DBI_WHY,
    DBI_PREEMPTIONS,
    DBI_MIRROR,
    DBI_TIMESERIES,
    DBI_RESERVATIONS,
    DBI_META,
    DBI_AUDIT,
    DBI_HISTORY,
    DBI_HISTORY_IX,
    DBI_COUNT
};

/* The database of each object kind (objects.c). */
extern const enum store_dbi store__kind_dbi[MODEL_KIND_COUNT];
/* The database of each document kind (docs.c). */
extern const enum store_dbi store__doc_dbi[STORE_DB_COUNT];

/* A growing buffer values are serialized into before they are written. */
struct store__scratch {
    char *buf;
    size_t cap;
};

#define STORE_WCUR_MAX 32  /* database handles up to this get cached write cursors */
#define STORE_WCUR_LANES 2 /* cursors per database: writes to two key ranges in turn */

struct store {
    MDB_env *env;
    MDB_dbi dbi[DBI_COUNT];
    char *dir;
    int lock_fd;
    int temporary; /* store_options.temporary: dir goes at close */
    enum store_sync sync;

    /* Held shared by every top-level transaction from begin to commit/abort, exclusive
     * while the map is resized (LMDB forbids resizing with a transaction active). */
    pthread_rwlock_t grow_lock;
    atomic_int grow_pending; /* a write hit MDB_MAP_FULL: grow when it ends */
    atomic_int fail_commits; /* store_test_fail_commits: how many more commits fail */
    int fail_code;           /* and with which ERR_* */

    /* Classifies a txn at commit/abort: the top-level write txn, one of its children
     * (a stack, innermost last), or else a read txn. */
    _Atomic(MDB_txn *) write_txn;
    _Atomic uint64_t last_txn; /* store_last_txn: set at open and by each top-level commit */
    atomic_int nchildren;
    pthread_mutex_t child_mu;
    MDB_txn *children[STORE_MAX_CHILDREN];

    /* The writer's place in the object history (history.c): the transaction its counter
     * belongs to, and the counter. */
    uint64_t hist_txn;
    uint32_t hist_n;
    unsigned char *hist_pend; /* keys written by hist_txn: [2-byte length][key]... */
    /* The audit head as head_txn sees it: set by store_audit_append and history.c, cleared
     * whenever any write transaction ends (txn.c), so a stale or reused handle never
     * matches. Only the writer touches it. */
    MDB_txn *head_txn;
    uint64_t head_seq;
    /* With head_full, head_hash completes it: the writer's top-level transaction keeps its
     * head here while it appends and writes it to meta at its commit (head_dirty). */
    unsigned char head_hash[32];
    int head_full, head_dirty;
    size_t hist_pend_len, hist_pend_cap;

    /* Serialization scratch for the writer (see above); a dry session has its own. */
    struct store__scratch scratch;

    /* The top-level write transaction's cursors, by database handle (store__put): a put
     * through a positioned cursor whose key falls on the cursor's leaf page skips LMDB's
     * descent from the root, and a cycle's or an apply's keys mostly follow each other.
     * Only the writer touches them; store__wcur_forget drops them when the transaction
     * ends or begins a child. */
    MDB_txn *wcur_txn;
    MDB_cursor *wcur[STORE_WCUR_MAX][STORE_WCUR_LANES];
};

/* The store owning txn. */
struct store *store__of(MDB_txn *txn);

/* Translates an LMDB code: MDB_MAP_FULL -> ERR_MAP_FULL (and marks the map for growth),
 * MDB_NOTFOUND -> ERR_NOT_FOUND, MDB_BAD_VALSIZE -> ERR_INVALID, else ERR_STORE. The
 * message is "<what>: <lmdb message>". Returns the ERR_* code. */
int store__mdb_err(struct store *st, int rc, struct err *err, const char *what);

/* ---- key-value calls and dry sessions (dry.c) ---- */

/* The scratch buffer of txn's writer: the store's, or its dry session's. */
struct store__scratch *store__scratch(MDB_txn *txn);
struct store__dry;
struct ov_tab;
/* txn's dry session when txn is this thread's dry snapshot, else NULL. */
struct store__dry *store__dry_of(MDB_txn *txn);
/* This thread's dry snapshot of st, or NULL (txn.c hands it out instead of beginning). */
MDB_txn *store__dry_txn(struct store *st);
/* txn (a read transaction of st) becomes this thread's dry snapshot: 0, or ERR_INTERNAL when
 * a session is open in this thread (store_dry_begin, txn.c). */
int store__dry_attach(struct store *st, MDB_txn *txn, struct err *err);
/* Ends this thread's session on st, dropping its writes: its snapshot, for the caller to
 * abort, or NULL when none is open (store_dry_end). */
MDB_txn *store__dry_detach(struct store *st);

/* mdb_get, mdb_put, mdb_del with the same arguments and LMDB return codes, through the
 * overlay of a dry session (a write of a pod index there is dropped: 0); the top-level
 * write transaction's gets and puts go through its kept cursors. Every file of store/ reads
 * and writes through these, except bulk loads and the audit verifier, which read the
 * snapshot. */
int store__get(MDB_txn *txn, MDB_dbi dbi, MDB_val *k, MDB_val *v);
int store__put(MDB_txn *txn, MDB_dbi dbi, MDB_val *k, MDB_val *v, unsigned flags);
/* store__put through the writer's cursor of lane (0..STORE_WCUR_LANES-1) on dbi: a writer
 * that puts into two key ranges of one database in turn (history.c: pods' versions and
 * documents') keeps one on each. store__put is lane 0. */
int store__put_lane(MDB_txn *txn, MDB_dbi dbi, int lane, MDB_val *k, MDB_val *v, unsigned flags);
int store__del(MDB_txn *txn, MDB_dbi dbi, MDB_val *k, MDB_val *data);
/* Forgets (and closes, when close is set and the transaction is still live) the write
 * cursors store__put keeps for st's top-level write transaction (txn.c: at its end, and
 * before it begins a child, so LMDB never has to shadow them). */
void store__wcur_forget(struct store *st, int close);

/* A cursor merged with a dry session's overlay: MDB_FIRST, MDB_SET_RANGE and MDB_NEXT
 * over a plain database; any op, unmerged, outside a session or over a pod index. */
struct store__cur {
    MDB_cursor *cur;
    const struct ov_tab *tab; /* NULL: the plain LMDB cursor */
    size_t oi;                /* next overlay entry */
    int src_rc;               /* the LMDB cursor's state: 0 at (sk, sv), or its last code */
    MDB_val sk, sv;
    int took; /* what the last answer consumed: 1 the snapshot's, 2 the overlay's, 3 both */
};
int store__cur_open(MDB_txn *txn, MDB_dbi dbi, struct store__cur *c);
int store__cur_get(struct store__cur *c, MDB_val *k, MDB_val *v, MDB_cursor_op op);
void store__cur_close(struct store__cur *c);

/* Serializes v into sc's buffer at offset off (bytes before off are kept) exactly as
 * json_dumpb(v, flags) would, for flags JSON_COMPACT with or without JSON_SORT_KEYS (other
 * flags are ignored) (jsonw.c). Returns the length written after off; the bytes are not
 * NUL-terminated. */
size_t store__dump(struct store__scratch *sc, json_t *v, size_t flags, size_t off);
/* store__dump, and where the text of the value mark (a value inside v, by pointer) begins
 * and ends in sc's buffer into at[0], at[1] (both 0 when v does not hold it). */
size_t store__dump_mark(struct store__scratch *sc, json_t *v, size_t flags, size_t off,
                        json_t *mark, size_t at[2]);
/* A stored value parsed (objects, lists, documents): model_json_read, and json_loadb(s, n,
 * 0) where it gives up (NULL with *jerr set when the bytes are not JSON). New. */
json_t *store__json_load(const char *s, size_t n, json_error_t *jerr);

/* Iterates a plain JSON database from the first key with prefix (NULL: all), decoding
 * each value once. Returns 0, fn's negative code, ERR_STORE. */
int store__each_json(MDB_txn *txn, MDB_dbi dbi, const char *prefix, const char *after,
                     store_obj_fn fn, void *ctx, struct err *err);

/* ---- bindings kept apart from the pod (pod_overlay.c, pod_bind.c) ---- */

/* Applies key's binding record, if any, to pod (decoded from the pods database). */
int store__pod_overlay(MDB_txn *txn, const char *key, json_t *pod, struct err *err);
/* The node and time of binding record rec (len bytes, "<node>\0<ts>\0"), borrowed from it:
 * 0, or ERR_STORE naming the pod when it is not one. No LMDB call, as the next. */
int store__pod_overlay_read(const char *key, const void *rec, size_t len, const char **node,
                            const char **ts, struct err *err);
/* Applies a binding record already read (rec, len: its bytes) to pod; no LMDB call, so a
 * worker of store_each_par may apply it. Returns 0 or ERR_STORE (a corrupt record). */
int store__pod_overlay_apply(const char *key, json_t *pod, const void *rec, size_t len,
                             struct err *err);
/* Drops key's binding record: a full write of the pod carries it. Returns 1 (dropped), 0
 * (it had none) or ERR_STORE. */
int store__pod_overlay_drop(MDB_txn *txn, const char *key, struct err *err);
/* The pod indexes and a binding record (objects.c, where the index rules live). The pending
 * index lists the pods whose stored JSON is pending; a binding record leaves its pod listed
 * (a read, not a write, per binding) and the pod is pending when listed and without one.
 * index_listed: 0 when key is listed, ERR_NOT_FOUND when not. index_bind: into the node
 * index. */
int store__index_listed(MDB_txn *txn, const char *key, struct err *err);
int store__index_bind(MDB_txn *txn, const char *key, const char *node, struct err *err);
/* Schema 3 (env.c): drops the DUPSORT pod indexes of an older store and fills the pair-keyed
 * ones from the pods. Returns 0 or ERR_STORE. */
int store__index_migrate(MDB_txn *txn, struct err *err);

/* ---- the object history (history.c) ---- */

/* Records a version of object key (kb: its model_kind) at the current audit head: op 'P'
 * with the stored bytes (those just written under key: a long value is read from there
 * while it stays, history.c), 'D', or 'B' with a pod's binding record. data may point into
 * st->buf. A key too long to keep is skipped. 0 or ERR_STORE / ERR_MAP_FULL. */
int store__history_add(MDB_txn *txn, unsigned char kb, const char *key, char op, const void *data,
                       size_t len, struct err *err);
/* Before the value stored under key (kb: as for store__history_add) is written over or
 * deleted: when its version reads it from where it is, copies it into the log first.
 * stored: that value as the caller just read it (mv_data NULL: there is none), or NULL to
 * look it up. 0 or ERR_STORE / ERR_MAP_FULL. */
int store__history_unlive(MDB_txn *txn, unsigned char kb, const char *key, const MDB_val *stored,
                          struct err *err);
/* store__history_unlive of a document of db (kb HIST_DOC + db; none for STORE_DB_MIRROR). */
int store__history_doc_unlive(MDB_txn *txn, enum store_db db, const char *key, struct err *err);
/* Before the top-level commit: the versions of this transaction whose record never came
 * (written after its last record) move to the head. 0 or ERR_STORE / ERR_MAP_FULL. */
int store__history_settle(MDB_txn *txn, struct err *err);
/* The same for a document of db (only STORE_DB_WHY keeps history; others: no-op). */
int store__history_doc(MDB_txn *txn, enum store_db db, const char *key, char op, const void *data,
                       size_t len, struct err *err);
/* At open (a write txn): when history has never been kept, every stored object and why
 * document becomes a first version at the current head, and "history_base" is set. */
int store__history_open(MDB_txn *txn, struct err *err);
/* Drops the versions no question at a record >= keep can need (store_audit_prune). */
int store__history_prune(MDB_txn *txn, uint64_t keep, uint64_t *deleted, struct err *err);

/* 8-byte big-endian encoding, so LMDB's byte order is numeric order. */
void store__be64_put(unsigned char out[8], uint64_t v);
uint64_t store__be64_get(const unsigned char in[8]);

/* Lowercase hex of n bytes (base.c, as the big-endian keys) into out (2n+1 bytes). */
void store__hex(const unsigned char *in, size_t n, char *out);
/* Parses exactly 2n lowercase hex digits. 0 or -1. */
int store__unhex(const char *s, unsigned char *out, size_t n);
/* Now as RFC 3339 UTC with milliseconds. */
void store__now_rfc3339(char *buf, size_t n);

/* Raw meta access (bytes, meta.c). store__meta_get returns ERR_NOT_FOUND when absent and points
 * *val into the map (valid until the txn ends). */
int store__meta_get(MDB_txn *txn, const char *name, MDB_val *val, struct err *err);
int store__meta_put(MDB_txn *txn, const char *name, const void *data, size_t len, struct err *err);

/* ---- the audit chain (audit.c, audit_verify.c, audit_ckpt.c) ---- */

#define STORE__HASH_LEN 32
#define STORE__CANON (JSON_COMPACT | JSON_SORT_KEYS)
#define STORE__META_HEAD "audit_head" /* 8-byte big-endian seq followed by the raw hash */
/* First record kept by the last prune: 8-byte big-endian seq, then the raw hash of the
 * record before it (the hash its checkpoint signs). Absent: the log starts at record 1. */
#define STORE__META_BASE "audit_base"

struct store__head {
    uint64_t seq;
    unsigned char hash[STORE__HASH_LEN];
};

/* The chain head from metadata ({0, zeros} for an empty log). 0 or ERR_STORE. */
int store__audit_head(MDB_txn *txn, struct store__head *h, struct err *err);
/* Writes the head the writer's transaction txn cached (audit.c) to meta, if it moved: before
 * its commit, and before a child transaction begins (which reads meta). */
int store__audit_head_flush(MDB_txn *txn, struct err *err);
/* The prune base: seq of the first kept record (1 when never pruned) and the hash before it. */
int store__audit_base(MDB_txn *txn, struct store__head *b, struct err *err);
/* Seq of the newest checkpoint record at or before `at` (0: to the end) and at or after the
 * base; 0 in *seq when there is none. The record is parsed into *cp when cp is not NULL. */
int store__audit_find_ckpt(MDB_txn *txn, uint64_t at, uint64_t *seq, struct store_ckpt *cp,
                           struct err *err);

/* Test hooks: write or delete an audit record without touching the chain head. */
int store__audit_put_raw(MDB_txn *txn, uint64_t seq, const char *json, size_t len, struct err *err);
int store__audit_del_raw(MDB_txn *txn, uint64_t seq, struct err *err);

#endif
