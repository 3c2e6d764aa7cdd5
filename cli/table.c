/*
 * table.c - kubectl-like tables and ages.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cli.h"

struct cli_table {
    size_t ncols;
    char **cells; /* row-major; row 0 is the header */
    size_t nrows, cap;
};

void cli_format_age(int64_t age_ms, char *buf, size_t n)
{
    if (age_ms < 0) {
        snprintf(buf, n, "<unknown>");
        return;
    }
    int64_t s = age_ms / 1000;
    if (s < 60)
        snprintf(buf, n, "%llds", (long long)s);
    else if (s < 3600)
        snprintf(buf, n, "%lldm", (long long)(s / 60));
    else if (s < 86400)
        snprintf(buf, n, "%lldh", (long long)(s / 3600));
    else if (s < 365 * 86400LL)
        snprintf(buf, n, "%lldd", (long long)(s / 86400));
    else
        snprintf(buf, n, "%lldy", (long long)(s / (365 * 86400LL)));
}

static void add_cells(struct cli_table *t, const char *const *cells, int upper)
{
    size_t need = (t->nrows + 1) * t->ncols;
    XGROW(t->cells, need, t->cap);
    for (size_t i = 0; i < t->ncols; i++) {
        char *c = xstrdup(cells[i] ? cells[i] : "<none>");
        for (char *p = c; upper && *p; p++)
            *p = (char)toupper((unsigned char)*p);
        t->cells[t->nrows * t->ncols + i] = c;
    }
    t->nrows++;
}

struct cli_table *cli_table_new(size_t ncols, const char *const *headers)
{
    struct cli_table *t = xcalloc(1, sizeof(*t));
    t->ncols = ncols;
    add_cells(t, headers, 1);
    return t;
}

void cli_table_add(struct cli_table *t, const char *const *cells)
{
    add_cells(t, cells, 0);
}

void cli_table_print(struct cli_table *t, FILE *out)
{
    size_t *width = xcalloc(t->ncols, sizeof(*width));
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            size_t w = strlen(t->cells[r * t->ncols + c]);
            if (w > width[c])
                width[c] = w;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const char *cell = t->cells[r * t->ncols + c];
            if (c + 1 == t->ncols)
                fprintf(out, "%s\n", cell);
            else
                fprintf(out, "%-*s   ", (int)width[c], cell);
        }
    }
    free(width);
}

void cli_table_free(struct cli_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    free(t);
}
