/*
 * report.c - the reports, read from PostgreSQL with no musterd: usage (sreport), jobs
 * (sacct), waits; and the audit records of a chain for `muster audit verify --from-db`.
 * Every figure is computed by one SQL statement here; the CLI only prints.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "internal.h"

/* The window as two timestamps: until 0 is now. */
static void window(const struct ship_query *q, char *since, char *until)
{
    ship__ts(q->since_ms, since);
    ship__ts(q->until_ms ? q->until_ms : clock_now_ms(), until);
}

static int query(const char *url, const char *what, const char *sql, int n,
                 const char *const *params, PGresult **r, struct err *err)
{
    PGconn *c = NULL;
    int rc = ship__connect(url, &c, err);
    if (rc == 0)
        rc = ship__exec(c, what, sql, n, params, r, err);
    PQfinish(c);
    return rc;
}

static json_t *cell(PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col))
        return json_null();
    json_t *v = json_loads(PQgetvalue(r, row, col), JSON_DECODE_ANY, NULL);
    return v ? v : json_string(PQgetvalue(r, row, col));
}

int ship_report_usage(const char *url, enum ship_usage_by by, const struct ship_query *q,
                      json_t **out, struct err *err)
{
    static const char *const keys[] = {"j.queue", "j.namespace", "u.cluster"};
    static const char *const names[] = {"queue", "namespace", "cluster"};
    char since[40], until[40], *sql;
    PGresult *r = NULL;

    window(q, since, until);
    const char *params[] = {since, until, q->cluster};
    /* each pod's bound interval clipped to the window, times its requests, per resource;
     * memory in GiB, the rest as counted (cpu in cores) */
    sql = xasprintf(
        "WITH u AS ("
        " SELECT coalesce(%s, '') AS key, r.key AS res,"
        "  sum((r.value)::double precision *"
        "   extract(epoch FROM least(coalesce(u.end_time, $2::timestamptz), $2::timestamptz)"
        "    - greatest(u.start_time, $1::timestamptz)))"
        "   / 3600.0 / CASE WHEN r.key = 'memory' THEN 1073741824.0 ELSE 1 END AS hours"
        " FROM muster_pod_usage u JOIN muster_jobs j ON j.id = u.job_id,"
        "  jsonb_each(u.requests) r"
        " WHERE u.start_time < $2::timestamptz"
        "  AND coalesce(u.end_time, $2::timestamptz) > $1::timestamptz"
        "  AND ($3::text IS NULL OR u.cluster = $3)"
        " GROUP BY 1, 2)"
        " SELECT key, res, hours, hours / nullif(sum(hours) OVER (PARTITION BY res), 0)"
        " FROM u ORDER BY key, res",
        keys[by]);
    int rc = query(url, "the usage report", sql, 3, params, &r, err);
    free(sql);
    if (rc < 0)
        return rc;
    json_t *rows = json_array(), *row = NULL;
    const char *last = NULL;
    for (int i = 0; i < PQntuples(r); i++) {
        const char *key = PQgetvalue(r, i, 0);
        if (!last || strcmp(last, key)) {
            row = json_pack("{s:s,s:o,s:o}", "key", key, "resources", json_object(), "share",
                            json_object());
            json_array_append_new(rows, row);
            last = key;
        }
        const char *res = PQgetvalue(r, i, 1);
        json_object_set_new(json_object_get(row, "resources"), res,
                            json_real(strtod(PQgetvalue(r, i, 2), NULL)));
        json_object_set_new(json_object_get(row, "share"), res,
                            PQgetisnull(r, i, 3) ? json_real(0)
                                                 : json_real(strtod(PQgetvalue(r, i, 3), NULL)));
    }
    PQclear(r);
    *out = json_pack("{s:s,s:s,s:s,s:o}", "since", since, "until", until, "by", names[by], "rows",
                     rows);
    return 0;
}

