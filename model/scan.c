/* scan.c - the scanner of stored JSON text (scan.h). */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "scan.h"

#define MAX_DEPTH 32
#define MAX_INT_DIGITS 18 /* fits int64 whatever the digits */

/* Skips white space. */
static void ws(struct model__scan *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\t' || *s->p == '\r'))
        s->p++;
}

/* s->p is at c. */
static int at(struct model__scan *s, char c)
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

/* A string without escapes at s->p (its opening quote): 0, or -1 to give up. Printable
 * ASCII only: the reader then never has to agree with jansson on UTF-8. */
static int plain_string(struct model__scan *s, struct model__str *out)
{
    if (!at(s, '"'))
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

/* A string or null at s->p: 0 (out->s NULL for null), or -1 to give up. */
static int string_or_null(struct model__scan *s, struct model__str *out)
{
    if (s->end - s->p >= 4 && memcmp(s->p, "null", 4) == 0) {
        s->p += 4;
        *out = (struct model__str){NULL, 0};
        return 0;
    }
    return plain_string(s, out);
}

/* A JSON integer jansson reads as one (no fraction or exponent, at most 18 digits, no
 * leading zero) into *v: 0, or -1 to give up. */
static int integer(struct model__scan *s, int64_t *v)
{
    int neg = at(s, '-');
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
    s->p += at(s, '-');
    const char *d = s->p;
    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
        s->p++;
    if (s->p == d || (s->p - d > 1 && *d == '0'))
        return -1;
    if (at(s, '.')) {
        const char *f = ++s->p;
        while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
            s->p++;
        if (s->p == f)
            return -1;
    }
    return s->p - start > MAX_INT_DIGITS || at(s, 'e') || at(s, 'E') ? -1 : 0;
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

/* The next item of an object or array (close: its closing character): 1 with s->p at it,
 * 0 past the close, -1 to give up. *first starts at 1 just after the opening one. */
static int item(struct model__scan *s, int *first, char close)
{
    ws(s);
    if (at(s, close)) {
        s->p++;
        return 0;
    }
    if (!*first) {
        if (!at(s, ','))
            return -1;
        s->p++;
        ws(s);
    }
    *first = 0;
    return s->p < s->end ? 1 : -1;
}

/* Object members: 1 with the key in *k and s->p at its value, else as item. */
static int member(struct model__scan *s, int *first, struct model__str *k)
{
    int rc = item(s, first, '}');
    if (rc <= 0)
        return rc;
    if (plain_string(s, k) < 0)
        return -1;
    ws(s);
    if (!at(s, ':'))
        return -1;
    s->p++;
    ws(s);
    return 1;
}

/* Opens an object (or array, open '['): 0, or -1 when s->p is not at one. */
static int open_(struct model__scan *s, char open)
{
    if (!at(s, open))
        return -1;
    s->p++;
    return 0;
}

/* Skips any value (depth: how deep it lies): 0, or -1 to give up. */
static int skip_value(struct model__scan *s, int depth)
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
        while ((r = member(s, &first, &k)) == 1)
            if (skip_value(s, depth + 1) < 0)
                return -1;
        return r;
    case '[':
        s->p++;
        while ((r = item(s, &first, ']')) == 1)
            if (skip_value(s, depth + 1) < 0)
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

/* Field bit of an object read at most once: -1 when it comes again. */
static int seen(unsigned *mask, unsigned bit)
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
    if (open_(s, '{') < 0)
        return -1;
    while ((r = member(s, &first, &k)) == 1) {
        if (plain_string(s, &v) < 0)
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

int model__scan_object(struct model__scan *s, const struct model__scan_field *fields, void *state)
{
    int first = 1, rc;
    struct model__str k;
    unsigned m = 0;
    if (open_(s, '{') < 0)
        return -1;
    while ((rc = member(s, &first, &k)) == 1) {
        const struct model__scan_field *f = fields;
        while (f->key && !(f->n == k.n && !memcmp(f->key, k.s, k.n)))
            f++;
        if (!f->key) {
            rc = skip_value(s, 0);
        } else if (seen(&m, 1u << (f - fields)) < 0) {
            rc = -1;
        } else {
            char *at = (char *)state + f->off;
            switch (f->as) {
            case MODEL__AS_STRING:
                rc = string_or_null(s, (struct model__str *)at);
                break;
            case MODEL__AS_MAP:
                rc = model__scan_string_map(s, (struct model__kvs *)at);
                break;
            case MODEL__AS_INT:
                rc = integer(s, (int64_t *)at);
                break;
            case MODEL__AS_BOOL: {
                char c = s->p < s->end ? *s->p : 0;
                *(int *)at = c == 't';
                rc = c == 't' || c == 'f' || c == 'n' ? skip_value(s, 0) : -1;
                break;
            }
            case MODEL__AS_FN:
                rc = f->fn(s, state);
                break;
            default: /* MODEL__AS_REFUSE */
                rc = -1;
            }
        }
        if (rc < 0)
            return -1;
    }
    return rc < 0 ? -1 : (int)m;
}

int model__scan_array(struct model__scan *s, int (*fn)(struct model__scan *s, void *state),
                      void *state)
{
    int first = 1, rc;
    if (open_(s, '[') < 0)
        return -1;
    while ((rc = item(s, &first, ']')) == 1)
        if (fn(s, state) < 0)
            return -1;
    return rc;
}

int model__scan_document(struct model__scan *s, const struct model__scan_field *fields, void *state)
{
    ws(s);
    int m = model__scan_object(s, fields, state);
    ws(s);
    return m >= 0 && (m & 1) && s->p == s->end ? 0 : -1;
}
