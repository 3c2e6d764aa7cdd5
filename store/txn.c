/*
 * txn.c - transactions and map growth.
 *
 * mdb_env_set_mapsize may only run while no transaction of this process is
 * active, and mdb_env_info reads the map. So every top-level transaction holds
 * st->grow_lock shared from begin to commit/abort, and growth takes it
 * exclusive in between.
 *
 * The lock prefers the grower, so a stream of overlapping readers cannot
 * starve growth. A thread that already holds it shared (a read txn open while
 * it begins another txn) must not queue behind a waiting grower, which waits
 * for that very thread: the thread-local counts below make such nested holds
 * take the real lock only once, and such a thread skips growth.
 */
#include "internal.h"

#include <string.h>

#include "err.h"
#include "log.h"

#define HELD_SLOTS 4

/* Shared holds of this thread, per store (slots with n == 0 are free). */
static _Thread_local struct {
    struct store *st;
    int n;
} held[HELD_SLOTS];

enum txn_class { TXN_READ, TXN_WRITE, TXN_CHILD };

/* This thread's hold count for st; NULL when every slot is busy with other stores (then
 * nested holds take the real lock each time, as a plain rwlock would). */
static int *held_count(struct store *st)
{
    int *free_slot = NULL;

    for (int i = 0; i < HELD_SLOTS; i++) {
        if (held[i].n > 0 && held[i].st == st)
            return &held[i].n;
        if (held[i].n == 0 && !free_slot) {
            free_slot = &held[i].n;
            held[i].st = st;
        }
    }
    return free_slot;
}

static int holds_shared(struct store *st)
{
    int *c = held_count(st);
    return c && *c > 0;
}

static void lock_shared(struct store *st)
{
    int *c = held_count(st);

    if (!c || *c == 0)
        pthread_rwlock_rdlock(&st->grow_lock);
    if (c)
        (*c)++;
}

/* lock_shared, or 0 at once when the lock would have to be waited for. 1 when taken. */
static int try_lock_shared(struct store *st)
{
    int *c = held_count(st);

    if ((!c || *c == 0) && pthread_rwlock_tryrdlock(&st->grow_lock) != 0)
        return 0;
    if (c)
        (*c)++;
    return 1;
}

static void unlock_shared(struct store *st)
{
    int *c = held_count(st);

    if (c && *c > 0 && --*c > 0)
        return;
    pthread_rwlock_unlock(&st->grow_lock);
}

static size_t used_bytes(struct store *st, size_t *map_size)
{
    MDB_envinfo info;
    MDB_stat ms;

    mdb_env_info(st->env, &info);
    mdb_env_stat(st->env, &ms);
    *map_size = info.me_mapsize;
    return (info.me_last_pgno + 1) * (size_t)ms.ms_psize;
}

/* Doubles the map when forced or more than half of it is used. Caller holds nothing. */
static void grow(struct store *st, int force)
{
    size_t map, used, next;
    int rc;

    if (holds_shared(st)) {
        log_debug("store: cannot grow the map while this thread holds a transaction");
        return;
    }
    pthread_rwlock_wrlock(&st->grow_lock);
    used = used_bytes(st, &map);
    if (force || used > map / 2) {
        next = map * 2;
        while (used > next / 2)
            next *= 2;
        rc = mdb_env_set_mapsize(st->env, next);
        if (rc)
            log_warn("store: cannot grow the map to %zu bytes: %s", next, mdb_strerror(rc));
        else
            log_debug("store: map grown from %zu to %zu bytes", map, next);
        atomic_store(&st->grow_pending, 0);
    }
    pthread_rwlock_unlock(&st->grow_lock);
}

/* Growth check before a write: cheap under the shared lock, exclusive only when needed. */
static void maybe_grow(struct store *st)
{
    size_t map, used;
    int need;

    if (holds_shared(st)) /* it could not grow now anyway */
        return;
    lock_shared(st);
    used = used_bytes(st, &map);
    need = used > map / 2 || atomic_load(&st->grow_pending);
    unlock_shared(st);
    if (need)
        grow(st, atomic_load(&st->grow_pending));
}

