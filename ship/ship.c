/*
 * ship.c - the shipper thread (ship.h): connect, migrate, then batches from the cursor,
 * with a back-off while the database is away. The cursor PostgreSQL holds is the one that
 * counts; the store's copy ("accounting.cursor") follows it after each batch, for the lag
 * reported when the database cannot be asked.
 */
#include <inttypes.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <time.h>

#include "alloc.h"
#include "audit_sig.h"
#include "clock.h"
#include "err.h"
#include "internal.h"
#include "log.h"
#include "model_pod.h"
#include "store.h"
#include "thread.h"

#define META_CHAIN "accounting.chain"
#define META_CURSOR "accounting.cursor"
#define IDLE_MS 200
#define BACKOFF_MAX_MS 30000

struct ship {
    struct store *st;
    char *url, *cluster;
    size_t batch;
    int (*leading)(void *ctx);
    void *leading_ctx;
    uint64_t chain;
    thrd_t thread;
    int started;
    mtx_t mu; /* guards what follows */
    cnd_t cv;
    int stop;
    int connected, is_leading, schema;
    uint64_t cursor; /* what PostgreSQL holds, as last seen */
    uint64_t records, batches, failures;
    char last_error[1024]; /* "" when the last attempt worked */
};

int ship_cluster_check(const char *cluster, struct err *err)
{
    size_t n = cluster ? strlen(cluster) : 0;
    if (!n || n > 63 ||
        strspn(cluster, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                        "0123456789._-") != n)
        return err_setf(err, ERR_INVALID, "accounting.cluster",
                        "accounting cluster '%s' must be 1 to 63 letters, digits, '.', '_' or '-'",
                        cluster ? cluster : "");
    return 0;
}

struct chain_ctx {
    uint64_t chain;
};

static int chain_get_or_make(MDB_txn *txn, void *arg, struct err *err)
{
    struct chain_ctx *c = arg;
    int rc = store_meta_get_u64(txn, META_CHAIN, &c->chain, err);
    if (rc < 0 || c->chain)
        return rc;
    /* 63 random bits: a bigint column, never 0 */
    if (RAND_bytes((unsigned char *)&c->chain, sizeof(c->chain)) != 1)
        return err_set(err, ERR_INTERNAL, "cannot draw a random accounting chain id");
    c->chain = (c->chain >> 1) | 1;
    return store_meta_put_u64(txn, META_CHAIN, c->chain, err);
}

int ship_open(struct store *st, const struct ship_options *o, struct ship **out, struct err *err)
{
    struct chain_ctx cc = {0};
    int rc;

    *out = NULL;
    if (!o->url || !o->url[0])
        return err_setf(err, ERR_INVALID, "accounting.url",
                        "accounting needs a url (postgresql://...)");
    if ((rc = ship_cluster_check(o->cluster, err)) < 0 ||
        (rc = store_write(st, chain_get_or_make, &cc, err)) < 0)
        return rc;
    struct ship *sh = xcalloc(1, sizeof(*sh));
    sh->st = st;
    sh->url = xstrdup(o->url);
    sh->cluster = xstrdup(o->cluster);
    sh->batch = o->batch ? o->batch : 1000;
    sh->leading = o->leading;
    sh->leading_ctx = o->leading_ctx;
    sh->chain = cc.chain;
    sh->is_leading = 1;
    mtx_init(&sh->mu, mtx_plain);
    cnd_init(&sh->cv);
    *out = sh;
    return 0;
}

/* Waits ms or until stopped; returns 1 when stopped. */
static int nap(struct ship *sh, int64_t ms)
{
    struct timespec until;
    timespec_get(&until, TIME_UTC);
    until.tv_sec += (time_t)(ms / 1000);
    until.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    mtx_lock(&sh->mu);
    while (!sh->stop && cnd_timedwait(&sh->cv, &sh->mu, &until) == thrd_success)
        ;
    int stop = sh->stop;
    mtx_unlock(&sh->mu);
    return stop;
}

static void set_error(struct ship *sh, const struct err *err)
{
    mtx_lock(&sh->mu);
    if (strcmp(sh->last_error, err->msg))
        log_warn("accounting: %s", err->msg);
    snprintf(sh->last_error, sizeof(sh->last_error), "%s", err->msg);
    sh->failures++;
    mtx_unlock(&sh->mu);
}

struct read_ctx {
    struct ship_rec *recs;
    size_t n, max;
};

static int read_one(void *arg, uint64_t seq, const char *json, size_t len)
{
    struct read_ctx *r = arg;
    r->recs[r->n++] = (struct ship_rec){seq, xstrndup(json, len), len, NULL};
    return r->n >= r->max; /* 1 stops the scan */
}

/* A placed record's pods' requests, read in the batch's transaction: the scheduler's
 * effective requests (model_pod_decode), so the job rows count what the placement held.
 * A pod already gone from the store has none (docs/accounting.md says what that costs). */
