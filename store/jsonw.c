/*
 * jsonw.c - the store's JSON writer: what json_dumpb(v, JSON_COMPACT [| JSON_SORT_KEYS])
 * writes, byte for byte, written straight into the store's scratch buffer.
 *
 * Every object, binding, why document and audit record the store keeps is serialised
 * here; jansson's dumper spent most of a cycle's time in its per-piece callbacks and
 * printf calls (bench/README.md). The output rules are jansson 2.14's (dump.c, strconv.c):
 * members in insertion order (JSON_SORT_KEYS: by memcmp of the keys, shorter first), no
 * spaces, '"', '\\' and control characters escaped (\b \f \n \r \t, else \u00XX in upper
 * case hex), everything else (UTF-8 included, '/' and DEL) verbatim, integers as %lld,
 * reals as %.17g with ".0" added when neither '.' nor 'e' appears and the exponent's '+'
 * and leading zeros dropped. tests/test_store_jsonw.c compares it with jansson.
 */
#include "internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "numfmt.h"

struct out {
    char **buf; /* grown as needed */
    size_t *cap;
    size_t len;               /* bytes written at *buf */
    json_t *mark;             /* store__dump_mark's value, or NULL */
    size_t mark_at, mark_end; /* where its text begins and ends */
};

static char *room(struct out *o, size_t n)
{
    if (o->len + n > *o->cap) {
        while (o->len + n > *o->cap)
            *o->cap *= 2;
        *o->buf = xrealloc(*o->buf, *o->cap);
    }
    char *p = *o->buf + o->len;
    o->len += n;
    return p;
}

static void put(struct out *o, const char *s, size_t n)
{
    memcpy(room(o, n), s, n);
}

/* How many bytes s starts with that are written as they are: 8 at a time while none is
 * a control character, '"' or '\\' (a word test that may stop early, never late). */
static size_t plain_len(const char *s, size_t n)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x, q, b;
        memcpy(&x, s + i, 8);
        q = x ^ (ones * '"');
        b = x ^ (ones * '\\');
        if (((x - ones * 0x20) | (q - ones) | (b - ones)) & ~x & highs)
            break;
    }
    for (; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == '"' || ch == '\\')
            break;
    }
    return i;
}

static void put_string(struct out *o, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t i = plain_len(s, n), run = 0;
    if (i == n) { /* nothing to escape: the usual case, one copy */
        char *p = room(o, n + 2);
        p[0] = '"';
        memcpy(p + 1, s, n);
        p[n + 1] = '"';
        return;
    }
    *room(o, 1) = '"';
    for (; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\')
            continue;
        put(o, s + run, i - run);
        run = i + 1;
        char esc[6] = {'\\', 0};
        size_t k = 2;
        switch (ch) {
        case '"':
            esc[1] = '"';
            break;
        case '\\':
            esc[1] = '\\';
            break;
        case '\b':
            esc[1] = 'b';
            break;
        case '\f':
            esc[1] = 'f';
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        default:
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[ch >> 4];
            esc[5] = hex[ch & 15];
            k = 6;
        }
        put(o, esc, k);
    }
    put(o, s + run, n - run);
    *room(o, 1) = '"';
}

static void put_integer(struct out *o, json_int_t v)
{
    char buf[NUMFMT_INT64_LEN], *end = buf + sizeof(buf), *p = numfmt_i64(end, v);
    put(o, p, (size_t)(end - p));
}

/* jansson's jsonp_dtostr with precision 17 (the "C" locale: '.' is the decimal point) */
static void put_real(struct out *o, double v)
{
    /* A whole number below 10^15 in magnitude (not -0): %.17g writes its digits without an
     * exponent, then ".0" is added; the records' durations and shares mostly are. */
    if (v > -1e15 && v < 1e15 && v == (double)(long long)v && !(v == 0 && signbit(v))) {
        put_integer(o, (json_int_t)v);
        put(o, ".0", 2);
        return;
    }
    char buf[NUMFMT_G17_LEN + 3];
    size_t len = numfmt_g17(buf, v);
    if (!strchr(buf, '.') && !strchr(buf, 'e')) {
        memcpy(buf + len, ".0", 3);
        len += 2;
    }
    char *start = strchr(buf, 'e');
    if (start) {
        start++;
        char *end = start + 1;
        if (*start == '-')
            start++;
        while (*end == '0')
            end++;
        if (end != start) {
            memmove(start, end, len - (size_t)(end - buf));
            len -= (size_t)(end - start);
        }
    }
    put(o, buf, len);
}

struct member {
    const char *key;
    size_t len;
    json_t *value;
};

static int cmp_member(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int r = memcmp(x->key, y->key, n);
    return r ? r : (x->len > y->len) - (x->len < y->len);
}

static void put_value(struct out *o, json_t *v, int sort);