uint64_t store_txn_id(MDB_txn *txn)
{
    return txn ? (uint64_t)mdb_txn_id(txn) : 0;
}

uint64_t store_last_txn(struct store *st)
{
    return atomic_load(&st->last_txn);
}

int store_txn_begin(struct store *st, int write, MDB_txn **txn, struct err *err)
{
    int rc;

    *txn = store__dry_txn(st);
    if (*txn) /* a dry session: every transaction of this thread is its snapshot */
        return 0;
    if (write == STORE_READ_NOWAIT) {
        if (!try_lock_shared(st))
            return err_set(err, ERR_BUSY, "the store is busy growing its map");
        write = 0;
    } else {
        if (write)
            maybe_grow(st);
        lock_shared(st);
    }
    rc = mdb_txn_begin(st->env, NULL, write ? 0 : MDB_RDONLY, txn);
    if (rc) {
        unlock_shared(st);
        *txn = NULL;
        return store__mdb_err(st, rc, err, "cannot begin a transaction");
    }
    if (write)
        atomic_store(&st->write_txn, *txn);
    return 0;
}

int store_txn_child(MDB_txn *parent, MDB_txn **child, struct err *err)
{
    struct store *st = store__of(parent);
    int rc, n;

    *child = NULL;
    if (store__dry_of(parent))
        return err_set(err, ERR_INVALID, "no nested transaction in a dry session");
    n = atomic_load(&st->nchildren);
    if (n >= STORE_MAX_CHILDREN)
        return err_set(err, ERR_STORE, "too many nested transactions (max %d)", STORE_MAX_CHILDREN);
    if ((rc = store__audit_head_flush(parent, err)) < 0) /* the child reads meta's */
        return rc;
    store__wcur_forget(st, 1);
    rc = mdb_txn_begin(st->env, parent, 0, child);
    if (rc) {
        *child = NULL;
        return store__mdb_err(st, rc, err, "cannot begin a nested transaction");
    }
    pthread_mutex_lock(&st->child_mu);
    st->children[n] = *child;
    atomic_store(&st->nchildren, n + 1);
    pthread_mutex_unlock(&st->child_mu);
    return 0;
}

/* Forgets what the writer keeps by transaction handle: the cached audit head, which
 * belonged to the handle that ends (a child's aborted records go with it). Before LMDB ends
 * it: a top-level commit lets another writer thread begin, with the same handle. */
static void forget_writer(struct store *st)
{
    st->head_txn = NULL;
    st->head_full = st->head_dirty = 0;
}

/* Which kind of txn this is; forgets a child (LMDB ends it whatever the outcome) and, for
 * a write or a child, what the writer kept for it. Called before LMDB ends txn. */
static enum txn_class classify(struct store *st, MDB_txn *txn)
{
    enum txn_class cls = TXN_READ;

    if (txn == atomic_load(&st->write_txn)) {
        /* LMDB also ends any open children with their parent, and frees the cursors
         * store__put kept: forgotten here, before LMDB lets another writer begin (with
         * the same handle: LMDB reuses it). */
        store__wcur_forget(st, 0);
        forget_writer(st);
        pthread_mutex_lock(&st->child_mu);
        atomic_store(&st->nchildren, 0);
        atomic_store(&st->write_txn, NULL);
        pthread_mutex_unlock(&st->child_mu);
        return TXN_WRITE;
    }
    if (atomic_load(&st->nchildren) == 0)
        return TXN_READ;
    pthread_mutex_lock(&st->child_mu);
    for (int i = atomic_load(&st->nchildren) - 1; i >= 0; i--) {
        if (st->children[i] == txn) {
            /* Children end innermost first; anything above i ended with it. */
            atomic_store(&st->nchildren, i);
            forget_writer(st);
            cls = TXN_CHILD;
            break;
        }
    }
    pthread_mutex_unlock(&st->child_mu);
    return cls;
}

