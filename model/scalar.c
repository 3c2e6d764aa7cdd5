/*
 * scalar.c - the typing of plain YAML scalars, shared by reader and writer.
 *
 * Kubernetes decodes YAML with YAML 1.1 rules (sigs.k8s.io/yaml), so `yes`, `on`
 * and `0755` are not strings there; muster follows suit so that manifests mean
 * the same thing to both. Quoted scalars never come through here.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int one_of(const char *s, const char *const *list)
{
    for (; *list; list++)
        if (!strcmp(s, *list))
            return 1;
    return 0;
}

static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const trues[] = {"true", "True", "TRUE", "yes", "Yes",
                                    "YES",  "on",   "On",   "ON",  NULL};
static const char *const falses[] = {"false", "False", "FALSE", "no",  "No",
                                     "NO",    "off",   "Off",   "OFF", NULL};

static int all_in(const char *s, const char *set)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!strchr(set, *s))
            return 0;
    return 1;
}

/* Integer forms: [-+]?(0x[0-9a-fA-F]+ | 0o[0-7]+ | 0[0-7]+ | [0-9]+). 1 when s is one and
 * fits in json_int_t; 2 when it is a decimal one that overflows (a real). 0 for a hex or
 * octal one that overflows: as in Go's YAML decoder, 0x and 0o ones then stay strings
 * (strtod read "0o7...7" as 0.0) and 1.1-style octal ones are decimal reals. */
static int parse_int(const char *s, json_int_t *out)
{
    const char *p = s;
    int base = 10;
    if (*p == '+' || *p == '-')
        p++;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && all_in(p + 2, "0123456789abcdefABCDEF"))
        base = 16, p += 2;
    else if (p[0] == '0' && p[1] == 'o' && all_in(p + 2, "01234567"))
        base = 8, p += 2;
    else if (p[0] == '0' && p[1] && all_in(p + 1, "01234567"))
        base = 8, p += 1;
    else if (!all_in(p, "0123456789"))
        return 0;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, base);
    int neg = s[0] == '-';
    if (errno == ERANGE || v > (unsigned long long)LLONG_MAX + (neg ? 1u : 0u))
        return base == 10 ? 2 : 0;
    *out = neg ? (json_int_t)(0 - v) : (json_int_t)v;
    return 1;
}

/* Real forms: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int is_real(const char *s)
{
    const char *p = s;
    int digits = 0;
    if (*p == '+' || *p == '-')
        p++;
    while (*p >= '0' && *p <= '9')
        p++, digits++;
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9')
            p++, digits++;
    }
    if (!digits)
        return 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (*p < '0' || *p > '9')
            return 0;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    return *p == '\0';
}

/* 1 when a scalar starting with c may be other than a string: every null, boolean,
 * integer and real form above starts with one of these (a sign, a digit, a point, or the
 * first letter of a word of nulls, trues or falses); most names and values do not. */
static int may_be_typed(char c)
{
    return (c >= '0' && c <= '9') || (c && strchr("~nNtTyYoOfF+-.", c));
}

json_t *model__scalar_resolve(const char *s, size_t len)
{
    json_int_t i;
    /* a string either way: not the start of a typed form, or an embedded NUL, which only a
     * string can hold */
    if ((len && !may_be_typed(s[0])) || strlen(s) != len)
        return json_stringn(s, len);
    if (one_of(s, nulls))
        return json_null();
    if (one_of(s, trues))
        return json_true();
    if (one_of(s, falses))
        return json_false();
    int r = parse_int(s, &i);
    if (r == 1)
        return json_integer(i);
    if (r == 2 || is_real(s)) {
        double d = strtod(s, NULL);
        if (isfinite(d))
            return json_real(d);
    }
    return json_stringn(s, len);
}

void model__real_format(double v, char *buf, size_t n)
{
    if (!isfinite(v)) {
        snprintf(buf, n, "%s", isnan(v) ? ".nan" : v > 0 ? ".inf" : "-.inf");
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    if (!strpbrk(buf, ".eEn")) {
        size_t len = strlen(buf);
        if (len + 3 <= n)
            memcpy(buf + len, ".0", 3);
    }
}
