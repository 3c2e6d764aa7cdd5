/*
 * select.c - `-l` label selectors and `--field-selector`, matched client side: the API has
 * no selector parameter, so muster lists as usual and keeps the items that match.
 *
 * Label selectors have kubectl's equality-based syntax: requirements separated by commas,
 * all of which must hold: `key=value` (or `key==value`), `key!=value` (also true when the
 * label is absent), `key` (the label exists) and `!key` (it does not).
 *
 * Field selectors are kubectl's too: `path=value`, `path==value`, `path!=value`, the path a
 * dotted field of the item as the API answers it (`metadata.name`, `spec.nodeName`,
 * `status.phase`; a job's `state`, `queue`, `namespace`). A field that is absent reads as
 * "" (kubectl's rule: `spec.nodeName=` selects unbound pods); numbers and booleans compare
 * as their JSON text (`spec.unschedulable=true`).
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

enum req_op { REQ_EQ, REQ_NE, REQ_EXISTS, REQ_ABSENT };

struct req {
    enum req_op op;
    char *key;
    char *value; /* NULL for REQ_EXISTS and REQ_ABSENT */
};

static char *trimmed(const char *s, size_t n)
{
    while (n && (*s == ' ' || *s == '\t'))
        s++, n--;
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        n--;
    return xstrndup(s, n);
}

/* One requirement of length n at s into *r (new strings). ERR_INVALID naming it. */
static int parse_req(const char *s, size_t n, struct req *r, struct err *err)
{
    char *text = trimmed(s, n);
    char *eq = strchr(text, '=');
    int rc = 0;
    r->key = r->value = NULL;
    if (!eq) {
        r->op = text[0] == '!' ? REQ_ABSENT : REQ_EXISTS;
        r->key = trimmed(text + (r->op == REQ_ABSENT), strlen(text) - (r->op == REQ_ABSENT));
    } else {
        char *kend = eq;
        r->op = REQ_EQ;
        if (eq > text && eq[-1] == '!') {
            r->op = REQ_NE;
            kend = eq - 1;
        }
        const char *v = eq[1] == '=' && r->op == REQ_EQ ? eq + 2 : eq + 1;
        r->key = trimmed(text, (size_t)(kend - text));
        r->value = trimmed(v, strlen(v));
    }
    if (!r->key[0] || strpbrk(r->key, "=!, ") || (r->value && strpbrk(r->value, "=!")))
        rc = err_set(err, ERR_INVALID, "invalid label selector requirement '%s'", text);
    free(text);
    return rc;
}

/* The field at a dotted path of item as text ("" when absent, the JSON text of a number or
 * boolean) into buf. */
static const char *field_text(json_t *item, const char *path, char *buf, size_t n)
{
    char *copy = xstrdup(path), *save = NULL;
    json_t *v = item;
    for (char *tok = strtok_r(copy, ".", &save); tok && v; tok = strtok_r(NULL, ".", &save))
        v = json_object_get(v, tok);
    free(copy);
    buf[0] = '\0';
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_true(v) || json_is_false(v))
        return json_is_true(v) ? "true" : "false";
    if (json_is_integer(v))
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, n, "%g", json_real_value(v));
    return buf;
}

static int field_matches(json_t *item, const struct req *reqs, size_t n)
{
    char buf[64];
    for (size_t i = 0; i < n; i++) {
        int eq = strcmp(field_text(item, reqs[i].key, buf, sizeof(buf)), reqs[i].value) == 0;
        if (eq != (reqs[i].op == REQ_EQ))
            return 0;
    }
    return 1;
}

static int matches(json_t *item, const struct req *reqs, size_t n)
{
    json_t *labels = json_object_get(json_object_get(item, "metadata"), "labels");
    for (size_t i = 0; i < n; i++) {
        const char *v = json_string_value(json_object_get(labels, reqs[i].key));
        int ok = reqs[i].op == REQ_EXISTS   ? v != NULL
                 : reqs[i].op == REQ_ABSENT ? v == NULL
                 : reqs[i].op == REQ_EQ     ? v && strcmp(v, reqs[i].value) == 0
                                            : !v || strcmp(v, reqs[i].value) != 0;
        if (!ok)
            return 0;
    }
    return 1;
}

/* fields: a field selector (only = and !=, values may be empty), else a label selector. */
static int select_items(json_t *items, const char *selector, int fields, struct err *err)
{
    struct req *reqs = NULL;
    size_t n = 0;
    int rc = 0;
    const char *p = selector;
    if (!*selector)
        return err_set(err, ERR_INVALID, "an empty %s selector", fields ? "field" : "label");
    for (;;) {
        size_t len = strcspn(p, ",");
        reqs = xrealloc(reqs, (n + 1) * sizeof(*reqs));
        if ((rc = parse_req(p, len, &reqs[n], err)) < 0) {
            free(reqs[n].key);
            free(reqs[n].value);
            if (fields)
                err_set(err, ERR_INVALID, "invalid field selector requirement '%.*s'", (int)len, p);
            goto out;
        }
        n++;
        if (fields && !reqs[n - 1].value) {
            rc = err_set(err, ERR_INVALID,
                         "invalid field selector requirement '%s': it needs = or != and a value",
                         reqs[n - 1].key);
            goto out;
        }
        if (!p[len])
            break;
        p += len + 1;
    }
    for (size_t i = json_array_size(items); i-- > 0;)
        if (fields ? !field_matches(json_array_get(items, i), reqs, n)
                   : !matches(json_array_get(items, i), reqs, n))
            json_array_remove(items, i);
out:
    for (size_t i = 0; i < n; i++) {
        free(reqs[i].key);
        free(reqs[i].value);
    }
    free(reqs);
    return rc;
}

int cli__select(json_t *items, const char *selector, struct err *err)
{
    return select_items(items, selector, 0, err);
}

int cli__field_select(json_t *items, const char *selector, struct err *err)
{
    return select_items(items, selector, 1, err);
}
