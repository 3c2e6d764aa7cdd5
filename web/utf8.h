/* utf8.h - well-formed UTF-8 (utf8.c): a check and an in-place scrub, for any text from a
 * client that is quoted back. Calls nothing. */
#ifndef MUSTER_WEB_UTF8_H
#define MUSTER_WEB_UTF8_H

#include <stddef.h>

/* 1 when s[0..n) is well-formed UTF-8 (no overlongs, no surrogates). */
int api__utf8_valid(const char *s, size_t n);
/* Replaces each byte of s that is not part of well-formed UTF-8 with '?', in place, so
 * that a message quoting client input can always be sent as JSON. */
void api__utf8_scrub(char *s);

#endif
