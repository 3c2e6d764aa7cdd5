/* pg.c - the few libpq calls every part of ship/ makes, with errors in muster's words. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "internal.h"

/* libpq's messages end with a newline and may run on; the first line says it. */
static void first_line(const char *msg, char *buf, size_t n)
{
    size_t k = strcspn(msg ? msg : "", "\n");
    snprintf(buf, n, "%.*s", (int)k, msg ? msg : "");
}

int ship__connect(const char *url, PGconn **out, struct err *err)
{
    char line[256];
    PGconn *c = PQconnectdb(url);

    *out = NULL;
    if (PQstatus(c) != CONNECTION_OK) {
        first_line(PQerrorMessage(c), line, sizeof(line));
        PQfinish(c);
        return err_set(err, ERR_NETWORK, "accounting database: %s", line);
    }
    /* reports print times in UTC; the shipper writes them as UTC literals anyway */
    PQclear(PQexec(c, "SET TIME ZONE 'UTC'"));
    *out = c;
    return 0;
}

int ship__exec(PGconn *c, const char *what, const char *sql, int n, const char *const *params,
               PGresult **res, struct err *err)
{
    char line[512];
    /* without parameters PQexec, which also runs several statements (a migration) */
    PGresult *r = n ? PQexecParams(c, sql, n, NULL, params, NULL, NULL, 0) : PQexec(c, sql);
    ExecStatusType st = PQresultStatus(r);

    if (res)
        *res = NULL;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
        if (res)
            *res = r;
        else
            PQclear(r);
        return 0;
    }
    first_line(r ? PQresultErrorMessage(r) : PQerrorMessage(c), line, sizeof(line));
    if (!line[0])
        first_line(PQerrorMessage(c), line, sizeof(line));
    PQclear(r);
    return err_set(err, PQstatus(c) == CONNECTION_OK ? ERR_STORE : ERR_NETWORK,
                   "accounting database: %s (in %s)", line, what);
}

void ship__buf_add(struct ship_buf *b, const char *s, size_t n)
{
    XGROW(b->s, b->len + n + 1, b->cap);
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

void ship__buf_addf(struct ship_buf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];

    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < (int)sizeof(small)) {
        ship__buf_add(b, small, (size_t)n);
        return;
    }
    XGROW(b->s, b->len + (size_t)n + 1, b->cap);
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void ship__buf_elem(struct ship_buf *b, const char *s, int first)
{
    if (!first)
        ship__buf_add(b, ",", 1);
    if (!s) {
        ship__buf_add(b, "NULL", 4);
        return;
    }
    ship__buf_add(b, "\"", 1);
    for (const char *p = s; *p;) {
        size_t k = strcspn(p, "\"\\");
        ship__buf_add(b, p, k);
        p += k;
        if (*p) {
            char esc[2] = {'\\', *p++};
            ship__buf_add(b, esc, 2);
        }
    }
    ship__buf_add(b, "\"", 1);
}

void ship__buf_free(struct ship_buf *b)
{
    free(b->s);
    *b = (struct ship_buf){0};
}

void ship__ts(int64_t ms, char *buf)
{
    clock_format_rfc3339_ms(ms, buf, 40);
}
