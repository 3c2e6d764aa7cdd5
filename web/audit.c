/* audit.c - GET /api/v1/audit (NDJSON, streamed), GET /api/v1/audit/verify and
 * POST /api/v1/audit/prune. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "audit_sig.h"
#include "cached_reads.h"
#include "clock.h"
#include "handlers.h"
#include "http.h"
#include "scheduler.h"
#include "log.h"
#include "store.h"

/* Records read per read transaction: the transaction ends before each chunk is sent, so a
 * slow client never pins an old snapshot. */
#define AUDIT_BATCH 256
/* tail=N keeps N records in memory: bounded so a request cannot ask for the whole log */
#define AUDIT_TAIL_MAX 10000
/* the longest tail the front end reads on its own thread (api__audit_small) */
#define AUDIT_TAIL_SMALL 100

struct export
{
    uint64_t from, to, limit, tail;
    int64_t since, until; /* ms, 0: open */
    char *job, *kind;
    json_t *job_pods; /* the pod keys records with "job" == job named so far */
    /* per batch */
    char *buf;
    size_t len, cap;
    uint64_t scanned, next, sent;
    int more;
};

/* 1 when v (any depth) holds a string that is the job or one of its pods. */
static int names(json_t *v, const char *job, json_t *pods)
{
    size_t i;
    const char *k;
    json_t *x;
    if (json_is_string(v))
        return !strcmp(json_string_value(v), job) ||
               json_object_get(pods, json_string_value(v)) != NULL;
    if (json_is_array(v)) {
        json_array_foreach(v, i, x) if (names(x, job, pods)) return 1;
    } else if (json_is_object(v)) {
        json_object_foreach(v, k, x) if (strcmp(k, "hash") && names(x, job, pods)) return 1;
    }
    return 0;
}

/* 1 when rec names x->job in any role (docs/api.md "GET /api/v1/audit"): as its "job", as
 * the preemptor of a victim, a job whose nominations were cleared, a blocker's job, or by
 * one of its pods (learned from the records whose "job" it is, in the order scanned). */
static int names_job(struct export *x, json_t *rec)
{
    const char *job = json_string_value(json_object_get(rec, "job"));
    if (job && !strcmp(job, x->job)) {
        size_t i;
        json_t *p, *o = json_object_get(rec, "object");
        if (!x->job_pods)
            x->job_pods = json_object();
        json_array_foreach(json_object_get(rec, "pods"), i, p) if (json_is_string(p))
            json_object_set_new(x->job_pods, json_string_value(p), json_true());
        const char *ok = json_string_value(json_object_get(o, "kind"));
        if (ok && !strcmp(ok, "Pod") && json_is_string(json_object_get(o, "name")))
            json_object_set_new(x->job_pods, json_string_value(json_object_get(o, "name")),
                                json_true());
        return 1;
    }
    return names(rec, x->job, x->job_pods);
}

static int wanted(struct export *x, const char *json, size_t len)
{
    if (!x->since && !x->until && !x->job && !x->kind)
        return 1;
    json_t *rec = json_loadb(json, len, 0, NULL);
    int ok = rec != NULL;
    /* first: a record outside the times may still teach the job's pods */
    if (ok && x->job)
        ok = names_job(x, rec);
    if (ok && (x->since || x->until)) {
        int64_t ts = 0;
        const char *s = json_string_value(json_object_get(rec, "ts"));
        ok = s && clock_parse_rfc3339(s, &ts, NULL) == 0 && (!x->since || ts >= x->since) &&
             (!x->until || ts <= x->until);
    }
    if (ok && x->kind) {
        const char *kind = json_string_value(json_object_get(rec, "kind"));
        ok = kind && !strcmp(kind, x->kind);
    }
    json_decref(rec);
    return ok;
}

static int collect(void *ctx, uint64_t seq, const char *json, size_t len)
{
    struct export *x = ctx;

    x->next = seq + 1;
    if (wanted(x, json, len)) {
        XGROW(x->buf, x->len + len + 1, x->cap);
        memcpy(x->buf + x->len, json, len);
        x->len += len;
        x->buf[x->len++] = '\n';
        x->sent++;
    }
    if ((x->limit && x->sent >= x->limit) || (x->to && seq >= x->to))
        return 1;
    if (++x->scanned >= AUDIT_BATCH) {
        x->more = 1;
        return 1;
    }
    return 0;
}

