/*
 * pg_support.h - a real PostgreSQL for the accounting tests (Debian's postgresql 15):
 * initdb into a fresh temporary directory, the server listening only on a unix socket in
 * that directory, started and stopped with pg_ctl. As root (CI) the cluster belongs to the
 * `postgres` system user and every server command runs as it (runuser), because initdb
 * refuses to run as root.
 *
 *     static struct pg_fx pg;
 *     int main(void) { pg_start(&pg); ...check_run...; pg_stop(&pg); pg_cleanup(&pg); }
 *     pg_db(&pg, "t1", url, sizeof(url));        a fresh database, its connection URL
 *     pg_stop(&pg); ... pg_resume(&pg);          the database gone mid-stream, and back
 *
 * Started once per suite in main(), outside the forked tests, so a failing test never
 * leaves a server behind; pg_start aborts the suite (exit 1, message on stderr) when
 * PostgreSQL cannot start: the tests fail, they never skip.
 */
#ifndef MUSTER_TESTS_PG_SUPPORT_H
#define MUSTER_TESTS_PG_SUPPORT_H

#include <stddef.h>

struct pg_fx {
    char dir[256];   /* temp dir: data/, the socket, log */
    char bin[128];   /* /usr/lib/postgresql/<v>/bin */
    int as_postgres; /* uid 0: commands run as the postgres user */
    int running;
};

/* initdb + start. Exits the process with a message when anything fails. */
void pg_start(struct pg_fx *pg);
/* pg_ctl stop -m fast (connections are cut, as when a database goes away). NULL-safe. */
void pg_stop(struct pg_fx *pg);
/* Starts the stopped server again; returns 0 or -1. */
int pg_resume(struct pg_fx *pg);
/* Stops it if running and removes the directory. */
void pg_cleanup(struct pg_fx *pg);
/* Creates database `name` (dropped first if it exists) and writes its URL into url. */
void pg_db(struct pg_fx *pg, const char *name, char *url, size_t n);
/* The URL of database `name` (not created). */
void pg_url(const struct pg_fx *pg, const char *name, char *url, size_t n);
/* Runs one SQL statement on url and returns the first column of the first row (new
 * string, "" when no rows; NULL on error). */
char *pg_value(const char *url, const char *sql);

#endif