int ship_report_jobs(const char *url, const struct ship_query *q, json_t **out, struct err *err)
{
    char since[40], until[40], limit[24];
    PGresult *r = NULL;
    static const char *const cols[] = {"cluster",
                                       "namespace",
                                       "name",
                                       "queue",
                                       "priority",
                                       "submit",
                                       "firstPlaced",
                                       "end",
                                       "waitSeconds",
                                       "state",
                                       "pods",
                                       "requested",
                                       "allocated",
                                       "resourceSeconds",
                                       "preemptionsSuffered",
                                       "preemptionsCaused",
                                       "lastReason"};

    window(q, since, until);
    snprintf(limit, sizeof(limit), "%zu", q->limit);
    const char *params[] = {
        since, until, q->cluster, q->state, q->queue, q->ns, q->limit ? limit : NULL};
    int rc = query(url, "the jobs report",
                   "SELECT cluster, namespace, name, queue, priority,"
                   " to_char(submit_time, 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),"
                   " to_char(first_placed, 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),"
                   " to_char(end_time, 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),"
                   " wait_seconds, state, pods, requested, allocated,"
                   /* a running job's bound pods count up to now (or --until), not only up to the
                    * last record that named it */
                   " CASE WHEN end_time IS NOT NULL THEN resource_seconds ELSE (SELECT"
                   "  coalesce(jsonb_object_agg(k, v), '{}') FROM (SELECT r.key AS k,"
                   "  round(sum(r.value::numeric * extract(epoch FROM coalesce(u.end_time,"
                   "   least(now(), $2::timestamptz)) - u.start_time)), 3) AS v"
                   "  FROM muster_pod_usage u, jsonb_each(u.requests) r WHERE u.job_id = j.id"
                   "  GROUP BY r.key) s) END,"
                   " preemptions_suffered, preemptions_caused, last_reason"
                   " FROM muster_jobs j"
                   " WHERE submit_time < $2::timestamptz"
                   "  AND coalesce(end_time, $2::timestamptz) >= $1::timestamptz"
                   "  AND ($3::text IS NULL OR cluster = $3) AND ($4::text IS NULL OR state = $4)"
                   "  AND ($5::text IS NULL OR queue = $5) AND ($6::text IS NULL OR namespace = $6)"
                   " ORDER BY submit_time, cluster, namespace, name, id LIMIT $7::bigint",
                   7, params, &r, err);
    if (rc < 0)
        return rc;
    json_t *items = json_array();
    for (int i = 0; i < PQntuples(r); i++) {
        json_t *o = json_object();
        for (int k = 0; k < (int)(sizeof(cols) / sizeof(cols[0])); k++) {
            int text = k <= 3 || (k >= 5 && k <= 7) || k == 9 || k == 16;
            json_object_set_new(o, cols[k],
                                PQgetisnull(r, i, k) ? json_null()
                                : text               ? json_string(PQgetvalue(r, i, k))
                                                     : cell(r, i, k));
        }
        json_array_append_new(items, o);
    }
    PQclear(r);
    *out = json_pack("{s:o}", "items", items);
    return 0;
}

