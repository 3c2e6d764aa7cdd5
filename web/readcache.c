/*
 * readcache.c - answers of the scheduler's read routes (jobs, a job, its why document, the
 * topology tree) kept as encoded JSON and served again while the store has not changed.
 *
 * Those answers are made from the scheduler's view under its lock, which a cycle (or an
 * apply) holds for its whole length, and the topology tree of 5,000 nodes takes
 * milliseconds to build and encode. Every change of what they show is committed to the
 * store under that lock, so the store's last transaction id names the state an answer was
 * made from: an answer is stored with the id read *before* it was made (a commit in
 * between makes the id stale, never the answer wrong), and served while the id is still
 * the store's. A read during a cycle then answers at once with the state as of the last
 * commit, as a read transaction of the store would, instead of waiting for the cycle.
 *
 * One slot per hash of "path?query", replaced on collision; the text is shared by
 * reference count, so a hit copies nothing under the mutex. A miss claims its slot until
 * its answer is stored (or the request ends, api__readcache_release): other requests for
 * that slot wait for it instead of all making the same answer under the scheduler's lock
 * at once after every commit (a topology tree of 2.5 MB, 16 times over, held the lock for
 * hundreds of milliseconds).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

#define SLOTS 256
#define MAX_BYTES                                                                                  \
    ((size_t)64 << 20) /* all texts together: a viewer varying the query                           \
                          must not make musterd keep 256 topology trees */

struct text {
    atomic_int refs;
    size_t len;
    char data[];
};

struct slot {
    char *key;
    uint64_t txn;
    struct text *t;
    int claimed; /* a request is making the answer for this slot */
};

struct api_readcache {
    pthread_mutex_t mu;
    pthread_cond_t done; /* a claim ended */
    size_t bytes;        /* the texts' lengths, summed */
    struct slot slot[SLOTS];
};

static void text_put(struct text *t)
{
    if (t && atomic_fetch_sub(&t->refs, 1) == 1)
        free(t);
}

struct api_readcache *api__readcache_new(void)
{
    struct api_readcache *c = xcalloc(1, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->done, NULL);
    return c;
}

void api__readcache_free(struct api_readcache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < SLOTS; i++) {
        free(c->slot[i].key);
        text_put(c->slot[i].t);
    }
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->done);
    free(c);
}

/* "path?query" of r (new). */
static char *key_of(struct req *r)
{
    return xasprintf("%s?%s", r->raw_path, r->query ? r->query : "");
}

static size_t hash(const char *s)
{
    size_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h % SLOTS;
}

uint64_t api__readcache_txn(struct api *api)
{
    MDB_txn *txn = NULL;
    struct err err = ERR_INIT;
    uint64_t id = 0;
    if (store_txn_begin(api->st, STORE_READ, &txn, &err) == 0)
        id = store_txn_id(txn);
    store_txn_abort(&txn);
    return id;
}

int api__readcache_reply(struct req *r, uint64_t txn)
{
    struct api_readcache *c = r->api->readcache;
    char *key = key_of(r);
    size_t i = hash(key);
    struct slot *s = &c->slot[i];
    struct text *t = NULL;

    if (!txn) {
        free(key);
        return 0;
    }
    pthread_mutex_lock(&c->mu);
    for (;;) {
        if (s->t && s->txn == txn && !strcmp(s->key, key)) {
            t = s->t;
            atomic_fetch_add(&t->refs, 1);
            break;
        }
        if (!s->claimed) {
            s->claimed = 1;
            r->cache_slot = i + 1;
            break;
        }
        pthread_cond_wait(&c->done, &c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    free(key);
    if (!t)
        return 0;
    api__reply_raw(r, 200, "application/json", t->data, t->len, NULL);
    text_put(t);
    return 1;
}

void api__readcache_put_reply(struct req *r, uint64_t txn, json_t *body)
{
    struct api_readcache *c = r->api->readcache;
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    if (!text) {
        api__reply_json(r, 200, NULL); /* the 500 of an answer that cannot be encoded */
        return;
    }
    size_t len = strlen(text);
    struct text *t = xmalloc(sizeof(*t) + len + 2);
    atomic_init(&t->refs, 2); /* the slot's and this reply's */
    memcpy(t->data, text, len);
    t->data[len++] = '\n';
    t->data[len] = '\0';
    t->len = len;
    free(text);
    char *key = key_of(r);
    struct slot *s = &c->slot[hash(key)], old;
    pthread_mutex_lock(&c->mu);
    int claimed = s->claimed;
    old = *s;
    /* an answer made from an older state never replaces a newer one */
    size_t freed = s->t ? s->t->len : 0;
    if (txn && (!s->t || s->txn <= txn) && c->bytes - freed + t->len <= MAX_BYTES) {
        c->bytes = c->bytes - freed + t->len;
        *s = (struct slot){key, txn, t, claimed};
        key = NULL;
    } else {
        old = (struct slot){0};
        atomic_fetch_sub(&t->refs, 1);
    }
    pthread_mutex_unlock(&c->mu);
    free(old.key);
    text_put(old.t);
    free(key);
    api__readcache_release(r); /* before replying: the waiters need not wait for the client */
    api__reply_raw(r, 200, "application/json", t->data, t->len, NULL);
    text_put(t);
}

void api__readcache_release(struct req *r)
{
    struct api_readcache *c = r->api->readcache;
    if (!r->cache_slot)
        return;
    pthread_mutex_lock(&c->mu);
    c->slot[r->cache_slot - 1].claimed = 0;
    pthread_cond_broadcast(&c->done);
    pthread_mutex_unlock(&c->mu);
    r->cache_slot = 0;
}
