/*
 * selector.c - label selectors and node selector requirements, matched as
 * Kubernetes matches them (apimachinery/pkg/labels, component-helpers
 * nodeaffinity): the one place muster decides whether labels satisfy a rule.
 */
#include "model_select.h"
#include "decode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *model_label(const struct model_kv *labels, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(labels[i].key, key))
            return labels[i].value;
    return NULL;
}

int model__int_value(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno)
        return -1;
    *out = v;
    return 0;
}

int model_sel_req_match(const struct model_sel_req *r, const char *value)
{
    int64_t n;
    switch (r->op) {
    case MODEL_OP_IN:
    case MODEL_OP_NOT_IN: {
        int in = 0;
        for (size_t i = 0; value && !in && i < r->nvalues; i++)
            in = !strcmp(r->values[i], value);
        return r->op == MODEL_OP_IN ? in : !in;
    }
    case MODEL_OP_EXISTS:
        return value != NULL;
    case MODEL_OP_DOES_NOT_EXIST:
        return value == NULL;
    case MODEL_OP_GT:
        return value && model__int_value(value, &n) == 0 && n > r->num;
    case MODEL_OP_LT:
        return value && model__int_value(value, &n) == 0 && n < r->num;
    }
    return 0;
}

static int reqs_match(const struct model_sel_req *r, size_t n, const struct model_kv *labels,
                      size_t nl)
{
    for (size_t i = 0; i < n; i++)
        if (!model_sel_req_match(&r[i], model_label(labels, nl, r[i].key)))
            return 0;
    return 1;
}

int model_selector_match(const struct model_selector *s, const struct model_kv *labels, size_t n)
{
    if (s->none)
        return 0;
    return reqs_match(s->req, s->nreq, labels, n);
}

void model__sel_reqs_release(struct model_sel_req *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(r[i].key);
        for (size_t k = 0; k < r[i].nvalues; k++)
            free(r[i].values[k]);
        free(r[i].values);
    }
    free(r);
}

void model_selector_release(struct model_selector *s)
{
    if (!s)
        return;
    model__sel_reqs_release(s->req, s->nreq);
    memset(s, 0, sizeof(*s));
}

int model_node_term_match(const struct model_node_term *t, const char *name,
                          const struct model_kv *labels, size_t n)
{
    if (!t->nexpr && !t->nfields)
        return 0;
    for (size_t i = 0; i < t->nfields; i++)
        if (!model_sel_req_match(&t->fields[i], name)) /* metadata.name, the only field */
            return 0;
    return reqs_match(t->expr, t->nexpr, labels, n);
}
