/*
 * json_read.c - JSON read without jansson's lexer (model.h model_json_read).
 *
 * A restart parses half a million stored pods and an apply 150,000 documents, and
 * jansson's json_loadb was nearly half of a restart's CPU, most of it in the lexer (a
 * character at a time through a stream callback). This reader takes the common subset of
 * JSON straight from the bytes and builds the same jansson values json_loadb would, member
 * order included. Anything else (an escape other than \" \\ \/ \b \f \n \r \t, a number
 * jansson would refuse or read otherwise, invalid UTF-8, nesting deeper than 256, a top
 * level that is not an object or array, trailing bytes, and with reject_dups a repeated
 * key) makes it give up and return NULL: the caller then parses with json_loadb, which
 * accepts or refuses as before, with its own error text. So a value reads the same either
 * way (tests/test_json_read.c checks it on random trees and mutated inputs).
 */
#include <jansson.h>

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"
#include "model_manifest.h"

#define MAX_DEPTH 256

struct rd {
    const char *p, *end;
    int reject_dups;
    char *buf; /* unescaped strings */
    size_t cap;
};

static void ws(struct rd *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r'))
        r->p++;
}

/* The string at r->p (after its opening quote) into *s / *n (r->buf or the input itself);
 * 0, or -1 to give up. */
