/*
 * schema.c - the accounting schema and its migrations. Each migration is one step of
 * SQL, applied once, in order, in a transaction with its row in muster_schema; a
 * database newer than this build is refused (docs/accounting.md "Migrations").
 */
#include <stdio.h>
#include <stdlib.h>

#include "err.h"
#include "internal.h"

struct migration {
    int version;
    const char *description;
    const char *sql;
};

static const struct migration migrations[] = {
    {1, "audit records, ship cursors, job rows and pod usage intervals",
     "CREATE TABLE muster_audit ("
     " cluster text NOT NULL, chain bigint NOT NULL, seq bigint NOT NULL,"
     " ts timestamptz NOT NULL, kind text NOT NULL, job text,"
     " hash text NOT NULL, signature text, record text NOT NULL,"
     " PRIMARY KEY (cluster, chain, seq));"
     "CREATE INDEX muster_audit_ts ON muster_audit (cluster, ts);"
     "CREATE INDEX muster_audit_job ON muster_audit (cluster, job) WHERE job IS NOT NULL;"
     "CREATE TABLE muster_ship_cursor ("
     " cluster text NOT NULL, chain bigint NOT NULL, seq bigint NOT NULL DEFAULT 0,"
     " updated_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (cluster, chain));"
     "CREATE TABLE muster_jobs ("
     " id bigserial PRIMARY KEY,"
     " cluster text NOT NULL, namespace text NOT NULL, name text NOT NULL,"
     " queue text, priority integer,"
     " submit_time timestamptz NOT NULL, first_placed timestamptz, end_time timestamptz,"
     " wait_seconds double precision,"
     " state text NOT NULL CHECK (state IN"
     "  ('pending','running','completed','preempted','cancelled')),"
     " pods integer NOT NULL DEFAULT 0,"
     " requested jsonb NOT NULL DEFAULT '{}', allocated jsonb NOT NULL DEFAULT '{}',"
     " resource_seconds jsonb NOT NULL DEFAULT '{}',"
     " preemptions_suffered integer NOT NULL DEFAULT 0,"
     " preemptions_caused integer NOT NULL DEFAULT 0,"
     " last_reason text, first_seq bigint NOT NULL, last_seq bigint NOT NULL,"
     " updated_at timestamptz NOT NULL DEFAULT now(),"
     " acct jsonb NOT NULL DEFAULT '{}');"
     "CREATE UNIQUE INDEX muster_jobs_open ON muster_jobs (cluster, namespace, name)"
     " WHERE end_time IS NULL;"
     "CREATE INDEX muster_jobs_submit ON muster_jobs (cluster, submit_time);"
     "CREATE TABLE muster_pod_usage ("
     " job_id bigint NOT NULL REFERENCES muster_jobs (id),"
     " cluster text NOT NULL, pod text NOT NULL, node text,"
     " start_time timestamptz NOT NULL, end_time timestamptz, requests jsonb NOT NULL,"
     " PRIMARY KEY (job_id, pod, start_time));"
     "CREATE INDEX muster_pod_usage_open ON muster_pod_usage (cluster, pod)"
     " WHERE end_time IS NULL;"
     "CREATE INDEX muster_pod_usage_time ON muster_pod_usage (cluster, start_time);"},
};

#define NMIGRATIONS (sizeof(migrations) / sizeof(migrations[0]))

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == SHIP_SCHEMA_VERSION,
               "SHIP_SCHEMA_VERSION is the last migration");

static int current_version(PGconn *c, int *version, struct err *err)
{
    PGresult *r = NULL;
    int rc = ship__exec(c, "reading the schema version",
                        "SELECT coalesce(max(version), 0) FROM muster_schema", 0, NULL, &r, err);
    if (rc == 0)
        *version = atoi(PQgetvalue(r, 0, 0));
    PQclear(r);
    return rc;
}

int ship__migrate(PGconn *c, int *version, struct err *err)
{
    int rc, have = 0;
    char v[16];

    /* every statement below runs in one transaction: a migration is all or nothing, and
     * the advisory lock makes a second musterd starting at once wait for the first */
    if ((rc = ship__exec(c, "migrating", "BEGIN", 0, NULL, NULL, err)) < 0 ||
        (rc = ship__exec(c, "migrating", "SELECT pg_advisory_xact_lock(7236617937152069234)", 0,
                         NULL, NULL, err)) < 0 ||
        (rc = ship__exec(c, "migrating",
                         "CREATE TABLE IF NOT EXISTS muster_schema ("
                         " version integer PRIMARY KEY, description text NOT NULL,"
                         " applied_at timestamptz NOT NULL DEFAULT now())",
                         0, NULL, NULL, err)) < 0 ||
        (rc = current_version(c, &have, err)) < 0)
        goto out;
    if (have > SHIP_SCHEMA_VERSION) {
        rc = err_set(err, ERR_STORE,
                     "accounting database: schema version %d is newer than this musterd's %d "
                     "(upgrade musterd)",
                     have, SHIP_SCHEMA_VERSION);
        goto out;
    }
    for (size_t i = 0; i < NMIGRATIONS; i++) {
        const struct migration *m = &migrations[i];
        if (m->version <= have)
            continue;
        snprintf(v, sizeof(v), "%d", m->version);
        const char *params[] = {v, m->description};
        if ((rc = ship__exec(c, m->description, m->sql, 0, NULL, NULL, err)) < 0 ||
            (rc = ship__exec(c, "migrating",
                             "INSERT INTO muster_schema (version, description) VALUES ($1, $2)", 2,
                             params, NULL, err)) < 0) {
            err_prefix(err, "migration %d", m->version);
            goto out;
        }
        have = m->version;
    }
    rc = ship__exec(c, "migrating", "COMMIT", 0, NULL, NULL, err);
out:
    if (rc < 0)
        PQclear(PQexec(c, "ROLLBACK"));
    else
        *version = have;
    return rc;
}
