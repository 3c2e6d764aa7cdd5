/*
 * fmt.c - fmt.h's snprintf: %s %c %% and the integer conversions d i u of every length
 * (none, l, ll, z) written here; anything else goes to vsnprintf whole.
 */
#include "fmt.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "numfmt.h"

struct out {
    char *buf;
    size_t n, len; /* room (with the NUL), the text's whole length */
};

static void put(struct out *o, const char *s, size_t k)
{
    if (o->len + 1 < o->n) {
        size_t room = o->n - 1 - o->len;
        memcpy(o->buf + o->len, s, k < room ? k : room);
    }
    o->len += k;
}

/* The conversion at *f (past the '%') consumed from ap; 0 when it is not one of ours. */
static int convert(struct out *o, const char **f, va_list *ap)
{
    const char *p = *f;
    int len = 0; /* 0 int, 1 long, 2 long long, 3 size_t */
    if (*p == 'l' && p[1] == 'l') {
        len = 2;
        p += 2;
    } else if (*p == 'l') {
        len = 1;
        p++;
    } else if (*p == 'z') {
        len = 3;
        p++;
    }
    char num[NUMFMT_INT64_LEN], *end = num + sizeof(num), *d;
    switch (*p) {
    case 's':
        if (len)
            return 0;
        {
            const char *s = va_arg(*ap, const char *);
            if (!s)
                return 0; /* glibc's "(null)" is not ours to copy */
            put(o, s, strlen(s));
        }
        break;
    case 'c':
        if (len)
            return 0;
        num[0] = (char)va_arg(*ap, int);
        put(o, num, 1);
        break;
    case 'd':
    case 'i':
        d = len == 0   ? numfmt_i64(end, va_arg(*ap, int))
            : len == 1 ? numfmt_i64(end, va_arg(*ap, long))
            : len == 2 ? numfmt_i64(end, va_arg(*ap, long long))
                       : numfmt_i64(end, (int64_t)va_arg(*ap, size_t)); /* %zd: ssize_t */
        put(o, d, (size_t)(end - d));
        break;
    case 'u':
        d = len == 0   ? numfmt_u64(end, va_arg(*ap, unsigned))
            : len == 1 ? numfmt_u64(end, va_arg(*ap, unsigned long))
            : len == 2 ? numfmt_u64(end, va_arg(*ap, unsigned long long))
                       : numfmt_u64(end, va_arg(*ap, size_t));
        put(o, d, (size_t)(end - d));
        break;
    default:
        return 0;
    }
    *f = p + 1;
    return 1;
}

/* Every conversion in fmt is one convert writes. */
static int ours(const char *fmt)
{
    for (const char *p = fmt; (p = strchr(p, '%')) != NULL;) {
        p++;
        if (*p == '%') {
            p++;
            continue;
        }
        if (*p == 'l' && p[1] == 'l')
            p += 2;
        else if (*p == 'l' || *p == 'z')
            p++;
        if (!*p || !strchr("scidu", *p))
            return 0;
    }
    return 1;
}

int fmt_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
    if (!ours(fmt))
        return vsnprintf(buf, n, fmt, ap);
    va_list aq;
    va_copy(aq, ap);
    struct out o = {buf, n, 0};
    const char *f = fmt;
    for (;;) {
        const char *pc = strchr(f, '%');
        size_t run = pc ? (size_t)(pc - f) : strlen(f);
        put(&o, f, run);
        if (!pc)
            break;
        f = pc + 1;
        if (*f == '%') {
            put(&o, "%", 1);
            f++;
            continue;
        }
        if (!convert(&o, &f, &aq)) { /* a NULL %s: vsnprintf's from the start */
            va_end(aq);
            return vsnprintf(buf, n, fmt, ap);
        }
    }
    va_end(aq);
    if (n)
        buf[o.len < n ? o.len : n - 1] = '\0';
    return (int)o.len;
}

int fmt_snprintf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = fmt_vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return r;
}
