/* utf8.c - well-formed UTF-8 (RFC 3629: no overlongs, no surrogates), so that client input
 * quoted in a message can always be sent as JSON. Used by the front end and the API alike. */
#include <string.h>

#include "utf8.h"

/* Length of the well-formed UTF-8 sequence at p (1-4), or 0 when it is not one. */
static size_t utf8_seq(const unsigned char *p, size_t avail)
{
    static const unsigned min[] = {0, 0x80, 0x800, 0x10000};
    unsigned c = p[0], cp;
    size_t k;

    if (c < 0x80)
        return 1;
    k = (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 0;
    if (!k || k >= avail)
        return 0;
    cp = c & (0x3fu >> k);
    for (size_t i = 1; i <= k; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3fu);
    }
    if (cp < min[k] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return k + 1;
}

int api__utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;

    for (size_t i = 0, k; i < n; i += k)
        if (!(k = utf8_seq(p + i, n - i)))
            return 0;
    return 1;
}

void api__utf8_scrub(char *s)
{
    unsigned char *p = (unsigned char *)s;
    size_t n = strlen(s);

    for (size_t i = 0, k; i < n; i += k) {
        if (!(k = utf8_seq(p + i, n - i))) {
            p[i] = '?';
            k = 1;
        }
    }
}
