/*
 * readcache.c - answers of the scheduler's read routes (jobs, a job, its why document, the
 * topology tree) kept as encoded JSON, with the state they show, and remade in the
 * background when the store has moved on.
 *
 * Those answers are made from the scheduler's view under its lock, which a cycle (or an
 * apply) holds for its whole length. Every change of what they show is committed to the
 * store under that lock, so the store's last transaction id names the state an answer was
 * made from: an answer is stored with the id read *before* it was made (a commit in
 * between makes the id an underestimate, never the answer older than it). reads.c decides
 * which stored answer a request may take (api__readcache_get's min_txn).
 *
 * A key (the path and query without resourceVersion) lives in one of WAYS slots from its
 * hash on; a new key takes an empty one or the one used least recently (hundreds of why
 * documents read in turn must not evict each other, or each read waits for the lock
 * again). The text is shared by reference count, so a hit copies nothing under the
 * mutex, and its gzip form is made once, by the first request that asks for it (or by
 * the remaker, when the answer it replaces had been asked gzipped). A miss claims its
 * slot (with its key) until its answer is stored (or the request ends,
 * api__readcache_release): other requests for that slot wait for it instead of all making
 * the same answer under the scheduler's lock at once after every commit.
 *
 * A stale answer served (older than the store) queues its slot for the remaker, a thread
 * started at the first such request, which remakes every queued answer in one go, each
 * from its own copy of the request (struct api_read). It takes the scheduler's lock like
 * any read, so it is paced: after remakes that took d of CPU time it waits
 * d * (100 / REMAKE_SHARE - 1), so remaking uses at most REMAKE_SHARE percent of one core.
 *
 * Short audit tails (audit.c) are kept here too, as texts stored without a query
 * (api__readcache_put_text): asked only at the store's last commit (api__readcache_peek),
 * never served stale, so never remade.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "alloc.h"
#include "cached_reads.h"
#include "clock.h"
#include "store.h"
#include "thread.h"

#define SLOTS 4096
#define WAYS 8 /* a key lives in one of the WAYS slots from its hash on */
#define MAX_BYTES                                                                                  \
    ((size_t)64 << 20)  /* all texts together: a viewer varying the query                          \
                           must not make musterd keep 256 topology trees */
#define REMAKE_SHARE 10 /* percent of one core the remaker may use */

struct api_text {
    atomic_int refs;
    atomic_int gz_asked;   /* api__text_gzip was called */
    pthread_mutex_t gz_mu; /* serialises making gz, once */
    _Atomic(char *) gz;    /* published (release) only once whole; gz_len is set before */
    size_t gz_len;
    uint64_t txn;
    size_t len;
    char data[];
};

struct slot {
    char *key;
    struct api_text *t;
    struct api_read *q; /* how to make it again (owned), NULL when none is stored */
    int claimed;        /* a request (or the remaker) is making the answer for this slot */
    int queued;         /* in the remake queue */
    int64_t stale_ns;   /* when a request first found it stale */
    uint64_t used;      /* the cache's clock at its last use */
};

struct api_readcache {
    pthread_mutex_t mu;
    pthread_cond_t done; /* a claim ended */
    pthread_cond_t work; /* a slot was queued, or stop */
    size_t bytes;        /* the texts' lengths, summed */
    struct slot slot[SLOTS];
    size_t queue[SLOTS], qhead, qlen; /* slots to remake, each at most once */
    struct api *api;                  /* set when the remaker starts */
    pthread_t remaker;
    int running, stop;
    uint64_t clock;                             /* counts lookups, for least recently used */
    uint64_t hits, stale_hits, misses, remakes; /* for /metrics */
    double remake_cpu, stale_max;               /* seconds */
};

void api__text_put(struct api_text *t)
{
    if (t && atomic_fetch_sub(&t->refs, 1) == 1) {
        pthread_mutex_destroy(&t->gz_mu);
        free(atomic_load(&t->gz));
        free(t);
    }
}

struct api_readcache *api__readcache_new(void)
{
    struct api_readcache *c = xcalloc(1, sizeof(*c));
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->done, NULL);
    pthread_cond_init(&c->work, NULL);
    return c;
}