static int string(struct rd *r, const char **s, size_t *n)
{
    const char *start = r->p;
    while (r->p < r->end && *r->p != '"' && *r->p != '\\' && (unsigned char)*r->p >= 0x20)
        r->p++;
    if (r->p >= r->end || (unsigned char)*r->p < 0x20)
        return -1;
    if (*r->p == '"') { /* no escapes: the bytes themselves */
        *s = start;
        *n = (size_t)(r->p++ - start);
        return 0;
    }
    size_t len = 0;
    for (const char *q = start;;) {
        if (len + 2 > r->cap) {
            r->cap = r->cap ? r->cap * 2 : 256;
            r->buf = xrealloc(r->buf, r->cap);
        }
        if (q >= r->end || (unsigned char)*q < 0x20)
            return -1;
        char ch = *q++;
        if (ch == '"') {
            r->p = q;
            *s = r->buf;
            *n = len;
            return 0;
        }
        if (ch == '\\') {
            if (q >= r->end)
                return -1;
            switch (*q++) {
            case '"':
                ch = '"';
                break;
            case '\\':
                ch = '\\';
                break;
            case '/':
                ch = '/';
                break;
            case 'b':
                ch = '\b';
                break;
            case 'f':
                ch = '\f';
                break;
            case 'n':
                ch = '\n';
                break;
            case 'r':
                ch = '\r';
                break;
            case 't':
                ch = '\t';
                break;
            default:
                return -1; /* \u: jansson's */
            }
        }
        r->buf[len++] = ch;
    }
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* The "C" locale's numbers, made once: strtod follows LC_NUMERIC (a program that calls
 * setlocale, or a thread's uselocale, may have a comma for a decimal point), jansson does
 * not (jsonp_strtod swaps the '.' for the locale's point), so neither does this reader. */
static locale_t c_numeric;
static pthread_once_t c_numeric_once = PTHREAD_ONCE_INIT;

static void c_numeric_init(void)
{
    c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

/* A number as jansson's lexer takes it: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?;
 * an integer through strtoll, a real through strtod_l in the "C" locale. NULL to give up
 * (also when that locale cannot be made: jansson then reads it). */
static json_t *number(struct rd *r)
{
    const char *start = r->p, *q = r->p;
    int real = 0;
    if (q < r->end && *q == '-')
        q++;
    if (q >= r->end || !is_digit(*q))
        return NULL;
    if (*q == '0' && q + 1 < r->end && is_digit(q[1]))
        return NULL;
    while (q < r->end && is_digit(*q))
        q++;
    if (q < r->end && *q == '.') {
        real = 1;
        if (++q >= r->end || !is_digit(*q))
            return NULL;
        while (q < r->end && is_digit(*q))
            q++;
    }
    if (q < r->end && (*q == 'e' || *q == 'E')) {
        real = 1;
        if (++q < r->end && (*q == '+' || *q == '-'))
            q++;
        if (q >= r->end || !is_digit(*q))
            return NULL;
        while (q < r->end && is_digit(*q))
            q++;
    }
    char tmp[64];
    size_t n = (size_t)(q - start);
    if (n >= sizeof(tmp))
        return NULL;
    memcpy(tmp, start, n);
    tmp[n] = '\0';
    r->p = q;
    errno = 0;
    if (!real) {
        long long v = strtoll(tmp, NULL, 10);
        return errno ? NULL : json_integer((json_int_t)v);
    }
    pthread_once(&c_numeric_once, c_numeric_init);
    if (c_numeric == (locale_t)0)
        return NULL;
    double d = strtod_l(tmp, NULL, c_numeric);
    return isinf(d) ? NULL : json_real(d);
}

static int lit(struct rd *r, const char *word, size_t n)
{
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return 0;
    r->p += n;
    return 1;
}

static json_t *value(struct rd *r, int depth);

static json_t *object(struct rd *r, int depth)
{
    json_t *o = json_object();
    ws(r);
    if (r->p < r->end && *r->p == '}') {
        r->p++;
        return o;
    }
    for (;;) {
        const char *k;
        size_t kn;
        ws(r);
        if (r->p >= r->end || *r->p != '"')
            break;
        r->p++;
        if (string(r, &k, &kn) < 0) /* no NUL: raw control bytes and \u give up */
            break;
        char kbuf[256], *key = kn < sizeof(kbuf) ? kbuf : xmalloc(kn + 1);
        memcpy(key, k, kn);
        key[kn] = '\0';
        ws(r);
        json_t *v = NULL;
        if (r->p < r->end && *r->p == ':') {
            r->p++;
            v = value(r, depth + 1);
        }
        int dup = v && r->reject_dups && json_object_getn(o, key, kn);
        if (dup)
            json_decref(v);
        /* json_object_setn_new checks the key's UTF-8 */
        int bad = !v || dup || json_object_setn_new(o, key, kn, v) < 0;
        if (key != kbuf)
            free(key);
        if (bad)
            break;
        ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == '}') {
            r->p++;
            return o;
        }
        break;
    }
    json_decref(o);
    return NULL;
}

static json_t *array(struct rd *r, int depth)
{
    json_t *a = json_array();
    ws(r);
    if (r->p < r->end && *r->p == ']') {
        r->p++;
        return a;
    }
    for (;;) {
        json_t *v = value(r, depth + 1);
        if (!v || json_array_append_new(a, v) < 0)
            break;
        ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == ']') {
            r->p++;
            return a;
        }
        break;
    }
    json_decref(a);
    return NULL;
}

static json_t *value(struct rd *r, int depth)
{
    const char *s;
    size_t n;
    ws(r);
    if (r->p >= r->end || depth > MAX_DEPTH)
        return NULL;
    switch (*r->p) {
    case '{':
        r->p++;
        return object(r, depth);
    case '[':
        r->p++;
        return array(r, depth);
    case '"':
        r->p++;
        if (string(r, &s, &n) < 0)
            return NULL;
        return json_stringn(s, n); /* NULL when not UTF-8 */
    case 't':
        return lit(r, "true", 4) ? json_true() : NULL;
    case 'f':
        return lit(r, "false", 5) ? json_false() : NULL;
    case 'n':
        return lit(r, "null", 4) ? json_null() : NULL;
    default:
        return number(r);
    }
}

int model__json_read_elements(const char *s, const char *end, const char *stop, int depth,
                              int reject_dups, json_t *a, const char **at)
{
    struct rd r = {s, end, reject_dups, NULL, 0};
    int rc = -1;
    for (;;) {
        json_t *v = value(&r, depth);
        if (!v || json_array_append_new(a, v) < 0)
            break;
        ws(&r);
        if (r.p < r.end && r.p == stop) {
            rc = 1;
            break;
        }
        if (r.p < r.end && *r.p == ',') {
            r.p++;
            continue;
        }
        if (r.p < r.end && *r.p == ']')
            rc = 0;
        break;
    }
    *at = r.p;
    free(r.buf);
    return rc;
}

json_t *model_json_read(const char *s, size_t n, int reject_dups)
{
    struct rd r = {s, s + n, reject_dups, NULL, 0};
    ws(&r);
    json_t *v = NULL;
    if (r.p < r.end && (*r.p == '{' || *r.p == '['))
        v = value(&r, 0);
    if (v) {
        ws(&r);
        if (r.p != r.end) {
            json_decref(v);
            v = NULL;
        }
    }
    free(r.buf);
    return v;
}

json_t *model_json_load(const char *s, size_t n, json_error_t *jerr)
{
    json_t *v = model_json_read(s, n, 0);
    return v ? v : json_loadb(s, n, 0, jerr);
}
