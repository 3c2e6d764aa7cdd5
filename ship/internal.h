/*
 * internal.h - ship/'s folder-internal parts: libpq helpers (pg.c), the schema and its
 * migrations (schema.c), the job rows' accounting (jobs.c) and one batch's transaction
 * (batch.c). Everything here runs on one connection in one thread at a time.
 */
#ifndef MUSTER_SHIP_INTERNAL_H
#define MUSTER_SHIP_INTERNAL_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "ship.h"

struct err;

/* ---- pg.c ---- */

/* Connects. Returns 0 or ERR_NETWORK ("accounting database: <libpq's first line>"). */
int ship__connect(const char *url, PGconn **out, struct err *err);
/* Runs sql with text parameters (NULL entries are SQL NULL). *res (may be NULL: cleared)
 * receives the result (PQclear). Returns 0, ERR_NETWORK when the connection is gone, or
 * ERR_STORE with the server's message ("accounting database: <message> (in <what>)"). */
int ship__exec(PGconn *c, const char *what, const char *sql, int n, const char *const *params,
               PGresult **res, struct err *err);
/* A growing text buffer. */
struct ship_buf {
    char *s;
    size_t len, cap;
};
void ship__buf_add(struct ship_buf *b, const char *s, size_t n);
void ship__buf_addf(struct ship_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends one element of a PostgreSQL array literal ("{...}"): s quoted and escaped, or
 * NULL; a comma first unless it is the first element. */
void ship__buf_elem(struct ship_buf *b, const char *s, int first);
void ship__buf_free(struct ship_buf *b);
/* "2026-11-27T17:14:35.794Z" for ms since the epoch, into buf (40 bytes). */
void ship__ts(int64_t ms, char *buf);

/* ---- schema.c ---- */

/* Applies the migrations the database lacks, under an advisory lock (several musterds may
 * start at once). *version receives the schema's version after. */
int ship__migrate(PGconn *c, int *version, struct err *err);

/* ---- jobs.c: job rows from audit records, inside the batch's transaction ---- */

struct ship_jobs;
/* A job row set for one batch of one cluster; rows are loaded (FOR UPDATE) on first use. */
struct ship_jobs *ship__jobs_new(PGconn *c, const char *cluster);
/* Applies one audit record (borrowed, parsed) with its seq and time. Returns 0, or ERR_* of
 * a statement (the caller rolls the batch back). */
int ship__jobs_apply(struct ship_jobs *j, uint64_t seq, int64_t ts_ms, json_t *rec,
                     struct err *err);
/* Writes every changed row (resource-seconds of bound pods counted up to now_ms) and frees
 * j. NULL-safe; with err NULL only frees. */
int ship__jobs_finish(struct ship_jobs *j, int64_t now_ms, struct err *err);

/* ---- batch.c ---- */

struct ship_rec {
    uint64_t seq;
    char *json; /* the stored canonical record */
    size_t len;
    /* a "placed" record: each placed pod's effective requests as the store holds the pod
     * when the batch is read ({pod: {res: value}}, cpu in thousandths), else NULL */
    json_t *requests;
};

/* In one transaction: locks (cluster, chain)'s cursor row, which must still be `expect`
 * (ERR_CONFLICT otherwise: another shipper moved it; nothing written), inserts the
 * records, applies them to the job rows and moves the cursor to the last one. */
int ship__batch(PGconn *c, const char *cluster, uint64_t chain, uint64_t expect,
                const struct ship_rec *recs, size_t n, struct err *err);
/* The cursor of (cluster, chain), created at 0 when missing. */
int ship__cursor(PGconn *c, const char *cluster, uint64_t chain, uint64_t *seq, struct err *err);

#endif