static void placed_requests(MDB_txn *txn, struct ship_rec *rec)
{
    if (!strstr(rec->json, "\"kind\":\"placed\""))
        return;
    json_t *doc = json_loadb(rec->json, rec->len, 0, NULL), *p;
    size_t i;
    rec->requests = json_object();
    json_array_foreach(json_object_get(doc, "pods"), i, p)
    {
        json_t *pod = NULL, *one = json_object();
        struct model_pod mp;
        if (json_is_string(p) && store_get(txn, MODEL_POD, json_string_value(p), &pod, NULL) == 0 &&
            model_pod_decode(pod, &mp, NULL) == 0) {
            for (size_t k = 0; k < mp.nrequests; k++)
                json_object_set_new(one, mp.requests[k].name,
                                    json_integer((json_int_t)mp.requests[k].value));
            model_pod_release(&mp);
        }
        json_decref(pod);
        if (json_is_string(p))
            json_object_set_new(rec->requests, json_string_value(p), one);
        else
            json_decref(one);
    }
    json_decref(doc);
}

/* Up to sh->batch records after `after`, copied out of one read transaction that ends
 * before anything is sent. *skipped: the first record kept by a prune when the records
 * after `after` are gone (they can no longer be shipped). */
static int read_batch(struct ship *sh, uint64_t after, struct read_ctx *r, struct err *err)
{
    MDB_txn *txn = NULL;
    uint64_t first = 0;
    int rc = store_txn_begin(sh->st, STORE_READ, &txn, err);
    if (rc == 0)
        rc = store_audit_first_seq(txn, &first, err);
    if (rc == 0 && after + 1 < first) {
        log_warn("accounting: records %" PRIu64 "..%" PRIu64
                 " were pruned before they were shipped; the copy starts again at %" PRIu64,
                 after + 1, first - 1, first);
        after = first - 1;
    }
    if (rc == 0)
        rc = store_audit_scan(txn, after + 1, 0, read_one, r, err);
    for (size_t i = 0; rc >= 0 && i < r->n; i++)
        placed_requests(txn, &r->recs[i]);
    store_txn_abort(&txn);
    return rc < 0 ? rc : 0;
}

static void free_batch(struct read_ctx *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->recs[i].json);
        json_decref(r->recs[i].requests);
    }
    r->n = 0;
}

int ship_cursor_read(MDB_txn *txn, uint64_t *seq, struct err *err)
{
    return store_meta_get_u64(txn, META_CURSOR, seq, err);
}

struct cursor_ctx {
    uint64_t seq;
};

static int put_cursor(MDB_txn *txn, void *arg, struct err *err)
{
    return store_meta_put_u64(txn, META_CURSOR, ((struct cursor_ctx *)arg)->seq, err);
}

static int is_leading(struct ship *sh)
{
    int lead = !sh->leading || sh->leading(sh->leading_ctx);
    mtx_lock(&sh->mu);
    sh->is_leading = lead;
    mtx_unlock(&sh->mu);
    return lead;
}

/* Connected and migrated: ships until the database fails, stop, or leadership ends.
 * Returns 0 when stopped or no longer leading, else the error. */
static int ship_loop(struct ship *sh, PGconn *c, struct err *err)
{
    struct read_ctx r = {.recs = xcalloc(sh->batch, sizeof(struct ship_rec)), .max = sh->batch};
    uint64_t cursor = 0, stored = 0, head = 0;
    MDB_txn *txn = NULL;
    int rc = ship__cursor(c, sh->cluster, sh->chain, &cursor, err);

    /* a database ahead of the store: the store was restored from an older copy, and new
     * records would reuse sequence numbers the database already holds */
    if (rc == 0 && (rc = store_txn_begin(sh->st, STORE_READ, &txn, err)) == 0) {
        rc = store_audit_last_seq(txn, &head, err);
        store_txn_abort(&txn);
    }
    if (rc == 0 && cursor > head)
        rc = err_set(err, ERR_CONFLICT,
                     "accounting database: cluster '%s' chain %" PRIu64 " is shipped up to "
                     "record %" PRIu64 " but this store ends at %" PRIu64
                     " (restored from an older copy?): nothing is shipped",
                     sh->cluster, sh->chain, cursor, head);

    while (rc == 0 && is_leading(sh)) {
        mtx_lock(&sh->mu);
        sh->cursor = cursor;
        sh->last_error[0] = '\0';
        int stop = sh->stop;
        mtx_unlock(&sh->mu);
        if (stop)
            break;
        if (stored != cursor) {
            struct cursor_ctx cc = {cursor};
            if ((rc = store_write(sh->st, put_cursor, &cc, err)) < 0)
                break;
            stored = cursor;
        }
        if ((rc = read_batch(sh, cursor, &r, err)) < 0)
            break;
        if (r.n == 0) {
            if (nap(sh, IDLE_MS))
                break;
            continue;
        }
        rc = ship__batch(c, sh->cluster, sh->chain, cursor, r.recs, r.n, err);
        if (rc == ERR_CONFLICT) /* another shipper: start again from what the database holds */
            rc = ship__cursor(c, sh->cluster, sh->chain, &cursor, err);
        else if (rc == 0) {
            mtx_lock(&sh->mu);
            sh->records += r.n;
            sh->batches++;
            mtx_unlock(&sh->mu);
            cursor = r.recs[r.n - 1].seq;
        }
        free_batch(&r);
    }
    free_batch(&r);
    free(r.recs);
    return rc;
}

