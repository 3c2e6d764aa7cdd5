/*
 * names.h - closed sets of names (an X-macro table's strings): find one, list them all
 * for an error message ("unknown job state 'x' (one of Pending, Running, ...)").
 */
#ifndef MUSTER_NAMES_H
#define MUSTER_NAMES_H

#include <stddef.h>

/* Index of name in names[0..n), -1 when absent or name is NULL. */
int names_index(const char *const *names, size_t n, const char *name);
/* The names joined with ", " into buf (truncated to len). Returns buf. */
const char *names_join(const char *const *names, size_t n, char *buf, size_t len);

#endif