void api__readcache_free(struct api_readcache *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_broadcast(&c->work);
    pthread_mutex_unlock(&c->mu);
    if (c->running)
        pthread_join(c->remaker, NULL);
    for (size_t i = 0; i < SLOTS; i++) {
        free(c->slot[i].key);
        api__text_put(c->slot[i].t);
        api__read_free(c->slot[i].q);
    }
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->done);
    pthread_cond_destroy(&c->work);
    free(c);
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
    return store_last_txn(api->st);
}

/* A text of len bytes (copied), with a newline after them when newline, made at txn; new. */
static struct api_text *text_of(const char *text, size_t len, int newline, uint64_t txn)
{
    struct api_text *t = xmalloc(sizeof(*t) + len + 2);
    atomic_init(&t->refs, 1);
    atomic_init(&t->gz_asked, 0);
    pthread_mutex_init(&t->gz_mu, NULL);
    atomic_init(&t->gz, NULL);
    t->gz_len = 0;
    t->txn = txn;
    if (len) /* memcpy from NULL is undefined even for 0 bytes */
        memcpy(t->data, text, len);
    if (newline)
        t->data[len++] = '\n';
    t->data[len] = '\0';
    t->len = len;
    return t;
}

/* body (stolen) with metadata.resourceVersion set to txn, encoded, with a newline. New,
 * or NULL when it cannot be encoded. */
static struct api_text *text_new(json_t *body, uint64_t txn)
{
    char rv[32];
    json_t *meta = json_object_get(body, "metadata");
    if (!json_is_object(meta)) {
        meta = json_object();
        json_object_set_new(body, "metadata", meta);
    }
    snprintf(rv, sizeof(rv), "%llu", (unsigned long long)txn);
    json_object_set_new(meta, "resourceVersion", json_string(rv));
    char *text = store_json_text(body, 0); /* json_dumps's bytes, without its printf */
    json_decref(body);
    if (!text)
        return NULL;
    struct api_text *t = text_of(text, strlen(text), 1, txn);
    free(text);
    return t;
}

const char *api__text_data(const struct api_text *t, size_t *len, uint64_t *txn)
{
    *len = t->len;
    if (txn)
        *txn = t->txn;
    return t->data;
}

const char *api__text_gzip_ready(struct api_text *t, size_t *len)
{
    atomic_store(&t->gz_asked, 1);
    char *gz = atomic_load_explicit(&t->gz, memory_order_acquire);
    *len = gz ? t->gz_len : 0;
    return gz;
}

/* Makes t's gzip form unless made already; under t->gz_mu. */
static void gzip_locked(struct api_text *t)
{
    if (atomic_load_explicit(&t->gz, memory_order_relaxed))
        return;
    z_stream z = {0};
    /* windowBits 15 + 16: a gzip header and trailer, not zlib's. The fastest level: on a
     * topology tree of 5,000 nodes it is 2.4 times faster than the default and 1% larger */
    if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        abort(); /* only out of memory fails here */
    size_t cap = deflateBound(&z, t->len);
    char *gz = xmalloc(cap);
    z.next_in = (Bytef *)t->data;
    z.avail_in = (uInt)t->len;
    z.next_out = (Bytef *)gz;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        abort(); /* cannot happen with deflateBound's room */
    t->gz_len = z.total_out;
    deflateEnd(&z);
    atomic_store_explicit(&t->gz, gz, memory_order_release);
}

const char *api__text_gzip(struct api_text *t, size_t *len)
{
    const char *ready = api__text_gzip_ready(t, len);
    if (ready)
        return ready;
    pthread_mutex_lock(&t->gz_mu);
    gzip_locked(t);
    pthread_mutex_unlock(&t->gz_mu);
    *len = t->gz_len;
    return atomic_load_explicit(&t->gz, memory_order_relaxed);
}

const char *api__text_gzip_nowait(struct api_text *t, size_t *len)
{
    const char *ready = api__text_gzip_ready(t, len);
    if (ready || pthread_mutex_trylock(&t->gz_mu) != 0)
        return ready;
    gzip_locked(t);
    pthread_mutex_unlock(&t->gz_mu);
    *len = t->gz_len;
    return atomic_load_explicit(&t->gz, memory_order_relaxed);
}

