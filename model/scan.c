/* scan.c - the scanner of stored JSON text (scan.h). */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "scan.h"

#define MAX_DEPTH 32
#define MAX_INT_DIGITS 18 /* fits int64 whatever the digits */

void model__scan_ws(struct model__scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\t' || *s->p == '\r'))
        s->p++;
}

int model__scan_at(struct model__scan *s, char c)
{
    return s->p < s->end && *s->p == c;
}

/* 1 when none of the 8 bytes of w ends or spoils a plain string: no quote, backslash,
 * control byte, DEL or byte past ASCII. Each test is exact for "some byte is": x - 0x01..
 * borrows into a byte's high bit only past a byte that is zero. */
static int plain8(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\'), d = w ^ (ones * 0x7f);
    uint64_t special =
        ((q - ones) & ~q) | ((b - ones) & ~b) | ((d - ones) & ~d) | ((w - ones * 0x20) & ~w) | w;
    return !(special & high);
}

int model__scan_string(struct model__scan *s, struct model__str *out)
{
    if (!model__scan_at(s, '"'))
        return -1;
    const char *start = ++s->p;
    for (uint64_t w; s->end - s->p >= 8; s->p += 8) { /* eight bytes at a time, then one */
        memcpy(&w, s->p, 8);
        if (!plain8(w))
            break;
    }
    while (s->p < s->end && *s->p != '"') {
        unsigned char c = (unsigned char)*s->p;
        if (c < 0x20 || c >= 0x7f || c == '\\')
            return -1;
        s->p++;
    }
    if (s->p >= s->end)
        return -1;
    *out = (struct model__str){start, (size_t)(s->p++ - start)};
    return 0;
}

int model__scan_string_or_null(struct model__scan *s, struct model__str *out)
{
    if (s->end - s->p >= 4 && memcmp(s->p, "null", 4) == 0) {
        s->p += 4;
        *out = (struct model__str){NULL, 0};
        return 0;
    }
    return model__scan_string(s, out);
}

int model__scan_integer(struct model__scan *s, int64_t *v)
{
    int neg = model__scan_at(s, '-');
    s->p += neg;
    const char *d = s->p;
    int64_t x = 0;
    for (; s->p < s->end && *s->p >= '0' && *s->p <= '9'; s->p++)
        if (s->p - d < MAX_INT_DIGITS) /* past it: refused below, never overflowed */
            x = x * 10 + (*s->p - '0');
    size_t n = (size_t)(s->p - d);
    if (!n || n > MAX_INT_DIGITS || (n > 1 && *d == '0') ||
        (s->p < s->end && (*s->p == '.' || *s->p == 'e' || *s->p == 'E')))
        return -1;
    *v = neg ? -x : x;
    return 0;
}

/* Skips a number: -?(0|[1-9][0-9]*)(.[0-9]+)? ; an exponent or a long one gives up (jansson
 * refuses an integer past int64 and a real past double, which this need not judge). */
static int skip_number(struct model__scan *s)
{
    const char *start = s->p;
    s->p += model__scan_at(s, '-');
    const char *d = s->p;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
        s->p++;
    if (s->p == d || (s->p - d > 1 && *d == '0'))
        return -1;
    if (model__scan_at(s, '.')) {
        const char *f = ++s->p;
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
            s->p++;
        if (s->p == f)
            return -1;
    }
    return s->p - start > MAX_INT_DIGITS || model__scan_at(s, 'e') || model__scan_at(s, 'E') ? -1
                                                                                             : 0;
}

/* Skips a string whose escapes are single characters jansson reads (\uXXXX gives up). */
static int skip_string(struct model__scan *s)
{
    s->p++;
    while (s->p < s->end && *s->p != '"') {
        unsigned char c = (unsigned char)*s->p;
        if (c < 0x20 || c >= 0x7f)
            return -1;
        if (c == '\\') {
            if (s->p + 1 >= s->end || !strchr("\"\\/bfnrt", s->p[1]) || !s->p[1])
                return -1;
            s->p++;
        }
        s->p++;
    }
    if (s->p >= s->end)
        return -1;
    s->p++;
    return 0;
}

int model__scan_member(struct model__scan *s, int *first, struct model__str *k)
{
    model__scan_ws(s);
    if (model__scan_at(s, '}')) {
        s->p++;
        return 0;
    }
    if (!*first) {
        if (!model__scan_at(s, ','))
            return -1;
        s->p++;
        model__scan_ws(s);
    }
    *first = 0;
    if (model__scan_string(s, k) < 0)
        return -1;
    model__scan_ws(s);
    if (!model__scan_at(s, ':'))
        return -1;
    s->p++;
    model__scan_ws(s);
    return 1;
}