int ship_report_waits(const char *url, const struct ship_query *q, json_t **out, struct err *err)
{
    char since[40], until[40];
    PGresult *r = NULL;

    window(q, since, until);
    const char *params[] = {since, until, q->cluster, q->queue};
    /* nearest rank: percentile_disc */
    int rc = query(url, "the waits report",
                   "SELECT coalesce(queue, ''), CASE WHEN pods <= 1 THEN '1'"
                   " WHEN pods < 8 THEN '2-7' WHEN pods < 64 THEN '8-63' ELSE '64+' END AS size,"
                   " count(*),"
                   " percentile_disc(0.5) WITHIN GROUP (ORDER BY wait_seconds),"
                   " percentile_disc(0.9) WITHIN GROUP (ORDER BY wait_seconds),"
                   " percentile_disc(0.99) WITHIN GROUP (ORDER BY wait_seconds),"
                   " max(wait_seconds), min(pods)"
                   " FROM muster_jobs WHERE first_placed >= $1::timestamptz"
                   "  AND first_placed < $2::timestamptz"
                   "  AND ($3::text IS NULL OR cluster = $3) AND ($4::text IS NULL OR queue = $4)"
                   " GROUP BY 1, 2 ORDER BY 1, min(pods)",
                   4, params, &r, err);
    if (rc < 0)
        return rc;
    json_t *rows = json_array();
    for (int i = 0; i < PQntuples(r); i++)
        json_array_append_new(rows,
                              json_pack("{s:s,s:s,s:I,s:f,s:f,s:f,s:f}", "queue",
                                        PQgetvalue(r, i, 0), "size", PQgetvalue(r, i, 1), "jobs",
                                        (json_int_t)strtoll(PQgetvalue(r, i, 2), NULL, 10), "p50",
                                        strtod(PQgetvalue(r, i, 3), NULL), "p90",
                                        strtod(PQgetvalue(r, i, 4), NULL), "p99",
                                        strtod(PQgetvalue(r, i, 5), NULL), "max",
                                        strtod(PQgetvalue(r, i, 6), NULL)));
    PQclear(r);
    *out = json_pack("{s:s,s:s,s:o}", "since", since, "until", until, "rows", rows);
    return 0;
}

/* The cluster's chains; ERR_INVALID listing them when there are several and none was named. */
static int pick_chain(PGconn *c, const char *cluster, uint64_t *chain, struct err *err)
{
    PGresult *r = NULL;
    const char *params[] = {cluster};
    int rc = ship__exec(c, "listing chains",
                        "SELECT DISTINCT chain FROM muster_audit WHERE cluster = $1 ORDER BY 1", 1,
                        params, &r, err);
    if (rc < 0)
        return rc;
    if (PQntuples(r) == 0)
        rc = err_set(err, ERR_NOT_FOUND,
                     "accounting database holds no audit records of cluster '%s'", cluster);
    else if (PQntuples(r) > 1) {
        struct ship_buf b = {0};
        for (int i = 0; i < PQntuples(r); i++)
            ship__buf_addf(&b, "%s%s", i ? ", " : "", PQgetvalue(r, i, 0));
        rc = err_set(err, ERR_INVALID,
                     "cluster '%s' has %d audit chains (one per store: %s): name one with --chain",
                     cluster, PQntuples(r), b.s);
        ship__buf_free(&b);
    } else {
        *chain = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
    }
    PQclear(r);
    return rc;
}

int ship_db_audit_each(const char *url, const char *cluster, uint64_t chain, ship_record_fn fn,
                       void *ctx, uint64_t *chain_out, struct err *err)
{
    PGconn *c = NULL;
    PGresult *r = NULL;
    char ch[24], from[24];
    uint64_t next = 0;
    int rc = ship__connect(url, &c, err);

    if (rc == 0 && !chain)
        rc = pick_chain(c, cluster, &chain, err);
    if (chain_out)
        *chain_out = chain;
    snprintf(ch, sizeof(ch), "%" PRIu64, chain);
    /* pages of 10,000 in seq order, so a long log is never held whole */
    for (int done = 0; rc == 0 && !done;) {
        snprintf(from, sizeof(from), "%" PRIu64, next);
        const char *params[] = {cluster, ch, from};
        rc = ship__exec(c, "reading audit records",
                        "SELECT seq, record FROM muster_audit WHERE cluster = $1 AND chain = $2"
                        " AND seq > $3 ORDER BY seq LIMIT 10000",
                        3, params, &r, err);
        if (rc < 0)
            break;
        done = PQntuples(r) < 10000;
        for (int i = 0; i < PQntuples(r) && !rc; i++) {
            next = strtoull(PQgetvalue(r, i, 0), NULL, 10);
            if (fn(ctx, next, PQgetvalue(r, i, 1), (size_t)PQgetlength(r, i, 1)))
                done = 1;
        }
        PQclear(r);
        r = NULL;
    }
    PQfinish(c);
    return rc;
}
