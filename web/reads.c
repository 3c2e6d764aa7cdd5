/*
 * reads.c - the scheduler's read routes (jobs, a job, its why document, the topology tree):
 * which answer a request gets by its resourceVersion (made by read_make.c), as the
 * Kubernetes API defines it for a get or a list (docs/api.md "resourceVersion"):
 *
 *   absent   the newest state: an answer made at the store's last commit, made now if
 *            there is none (it waits for the scheduler's lock)
 *   0        any state: the answer already made, whatever its age, at once and without
 *            the lock; a stale one is queued to be remade in the background
 *            (readcache.c). Only when no answer was ever made is one made now.
 *   N > 0    not older than N: an answer made at N or later, made now if there is none;
 *            N beyond the store's last commit waits up to RV_WAIT_MS for that commit,
 *            then 504 ("too large resource version", as kube-apiserver answers)
 *
 * Every answer says the state it shows in metadata.resourceVersion: the store's
 * transaction id read before it was made (so a lower bound). Answers go out gzipped when
 * the request accepts gzip (the compressed text is made once per answer), with
 * "Vary: Accept-Encoding" either way.
 */
#include <civetweb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "cached_reads.h"
#include "clock.h"
#include "http.h"

#define RV_ABSENT UINT64_MAX
#define RV_WAIT_MS 3000

/* The cache key: "path?query" with resourceVersion left out (new). */
static char *key_of(struct req *r)
{
    const char *q = r->query ? r->query : "";
    char *key = xasprintf("%s?", r->raw_path);
    size_t len = strlen(key);
    while (*q) {
        size_t n = strcspn(q, "&");
        if (strncmp(q, "resourceVersion=", 16) != 0 && n) {
            key = xrealloc(key, len + n + 2);
            if (key[len - 1] != '?')
                key[len++] = '&';
            memcpy(key + len, q, n);
            len += n;
            key[len] = '\0';
        }
        q += n + (q[n] == '&');
    }
    return key;
}

static void reply_text(struct req *r, struct api_text *t)
{
    size_t len;
    const char *body;
    if (api__accepts_gzip(r) && r->direct && !api__text_gzip_ready(t, &len)) {
        /* replaced by an answer not compressed yet since api__read_cached looked: the
         * front end's thread does not compress; civetweb's worker does */
        r->relay = 1;
    } else if (api__accepts_gzip(r)) {
        body = api__text_gzip(t, &len);
        api__reply_raw(r, 200, "application/json", body, len,
                       "Content-Encoding: gzip\r\nVary: Accept-Encoding");
    } else {
        body = api__text_data(t, &len, NULL);
        api__reply_raw(r, 200, "application/json", body, len, "Vary: Accept-Encoding");
    }
}

/* The store's last commit once it reaches rv, waiting up to RV_WAIT_MS (a follower
 * catching up with its leader); below rv when it did not. */
static uint64_t wait_for(struct api *api, uint64_t rv)
{
    uint64_t now = api__readcache_txn(api);
    for (int64_t end = clock_mono_ms() + RV_WAIT_MS; now < rv && clock_mono_ms() < end;) {
        usleep(10000);
        now = api__readcache_txn(api);
    }
    return now;
}

/* The oldest state an answer for rv may show, given the store's last commit now. */
static uint64_t min_txn(uint64_t rv, uint64_t now)
{
    return rv == RV_ABSENT ? now : rv;
}

int api__read_cached(struct req *r)
{
    char buf[64], *end = NULL;
    uint64_t rv = RV_ABSENT;

    /* a question about the past is the handler's (state.c) */
    if (r->query && (mg_get_var(r->query, strlen(r->query), "at", buf, sizeof(buf)) != -1 ||
                     mg_get_var(r->query, strlen(r->query), "seq", buf, sizeof(buf)) != -1))
        return 0;
    /* a malformed resourceVersion is answered by the handler, on civetweb's side */
    int got =
        r->query ? mg_get_var(r->query, strlen(r->query), "resourceVersion", buf, sizeof(buf)) : -1;
    if (got >= 0) {
        rv = strtoull(buf, &end, 10);
        if (!buf[0] || *end || buf[0] < '0' || buf[0] > '9' || rv > INT64_MAX)
            return 0;
    } else if (got != -1) {
        return 0;
    }
    uint64_t now = api__readcache_txn(r->api);
    if (!now || (rv != RV_ABSENT && rv > now))
        return 0; /* nothing cached, or a wait for a later commit */
    char *key = key_of(r);
    int ok = api__readcache_ready(r->api, key, min_txn(rv, now), api__accepts_gzip(r));
    free(key);
    return ok;
}

void api__read_reply(struct req *r, const struct api_read *q)
{
    struct err err = ERR_INIT;
    uint64_t rv = RV_ABSENT, now;
    json_t *body = NULL;

    if (api__query_u64_or_reply(r, "resourceVersion", &rv) < 0)
        return;
    now = api__readcache_txn(r->api);
    if (rv != RV_ABSENT && rv > now && r->direct) {
        r->relay = 1; /* waiting for a commit is for civetweb's workers */
        return;
    }
    if (rv != RV_ABSENT && rv > now && (now = wait_for(r->api, rv)) < rv) {
        err_setf(&err, ERR_TIMEOUT, "resourceVersion",
                 "too large resource version: %llu, the store's last is %llu",
                 (unsigned long long)rv, (unsigned long long)now);
        api__reply_error(r, &err);
        return;
    }
    char *key = key_of(r);
    struct api_text *t = now ? api__readcache_get(r, key, min_txn(rv, now), now) : NULL;
    if (!t && r->direct) {
        r->relay = 1; /* making the answer takes the scheduler's lock */
    } else if (!t) {
        uint64_t txn = api__readcache_txn(r->api); /* the state the answer is made from */
        if (api__read_make(r->api, q, &body, &err) < 0)
            api__reply_error(r, &err);
        else if (!(t = api__readcache_put(r, key, txn, q, body)))
            api__reply_errorf(r, ERR_INTERNAL, "the answer cannot be encoded as JSON");
    }
    if (t)
        reply_text(r, t);
    api__text_put(t);
    free(key);
}