static void finish(struct store *st, enum txn_class cls)
{
    if (cls == TXN_CHILD)
        return;
    unlock_shared(st);
    if (cls == TXN_WRITE && atomic_load(&st->grow_pending))
        grow(st, 1);
}

int store_txn_commit(MDB_txn **txn, struct err *err)
{
    struct store *st;
    enum txn_class cls;
    int rc;

    if (!*txn)
        return err_set(err, ERR_INTERNAL, "commit without a transaction");
    if (store__dry_of(*txn)) { /* its writes stay in the session's memory */
        *txn = NULL;
        return 0;
    }
    st = store__of(*txn);
    if (*txn == atomic_load(&st->write_txn) && ((rc = store__history_settle(*txn, err)) < 0 ||
                                                (rc = store__audit_head_flush(*txn, err)) < 0)) {
        store_txn_abort(txn);
        return rc;
    }
    if (*txn == atomic_load(&st->write_txn) && atomic_load(&st->fail_commits) > 0) {
        atomic_fetch_sub(&st->fail_commits, 1);
        store_txn_abort(txn);
        return err_set(err, st->fail_code, "cannot commit: failed as the test asked");
    }
    cls = classify(st, *txn);
    rc = mdb_txn_commit(*txn);
    *txn = NULL;
    if (rc)
        rc = store__mdb_err(st, rc, err, "cannot commit");
    else if (cls == TXN_WRITE) {
        /* the map cannot move yet (grow_lock is still held shared); a commit that changed
         * nothing leaves the id as it was */
        MDB_envinfo info;
        mdb_env_info(st->env, &info);
        atomic_store(&st->last_txn, (uint64_t)info.me_last_txnid);
    }
    finish(st, cls);
    return rc;
}

void store_txn_abort(MDB_txn **txn)
{
    struct store *st;
    enum txn_class cls;

    if (!txn || !*txn)
        return;
    if (store__dry_of(*txn)) { /* the session goes on: store_dry_end ends it */
        *txn = NULL;
        return;
    }
    st = store__of(*txn);
    cls = classify(st, *txn);
    mdb_txn_abort(*txn);
    *txn = NULL;
    finish(st, cls);
}

#define STORE_WRITE_TRIES 8

void store_test_fail_commits(struct store *st, int n, int code)
{
    st->fail_code = code;
    atomic_store(&st->fail_commits, n);
}

int store_write(struct store *st, store_write_fn fn, void *ctx, struct err *err)
{
    return store_write_beside(st, fn, NULL, ctx, err);
}

int store_write_beside(struct store *st, store_write_fn fn, const struct store_beside *b, void *ctx,
                       struct err *err)
{
    MDB_txn *txn = NULL;
    int rc = 0;

    for (int attempt = 0; attempt < STORE_WRITE_TRIES; attempt++) {
        err_clear(err);
        rc = store_txn_begin(st, STORE_WRITE, &txn, err);
        if (rc < 0)
            return rc;
        rc = fn(txn, ctx, err);
        if (rc < 0) {
            store_txn_abort(&txn); /* grows the map after MDB_MAP_FULL */
            if (rc == ERR_MAP_FULL)
                continue;
            return rc;
        }
        if (b)
            b->start(ctx);
        rc = store_txn_commit(&txn, err);
        if (b)
            b->end(ctx, rc == 0);
        if (rc != ERR_MAP_FULL)
            return rc;
    }
    return rc;
}

int store_dry_begin(struct store *st, struct err *err)
{
    if (store__dry_txn(st))
        return err_set(err, ERR_INTERNAL, "a dry session is already open in this thread");
    MDB_txn *txn = NULL;
    int rc = store_txn_begin(st, STORE_READ, &txn, err);
    if (rc == 0 && (rc = store__dry_attach(st, txn, err)) < 0)
        store_txn_abort(&txn);
    return rc;
}

void store_dry_end(struct store *st)
{
    MDB_txn *txn = store__dry_detach(st); /* the abort below is a real one now */
    store_txn_abort(&txn);
}
