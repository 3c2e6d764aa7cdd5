/*
 * names.h - closed sets of names (an X-macro table's strings): find one, list them all
 * for an error message ("unknown job state 'x' (one of Pending, Running, ...)").
 */
#ifndef MUSTER_NAMES_H
#define MUSTER_NAMES_H

#include <stddef.h>

struct err;

/* Index of name in names[0..n), -1 when absent or name is NULL. */
int names_index(const char *const *names, size_t n, const char *name);
/* The index of name, or ERR_INVALID on field with "unknown <what> 'name' (one of a, b,
 * ...)". */
int names_parse(const char *const *names, size_t n, const char *name, const char *what,
                const char *field, struct err *err);

#endif
