/*
 * validate_base.c - the typed checks every validator is built from (model__want_*, names
 * and labels) and the one way a problem is reported (model__problem, model__report).
 *
 * The bottom of validation: it calls nothing else in model/ but the leaves (quantities,
 * the real-number format of scalar.c), so the kind validators and
 * the schema walk above it, and the dispatcher on top (validate.c), form no circle. A
 * problem names the field and, where positions were recorded, its line and column (or
 * its nearest present ancestor's when the value is missing).
 */
#include "internal.h"
#include "model_quantity.h"
#include "validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "err.h"
#include "numfmt.h"

/* Position of field, or of its nearest ancestor present in the map. */
static json_t *find_pos(json_t *pos, const char *field)
{
    char path[MODEL__PATH_MAX];
    snprintf(path, sizeof(path), "%s", field);
    for (;;) {
        json_t *p = json_object_get(pos, path);
        if (p || !*path)
            return p;
        char *dot = strrchr(path, '.'), *br = strrchr(path, '[');
        char *cut = dot > br ? dot : br;
        if (!cut)
            cut = path;
        *cut = '\0';
    }
}

/* Appends {"document", "kind"?, "name"?, "field", "message", "line"?, "col"?} to list. */
static void report(struct model__vctx *v, json_t *list, const char *field, const char *what)
{
    char head[512], where[64] = "";

    if (*v->kind_name && *v->name)
        snprintf(head, sizeof(head), "document %d (%s %s)", v->doc->index, v->kind_name, v->name);
    else if (*v->kind_name)
        snprintf(head, sizeof(head), "document %d (%s)", v->doc->index, v->kind_name);
    else
        snprintf(head, sizeof(head), "document %d", v->doc->index);
    json_t *pos = find_pos(v->doc->pos, field);
    int line = (int)json_integer_value(json_array_get(pos, 0));
    int col = (int)json_integer_value(json_array_get(pos, 1));
    if (pos)
        snprintf(where, sizeof(where), " at line %d col %d", line, col);

    json_t *e = json_pack("{si}", "document", v->doc->index);
    if (*v->kind_name)
        json_object_set_new(e, "kind", json_string(v->kind_name));
    if (*v->name)
        json_object_set_new(e, "name", json_string(v->name));
    json_object_set_new(e, "field", json_string(field));
    char *msg = *field ? xasprintf("%s, %s: %s%s", head, field, what, where)
                       : xasprintf("%s: %s%s", head, what, where);
    json_object_set_new(e, "message", json_string(msg));
    free(msg);
    if (pos) {
        json_object_set_new(e, "line", json_integer(line));
        json_object_set_new(e, "col", json_integer(col));
    }
    json_array_append_new(list, e);
}

/* buf holding len bytes with n bytes of s added, cut at MODEL__PATH_MAX - 1 as snprintf cuts;
 * the new length. */
static size_t path_cat(char *buf, size_t len, const char *s, size_t n)
{
    if (len + n > MODEL__PATH_MAX - 1)
        n = MODEL__PATH_MAX - 1 - len;
    memmove(buf + len, s, n);
    buf[len + n] = '\0';
    return len + n;
}

void model__path(char *buf, const char *base, const char *key)
{
    size_t len = path_cat(buf, 0, base, strlen(base));
    len = path_cat(buf, len, ".", 1);
    path_cat(buf, len, key, strlen(key));
}

void model__path_index(char *buf, const char *base, size_t i)
{
    char num[NUMFMT_INT64_LEN + 2], *end = num + sizeof(num) - 1, *p;
    *end = ']';
    p = numfmt_u64(end, i);
    *--p = '[';
    size_t len = path_cat(buf, 0, base, strlen(base));
    path_cat(buf, len, p, (size_t)(end + 1 - p));
}

