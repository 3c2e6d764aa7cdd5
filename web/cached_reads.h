/*
 * cached_reads.h - the scheduler's read routes (jobs, a job, its why document, the topology
 * tree, the node map), from the bottom up: a read as a query and its answer made from the
 * scheduler's view (read_make.c); the answers kept, shared and remade in the background
 * (readcache.c); which answer a request gets by its resourceVersion, and the reply
 * (reads.c, whose opening comment has the rules). The cache calls read_make.c to remake
 * answers, never reads.c; only reads.c replies.
 *
 * Threads: the cache is shared by every worker and the front end's thread (r->direct: it
 * never waits or claims there); its remaker is a thread of its own.
 */
#ifndef MUSTER_WEB_CACHED_READS_H
#define MUSTER_WEB_CACHED_READS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "api_impl.h"
#include "scheduler.h"

struct err;

/* ---- read_make.c: the reads as queries, and their answers made ---- */
enum api_read_kind {
    API_READ_JOBS,
    API_READ_JOB,
    API_READ_WHY,
    API_READ_TOPOLOGY,
    API_READ_NODEMAP
};
/* One read of the scheduler's view, as parsed from its request: enough to make its answer
 * again without the request (the background remaker keeps a copy). */
struct api_read {
    enum api_read_kind kind;
    char *id;                     /* JOB, WHY: "ns/name" */
    char *state;                  /* JOBS: a state name or NULL */
    char *after;                  /* JOBS: the page starts after this id, or NULL */
    size_t limit;                 /* JOBS: 0: no limit */
    int paged;                    /* JOBS: limit or continue given: metadata.continue */
    char *like;                   /* TOPOLOGY: topo.like points here */
    struct sched_topo_query topo; /* TOPOLOGY */
};
/* Makes q's answer from the scheduler's view (takes its lock): 0 with *out new, or the
 * scheduler's ERR_* with err. */
int api__read_make(struct api *api, const struct api_read *q, json_t **out, struct err *err);
/* The answers of n reads (out[i] new, or NULL where api__read_make fails), the why
 * documents among them in one sched_whys. */
void api__read_make_many(struct api *api, size_t n, const struct api_read *const *q, json_t **out);
/* A deep copy of q (new) / frees one (NULL-safe). */
struct api_read *api__read_copy(const struct api_read *q);
void api__read_free(struct api_read *q);
/* ---- readcache.c: the answers of reads.c kept, shared and remade ---- */
/* An encoded answer, shared by reference count. */
struct api_text;
void api__text_put(struct api_text *t); /* drops a reference; NULL-safe */
/* The text (borrowed, valid while the reference is held), its length and the store's
 * transaction id it was made at (txn may be NULL). */
const char *api__text_data(const struct api_text *t, size_t *len, uint64_t *txn);
/* The text gzipped (borrowed likewise), compressed by the first caller only. */
const char *api__text_gzip(struct api_text *t, size_t *len);
/* The same, but NULL instead of waiting while another thread compresses it. */
const char *api__text_gzip_nowait(struct api_text *t, size_t *len);
/* The gzipped text if it is made already, else NULL; never waits, never compresses. */
const char *api__text_gzip_ready(struct api_text *t, size_t *len);
struct api_readcache *api__readcache_new(void);
void api__readcache_free(struct api_readcache *c); /* NULL-safe; stops the remaker */
/* The store's last committed transaction id (0 when it cannot be read: nothing cached).
 * Read it before making the answer that is to be cached with it. */
uint64_t api__readcache_txn(struct api *api);
/* The answer stored for key made at min_txn or later (a new reference); one older than
 * now_txn is queued to be remade. NULL when there is none: r then holds key's slot (other
 * requests for it wait) until api__readcache_put or api__readcache_release (api__dispatch
 * calls it after every handler). */
struct api_text *api__readcache_get(struct req *r, const char *key, uint64_t min_txn,
                                    uint64_t now_txn);
/* 1 when api__readcache_get(key, min_txn) would return an answer now (with its gzip form
 * made, when gz), without waiting; changes nothing. With r->direct api__readcache_get
 * never waits or claims: NULL then means "not stored" (r->cache_slot stays 0). */
int api__readcache_ready(struct api *api, const char *key, uint64_t min_txn, int gz);
/* body (stolen) encoded with metadata.resourceVersion = txn: stored for key with q
 * (copied, to remake it) unless a newer answer is stored, and returned (a new reference;
 * NULL when body cannot be encoded). Releases r's slot. */
struct api_text *api__readcache_put(struct req *r, const char *key, uint64_t txn,
                                    const struct api_read *q, json_t *body);
/* Answers kept as made, never served stale nor remade (GET /api/v1/audit?tail=N, audit.c):
 * the text stored for key made at min_txn or later (a new reference), or NULL; never waits,
 * claims or queues. */
struct api_text *api__readcache_peek(struct api *api, const char *key, uint64_t min_txn);
/* text (len bytes, copied) made at txn: stored for key unless a newer answer is (or txn is
 * 0, or every slot key may take is being made), and returned (a new reference). */
struct api_text *api__readcache_put_text(struct api *api, const char *key, uint64_t txn,
                                         const char *text, size_t len);
/* Gives up r's slot, if it holds one, waking the requests waiting for it. */
void api__readcache_release(struct req *r);
/* The cache's counters in the Prometheus text format into buf. */
void api__readcache_metrics(struct api *api, char *buf, size_t n);

/* ---- reads.c: which answer a request gets, by resourceVersion ---- */
/* Replies q's answer (q borrowed) as its ?resourceVersion= asks (reads.c's opening
 * comment), or 400 (a malformed resourceVersion), 504 (one beyond the store's last commit)
 * or the scheduler's error. */
void api__read_reply(struct req *r, const struct api_read *q);
/* 1 when r (a GET or HEAD on a cached read route) would be answered from the read cache
 * now, without waiting: its answer is stored, new enough for its resourceVersion, and
 * gzipped already when r accepts gzip. Changes nothing, replies nothing. */
int api__read_cached(struct req *r);

#endif
