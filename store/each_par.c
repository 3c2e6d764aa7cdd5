/*
 * each_par.c - store_each_par: iteration with the JSON parse and the caller's decode spread
 * over threads (store.h).
 *
 * One thread at a time walks the cursor and cuts the objects into chunks (each value a
 * pointer into the map: a read transaction keeps its pages mapped and unchanged until it
 * ends; it is used by one thread at a time, which MDB_NOTLS allows). Any thread fills the
 * next chunk when its slot is free (two chunks are in flight), and reads (raw), or parses
 * and decodes, the items of the oldest chunk that has some left, claiming them one by one;
 * the calling thread hands each chunk's results to consume in key order, helping with the
 * rest while it waits. So with two threads the calling one does little but consume: the
 * walk and the decode of the next chunk overlap the consume of this one.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "err.h"
#include "internal.h"

#define CHUNK 2048
#define MAX_THREADS 4
#define AHEAD 4 /* results ahead of consume that ahead() is told about */

struct item {
    const char *data; /* in the map */
    size_t len;
    const char *bind; /* a pod's binding record (pod_bind.c), in the map; NULL none */
    size_t bindlen;
    size_t key; /* offset into the chunk's keys */
    void *res;  /* decode's result */
    int bad;    /* not JSON: the store is corrupt */
    char jerr[160];
};

struct chunk {
    struct item it[CHUNK];
    size_t n;
    size_t next; /* items claimed (under mu) */
    size_t done; /* items decoded (under mu) */
    char *keys;
    size_t nkeys, capkeys;
};

/* The binding records, walked beside the pods: both are keyed by the pod's key, so one
 * cursor moving forward finds each pod's record (or its absence) without a lookup from the
 * root per pod. */
struct binds {
    MDB_cursor *cur; /* NULL: not pods */
    MDB_val k, v;    /* the record at the cursor, when at */
    int at;          /* positioned on a record */
    int started;
};

struct par {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* something changed: a chunk filled, decoded or consumed, the end */
    struct chunk ch[2];
    size_t head, tail; /* consumed: [0, head); filled: [0, tail); chunk k in ch[k % 2] */
    int filling;       /* a thread is filling chunk tail */
    int end;           /* no chunk will be filled after tail: the last was, or a fill failed */
    int stop;          /* the workers leave */
    int fill_rc;       /* the failed fill's error, 0 */
    struct err fill_err;
    /* the walk: used by the thread filling only */
    MDB_txn *txn;
    MDB_cursor *cur;
    int op; /* the next cursor op, -1 past the end */
    const char *prefix;
    struct binds binds;
    store_decode_raw_fn raw; /* NULL: none */
    store_decode_fn decode;
    void *ctx;
};

/* Decodes one claimed item; called without the lock. */
static void decode_item(struct par *p, struct chunk *c, struct item *it)
{
    json_error_t jerr;
    struct err e = ERR_INIT;
    if (p->raw) {
        const char *node = NULL, *ts = NULL;
        if (it->bind &&
            store__pod_overlay_read(c->keys + it->key, it->bind, it->bindlen, &node, &ts, &e)) {
            it->bad = 1;
            snprintf(it->jerr, sizeof(it->jerr), "%.150s", e.msg);
            return;
        }
        if (p->raw(p->ctx, c->keys + it->key, it->data, it->len, node, ts, &it->res))
            return;
    }
    json_t *obj = store__json_load(it->data, it->len, &jerr);
    if (!obj) {
        it->bad = 1;
        snprintf(it->jerr, sizeof(it->jerr), "%s", jerr.text);
        return;
    }
    if (it->bind && store__pod_overlay_apply(c->keys + it->key, obj, it->bind, it->bindlen, &e)) {
        it->bad = 1;
        snprintf(it->jerr, sizeof(it->jerr), "%.150s", e.msg);
        json_decref(obj);
        return;
    }
    it->res = p->decode(p->ctx, c->keys + it->key, obj);
    json_decref(obj);
}

/* Claims and decodes items of chunk k until none is left; with the lock held on entry and
 * on return. */
static void work_on(struct par *p, size_t k)
{
    struct chunk *c = &p->ch[k % 2];
    while (c->next < c->n) {
        struct item *it = &c->it[c->next++];
        pthread_mutex_unlock(&p->mu);
        decode_item(p, c, it);
        pthread_mutex_lock(&p->mu);
        if (++c->done == c->n)
            pthread_cond_broadcast(&p->cv);
    }
}

/* The binding record of pod key k into *it, advancing b past the records before k.
 * Returns 0 or ERR_STORE. */
