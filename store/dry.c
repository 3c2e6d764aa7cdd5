/*
 * dry.c - dry sessions: a thread's transactions on one read snapshot whose writes stay in
 * memory (store.h, store_dry_begin; begun and ended by txn.c, which owns transactions),
 * and the key-value calls every other file of store/ makes instead of mdb_get / mdb_put /
 * mdb_del and cursors, so that a write in a dry session lands in its overlay and a read
 * sees the overlay over the snapshot.
 *
 * The overlay is one sorted array per database of (key, value) pairs, a NULL value being a
 * deletion; lookups are binary searches in LMDB's key order (bytes, then length). A merged
 * cursor walks the snapshot's cursor and the overlay side by side, the overlay winning on
 * equal keys. The pod indexes (DUPSORT, and the pending index) are not kept in the
 * overlay: their writes are dropped and their reads and scans see the snapshot; the session
 * documents this (store.h). Outside a session every call is the LMDB call it wraps, after
 * one thread-local comparison; in the top-level write transaction, through a cursor kept
 * per database (wcursor: docs/design-notes.md, "The writer's cursors").
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"

struct ov_ent {
    MDB_val k, v; /* copies; v.mv_data NULL: deleted in the session */
};

struct ov_tab {
    struct ov_ent *e;
    size_t n, cap;
};

struct store__dry {
    struct store *st;
    MDB_txn *txn; /* the snapshot: a read transaction of st */
    struct ov_tab tab[DBI_COUNT];
    struct store__scratch scratch;
};

/* The session of this thread, if any (one at a time). */
static _Thread_local struct store__dry *tl_dry;

struct store__dry *store__dry_of(MDB_txn *txn)
{
    return tl_dry && tl_dry->txn == txn ? tl_dry : NULL;
}

MDB_txn *store__dry_txn(struct store *st)
{
    return tl_dry && tl_dry->st == st ? tl_dry->txn : NULL;
}

struct store__scratch *store__scratch(MDB_txn *txn)
{
    struct store__dry *d = store__dry_of(txn);
    return d ? &d->scratch : &store__of(txn)->scratch;
}

int store__dry_attach(struct store *st, MDB_txn *txn, struct err *err)
{
    if (tl_dry)
        return err_set(err, ERR_INTERNAL, "a dry session is already open in this thread");
    tl_dry = xcalloc(1, sizeof(*tl_dry));
    tl_dry->st = st;
    tl_dry->txn = txn;
    return 0;
}

static void tab_free(struct ov_tab *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->e[i].k.mv_data);
        free(t->e[i].v.mv_data);
    }
    free(t->e);
}

MDB_txn *store__dry_detach(struct store *st)
{
    struct store__dry *d = tl_dry;
    if (!d || d->st != st)
        return NULL;
    tl_dry = NULL;
    MDB_txn *txn = d->txn;
    for (int i = 0; i < DBI_COUNT; i++)
        tab_free(&d->tab[i]);
    free(d->scratch.buf);
    free(d);
    return txn;
}

/* ---- the overlay ---- */

/* LMDB's default order: bytes, then the shorter key first. */
static int key_cmp(const MDB_val *a, const MDB_val *b)
{
    size_t n = a->mv_size < b->mv_size ? a->mv_size : b->mv_size;
    int c = n ? memcmp(a->mv_data, b->mv_data, n) : 0;
    if (c)
        return c;
    return a->mv_size < b->mv_size ? -1 : a->mv_size > b->mv_size;
}