/* Reads one batch; 0 or ERR_*. */
static int read_batch(struct req *r, struct export *x, int first, struct err *err)
{
    MDB_txn *txn = NULL;
    uint64_t last = 0;
    int rc;

    x->len = x->scanned = 0;
    x->more = 0;
    rc = store_txn_begin(r->api->st, STORE_READ, &txn, err);
    if (rc == 0 && first) {
        /* the export is of the log as it was when the request arrived */
        rc = store_audit_last_seq(txn, &last, err);
        if (rc == 0 && (!x->to || x->to > last))
            x->to = last;
    }
    if (rc == 0 && x->to && x->next <= x->to)
        rc = store_audit_scan(txn, x->next, x->to, collect, x, err);
    store_txn_abort(&txn);
    return rc;
}

static int params_or_reply(struct req *r, struct export *x)
{
    if (api__query_u64_or_reply(r, "from", &x->from) < 0 ||
        api__query_u64_or_reply(r, "to", &x->to) < 0 ||
        api__query_time_or_reply(r, "since", &x->since) < 0 ||
        api__query_time_or_reply(r, "until", &x->until) < 0 ||
        api__query_str_or_reply(r, "job", &x->job) < 0 ||
        api__query_str_or_reply(r, "kind", &x->kind) < 0 ||
        api__query_u64_or_reply(r, "limit", &x->limit) < 0 ||
        api__query_u64_or_reply(r, "tail", &x->tail) < 0)
        return -1;
    if (x->tail && (x->from || x->limit || x->tail > AUDIT_TAIL_MAX)) {
        struct err err = ERR_INIT;
        err_setf(&err, ERR_INVALID, "tail",
                 x->tail > AUDIT_TAIL_MAX
                     ? "query parameter 'tail' must be at most %d"
                     : "query parameter 'tail' cannot be combined with 'from' or 'limit'",
                 AUDIT_TAIL_MAX);
        api__reply_error(r, &err);
        return -1;
    }
    enum store_audit_kind kind;
    struct err kerr = ERR_INIT;
    if (x->kind && store_audit_kind_parse(x->kind, &kind, &kerr) < 0) {
        err_prefix(&kerr, "query parameter 'kind'");
        api__reply_error(r, &kerr);
        return -1;
    }
    if (x->to && x->from > x->to) {
        struct err err = ERR_INIT;
        err_setf(&err, ERR_INVALID, "from", "query parameter 'from' (%llu) is after 'to' (%llu)",
                 (unsigned long long)x->from, (unsigned long long)x->to);
        api__reply_error(r, &err);
        return -1;
    }
    return 0;
}

static int first_seq(void *ctx, uint64_t seq, const char *json, size_t len)
{
    (void)json;
    (void)len;
    *(uint64_t *)ctx = seq;
    return 1;
}

/* 1 when x asks for records of every kind, job and time, to the end of the log. */
static int unfiltered(const struct export *x)
{
    return !x->since && !x->until && !x->job && !x->kind && !x->to;
}

/* tail=N: the newest N matching records, oldest first. The log has no reverse cursor, so
 * read windows backwards from the end, each in its own short read transaction, until N
 * records matched or the start is reached. Unfiltered, every record matches: the window
 * is the N records. */
static int read_tail(struct req *r, struct export *x, struct err *err)
{
    MDB_txn *txn = NULL;
    uint64_t last = 0, hi,
             window = unfiltered(x)               ? x->tail
                      : x->tail * 4 > AUDIT_BATCH ? x->tail * 4
                                                  : AUDIT_BATCH;
    char *acc = NULL;
    size_t acc_len = 0;
    uint64_t acc_n = 0;
    uint64_t first = 0;
    /* the front end's thread must not wait, not even for the map's growth: relay then */
    int mode = r->direct ? STORE_READ_NOWAIT : STORE_READ;
    int rc = store_txn_begin(r->api->st, mode, &txn, err);

    if (rc == 0)
        rc = store_audit_last_seq(txn, &last, err);
    /* a pruned log starts past 1: windows below its first record would find nothing */
    if (rc == 0)
        rc = store_audit_scan(txn, 1, last, first_seq, &first, err);
    store_txn_abort(&txn);
    hi = x->to && x->to < last ? x->to : last;
    while (rc == 0 && hi >= 1 && hi >= first && acc_n < x->tail) {
        uint64_t lo = hi > window ? hi - window + 1 : 1;
        x->len = x->sent = 0;
        rc = store_txn_begin(r->api->st, mode, &txn, err);
        /* collect() stops after AUDIT_BATCH records; scan the window batch by batch */
        x->next = lo;
        do {
            x->more = 0;
            x->scanned = 0;
            if (rc == 0)
                rc = store_audit_scan(txn, x->next, hi, collect, x, err);
        } while (rc == 0 && x->more && x->next <= hi);
        store_txn_abort(&txn);
        /* this window's matches go before what was collected from later windows */
        XGROW(x->buf, x->len + acc_len, x->cap);
        if (acc_len) /* memcpy from NULL is undefined even for 0 bytes */
            memcpy(x->buf + x->len, acc, acc_len);
        free(acc);
        acc = x->buf;
        acc_len = x->len + acc_len;
        acc_n += x->sent;
        x->buf = NULL;
        x->cap = 0;
        hi = lo - 1;
    }
    /* drop the oldest records beyond N */
    size_t off = 0;
    for (; acc_n > x->tail; acc_n--)
        off = (size_t)((char *)memchr(acc + off, '\n', acc_len - off) - acc) + 1;
    x->buf = acc;
    x->cap = acc_len;
    x->len = acc_len - off;
    if (x->len)
        memmove(x->buf, x->buf + off, x->len);
    x->more = 0;
    return rc;
}