static void *remake_main(void *arg);

/* Queues slot i for the remaker (under c->mu), starting it the first time. */
static void queue_remake(struct api_readcache *c, struct api *api, size_t i)
{
    struct slot *s = &c->slot[i];
    if (s->queued || !s->q || c->qlen == SLOTS)
        return;
    s->queued = 1;
    if (!s->stale_ns)
        s->stale_ns = clock_mono_ns();
    c->queue[(c->qhead + c->qlen++) % SLOTS] = i;
    if (!c->running && !c->stop) {
        c->api = api;
        c->running = pthread_create(&c->remaker, NULL, remake_main, c) == 0;
    }
    pthread_cond_signal(&c->work);
}

/* The slot holding key (under c->mu), or -1. */
static long find(struct api_readcache *c, const char *key, size_t h)
{
    for (size_t w = 0; w < WAYS; w++) {
        struct slot *s = &c->slot[(h + w) % SLOTS];
        if (s->key && !strcmp(s->key, key))
            return (long)((h + w) % SLOTS);
    }
    return -1;
}

/* A slot for a new key (under c->mu): an empty one, else the least recently used one no
 * request is making; its answer is dropped. -1 when every one is being made. */
static long evict(struct api_readcache *c, size_t h)
{
    long best = -1;
    for (size_t w = 0; w < WAYS; w++) {
        size_t i = (h + w) % SLOTS;
        struct slot *s = &c->slot[i];
        if (s->claimed)
            continue;
        if (!s->key)
            return (long)i;
        if (best < 0 || s->used < c->slot[best].used)
            best = (long)i;
    }
    if (best >= 0) {
        struct slot *s = &c->slot[best];
        c->bytes -= s->t ? s->t->len : 0;
        free(s->key);
        api__text_put(s->t);
        api__read_free(s->q);
        *s = (struct slot){.queued = s->queued}; /* the remaker skips it: no q */
    }
    return best;
}

