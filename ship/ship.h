/*
 * ship.h - accounting that outlives the store: the audit log and one row per job, shipped
 * to PostgreSQL, and the reports read back from it (docs/accounting.md has the schema and
 * how every column is computed).
 *
 * Shipping. The store stays the source of truth; a shipper thread copies it out:
 *
 *     struct ship *sh;
 *     ship_open(st, &opts, &sh, &err);     reads or creates the chain id (store meta)
 *     ship_start(sh, &err);                starts the thread; returns at once
 *     json_t *state = ship_state(sh);      any thread: how far behind (new)
 *     ship_close(sh);                      stops the thread (a batch in flight finishes
 *                                          or is rolled back) and frees
 *
 * The thread, while opts.leading says this musterd leads (NULL: always), connects (libpq),
 * applies the migrations the database lacks, then loops: read PostgreSQL's cursor of
 * (cluster, chain), read up to opts.batch audit records after it in one LMDB read
 * transaction (ended before any network call), and in one PostgreSQL transaction that
 * locks the cursor row insert them, apply them to the job rows and move the cursor. Then
 * the store's own cursor (meta "accounting.cursor") follows. A crash anywhere leaves
 * PostgreSQL's cursor equal to what it holds, so nothing is shipped twice or skipped; the
 * audit rows' key (cluster, chain, seq) refuses a duplicate besides. A database that is
 * down is retried with a back-off up to 30 s, and the backlog then ships in order. The
 * thread never takes the scheduler's lock and opens no write transaction but the small
 * one that moves the store's cursor.
 *
 * A chain is one store's audit log: replicas of one cluster each have their own, so rows
 * are keyed by (cluster, chain, seq); job rows are per cluster, whichever chain fed them.
 *
 * Reports and verification read PostgreSQL with no musterd (ship_report_*,
 * ship_db_audit_each). Connection strings are libpq's (postgresql://... or key=value).
 *
 * libpq is called only in ship/.
 */
#ifndef MUSTER_SHIP_H
#define MUSTER_SHIP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct err;
struct store;
struct ship;
typedef struct MDB_txn MDB_txn;

struct ship_options {
    const char *url;     /* libpq connection string; borrowed for ship_open only (copied) */
    const char *cluster; /* the cluster's name in every row; copied */
    size_t batch;        /* records per PostgreSQL transaction; 0: 1000 */
    /* 1 when this musterd may ship now (the leader, or no election); NULL: always.
     * Called from the shipper thread before each batch. */
    int (*leading)(void *ctx);
    void *leading_ctx;
};

/* The schema version this build applies (docs/accounting.md "Migrations"). */
#define SHIP_SCHEMA_VERSION 1

/* Checks the options (url and cluster non-empty, cluster at most 63 characters of
 * [A-Za-z0-9._-]) and reads the store's chain id, creating it on first use. Does not
 * connect. Returns 0, ERR_INVALID naming the option, or ERR_STORE. *out new. */
int ship_open(struct store *st, const struct ship_options *opts, struct ship **out,
              struct err *err);
/* Starts the shipper thread. Returns 0 or ERR_INTERNAL. */
int ship_start(struct ship *sh, struct err *err);
/* Stops the thread and frees sh. NULL-safe. */
void ship_close(struct ship *sh);
/* Where shipping stands (new): {"cluster", "chain", "connected", "leading", "schema",
 * "shippedSeq" (the cursor), "headSeq" (the store's last record), "lagRecords",
 * "lagSeconds" (age of the oldest record not shipped, 0 when none), "records" and
 * "batches" shipped by this process, "failures", "lastError" (null when the last attempt
 * worked)}. Any thread. */
json_t *ship_state(struct ship *sh);

/* The store's copy of the cursor: the last record known shipped (0: none), read in txn.
 * Audit retention prunes nothing after it (server/audit_retain.c). */
int ship_cursor_read(MDB_txn *txn, uint64_t *seq, struct err *err);

/* Checks a cluster name as ship_open does. Returns 0 or ERR_INVALID naming it. */
int ship_cluster_check(const char *cluster, struct err *err);

/* ---- reading the database (no musterd needed) ---- */

/* Calls fn with each audit record of (cluster, chain) in seq order: the record exactly as
 * the store held it. chain 0: the cluster's only chain (ERR_INVALID when it has several,
 * listing them). *chain_out (may be NULL) receives the chain read. fn returns 0 to go on.
 * Returns 0, ERR_NOT_FOUND (no records for the cluster), ERR_NETWORK. */
typedef int (*ship_record_fn)(void *ctx, uint64_t seq, const char *json, size_t len);
int ship_db_audit_each(const char *url, const char *cluster, uint64_t chain, ship_record_fn fn,
                       void *ctx, uint64_t *chain_out, struct err *err);

enum ship_usage_by { SHIP_BY_QUEUE, SHIP_BY_NAMESPACE, SHIP_BY_CLUSTER };

struct ship_query {
    int64_t since_ms, until_ms; /* the window; until 0: now */
    const char *cluster;        /* NULL: every cluster */
    const char *state;          /* jobs: final state or "running"; NULL: any */
    const char *queue;          /* NULL: any */
    const char *ns;             /* NULL: any */
    size_t limit;               /* jobs: at most this many rows; 0: no limit */
};

/* Resource-hours per group over the window, as sreport: each pod's bound interval clipped
 * to [since, until) times its requests. New: {"since","until","by","rows":[{"key",
 * "resources": {res: hours}, "share": {res: fraction of the window's total}}]}, rows by
 * key. cpu in core-hours, memory in GiB-hours, others in unit-hours. */
int ship_report_usage(const char *url, enum ship_usage_by by, const struct ship_query *q,
                      json_t **out, struct err *err);
/* Job rows (as sacct) that overlap the window, filtered; oldest submit first. New:
 * {"items":[{the columns of muster_jobs, docs/accounting.md}]}; a running job's
 * resourceSeconds count its bound pods up to now (or until). */
int ship_report_jobs(const char *url, const struct ship_query *q, json_t **out, struct err *err);
/* Wait percentiles (p50, p90, p99, max; seconds, nearest rank) of the jobs first placed
 * in the window, by queue and by job size (pods: 1, 2-7, 8-63, 64+). New:
 * {"rows":[{"queue","size","jobs","p50","p90","p99","max"}]}. */
int ship_report_waits(const char *url, const struct ship_query *q, json_t **out, struct err *err);

#endif
