/*
 * strpool.c - strings by offset in one buffer (strpool.h).
 */
#include "strpool.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

size_t strpool_add(struct strpool *p, const char *s)
{
    if (!s)
        return STRPOOL_NONE;
    size_t n = strlen(s) + 1, at = p->len;
    XGROW(p->buf, p->len + n, p->cap);
    memcpy(p->buf + at, s, n);
    p->len += n;
    return at;
}

void strpool_release(struct strpool *p)
{
    free(p->buf);
    *p = (struct strpool){0};
}