struct api_text *api__readcache_get(struct req *r, const char *key, uint64_t min_txn,
                                    uint64_t now_txn)
{
    struct api_readcache *c = r->api->readcache;
    size_t h = hash(key);
    struct api_text *t = NULL;

    pthread_mutex_lock(&c->mu);
    for (;;) {
        long i = find(c, key, h);
        struct slot *s = i >= 0 ? &c->slot[i] : NULL;
        if (s && s->t && s->t->txn >= min_txn) {
            t = s->t;
            atomic_fetch_add(&t->refs, 1);
            s->used = ++c->clock;
            c->hits++;
            if (t->txn < now_txn) {
                c->stale_hits++;
                queue_remake(c, r->api, (size_t)i);
            }
            break;
        }
        if (r->direct)
            break; /* the front end's thread never waits, claims or makes: it relays */
        if (!s && (i = evict(c, h)) >= 0) {
            s = &c->slot[i];
            s->key = xstrdup(key);
        }
        if (s && !s->claimed) {
            s->claimed = 1;
            s->used = ++c->clock;
            r->cache_slot = (size_t)i + 1;
            c->misses++;
            break;
        }
        pthread_cond_wait(&c->done, &c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    return t;
}

/* The answer of key made at min_txn or later, one reference taken, or NULL; used: the slot
 * counts as used now (kept longer when the texts must shrink). */
static struct api_text *take(struct api_readcache *c, const char *key, uint64_t min_txn, int used)
{
    struct api_text *t = NULL;
    pthread_mutex_lock(&c->mu);
    long i = find(c, key, hash(key));
    if (i >= 0 && c->slot[i].t && c->slot[i].t->txn >= min_txn) {
        t = c->slot[i].t;
        atomic_fetch_add(&t->refs, 1);
        if (used)
            c->slot[i].used = ++c->clock;
    }
    pthread_mutex_unlock(&c->mu);
    return t;
}

int api__readcache_ready(struct api *api, const char *key, uint64_t min_txn, int gz)
{
    struct api_text *t = take(api->readcache, key, min_txn, 0);
    if (!t)
        return 0;
    int ok = 1;
    if (gz) /* never the lock of a deflate in progress: the front end's thread asks */
        ok = atomic_load_explicit(&t->gz, memory_order_acquire) != NULL;
    api__text_put(t);
    return ok;
}

/* Stores t (one reference taken) with q (copied; NULL: none) in slot i if it still holds key,
 * unless it holds a newer answer or the texts would grow past MAX_BYTES. Under c->mu. */
static void store(struct api_readcache *c, size_t i, const char *key, struct api_text *t,
                  const struct api_read *q)
{
    struct slot *s = &c->slot[i];
    size_t freed = s->t ? s->t->len : 0;
    /* an answer made from an older state never replaces a newer one */
    if (!s->key || strcmp(s->key, key) != 0 || (s->t && s->t->txn > t->txn) ||
        c->bytes - freed + t->len > MAX_BYTES)
        return;
    c->bytes = c->bytes - freed + t->len;
    api__text_put(s->t);
    atomic_fetch_add(&t->refs, 1);
    s->t = t;
    if (!s->q && q)
        s->q = api__read_copy(q);
    if (s->stale_ns) {
        double age = (double)(clock_mono_ns() - s->stale_ns) / 1e9;
        if (age > c->stale_max)
            c->stale_max = age;
        s->stale_ns = 0;
    }
}

struct api_text *api__readcache_peek(struct api *api, const char *key, uint64_t min_txn)
{
    return take(api->readcache, key, min_txn, 1);
}

struct api_text *api__readcache_put_text(struct api *api, const char *key, uint64_t txn,
                                         const char *text, size_t len)
{
    struct api_readcache *c = api->readcache;
    struct api_text *t = text_of(text, len, 0, txn);
    size_t h = hash(key);

    pthread_mutex_lock(&c->mu);
    long i = txn ? find(c, key, h) : -1;
    if (txn && i < 0 && (i = evict(c, h)) >= 0)
        c->slot[i].key = xstrdup(key);
    if (i >= 0)
        store(c, (size_t)i, key, t, NULL); /* no query: never remade, never served stale */
    pthread_mutex_unlock(&c->mu);
    return t;
}

struct api_text *api__readcache_put(struct req *r, const char *key, uint64_t txn,
                                    const struct api_read *q, json_t *body)
{
    struct api_readcache *c = r->api->readcache;
    struct api_text *t = text_new(body, txn);
    if (!t)
        return NULL;
    pthread_mutex_lock(&c->mu);
    if (txn && r->cache_slot)
        store(c, r->cache_slot - 1, key, t, q);
    pthread_mutex_unlock(&c->mu);
    api__readcache_release(r); /* before replying: the waiters need not wait for the client */
    return t;
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

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One answer the remaker makes again: slot i, claimed by it; key and q are copies; gz:
 * compress it too (its readers ask for gzip). */
struct remake {
    size_t i;
    char *key;
    struct api_read *q;
    int gz;
};

/* Remakes n answers in one go (why documents take the scheduler's lock twice in all, not
 * twice each: the lock is rarely free while Basic-5k is applied, and one remake per free
 * moment left why documents seconds stale). Returns the CPU seconds it took. */
static double remake(struct api_readcache *c, struct remake *rm, size_t n)
{
    const struct api_read **q = xcalloc(n, sizeof(*q));
    json_t **body = xcalloc(n, sizeof(*body));
    struct api_text **t = xcalloc(n, sizeof(*t));
    double cpu0 = thread_cpu();
    uint64_t txn = api__readcache_txn(c->api);
    size_t len;
    for (size_t k = 0; k < n; k++)
        q[k] = rm[k].q;
    api__read_make_many(c->api, n, q, body);
    for (size_t k = 0; k < n; k++)
        if (body[k] && (t[k] = text_new(body[k], txn)) && rm[k].gz)
            api__text_gzip(t[k], &len); /* here, not on the first request that asks for it */
    double cpu = thread_cpu() - cpu0;

    pthread_mutex_lock(&c->mu);
    for (size_t k = 0; k < n; k++) {
        struct slot *s = &c->slot[rm[k].i];
        if (t[k] && txn)
            store(c, rm[k].i, rm[k].key, t[k], rm[k].q);
        else if (s->key && !strcmp(s->key, rm[k].key) && s->t) {
            /* the answer is now an error (a job gone): the next request makes it itself */
            c->bytes -= s->t->len;
            api__text_put(s->t);
            s->t = NULL;
            s->stale_ns = 0;
        }
        s->claimed = 0;
    }
    c->remakes += n;
    c->remake_cpu += cpu;
    pthread_cond_broadcast(&c->done);
    pthread_mutex_unlock(&c->mu);
    for (size_t k = 0; k < n; k++)
        api__text_put(t[k]);
    free(q);
    free(body);
    free(t);
    return cpu;
}

/* Takes every queued slot that no request is making (under c->mu), claimed, into rm;
 * returns how many. */
static size_t take_queue(struct api_readcache *c, struct remake *rm)
{
    size_t n = 0;
    while (c->qlen) {
        size_t i = c->queue[c->qhead];
        c->qhead = (c->qhead + 1) % SLOTS;
        c->qlen--;
        struct slot *s = &c->slot[i];
        s->queued = 0;
        if (s->claimed || !s->q || !s->key)
            continue; /* a request makes it now, or it was replaced */
        s->claimed = 1;
        rm[n++] = (struct remake){i, xstrdup(s->key), api__read_copy(s->q),
                                  s->t && atomic_load(&s->t->gz_asked)};
    }
    return n;
}

static void *remake_main(void *arg)
{
    struct api_readcache *c = arg;
    struct remake *rm = xcalloc(SLOTS, sizeof(*rm));
    int64_t next_ns = 0; /* the pacing: no remake starts before this */

    thread_background("musterd-remake"); /* paced, and no one waits on it */
    thread_pin("read cache's remaker", "front_cpus", &c->api->front_cpus);
    pthread_mutex_lock(&c->mu);
    while (!c->stop) {
        if (!c->qlen) {
            pthread_cond_wait(&c->work, &c->mu);
            continue;
        }
        int64_t now = clock_mono_ns();
        if (now < next_ns) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            int64_t at = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + (next_ns - now);
            ts = (struct timespec){(time_t)(at / 1000000000), (long)(at % 1000000000)};
            pthread_cond_timedwait(&c->work, &c->mu, &ts);
            continue;
        }
        size_t n = take_queue(c, rm);
        pthread_mutex_unlock(&c->mu);
        double cpu = n ? remake(c, rm, n) : 0;
        for (size_t k = 0; k < n; k++) {
            free(rm[k].key);
            api__read_free(rm[k].q);
        }
        next_ns = clock_mono_ns() + (int64_t)(cpu * 1e9 * (100.0 / REMAKE_SHARE - 1));
        pthread_mutex_lock(&c->mu);
    }
    pthread_mutex_unlock(&c->mu);
    free(rm);
    return NULL;
}

void api__readcache_metrics(struct api *api, char *buf, size_t n)
{
    struct api_readcache *c = api->readcache;
    pthread_mutex_lock(&c->mu);
    snprintf(buf, n,
             "# HELP muster_read_answers_total Answers of jobs, why and topology, by where they "
             "came from.\n"
             "# TYPE muster_read_answers_total counter\n"
             "muster_read_answers_total{from=\"cache\"} %llu\n"
             "muster_read_answers_total{from=\"cache_stale\"} %llu\n"
             "muster_read_answers_total{from=\"made\"} %llu\n"
             "# HELP muster_read_remakes_total Stale answers remade in the background.\n"
             "# TYPE muster_read_remakes_total counter\nmuster_read_remakes_total %llu\n"
             "# HELP muster_read_remake_cpu_seconds_total CPU time of those remakes.\n"
             "# TYPE muster_read_remake_cpu_seconds_total counter\n"
             "muster_read_remake_cpu_seconds_total %.6f\n"
             "# HELP muster_read_stale_seconds_max Longest time from a stale answer first served "
             "to its remade answer stored.\n"
             "# TYPE muster_read_stale_seconds_max gauge\nmuster_read_stale_seconds_max %.6f\n",
             (unsigned long long)(c->hits - c->stale_hits), (unsigned long long)c->stale_hits,
             (unsigned long long)c->misses, (unsigned long long)c->remakes, c->remake_cpu,
             c->stale_max);
    pthread_mutex_unlock(&c->mu);
}