static int bind_find(MDB_txn *txn, struct binds *b, MDB_val *k, struct item *it, struct err *err)
{
    struct store *st = store__of(txn);
    MDB_dbi dbi = st->dbi[DBI_POD_BIND];
    int rc = 0;
    if (!b->started) {
        b->started = 1;
        b->k = *k;
        rc = mdb_cursor_get(b->cur, &b->k, &b->v, MDB_SET_RANGE);
        b->at = rc == 0;
    }
    while (rc == 0 && b->at && mdb_cmp(txn, dbi, &b->k, k) < 0) {
        rc = mdb_cursor_get(b->cur, &b->k, &b->v, MDB_NEXT);
        b->at = rc == 0;
    }
    if (rc && rc != MDB_NOTFOUND)
        return store__mdb_err(st, rc, err, "cannot read a binding");
    if (b->at && mdb_cmp(txn, dbi, &b->k, k) == 0) {
        it->bind = b->v.mv_data;
        it->bindlen = b->v.mv_size;
    }
    return 0;
}

/* Fills chunk c from the cursor: up to CHUNK values of keys starting with prefix, and for
 * pods (b->cur set) each one's binding record, read here so that decoding calls no LMDB.
 * Returns 0 (c->n 0 at the end, *op -1 past it) or ERR_STORE. */
static int fill(MDB_txn *txn, MDB_cursor *cur, int *op, const char *prefix, struct binds *b,
                struct chunk *c, struct err *err)
{
    struct store *st = store__of(txn);
    size_t plen = prefix ? strlen(prefix) : 0;
    MDB_val k = {plen, (void *)prefix}, v;
    c->n = c->next = c->done = 0;
    c->nkeys = 0;
    while (*op >= 0 && c->n < CHUNK) {
        int rc = mdb_cursor_get(cur, &k, &v, (MDB_cursor_op)*op);
        *op = MDB_NEXT;
        if (rc == MDB_NOTFOUND)
            break;
        if (rc)
            return store__mdb_err(st, rc, err, "cannot iterate");
        if (plen && (k.mv_size < plen || memcmp(k.mv_data, prefix, plen) != 0)) {
            *op = -1; /* past the prefix: the end */
            break;
        }
        XGROW(c->keys, c->nkeys + k.mv_size + 1, c->capkeys);
        memcpy(c->keys + c->nkeys, k.mv_data, k.mv_size);
        c->keys[c->nkeys + k.mv_size] = '\0';
        struct item *it = &c->it[c->n++];
        *it = (struct item){.data = v.mv_data, .len = v.mv_size, .key = c->nkeys};
        c->nkeys += k.mv_size + 1;
        if (b->cur && (rc = bind_find(txn, b, &k, it, err)) < 0)
            return rc;
    }
    return 0;
}

/* A chunk can be filled: none is being, the walk has not ended, and chunk tail's slot is
 * free (chunk tail - 2 consumed). */
static int can_fill(const struct par *p)
{
    return !p->filling && !p->end && p->tail < p->head + 2;
}

/* Fills chunk tail; with the lock held on entry and on return, dropped while walking. */
static void fill_task(struct par *p)
{
    size_t k = p->tail;
    struct chunk *c = &p->ch[k % 2];
    struct err e = ERR_INIT;
    p->filling = 1;
    pthread_mutex_unlock(&p->mu);
    int rc = fill(p->txn, p->cur, &p->op, p->prefix, &p->binds, c, &e);
    pthread_mutex_lock(&p->mu);
    p->filling = 0;
    if (rc < 0) {
        c->n = 0;
        p->fill_rc = rc;
        p->fill_err = e;
    }
    if (c->n)
        p->tail = k + 1; /* published even after an error elsewhere: its results are released */
    else
        p->end = 1;
    pthread_cond_broadcast(&p->cv);
}

/* Items of chunks [head, tail) left to claim: the oldest such chunk, or tail. */
static size_t work_left(const struct par *p)
{
    size_t k = p->head;
    while (k < p->tail && p->ch[k % 2].next >= p->ch[k % 2].n)
        k++;
    return k;
}

