/*
 * batch.c - one batch of audit records into PostgreSQL, all or nothing: the cursor row is
 * locked first, so two shippers of one chain (a replica that has not yet seen it lost the
 * lease) cannot both ship the same records; the records go in with one INSERT of arrays.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "internal.h"

int ship__cursor(PGconn *c, const char *cluster, uint64_t chain, uint64_t *seq, struct err *err)
{
    char ch[24];
    PGresult *r = NULL;
    snprintf(ch, sizeof(ch), "%" PRIu64, chain);
    const char *params[] = {cluster, ch};
    int rc = ship__exec(c, "creating the cursor",
                        "INSERT INTO muster_ship_cursor (cluster, chain) VALUES ($1, $2)"
                        " ON CONFLICT DO NOTHING",
                        2, params, NULL, err);
    if (rc == 0)
        rc = ship__exec(c, "reading the cursor",
                        "SELECT seq FROM muster_ship_cursor WHERE cluster = $1 AND chain = $2", 2,
                        params, &r, err);
    if (rc == 0)
        *seq = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    return rc;
}

/* The records in one INSERT: each column an array literal (parsed: the records parsed). */
static int insert_records(PGconn *c, const char *cluster, const char *chain,
                          const struct ship_rec *recs, json_t *const *parsed, size_t n,
                          struct err *err)
{
    struct ship_buf a[7] = {0}; /* seq, ts, kind, job, hash, signature, record */
    int rc = 0;

    for (int k = 0; k < 7; k++)
        ship__buf_add(&a[k], "{", 1);
    for (size_t i = 0; i < n; i++) {
        json_t *rec = parsed[i], *ckpt = json_object_get(rec, "checkpoint");
        char seq[24];
        snprintf(seq, sizeof(seq), "%" PRIu64, recs[i].seq);
        ship__buf_elem(&a[0], seq, i == 0);
        ship__buf_elem(&a[1], json_string_value(json_object_get(rec, "ts")), i == 0);
        ship__buf_elem(&a[2], json_string_value(json_object_get(rec, "kind")), i == 0);
        ship__buf_elem(&a[3], json_string_value(json_object_get(rec, "job")), i == 0);
        ship__buf_elem(&a[4], json_string_value(json_object_get(rec, "hash")), i == 0);
        ship__buf_elem(&a[5], json_string_value(json_object_get(ckpt, "sig")), i == 0);
        ship__buf_elem(&a[6], recs[i].json, i == 0);
    }
    for (int k = 0; k < 7; k++)
        ship__buf_add(&a[k], "}", 1);
    const char *params[] = {cluster, chain, a[0].s, a[1].s, a[2].s, a[3].s, a[4].s, a[5].s, a[6].s};
    rc = ship__exec(c, "inserting audit records",
                    "INSERT INTO muster_audit (cluster, chain, seq, ts, kind, job, hash, signature,"
                    " record) SELECT $1, $2, * FROM unnest($3::bigint[], $4::timestamptz[],"
                    " $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])"
                    " ON CONFLICT DO NOTHING",
                    9, params, NULL, err);
    for (int k = 0; k < 7; k++)
        ship__buf_free(&a[k]);
    return rc;
}

static int apply_jobs(PGconn *c, const char *cluster, const struct ship_rec *recs,
                      json_t *const *parsed, size_t n, struct err *err)
{
    struct ship_jobs *j = ship__jobs_new(c, cluster);
    int64_t ts = 0, last = 0;
    int rc = 0;

    for (size_t i = 0; rc == 0 && i < n; i++) {
        const char *t = json_string_value(json_object_get(parsed[i], "ts"));
        if (t && clock_parse_rfc3339(t, &ts, NULL) == 0)
            last = ts;
        if (json_is_object(parsed[i]))
            rc = ship__jobs_apply(j, recs[i].seq, last, parsed[i], err);
    }
    /* a living job's resource-seconds count up to the newest record shipped */
    return rc == 0 ? ship__jobs_finish(j, last, err) : (ship__jobs_finish(j, 0, NULL), rc);
}

int ship__batch(PGconn *c, const char *cluster, uint64_t chain, uint64_t expect,
                const struct ship_rec *recs, size_t n, struct err *err)
{
    char ch[24], last[24];
    PGresult *r = NULL;
    json_t **parsed = NULL;
    int rc;

    snprintf(ch, sizeof(ch), "%" PRIu64, chain);
    snprintf(last, sizeof(last), "%" PRIu64, recs[n - 1].seq);
    const char *key[] = {cluster, ch, last};
    if ((rc = ship__exec(c, "shipping", "BEGIN", 0, NULL, NULL, err)) < 0 ||
        (rc = ship__exec(c, "locking the cursor",
                         "SELECT seq FROM muster_ship_cursor WHERE cluster = $1 AND chain = $2"
                         " FOR UPDATE",
                         2, key, &r, err)) < 0)
        goto out;
    if (PQntuples(r) != 1 || strtoull(PQgetvalue(r, 0, 0), NULL, 10) != expect) {
        rc = err_set(err, ERR_CONFLICT,
                     "accounting database: the cursor of cluster '%s' chain %s moved under this "
                     "shipper (another musterd ships the same chain)",
                     cluster, ch);
        goto out;
    }
    parsed = xcalloc(n, sizeof(*parsed)); /* once, for the INSERT and the job rows */
    for (size_t i = 0; i < n; i++) {
        parsed[i] = json_loadb(recs[i].json, recs[i].len, 0, NULL);
        if (recs[i].requests && json_is_object(parsed[i])) /* for the job rows only */
            json_object_set(parsed[i], "requests", recs[i].requests);
    }
    if ((rc = insert_records(c, cluster, ch, recs, parsed, n, err)) < 0 ||
        (rc = apply_jobs(c, cluster, recs, parsed, n, err)) < 0 ||
        (rc = ship__exec(c, "moving the cursor",
                         "UPDATE muster_ship_cursor SET seq = $3, updated_at = now()"
                         " WHERE cluster = $1 AND chain = $2",
                         3, key, NULL, err)) < 0)
        goto out;
    rc = ship__exec(c, "shipping", "COMMIT", 0, NULL, NULL, err);
out:
    for (size_t i = 0; parsed && i < n; i++)
        json_decref(parsed[i]);
    free(parsed);
    PQclear(r);
    if (rc < 0 && PQstatus(c) == CONNECTION_OK)
        PQclear(PQexec(c, "ROLLBACK"));
    return rc;
}
