/*
 * page.c - list pagination as the Kubernetes API does it: ?limit=N&continue=TOKEN.
 *
 * Lists are in key order; a page holds at most `limit` items and, when more follow,
 * metadata.continue: an opaque token naming the list and the last key of the page. The
 * next page starts strictly after that key, in whatever the store holds then (no
 * snapshot is kept, so a token never expires and 410 is never answered): every item that
 * exists from the first page to the last is seen exactly once, an item created or deleted
 * meanwhile is seen at most once.
 *
 * The token is base64url (no padding) of "1\n<list>\n<key>"; a token that does not decode,
 * or names another list, is refused with 400 naming 'continue'.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "http.h"
#include "lists.h"

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static char *b64_encode(const unsigned char *in, size_t n)
{
    char *out = xmalloc(n / 3 * 4 + 5), *o = out;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
                     (i + 2 < n ? in[i + 2] : 0);
        *o++ = b64[v >> 18 & 63];
        *o++ = b64[v >> 12 & 63];
        if (i + 1 < n)
            *o++ = b64[v >> 6 & 63];
        if (i + 2 < n)
            *o++ = b64[v & 63];
    }
    *o = '\0';
    return out;
}

/* New NUL-terminated bytes, or NULL when s is not unpadded base64url. */
static char *b64_decode(const char *s, size_t *len)
{
    size_t n = strlen(s);
    if (n % 4 == 1)
        return NULL;
    char *out = xmalloc(n / 4 * 3 + 4), *o = out;
    unsigned v = 0;
    size_t bits = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p = memchr(b64, s[i], 64);
        if (!s[i] || !p) {
            free(out);
            return NULL;
        }
        v = v << 6 | (unsigned)(p - b64);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            *o++ = (char)(v >> bits & 0xff);
        }
    }
    *o = '\0';
    *len = (size_t)(o - out);
    return out;
}

char *api__page_token(const char *list, const char *last_key)
{
    char *raw = xasprintf("1\n%s\n%s", list, last_key);
    char *tok = b64_encode((const unsigned char *)raw, strlen(raw));
    free(raw);
    return tok;
}

static int bad_token(struct req *r, const char *tok, const char *why)
{
    struct err err = ERR_INIT;
    err_setf(&err, ERR_INVALID, "continue", "query parameter 'continue': '%.100s' %s", tok, why);
    api__utf8_scrub(err.msg);
    api__reply_error(r, &err);
    return -1;
}

int api__page_or_reply(struct req *r, const char *list, struct api_page *p)
{
    uint64_t limit = 0;
    char *tok = NULL, *raw = NULL;
    size_t len = 0, llen = strlen(list);
    int rc = -1;

    *p = (struct api_page){0};
    p->list = list;
    if (api__query_u64_or_reply(r, "limit", &limit) < 0 ||
        api__query_str_or_reply(r, "continue", &tok) < 0)
        return -1;
    if (api__query_str_or_reply(r, "limit", &raw) == 0 && raw &&
        (limit < 1 || limit > API_PAGE_MAX)) {
        struct err err = ERR_INIT;
        err_setf(&err, ERR_INVALID, "limit",
                 "query parameter 'limit': %llu is out of range; between 1 and %d",
                 (unsigned long long)limit, API_PAGE_MAX);
        api__reply_error(r, &err);
        goto out;
    }
    p->on = raw || tok;
    p->limit = (size_t)limit;
    free(raw);
    raw = NULL;
    if (!tok) {
        rc = 0;
        goto out;
    }
    raw = b64_decode(tok, &len);
    if (!raw || strlen(raw) != len || strncmp(raw, "1\n", 2) != 0)
        bad_token(r, tok, "is not a continue token (take metadata.continue of the page before)");
    else if (strncmp(raw + 2, list, llen) != 0 || raw[2 + llen] != '\n')
        bad_token(r, tok, "is the continue token of another list");
    else if (!api__utf8_valid(raw, len))
        bad_token(r, tok, "is not a continue token (take metadata.continue of the page before)");
    else {
        p->after = xstrdup(raw + 3 + llen);
        rc = 0;
    }
out:
    free(tok);
    free(raw);
    return rc;
}

int api__page_take(struct api_page *p, const char *key)
{
    if (p->limit && p->n == p->limit) {
        p->more = 1;
        return 0;
    }
    p->n++;
    free(p->last);
    p->last = xstrdup(key);
    return 1;
}

json_t *api__page_meta(const struct api_page *p)
{
    json_t *meta = json_object();
    if (p->more && p->last) {
        char *tok = api__page_token(p->list, p->last);
        json_object_set_new(meta, "continue", json_string(tok));
        free(tok);
    }
    return meta;
}

void api__page_release(struct api_page *p)
{
    free(p->after);
    free(p->last);
    *p = (struct api_page){0};
}