static void *worker(void *arg)
{
    struct par *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        size_t k;
        if (can_fill(p)) {
            fill_task(p);
        } else if ((k = work_left(p)) < p->tail) {
            work_on(p, k);
        } else if (p->stop) {
            break;
        } else {
            pthread_cond_wait(&p->cv, &p->mu);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static int threads_for(int asked)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int n = asked > 0 ? asked : (int)(cpus > 0 ? cpus : 1);
    return n > MAX_THREADS ? MAX_THREADS : n;
}

/* Hands chunk c's results to consume in key order (after the first error, to be released);
 * ahead hears of each AHEAD results before. Returns rc, or the first error. */
static int consume_chunk(const struct store_par_fns *fns, void *ctx, struct chunk *c, int rc,
                         struct err *err)
{
    for (size_t i = 0; fns->ahead && rc == 0 && i < AHEAD && i < c->n; i++)
        fns->ahead(ctx, c->keys + c->it[i].key, c->it[i].res);
    for (size_t i = 0; i < c->n; i++) {
        struct item *it = &c->it[i];
        if (fns->ahead && rc == 0 && i + AHEAD < c->n)
            fns->ahead(ctx, c->keys + c->it[i + AHEAD].key, c->it[i + AHEAD].res);
        if (rc == 0 && it->bad)
            rc = err_set(err, ERR_STORE, "corrupt value for '%s': %s", c->keys + it->key, it->jerr);
        if (rc == 0) {
            rc = fns->consume(ctx, c->keys + it->key, it->res);
            rc = rc > 0 ? 0 : rc;
        } else {
            fns->consume(ctx, NULL, it->res); /* released, not used */
        }
        it->res = NULL;
    }
    return rc;
}

/* The calling thread's part: each chunk in turn, once filled (by it or a worker) and
 * decoded (it helps, and fills the next chunk when it may), handed to consume. Under p->mu;
 * returns 0 or the first error (the walk's own included). */
static int consume_all(struct par *p, const struct store_par_fns *fns, void *ctx, struct err *err)
{
    int rc = 0;
    for (size_t k = 0;; k++) {
        struct chunk *c = &p->ch[k % 2];
        size_t w;
        /* chunk k filled (here or by a worker; a fill under way may still publish it) */
        while (p->tail <= k && (!p->end || p->filling)) {
            if (can_fill(p))
                fill_task(p);
            else
                pthread_cond_wait(&p->cv, &p->mu);
        }
        if (p->tail <= k)
            break;
        /* and decoded, this thread helping; it fills the next chunk when it may */
        while (c->done < c->n) {
            if (can_fill(p))
                fill_task(p);
            else if ((w = work_left(p)) < p->tail)
                work_on(p, w);
            else
                pthread_cond_wait(&p->cv, &p->mu);
        }
        if (rc == 0 && p->fill_rc) { /* a walk that failed stops the results after it */
            rc = p->fill_rc;
            *err = p->fill_err;
        }
        pthread_mutex_unlock(&p->mu);
        rc = consume_chunk(fns, ctx, c, rc, err);
        pthread_mutex_lock(&p->mu);
        p->head = k + 1;
        if (rc < 0) /* no more chunks: the one filled after this is released, then the end */
            p->end = 1;
        pthread_cond_broadcast(&p->cv);
    }
    if (rc == 0 && p->fill_rc) {
        rc = p->fill_rc;
        *err = p->fill_err;
    }
    return rc;
}

int store_each_par(MDB_txn *txn, enum model_kind kind, const char *prefix, int nthreads,
                   const struct store_par_fns *fns, void *ctx, struct err *err)
{
    struct store *st = store__of(txn);
    if (kind < 0 || kind >= MODEL_KIND_COUNT)
        return err_set(err, ERR_INVALID, "unknown kind %d", (int)kind);
    struct par *p = xcalloc(1, sizeof(*p));
    int rc = mdb_cursor_open(txn, st->dbi[store__kind_dbi[kind]], &p->cur);
    if (rc == 0 && kind == MODEL_POD)
        rc = mdb_cursor_open(txn, st->dbi[DBI_POD_BIND], &p->binds.cur);
    if (rc) {
        rc = store__mdb_err(st, rc, err, "cannot open a cursor");
        goto out;
    }
    pthread_t th[MAX_THREADS];
    int nth = 0;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    p->txn = txn;
    p->op = prefix && *prefix ? MDB_SET_RANGE : MDB_FIRST;
    p->prefix = prefix;
    p->raw = fns->raw;
    p->decode = fns->decode;
    p->ctx = ctx;
    /* the first chunk is filled before any thread starts: a walk that fits in it is
     * decoded here (a thread costs more than a few hundred small objects; the tests
     * rebuild small views after every step). A dry session runs beside the live scheduler
     * (a what-if): it takes one core, not all. */
    pthread_mutex_lock(&p->mu);
    fill_task(p);
    int more = p->tail == 1 && p->ch[0].n == CHUNK;
    pthread_mutex_unlock(&p->mu);
    for (int i = store__dry_of(txn) || !more ? 0 : threads_for(nthreads) - 1; i > 0; i--)
        if (pthread_create(&th[nth], NULL, worker, p) == 0)
            nth++;
    pthread_mutex_lock(&p->mu);
    rc = consume_all(p, fns, ctx, err);
    p->stop = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < nth; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
out:
    if (p->cur)
        mdb_cursor_close(p->cur);
    if (p->binds.cur)
        mdb_cursor_close(p->binds.cur);
    free(p->ch[0].keys);
    free(p->ch[1].keys);
    free(p);
    return rc;
}
