/* pg_support.c - see pg_support.h. */
#include "pg_support.h"

#include <dirent.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *what)
{
    fprintf(stderr,
            "pg_support: %s: PostgreSQL is needed for these tests "
            "(scripts/install-deps.sh installs it)\n",
            what);
    exit(1);
}

/* The newest /usr/lib/postgresql/<v>/bin with initdb. */
static void find_bin(struct pg_fx *pg)
{
    DIR *d = opendir("/usr/lib/postgresql");
    struct dirent *e;
    int best = 0;
    while (d && (e = readdir(d))) {
        char path[400];
        int v = atoi(e->d_name);
        snprintf(path, sizeof(path), "/usr/lib/postgresql/%s/bin/initdb", e->d_name);
        if (v > best && access(path, X_OK) == 0) {
            best = v;
            snprintf(pg->bin, sizeof(pg->bin), "/usr/lib/postgresql/%.40s/bin", e->d_name);
        }
    }
    if (d)
        closedir(d);
    if (!best)
        die("no /usr/lib/postgresql/*/bin/initdb");
}

/* Runs argv (as postgres when root), output into DIR/cmd.log; returns the exit status. */
static int run(struct pg_fx *pg, const char *const *argv)
{
    const char *full[24];
    size_t n = 0;
    if (pg->as_postgres) {
        full[n++] = "runuser";
        full[n++] = "-u";
        full[n++] = "postgres";
        full[n++] = "--";
    }
    for (size_t i = 0; argv[i] && n < 23; i++)
        full[n++] = argv[i];
    full[n] = NULL;
    pid_t pid = fork();
    if (pid == 0) {
        char log[300];
        snprintf(log, sizeof(log), "%s/cmd.log", pg->dir);
        if (!freopen(log, "a", stdout) || !freopen(log, "a", stderr))
            _exit(127);
        execvp(full[0], (char *const *)full);
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void dump_log(struct pg_fx *pg)
{
    char cmd[800];
    snprintf(cmd, sizeof(cmd), "cat '%s/cmd.log' '%s/server.log' >&2 2>/dev/null", pg->dir,
             pg->dir);
    if (system(cmd) < 0)
        return;
}

void pg_start(struct pg_fx *pg)
{
    char data[300], bin[200], opts[400];
    memset(pg, 0, sizeof(*pg));
    find_bin(pg);
    snprintf(pg->dir, sizeof(pg->dir), "/tmp/muster-pg-XXXXXX");
    if (!mkdtemp(pg->dir))
        die("mkdtemp");
    pg->as_postgres = geteuid() == 0;
    if (pg->as_postgres) {
        struct passwd *pw = getpwnam("postgres");
        if (!pw || chown(pg->dir, pw->pw_uid, pw->pw_gid) != 0)
            die("no postgres user to own the cluster (initdb refuses root)");
    }
    snprintf(data, sizeof(data), "%s/data", pg->dir);
    snprintf(bin, sizeof(bin), "%s/initdb", pg->bin);
    const char *init[] = {bin,     "-D",        data, "-U",   "postgres",   "-A",
                          "trust", "--no-sync", "-E", "UTF8", "--locale=C", NULL};
    if (run(pg, init) != 0) {
        dump_log(pg);
        die("initdb failed");
    }
    if (pg_resume(pg) != 0) {
        dump_log(pg);
        die("pg_ctl start failed");
    }
    (void)opts;
}

int pg_resume(struct pg_fx *pg)
{
    char data[300], bin[200], opts[400], log[300];
    snprintf(data, sizeof(data), "%s/data", pg->dir);
    snprintf(bin, sizeof(bin), "%s/pg_ctl", pg->bin);
    snprintf(log, sizeof(log), "%s/server.log", pg->dir);
    /* only a unix socket, in our directory; fsync off: a test database */
    snprintf(opts, sizeof(opts), "-k %s -h '' -c fsync=off -c max_connections=40", pg->dir);
    const char *start[] = {bin, "-D", data, "-l", log, "-o", opts, "-w", "-t", "60", "start", NULL};
    if (run(pg, start) != 0)
        return -1;
    pg->running = 1;
    return 0;
}

void pg_stop(struct pg_fx *pg)
{
    char data[300], bin[200];
    if (!pg || !pg->running)
        return;
    snprintf(data, sizeof(data), "%s/data", pg->dir);
    snprintf(bin, sizeof(bin), "%s/pg_ctl", pg->bin);
    const char *stop[] = {bin, "-D", data, "-m", "fast", "-w", "-t", "60", "stop", NULL};
    run(pg, stop);
    pg->running = 0;
}

void pg_cleanup(struct pg_fx *pg)
{
    char cmd[600];
    pg_stop(pg);
    if (!pg->dir[0])
        return;
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", pg->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "pg_support: cannot remove %s\n", pg->dir);
}

void pg_url(const struct pg_fx *pg, const char *name, char *url, size_t n)
{
    snprintf(url, n, "host=%s dbname=%s user=postgres", pg->dir, name);
}

void pg_db(struct pg_fx *pg, const char *name, char *url, size_t n)
{
    char admin[400], sql[200];
    pg_url(pg, "postgres", admin, sizeof(admin));
    PGconn *c = PQconnectdb(admin);
    if (PQstatus(c) != CONNECTION_OK)
        die(PQerrorMessage(c));
    snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS %s WITH (FORCE)", name);
    PQclear(PQexec(c, sql));
    snprintf(sql, sizeof(sql), "CREATE DATABASE %s", name);
    PGresult *r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        die(PQresultErrorMessage(r));
    PQclear(r);
    PQfinish(c);
    pg_url(pg, name, url, n);
}

char *pg_value(const char *url, const char *sql)
{
    PGconn *c = PQconnectdb(url);
    char *out = NULL;
    if (PQstatus(c) == CONNECTION_OK) {
        PGresult *r = PQexec(c, sql);
        if (PQresultStatus(r) == PGRES_TUPLES_OK)
            out = strdup(PQntuples(r) && !PQgetisnull(r, 0, 0) ? PQgetvalue(r, 0, 0) : "");
        else
            fprintf(stderr, "pg_value: %s: %s", sql, PQresultErrorMessage(r));
        PQclear(r);
    }
    PQfinish(c);
    return out;
}