/* The first entry whose key is >= k. */
static size_t lower_bound(const struct ov_tab *t, const MDB_val *k)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (key_cmp(&t->e[mid].k, k) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static struct ov_ent *ov_find(struct ov_tab *t, const MDB_val *k)
{
    size_t i = lower_bound(t, k);
    return i < t->n && key_cmp(&t->e[i].k, k) == 0 ? &t->e[i] : NULL;
}

static void *dup_bytes(const MDB_val *v)
{
    void *p = xmalloc(v->mv_size ? v->mv_size : 1);
    if (v->mv_size)
        memcpy(p, v->mv_data, v->mv_size);
    return p;
}

/* Sets k to v (NULL: deleted). */
static void ov_set(struct ov_tab *t, const MDB_val *k, const MDB_val *v)
{
    size_t i = lower_bound(t, k);
    if (i == t->n || key_cmp(&t->e[i].k, k) != 0) {
        XGROW(t->e, t->n + 1, t->cap);
        memmove(&t->e[i + 1], &t->e[i], (t->n - i) * sizeof(*t->e));
        t->n++;
        t->e[i].k = (MDB_val){k->mv_size, dup_bytes(k)};
    } else {
        free(t->e[i].v.mv_data);
    }
    t->e[i].v = v ? (MDB_val){v->mv_size, dup_bytes(v)} : (MDB_val){0, NULL};
}

/* The overlay of dbi in the session of txn; NULL outside one and for the pod indexes. */
static struct ov_tab *overlay(MDB_txn *txn, MDB_dbi dbi)
{
    struct store__dry *d = store__dry_of(txn);
    if (!d)
        return NULL;
    for (int i = 0; i < DBI_COUNT; i++)
        if (d->st->dbi[i] == dbi)
            return i == DBI_IDX_POD_NODE || i == DBI_IDX_POD_GROUP || i == DBI_IDX_PENDING
                       ? NULL
                       : &d->tab[i];
    return NULL;
}

static int is_index(MDB_txn *txn, MDB_dbi dbi)
{
    struct store *st = store__of(txn);
    return dbi == st->dbi[DBI_IDX_POD_NODE] || dbi == st->dbi[DBI_IDX_POD_GROUP] ||
           dbi == st->dbi[DBI_IDX_PENDING];
}

/* ---- key-value calls ---- */

void store__wcur_forget(struct store *st, int close)
{
    if (!st->wcur_txn)
        return;
    for (int i = 0; i < STORE_WCUR_MAX; i++)
        for (int l = 0; l < STORE_WCUR_LANES; l++) {
            if (close && st->wcur[i][l])
                mdb_cursor_close(st->wcur[i][l]);
            st->wcur[i][l] = NULL;
        }
    st->wcur_txn = NULL;
}

/* The cached cursor of the top-level write transaction txn on dbi (opened on first use),
 * or NULL: a child, a read, a handle past the cache. The cursors of an ended
 * transaction were freed by LMDB with it (txn.c forgets them then). */
static MDB_cursor *wcursor(MDB_txn *txn, MDB_dbi dbi, int lane)
{
    struct store *st = store__of(txn);
    if (dbi >= STORE_WCUR_MAX || txn != atomic_load(&st->write_txn) ||
        atomic_load(&st->nchildren) > 0)
        return NULL;
    if (st->wcur_txn != txn) {
        store__wcur_forget(st, 0);
        st->wcur_txn = txn;
    }
    MDB_cursor **c = &st->wcur[dbi][lane];
    if (!*c && mdb_cursor_open(txn, dbi, c) != 0)
        *c = NULL;
    return *c;
}

int store__get(MDB_txn *txn, MDB_dbi dbi, MDB_val *k, MDB_val *v)
{
    struct ov_tab *t = overlay(txn, dbi);
    struct ov_ent *e = t ? ov_find(t, k) : NULL;
    if (!e) { /* the writer's own reads through its cursor: the put that follows is near */
        MDB_cursor *c = t ? NULL : wcursor(txn, dbi, 0);
        return c ? mdb_cursor_get(c, k, v, MDB_SET) : mdb_get(txn, dbi, k, v);
    }
    if (!e->v.mv_data)
        return MDB_NOTFOUND;
    *v = e->v;
    return 0;
}

int store__put_lane(MDB_txn *txn, MDB_dbi dbi, int lane, MDB_val *k, MDB_val *v, unsigned flags)
{
    if (!store__dry_of(txn)) {
        MDB_cursor *c = wcursor(txn, dbi, lane);
        return c ? mdb_cursor_put(c, k, v, flags) : mdb_put(txn, dbi, k, v, flags);
    }
    return store__put(txn, dbi, k, v, flags);
}

int store__put(MDB_txn *txn, MDB_dbi dbi, MDB_val *k, MDB_val *v, unsigned flags)
{
    if (!store__dry_of(txn)) {
        MDB_cursor *c = wcursor(txn, dbi, 0);
        return c ? mdb_cursor_put(c, k, v, flags) : mdb_put(txn, dbi, k, v, flags);
    }
    struct ov_tab *t = overlay(txn, dbi);
    if (!t) /* a pod index: not kept in a session */
        return is_index(txn, dbi) ? 0 : EACCES;
    MDB_val old;
    if ((flags & MDB_NOOVERWRITE) && store__get(txn, dbi, k, &old) == 0) {
        *v = old; /* as mdb_put: the existing value */
        return MDB_KEYEXIST;
    }
    ov_set(t, k, v);
    return 0;
}

int store__del(MDB_txn *txn, MDB_dbi dbi, MDB_val *k, MDB_val *data)
{
    if (!store__dry_of(txn))
        return mdb_del(txn, dbi, k, data);
    struct ov_tab *t = overlay(txn, dbi);
    if (!t)
        return is_index(txn, dbi) ? 0 : EACCES;
    MDB_val old;
    int rc = store__get(txn, dbi, k, &old);
    if (rc)
        return rc;
    ov_set(t, k, NULL);
    return 0;
}

/* ---- merged cursors ---- */

int store__cur_open(MDB_txn *txn, MDB_dbi dbi, struct store__cur *c)
{
    *c = (struct store__cur){.tab = overlay(txn, dbi)};
    return mdb_cursor_open(txn, dbi, &c->cur);
}

void store__cur_close(struct store__cur *c)
{
    if (c->cur)
        mdb_cursor_close(c->cur);
    c->cur = NULL;
}

/* The next pair of the merge at or after the current positions, skipping deletions. */
static int cur_pick(struct store__cur *c, MDB_val *k, MDB_val *v)
{
    const struct ov_tab *t = c->tab;
    for (;;) {
        if (c->src_rc && c->src_rc != MDB_NOTFOUND)
            return c->src_rc;
        int have_s = c->src_rc == 0, have_o = c->oi < t->n;
        if (!have_s && !have_o)
            return MDB_NOTFOUND;
        int cmp = !have_o ? -1 : !have_s ? 1 : key_cmp(&c->sk, &t->e[c->oi].k);
        if (cmp < 0) {
            c->took = 1;
            *k = c->sk;
            *v = c->sv;
            return 0;
        }
        c->took = cmp == 0 ? 3 : 2; /* the overlay's entry replaces an equal snapshot key */
        const struct ov_ent *e = &t->e[c->oi];
        if (e->v.mv_data) {
            *k = e->k;
            *v = e->v;
            return 0;
        }
        if (c->took & 1) /* deleted in the session: skip both */
            c->src_rc = mdb_cursor_get(c->cur, &c->sk, &c->sv, MDB_NEXT);
        c->oi++;
    }
}

int store__cur_get(struct store__cur *c, MDB_val *k, MDB_val *v, MDB_cursor_op op)
{
    if (!c->tab)
        return mdb_cursor_get(c->cur, k, v, op);
    switch (op) {
    case MDB_FIRST:
        c->src_rc = mdb_cursor_get(c->cur, &c->sk, &c->sv, MDB_FIRST);
        c->oi = 0;
        break;
    case MDB_SET_RANGE:
        c->sk = *k;
        c->src_rc = mdb_cursor_get(c->cur, &c->sk, &c->sv, MDB_SET_RANGE);
        c->oi = lower_bound(c->tab, k);
        break;
    case MDB_NEXT:
        if (c->took & 1)
            c->src_rc = mdb_cursor_get(c->cur, &c->sk, &c->sv, MDB_NEXT);
        if (c->took & 2)
            c->oi++;
        break;
    default:
        return EINVAL; /* the dupsort walks read the pod indexes, never overlaid */
    }
    c->took = 0;
    return cur_pick(c, k, v);
}
