/* audit.c - GET /api/v1/audit (NDJSON, streamed) and GET /api/v1/audit/verify. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "internal.h"
#include "log.h"

/* Records read per read transaction: the transaction ends before each chunk is sent, so a
 * slow client never pins an old snapshot. */
#define AUDIT_BATCH 256

struct export
{
    uint64_t from, to, limit;
    int64_t since, until; /* ms, 0: open */
    char *job, *kind;
    /* per batch */
    char *buf;
    size_t len, cap;
    uint64_t scanned, next, sent;
    int more;
};

static int wanted(struct export *x, const char *json, size_t len)
{
    if (!x->since && !x->until && !x->job && !x->kind)
        return 1;
    json_t *rec = json_loadb(json, len, 0, NULL);
    int ok = rec != NULL;
    if (ok && (x->since || x->until)) {
        int64_t ts = 0;
        const char *s = json_string_value(json_object_get(rec, "ts"));
        ok = s && clock_parse_rfc3339(s, &ts, NULL) == 0 && (!x->since || ts >= x->since) &&
             (!x->until || ts <= x->until);
    }
    if (ok && x->job) {
        const char *job = json_string_value(json_object_get(rec, "job"));
        ok = job && !strcmp(job, x->job);
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
        api__query_u64_or_reply(r, "limit", &x->limit) < 0)
        return -1;
    if (x->to && x->from > x->to) {
        struct err err = ERR_INIT;
        err_setf(&err, ERR_INVALID, "from", "query parameter 'from' (%llu) is after 'to' (%llu)",
                 (unsigned long long)x->from, (unsigned long long)x->to);
        api__reply_error(r, &err);
        return -1;
    }
    return 0;
}

void api__audit_export(struct req *r)
{
    struct export x = {0};
    struct err err = ERR_INIT;

    if (params_or_reply(r, &x) < 0)
        goto out;
    x.next = x.from ? x.from : 1;
    /* the first batch is read before the header so a store error can still be a 500 */
    if (read_batch(r, &x, 1, &err) < 0) {
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
    free(x.kind);
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
    memset(&v, 0, sizeof(v));
    rc = store_txn_begin(r->api->st, STORE_READ, &txn, &err);
    if (rc == 0)
        rc = store_audit_verify(txn, from, to, &v, &err);
    store_txn_abort(&txn);
    if (rc < 0) {
        api__reply_error(r, &err);
        return;
    }
    api__reply_json(r, 200,
                    json_pack("{s:b, s:I, s:I, s:I, s:I, s:s}", "ok", v.ok, "from",
                              (json_int_t)v.from, "to", (json_int_t)v.to, "checked",
                              (json_int_t)v.checked, "firstBad", (json_int_t)v.first_bad, "reason",
                              v.reason));
}