static int ship_main(void *arg)
{
    struct ship *sh = arg;
    int64_t backoff = 250;
    struct err err = ERR_INIT;

    thread_background("musterd-ship");
    for (;;) {
        PGconn *c = NULL;
        int version = 0, rc;
        err = (struct err)ERR_INIT;
        if (!is_leading(sh)) {
            if (nap(sh, 1000))
                break;
            continue;
        }
        const char *keys[] = {"connect_timeout", "dbname", NULL};
        const char *vals[] = {"10", sh->url, NULL};
        c = PQconnectdbParams(keys, vals, 1);
        if (PQstatus(c) != CONNECTION_OK) {
            char line[400];
            snprintf(line, sizeof(line), "%s", PQerrorMessage(c));
            line[strcspn(line, "\n")] = '\0';
            rc = err_set(&err, ERR_NETWORK, "accounting database: %s", line);
        } else {
            PQclear(PQexec(c, "SET TIME ZONE 'UTC'"));
            rc = ship__migrate(c, &version, &err);
        }
        if (rc == 0) {
            mtx_lock(&sh->mu);
            sh->connected = 1;
            sh->schema = version;
            mtx_unlock(&sh->mu);
            backoff = 250;
            rc = ship_loop(sh, c, &err);
        }
        PQfinish(c);
        mtx_lock(&sh->mu);
        sh->connected = 0;
        mtx_unlock(&sh->mu);
        if (rc < 0) {
            set_error(sh, &err);
            if (nap(sh, backoff))
                break;
            backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
        } else if (nap(sh, 0)) {
            break;
        }
    }
    return 0;
}

int ship_start(struct ship *sh, struct err *err)
{
    if (thrd_create(&sh->thread, ship_main, sh) != thrd_success)
        return err_set(err, ERR_INTERNAL, "cannot start the accounting thread");
    sh->started = 1;
    log_info("accounting: shipping cluster '%s' (chain %" PRIu64 ")", sh->cluster, sh->chain);
    return 0;
}

void ship_close(struct ship *sh)
{
    if (!sh)
        return;
    if (sh->started) {
        mtx_lock(&sh->mu);
        sh->stop = 1;
        cnd_broadcast(&sh->cv);
        mtx_unlock(&sh->mu);
        thrd_join(sh->thread, NULL);
    }
    cnd_destroy(&sh->cv);
    mtx_destroy(&sh->mu);
    free(sh->url);
    free(sh->cluster);
    free(sh);
}

struct first_ts {
    int64_t ms;
};

static int first_ts(void *arg, uint64_t seq, const char *json, size_t len)
{
    json_t *rec = json_loadb(json, len, 0, NULL);
    clock_parse_rfc3339(json_string_value(json_object_get(rec, "ts")),
                        &((struct first_ts *)arg)->ms, NULL);
    json_decref(rec);
    return 1;
}

json_t *ship_state(struct ship *sh)
{
    MDB_txn *txn = NULL;
    uint64_t head = 0, stored = 0, cursor;
    struct first_ts oldest = {0};

    mtx_lock(&sh->mu);
    json_t *doc =
        json_pack("{s:s,s:I,s:b,s:b,s:i,s:I,s:I,s:I,s:s?}", "cluster", sh->cluster, "chain",
                  (json_int_t)sh->chain, "connected", sh->connected, "leading", sh->is_leading,
                  "schema", sh->schema, "records", (json_int_t)sh->records, "batches",
                  (json_int_t)sh->batches, "failures", (json_int_t)sh->failures, "lastError",
                  sh->last_error[0] ? sh->last_error : NULL);
    cursor = sh->cursor;
    mtx_unlock(&sh->mu);
    if (!json_object_get(doc, "lastError"))
        json_object_set_new(doc, "lastError", json_null());
    /* NOWAIT: a health probe never waits for the map to grow */
    if (store_txn_begin(sh->st, STORE_READ_NOWAIT, &txn, NULL) == 0) {
        store_audit_last_seq(txn, &head, NULL);
        store_meta_get_u64(txn, META_CURSOR, &stored, NULL);
        if (stored > cursor)
            cursor = stored; /* before the thread first reached the database */
        if (head > cursor)
            store_audit_scan(txn, cursor + 1, cursor + 1, first_ts, &oldest, NULL);
        store_txn_abort(&txn);
    }
    double lag_s = oldest.ms ? (double)(clock_now_ms() - oldest.ms) / 1000.0 : 0.0;
    json_object_set_new(doc, "shippedSeq", json_integer((json_int_t)cursor));
    json_object_set_new(doc, "headSeq", json_integer((json_int_t)head));
    json_object_set_new(doc, "lagRecords",
                        json_integer((json_int_t)(head > cursor ? head - cursor : 0)));
    json_object_set_new(doc, "lagSeconds", json_real(lag_s < 0 ? 0 : lag_s));
    return doc;
}
