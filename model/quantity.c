/*
 * quantity.c - Kubernetes resource quantities, parsed exactly.
 *
 * A quantity is significand * 10^e10 * 2^e2. The significand is kept in a small
 * fixed-width big integer, so "0.1Gi", "1.5e3" or "12345678901234567890n" are
 * computed without floating point; the result is rounded up to the unit asked for
 * (thousandths for cpu, whole units otherwise), as the kubelet and scheduler do.
 */
#include "model_quantity.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "numfmt.h"

#include "err.h"

#define LIMBS 12      /* 384 bits: 60 digits times 2^60 times 10^3 still fit */
#define MAX_DIGITS 60 /* significant digits accepted in the number */
#define MAX_EXP 100000

struct big {
    uint32_t l[LIMBS];
};

/* Returns 1 on overflow. */
static int big_mul(struct big *b, uint32_t m)
{
    uint64_t carry = 0;
    for (int i = 0; i < LIMBS; i++) {
        uint64_t v = (uint64_t)b->l[i] * m + carry;
        b->l[i] = (uint32_t)v;
        carry = v >> 32;
    }
    return carry != 0;
}

static void big_add(struct big *b, uint32_t a)
{
    uint64_t carry = a;
    for (int i = 0; i < LIMBS && carry; i++) {
        uint64_t v = (uint64_t)b->l[i] + carry;
        b->l[i] = (uint32_t)v;
        carry = v >> 32;
    }
}

/* Divides in place, returns the remainder. */
static uint32_t big_div(struct big *b, uint32_t d)
{
    uint64_t rem = 0;
    for (int i = LIMBS - 1; i >= 0; i--) {
        uint64_t v = (rem << 32) | b->l[i];
        b->l[i] = (uint32_t)(v / d);
        rem = v % d;
    }
    return (uint32_t)rem;
}

static int big_zero(const struct big *b)
{
    for (int i = 0; i < LIMBS; i++)
        if (b->l[i])
            return 0;
    return 1;
}

/* 1 when b <= INT64_MAX, with the value in *out. */
static int big_to_i64(const struct big *b, int64_t *out)
{
    for (int i = 2; i < LIMBS; i++)
        if (b->l[i])
            return 0;
    uint64_t v = ((uint64_t)b->l[1] << 32) | b->l[0];
    if (v > (uint64_t)INT64_MAX)
        return 0;
    *out = (int64_t)v;
    return 1;
}

struct suffix {
    const char *s;
    int e10, e2;
};