/* A short tail of the whole log (tail=N, N <= AUDIT_TAIL_SMALL, no filter: what the UI
 * polls) from the read cache: read once per commit of the store, and gzipped once when a
 * request accepts gzip, then shared. The log changes only by commits, so an answer made
 * after reading the store's last commit id T shows T or later: it is the newest state for
 * every request that reads T (or earlier) as the last commit, and never served after a
 * later one. */
static void tail_small(struct req *r, struct export *x)
{
    struct err err = ERR_INIT;
    char key[64];
    size_t len;
    uint64_t txn = api__readcache_txn(r->api); /* before reading: the state is T or later */
    snprintf(key, sizeof(key), "/api/v1/audit?tail=%llu", (unsigned long long)x->tail);
    struct api_text *t = txn ? api__readcache_peek(r->api, key, txn) : NULL;
    if (!t) {
        if (read_tail(r, x, &err) < 0) {
            if (r->direct && err.code == ERR_BUSY)
                r->relay = 1; /* nothing replied yet: civetweb's worker may wait */
            else
                api__reply_error(r, &err);
            return;
        }
        t = api__readcache_put_text(r->api, key, txn, x->buf, x->len);
    }
    const char *gz = NULL;
    /* at most AUDIT_TAIL_SMALL records, compressed once per commit: cheap enough for the
     * front end's thread, which never waits for another compressing it though */
    if (api__accepts_gzip(r) &&
        !(gz = r->direct ? api__text_gzip_nowait(t, &len) : api__text_gzip(t, &len))) {
        r->relay = 1; /* nothing replied yet: civetweb's worker may wait */
    } else if (gz) {
        api__reply_raw(r, 200, "application/x-ndjson", gz, len,
                       "Content-Encoding: gzip\r\nVary: Accept-Encoding");
    } else {
        const char *body = api__text_data(t, &len, NULL);
        api__reply_raw(r, 200, "application/x-ndjson", body, len, "Vary: Accept-Encoding");
    }
    api__text_put(t);
}

void api__audit_export(struct req *r)
{
    struct export x = {0};
    struct err err = ERR_INIT;

    if (params_or_reply(r, &x) < 0)
        goto out;
    if (x.tail && x.tail <= AUDIT_TAIL_SMALL && unfiltered(&x)) {
        tail_small(r, &x);
        goto out;
    }
    x.next = x.from ? x.from : 1;
    /* the first batch is read before the header so a store error can still be a 500 */
    if ((x.tail ? read_tail(r, &x, &err) : read_batch(r, &x, 1, &err)) < 0) {
        if (r->direct && err.code == ERR_BUSY)
            r->relay = 1; /* nothing replied yet: civetweb's worker may wait */
        else
            api__reply_error(r, &err);
        goto out;
    }
    api__stream_start(r, 200, "application/x-ndjson");
    for (;;) {
        if (api__stream_chunk(r, x.buf, x.len) < 0)
            goto out; /* the client went away */
        if (!x.more)
            break;
        if (read_batch(r, &x, 0, &err) < 0) {
            /* headers are gone: all we can do is cut the stream short and say so */
            log_msg(LOG_ERROR, "audit export stopped at seq %llu: %s", (unsigned long long)x.next,
                    err.msg);
            goto out;
        }
    }
    api__stream_end(r);
out:
    free(x.buf);
    free(x.job);
    json_decref(x.job_pods);
    free(x.kind);
}