static void put_object(struct out *o, json_t *v, int sort)
{
    size_t n = json_object_size(v), i = 0;
    const char *key;
    json_t *val;
    *room(o, 1) = '{';
    if (!sort || n < 2) {
        json_object_foreach(v, key, val)
        {
            if (i++)
                *room(o, 1) = ',';
            put_string(o, key, strlen(key));
            *room(o, 1) = ':';
            put_value(o, val, sort);
        }
    } else {
        struct member few[16], *m = n <= 16 ? few : xcalloc(n, sizeof(*m));
        json_object_foreach(v, key, val) m[i++] = (struct member){key, strlen(key), val};
        qsort(m, n, sizeof(*m), cmp_member);
        for (i = 0; i < n; i++) {
            if (i)
                *room(o, 1) = ',';
            put_string(o, m[i].key, m[i].len);
            *room(o, 1) = ':';
            put_value(o, m[i].value, sort);
        }
        if (m != few)
            free(m);
    }
    *room(o, 1) = '}';
}

static void put_one(struct out *o, json_t *v, int sort);

static void put_value(struct out *o, json_t *v, int sort)
{
    if (v != o->mark) {
        put_one(o, v, sort);
        return;
    }
    o->mark_at = o->len;
    put_one(o, v, sort);
    o->mark_end = o->len;
}

static void put_one(struct out *o, json_t *v, int sort)
{
    size_t i;
    json_t *x;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        put_object(o, v, sort);
        break;
    case JSON_ARRAY:
        *room(o, 1) = '[';
        json_array_foreach(v, i, x)
        {
            if (i)
                *room(o, 1) = ',';
            put_value(o, x, sort);
        }
        *room(o, 1) = ']';
        break;
    case JSON_STRING:
        put_string(o, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        put_integer(o, json_integer_value(v));
        break;
    case JSON_REAL:
        put_real(o, json_real_value(v));
        break;
    case JSON_TRUE:
        put(o, "true", 4);
        break;
    case JSON_FALSE:
        put(o, "false", 5);
        break;
    case JSON_NULL:
        put(o, "null", 4);
        break;
    }
}

size_t store__dump(struct store__scratch *sc, json_t *v, size_t flags, size_t off)
{
    return store__dump_mark(sc, v, flags, off, NULL, NULL);
}

size_t store__dump_mark(struct store__scratch *sc, json_t *v, size_t flags, size_t off,
                        json_t *mark, size_t at[2])
{
    if (!sc->buf) {
        sc->cap = 4096;
        sc->buf = xmalloc(sc->cap);
    }
    struct out o = {.buf = &sc->buf, .cap = &sc->cap, .mark = mark};
    room(&o, off); /* keeps the bytes before off */
    put_value(&o, v, (flags & JSON_SORT_KEYS) != 0);
    if (at) {
        at[0] = o.mark_at;
        at[1] = o.mark_end;
    }
    return o.len - off;
}

/* ---- struct store_jw: the same writer for records written member by member ---- */

static struct out jw_out(struct store_jw *w)
{
    if (!w->buf) {
        w->cap = 256;
        w->buf = xmalloc(w->cap);
    }
    return (struct out){.buf = &w->buf, .cap = &w->cap, .len = w->len};
}

void store_jw_release(struct store_jw *w)
{
    free(w->buf);
    *w = (struct store_jw)STORE_JW_INIT;
}

void store_jw_raw(struct store_jw *w, const char *s, size_t n)
{
    struct out o = jw_out(w);
    put(&o, s, n);
    w->len = o.len;
}

void store_jw_strn(struct store_jw *w, const char *s, size_t n)
{
    struct out o = jw_out(w);
    put_string(&o, s, n);
    w->len = o.len;
}

void store_jw_int(struct store_jw *w, int64_t v)
{
    struct out o = jw_out(w);
    put_integer(&o, (json_int_t)v);
    w->len = o.len;
}

void store_jw_real(struct store_jw *w, double v)
{
    struct out o = jw_out(w);
    put_real(&o, v);
    w->len = o.len;
}

void store_jw_value(struct store_jw *w, json_t *v, size_t flags)
{
    struct out o = jw_out(w);
    if (v)
        put_value(&o, v, (flags & JSON_SORT_KEYS) != 0);
    else
        put(&o, "null", 4);
    w->len = o.len;
}

void store_jw_keyn(struct store_jw *w, const char *key, size_t n)
{
    struct out o = jw_out(w);
    char last = o.len ? w->buf[o.len - 1] : '{';
    int comma = last != '{' && last != '[';
    if (plain_len(key, n) == n) { /* ,"key": in one piece */
        char *p = room(&o, n + 3 + (size_t)comma);
        if (comma)
            *p++ = ',';
        p[0] = '"';
        memcpy(p + 1, key, n);
        p[n + 1] = '"';
        p[n + 2] = ':';
        w->len = o.len;
        return;
    }
    if (comma)
        *room(&o, 1) = ',';
    put_string(&o, key, n);
    *room(&o, 1) = ':';
    w->len = o.len;
}

char *store_json_text(json_t *v, size_t flags)
{
    size_t cap = 256;
    char *buf = xmalloc(cap);
    struct out o = {.buf = &buf, .cap = &cap};
    put_value(&o, v, (flags & JSON_SORT_KEYS) != 0);
    *room(&o, 1) = '\0';
    return buf;
}