static const struct suffix suffixes[] = {
    {"", 0, 0},    {"n", -9, 0},  {"u", -6, 0},  {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
    {"G", 9, 0},   {"T", 12, 0},  {"P", 15, 0},  {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
    {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
};

/* A decimal exponent "e<signed digits>" / "E<signed digits>"; 1 when s is one. */
static int parse_exponent(const char *s, long *exp)
{
    if (*s != 'e' && *s != 'E')
        return 0;
    s++;
    int neg = 0;
    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    if (!*s)
        return 0;
    long v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        if (v < MAX_EXP)
            v = v * 10 + (*s - '0');
    }
    *exp = neg ? -v : v;
    return 1;
}

static int parse_suffix(const char *s, long *e10, int *e2)
{
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        if (!strcmp(s, suffixes[i].s)) {
            *e10 = suffixes[i].e10;
            *e2 = suffixes[i].e2;
            return 1;
        }
    }
    *e2 = 0;
    return parse_exponent(s, e10);
}

/* Scales the significand by 2^e2 * 10^e10 and rounds up. */
static int scale(struct big *m, int e2, long e10, int64_t *out)
{
    int sticky = 0;
    for (int i = 0; i < e2; i += 10)
        if (big_mul(m, 1024))
            return -1;
    if (e10 > 0 && e10 > MAX_EXP)
        return -1;
    for (long i = 0; i < e10; i++) {
        int64_t probe;
        if (big_mul(m, 10) || !big_to_i64(m, &probe))
            return -1;
    }
    for (long i = 0; i > e10 && !big_zero(m); i--)
        sticky |= big_div(m, 10) != 0;
    if (big_zero(m) && !sticky) {
        *out = 0;
        return 0;
    }
    if (!big_to_i64(m, out) || (sticky && *out == INT64_MAX))
        return -1;
    *out += sticky;
    return 0;
}

int model_quantity_parse(const char *s, int milli, int64_t *out, struct err *err)
{
    struct big m = {{0}};
    const char *p = s;
    int neg = 0, digits = 0, sig = 0, e2 = 0;
    long e10 = 0, suffix_e10 = 0;

    if (!s)
        return err_set(err, ERR_INVALID, "invalid quantity ''");
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    for (int frac = 0;; p++) {
        if (*p == '.' && !frac) {
            frac = 1;
            continue;
        }
        if (*p < '0' || *p > '9')
            break;
        digits++;
        if (frac)
            e10--;
        if (*p == '0' && big_zero(&m))
            continue;
        if (++sig > MAX_DIGITS)
            return err_set(err, ERR_INVALID, "invalid quantity '%s': too many digits", s);
        big_mul(&m, 10);
        big_add(&m, (uint32_t)(*p - '0'));
    }
    if (!digits || !parse_suffix(p, &suffix_e10, &e2))
        return err_set(err, ERR_INVALID, "invalid quantity '%s'", s);
    e10 += suffix_e10 + (milli ? 3 : 0);
    int64_t v;
    if (scale(&m, e2, e10, &v) < 0)
        return err_set(err, ERR_INVALID, "quantity '%s' is too large", s);
    if (neg && v > 0)
        return err_set(err, ERR_INVALID, "quantity '%s' must not be negative", s);
    *out = v;
    return 0;
}

int model_resource_is_milli(const char *resource)
{
    return resource && !strcmp(resource, "cpu");
}

int model_resource_is_extended(const char *resource)
{
    return resource && strchr(resource, '/') && strncmp(resource, "kubernetes.io/", 14) &&
           strncmp(resource, "requests.", 9);
}

/* The value of resource res in map (thousandths), -1 when absent or not a quantity. */
static int64_t milli_of(const json_t *map, const char *res)
{
    const char *s = json_string_value(json_object_get(map, res));
    int64_t v;
    struct err err = ERR_INIT;
    return s && model_quantity_parse(s, 1, &v, &err) == 0 ? v : -1;
}

int model_extended_check(const json_t *resources, const char **which, const char **res, char *msg,
                         size_t n)
{
    static const char *const maps[] = {"requests", "limits"};
    const json_t *lim = json_object_get(resources, "limits");
    for (size_t k = 0; k < 2; k++) {
        json_t *map = json_object_get(resources, maps[k]), *q;
        const char *name;
        json_object_foreach(map, name, q)
        {
            if (!model_resource_is_extended(name))
                continue;
            int64_t v = milli_of(map, name);
            int64_t l = milli_of(lim, name);
            *which = maps[k];
            *res = name;
            if (v >= 0 && v % 1000) {
                snprintf(msg, n, "must be an integer");
                return 1;
            }
            if (k == 0 && v >= 0 && l >= 0 && l % 1000 == 0 && v != l) {
                char buf[32];
                model_quantity_format(l / 1000, 0, buf, sizeof(buf));
                snprintf(msg, n, "must be equal to %s limit of %s", name, buf);
                return 1;
            }
        }
    }
    return 0;
}

/* v then suffix into buf (n bytes, truncated as snprintf would): the digits by hand, as the
 * why documents and queue answers format a quantity per queue and resource on every write. */
static void put_quantity(char *buf, size_t n, int64_t v, const char *suffix)
{
    char digits[NUMFMT_INT64_LEN], *end = digits + sizeof(digits), *p = numfmt_i64(end, v);
    size_t dl = (size_t)(end - p), sl = strlen(suffix), k = 0;
    for (size_t i = 0; i < dl && k + 1 < n; i++)
        buf[k++] = p[i];
    for (size_t i = 0; i < sl && k + 1 < n; i++)
        buf[k++] = suffix[i];
    buf[k] = '\0';
}

void model_quantity_format(int64_t value, int milli, char *buf, size_t n)
{
    static const char *binary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    static const char *decimal[] = {"k", "M", "G", "T", "P", "E"};

    if (!buf || !n)
        return;
    if (milli) {
        if (value % 1000 == 0)
            put_quantity(buf, n, value / 1000, "");
        else
            put_quantity(buf, n, value, "m");
        return;
    }
    if (value == 0) {
        put_quantity(buf, n, 0, "");
        return;
    }
    int b = -1, d = -1;
    int64_t bv = value, dv = value;
    while (b < 5 && bv % 1024 == 0) {
        bv /= 1024;
        b++;
    }
    while (d < 5 && dv % 1000 == 0) {
        dv /= 1000;
        d++;
    }
    /* the suffix that leaves the smaller number: 1T rather than 976562500Ki */
    if (b >= 0 && (d < 0 || bv <= dv))
        put_quantity(buf, n, bv, binary[b]);
    else if (d >= 0)
        put_quantity(buf, n, dv, decimal[d]);
    else
        put_quantity(buf, n, value, "");
}