void model__problem(struct model__vctx *v, const char *field, const char *fmt, ...)
{
    char what[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    report(v, v->errors, field, what);
    v->count++;
}

void model__report(struct model__vctx *v, json_t *list, const char *field, const char *fmt, ...)
{
    char what[ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    report(v, list, field, what);
}

static int want(struct model__vctx *v, json_t *val, const char *field, int required, int ok,
                const char *what)
{
    if (!val) {
        if (required)
            model__problem(v, field, "missing required field");
        return 0;
    }
    if (!ok)
        model__problem(v, field, "must be %s", what);
    return ok;
}

int model__want_object(struct model__vctx *v, json_t *val, const char *field, int required)
{
    return want(v, val, field, required, json_is_object(val), "an object");
}

int model__want_array(struct model__vctx *v, json_t *val, const char *field, int required)
{
    return want(v, val, field, required, json_is_array(val), "a list");
}

int model__want_string(struct model__vctx *v, json_t *val, const char *field, int required)
{
    return want(v, val, field, required, json_is_string(val), "a string");
}

int model__want_bool(struct model__vctx *v, json_t *val, const char *field)
{
    return want(v, val, field, 0, json_is_boolean(val), "a boolean");
}

int model__want_int(struct model__vctx *v, json_t *val, const char *field, int required,
                    json_int_t min, json_int_t max)
{
    if (!want(v, val, field, required, json_is_integer(val), "an integer"))
        return 0;
    json_int_t i = json_integer_value(val);
    if (i >= min && i <= max)
        return 1;
    if (max == LLONG_MAX)
        model__problem(v, field, "must be at least %" JSON_INTEGER_FORMAT, min);
    else
        model__problem(v, field,
                       "must be between %" JSON_INTEGER_FORMAT " and %" JSON_INTEGER_FORMAT, min,
                       max);
    return 0;
}

int model__want_enum(struct model__vctx *v, json_t *val, const char *field, int required,
                     const char *const *allowed)
{
    if (!model__want_string(v, val, field, required))
        return 0;
    char list[256] = "";
    for (const char *const *a = allowed; *a; a++) {
        if (!strcmp(json_string_value(val), *a))
            return 1;
        size_t n = strlen(list);
        snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "", *a);
    }
    model__problem(v, field, "invalid value '%s', must be one of %s", json_string_value(val), list);
    return 0;
}

void model__want_string_map(struct model__vctx *v, json_t *val, const char *field)
{
    const char *k;
    json_t *e;
    if (!model__want_object(v, val, field, 0))
        return;
    json_object_foreach(val, k, e)
    {
        char f[MODEL__PATH_MAX];
        model__path(f, field, k);
        model__want_string(v, e, f, 0);
    }
}

/* Shortest text of a YAML number that a quantity parser reads the same way. */
static json_t *number_text(json_t *num)
{
    char buf[64];
    if (json_is_integer(num))
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(num));
    else {
        model__real_format(json_real_value(num), buf, sizeof(buf));
        size_t n = strlen(buf);
        if (n > 2 && !strcmp(buf + n - 2, ".0"))
            buf[n - 2] = '\0';
    }
    return json_string(buf);
}

static void want_quantities(struct model__vctx *v, json_t *parent, const char *key,
                            const char *field, int64_t max)
{
    json_t *map = json_object_get(parent, key), *q;
    const char *res;
    if (!model__want_object(v, map, field, 0))
        return;
    json_object_foreach(map, res, q)
    {
        char f[MODEL__PATH_MAX];
        struct err err = ERR_INIT;
        int64_t value;
        model__path(f, field, res);
        if (json_is_number(q))
            json_object_set_new(map, res, q = number_text(q));
        if (!json_is_string(q)) {
            model__problem(v, f, "must be a quantity string");
            continue;
        }
        if (model_quantity_parse(json_string_value(q), model_resource_is_milli(res), &value, &err) <
            0)
            model__problem(v, f, "%s", err.msg);
        else if (value > max)
            model__problem(v, f,
                           "'%s' is more than a node may claim or a pod ask (at most %s of a "
                           "resource)",
                           json_string_value(q), MODEL_QUANTITY_MAX_TEXT);
    }
}

void model__want_quantities(struct model__vctx *v, json_t *parent, const char *key,
                            const char *field)
{
    want_quantities(v, parent, key, field, INT64_MAX);
}

void model__want_claims(struct model__vctx *v, json_t *parent, const char *key, const char *field)
{
    want_quantities(v, parent, key, field, MODEL_QUANTITY_MAX);
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? of at most max characters. */
static int dns_part(const char *s, size_t n, size_t max, int upper_ok, const char *extra)
{
    if (n == 0 || n > max)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int alnum =
            (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (upper_ok && c >= 'A' && c <= 'Z');
        if (!alnum && (i == 0 || i == n - 1 || !strchr(extra, c)))
            return 0;
    }
    return 1;
}

int model__dns_label(const char *s)
{
    return s && dns_part(s, strlen(s), 63, 0, "-");
}

int model__dns_subdomain(const char *s)
{
    if (!s || strlen(s) > 253)
        return 0;
    for (const char *p = s;;) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (!dns_part(p, n, 63, 0, "-"))
            return 0;
        if (!dot)
            return 1;
        p = dot + 1;
    }
}

/* Label keys: [prefix/]name, prefix a DNS subdomain, name [A-Za-z0-9][-A-Za-z0-9_.]*. */
int model__label_key_ok(const char *k)
{
    const char *slash = strchr(k, '/');
    const char *name = slash ? slash + 1 : k;
    if (slash) {
        char prefix[254];
        size_t n = (size_t)(slash - k);
        if (n == 0 || n >= sizeof(prefix))
            return 0;
        memcpy(prefix, k, n);
        prefix[n] = '\0';
        if (!model__dns_subdomain(prefix))
            return 0;
    }
    return dns_part(name, strlen(name), 63, 1, "-_.");
}

int model__label_value_ok(const char *s)
{
    return !*s || dns_part(s, strlen(s), 63, 1, "-_.");
}
