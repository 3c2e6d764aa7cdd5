/*
 * strpool.h - strings copied into one growing buffer and named by their offset, which stays
 * valid as the buffer grows. For what a reader copies out from under a lock to format after
 * it (the jobs list, the nodes' usage): a copy is a memcpy, not an allocation per string.
 *
 *     struct strpool p = {0};
 *     size_t at = strpool_add(&p, name);      NULL gives STRPOOL_NONE
 *     const char *s = strpool_get(&p, at);    NULL for STRPOOL_NONE
 *     strpool_release(&p);
 */
#ifndef MUSTER_STRPOOL_H
#define MUSTER_STRPOOL_H

#include <stddef.h>
#include <stdint.h>

#define STRPOOL_NONE SIZE_MAX

struct strpool {
    char *buf;
    size_t len, cap;
};

/* Copies s (NUL included) into p; its offset, or STRPOOL_NONE when s is NULL. */
size_t strpool_add(struct strpool *p, const char *s);

/* The string at offset at (borrowed until the next strpool_add), or NULL for STRPOOL_NONE. */
static inline const char *strpool_get(const struct strpool *p, size_t at)
{
    return at == STRPOOL_NONE ? NULL : p->buf + at;
}

void strpool_release(struct strpool *p);

#endif