int model__scan_element(struct model__scan *s, int *first)
{
    model__scan_ws(s);
    if (model__scan_at(s, ']')) {
        s->p++;
        return 0;
    }
    if (!*first) {
        if (!model__scan_at(s, ','))
            return -1;
        s->p++;
        model__scan_ws(s);
    }
    *first = 0;
    return s->p < s->end ? 1 : -1;
}

int model__scan_open(struct model__scan *s, char open)
{
    if (!model__scan_at(s, open))
        return -1;
    s->p++;
    return 0;
}

int model__scan_skip(struct model__scan *s, int depth)
{
    int first = 1, r;
    struct model__str k;
    if (s->p >= s->end || depth > MAX_DEPTH)
        return -1;
    switch (*s->p) {
    case '"':
        return skip_string(s);
    case '{':
        s->p++;
        while ((r = model__scan_member(s, &first, &k)) == 1)
            if (model__scan_skip(s, depth + 1) < 0)
                return -1;
        return r;
    case '[':
        s->p++;
        while ((r = model__scan_element(s, &first)) == 1)
            if (model__scan_skip(s, depth + 1) < 0)
                return -1;
        return r;
    case 't':
        return s->end - s->p >= 4 && !memcmp(s->p, "true", 4) ? (s->p += 4, 0) : -1;
    case 'f':
        return s->end - s->p >= 5 && !memcmp(s->p, "false", 5) ? (s->p += 5, 0) : -1;
    case 'n':
        return s->end - s->p >= 4 && !memcmp(s->p, "null", 4) ? (s->p += 4, 0) : -1;
    default:
        return skip_number(s);
    }
}

char *model__scan_dup(struct model__str v)
{
    return xstrndup(v.s, v.n);
}

char *model__scan_dup_nonempty(struct model__str v)
{
    return v.s && v.n ? model__scan_dup(v) : NULL;
}

int model__scan_seen(unsigned *mask, unsigned bit)
{
    if (*mask & bit)
        return -1;
    *mask |= bit;
    return 0;
}

int model__scan_string_map(struct model__scan *s, struct model__kvs *out)
{
    int first = 1, r;
    struct model__str k, v;
    if (model__scan_open(s, '{') < 0)
        return -1;
    while ((r = model__scan_member(s, &first, &k)) == 1) {
        if (model__scan_string(s, &v) < 0)
            return -1;
        for (size_t i = 0; i < out->n; i++)
            if (strlen(out->kv[i].key) == k.n && !memcmp(out->kv[i].key, k.s, k.n))
                return -1;
        XGROW(out->kv, out->n + 1, out->cap);
        out->kv[out->n++] = (struct model_kv){model__scan_dup(k), model__scan_dup(v)};
    }
    return r;
}

void model__scan_kvs_free(struct model__kvs *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->kv[i].key);
        free(m->kv[i].value);
    }
    free(m->kv);
    memset(m, 0, sizeof(*m));
}

const char *model__scan_kv_get(const struct model__kvs *m, const char *key)
{
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->kv[i].key, key))
            return m->kv[i].value;
    return NULL;
}

int model__scan_document(struct model__scan *s, const struct model__scan_doc *d, void *r)
{
    int first = 1, rc;
    struct model__str k;
    unsigned m = 0;
    model__scan_ws(s);
    if (model__scan_open(s, '{') < 0)
        return -1;
    while ((rc = model__scan_member(s, &first, &k)) == 1) {
        int ok;
        if (MODEL__IS(k, "metadata"))
            ok = !model__scan_seen(&m, 1) &&
                 (d->metadata ? !d->metadata(s, r) : !model__scan_skip(s, 0));
        else if (MODEL__IS(k, "spec"))
            ok = !model__scan_seen(&m, 2) && (d->spec ? !d->spec(s, r) : !model__scan_skip(s, 0));
        else if (MODEL__IS(k, "status"))
            ok = !model__scan_seen(&m, 4) &&
                 (d->status ? !d->status(s, r) : !model__scan_skip(s, 0));
        else
            ok = !model__scan_skip(s, 0);
        if (!ok)
            return -1;
    }
    model__scan_ws(s);
    return rc == 0 && s->p == s->end && (m & 1) ? 0 : -1;
}