int api__audit_small(struct req *r)
{
    const char *q = r->query;
    if (!q || strncmp(q, "tail=", 5) != 0)
        return 0;
    q += 5;
    size_t n = strspn(q, "0123456789");
    /* "tail=N" and nothing else: no filter, so the newest window holds all N records */
    return n >= 1 && n <= 3 && !q[n] && atoi(q) >= 1 && atoi(q) <= AUDIT_TAIL_SMALL;
}

/* GET /api/v1/audit/replay?from=SEQ[&to=SEQ][&exact=false]: the replay check
 * (sched_replay). */
void api__audit_replay(struct req *r)
{
    struct err err = ERR_INIT;
    uint64_t from = 0, to = 0;
    json_t *out = NULL;
    char *exact = NULL;
    if (api__query_u64_or_reply(r, "from", &from) < 0 ||
        api__query_u64_or_reply(r, "to", &to) < 0 ||
        api__query_str_or_reply(r, "exact", &exact) < 0)
        return;
    int want_exact = !exact || !strcmp(exact, "true");
    if (exact && strcmp(exact, "true") && strcmp(exact, "false")) {
        err_setf(&err, ERR_INVALID, "exact",
                 "query parameter 'exact' must be true or false, not '%.64s'", exact);
        free(exact);
        api__reply_error(r, &err);
        return;
    }
    free(exact);
    if (!from) {
        err_setf(&err, ERR_INVALID, "from",
                 "query parameter 'from' is required: the record to "
                 "start from (a cycle record, or any, 1 for the first)");
        api__reply_error(r, &err);
        return;
    }
    if (sched_replay(r->api->sched, from, to, want_exact, &out, &err) < 0) {
        api__reply_error(r, &err);
        return;
    }
    api__reply_json(r, 200, out);
}

void api__audit_verify(struct req *r)
{
    struct store_audit_verdict v;
    struct err err = ERR_INIT;
    uint64_t from = 0, to = 0;
    MDB_txn *txn = NULL;
    int rc;

    if (api__query_u64_or_reply(r, "from", &from) < 0 || api__query_u64_or_reply(r, "to", &to) < 0)
        return;
    if (to && from > to) {
        err_setf(&err, ERR_INVALID, "from", "query parameter 'from' (%llu) is after 'to' (%llu)",
                 (unsigned long long)from, (unsigned long long)to);
        api__reply_error(r, &err);
        return;
    }
    struct store_ckpt w;
    int witnessed = 0;
    memset(&v, 0, sizeof(v));
    /* the witness is read before the transaction: it may be the ConfigMap's, over the network */
    if (r->api->audit_witness &&
        (witnessed = r->api->audit_witness(r->api->audit_witness_ctx, &w, &err)) < 0) {
        api__reply_error(r, &err);
        return;
    }
    rc = store_txn_begin(r->api->st, STORE_READ, &txn, &err);
    if (rc == 0)
        rc = store_audit_verify_witnessed(txn, from, to, r->api->audit_key, witnessed ? &w : NULL,
                                          &v, &err);
    store_txn_abort(&txn);
    if (rc < 0) {
        api__reply_error(r, &err);
        return;
    }
    api__reply_json(r, 200,
                    json_pack("{s:b, s:I, s:I, s:I, s:I, s:s, s:I, s:I, s:b}", "ok", v.ok, "from",
                              (json_int_t)v.from, "to", (json_int_t)v.to, "checked",
                              (json_int_t)v.checked, "firstBad", (json_int_t)v.first_bad, "reason",
                              v.reason, "checkpoints", (json_int_t)v.checkpoints, "signedTo",
                              (json_int_t)v.signed_to, "signaturesChecked",
                              r->api->audit_key != NULL));
}

void api__audit_prune(struct req *r)
{
    uint64_t before = 0, first_kept = 0, deleted = 0;
    struct err err = ERR_INIT;

    if (api__query_u64_or_reply(r, "before", &before) < 0)
        return;
    if (!before) {
        err_setf(&err, ERR_INVALID, "before",
                 "query parameter 'before' is required: the record to prune before (a positive "
                 "sequence number)");
        api__reply_error(r, &err);
        return;
    }
    if (store_audit_prune_write(r->api->st, before, r->api->audit_key, &first_kept, &deleted,
                                &err) < 0) {
        api__reply_error(r, &err);
        return;
    }
    log_msg(LOG_INFO, "audit: pruned %llu records; the log now starts at checkpoint record %llu",
            (unsigned long long)deleted, (unsigned long long)first_kept);
    api__reply_json(r, 200,
                    json_pack("{s:I, s:I}", "deleted", (json_int_t)deleted, "firstSeq",
                              (json_int_t)first_kept));
}
