/*
 * alloc.h - allocation wrappers that abort on out-of-memory.
 *
 * Library code never exits on its own errors, but an allocation failure is
 * not an error any caller can handle: these print a message and abort().
 * All release functions in muster accept NULL.
 */
#ifndef MUSTER_ALLOC_H
#define MUSTER_ALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* printf into a new string (caller frees). */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grows *arr (of *cap elements of size elem) to hold at least need elements. */
#define XGROW(arr, need, cap)                                                                      \
    do {                                                                                           \
        if ((size_t)(need) > (size_t)(cap)) {                                                      \
            size_t xgrow__n = (cap) ? (size_t)(cap)*2 : 16;                                        \
            while (xgrow__n < (size_t)(need))                                                      \
                xgrow__n *= 2;                                                                     \
            (arr) = xrealloc((arr), xgrow__n * sizeof(*(arr)));                                    \
            (cap) = xgrow__n;                                                                      \
        }                                                                                          \
    } while (0)

#endif
