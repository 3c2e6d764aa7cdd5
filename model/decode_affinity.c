/*
 * decode_affinity.c - the placement rules of a validated Pod: spec.affinity
 * (nodeAffinity, podAffinity, podAntiAffinity) and spec.topologySpreadConstraints,
 * decoded into the typed terms of model.h.
 *
 * matchLabelKeys / mismatchLabelKeys are resolved here, once, against the pod's own
 * labels, as kube-apiserver does for pod affinity (a key the pod does not carry is
 * ignored): matchLabelKeys adds "key In (value)", mismatchLabelKeys "key NotIn (value)".
 */
#include "model_select.h"
#include "model_pod.h"
#include "decode.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"

static const char *str_or_empty(json_t *v)
{
    const char *s = json_string_value(v);
    return s ? s : "";
}

static const char *const ops[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", NULL};

int model__sel_op(const char *s)
{
    for (int i = 0; s && ops[i]; i++)
        if (!strcmp(ops[i], s))
            return i;
    return -1;
}

static void req_one(struct model_sel_req *r, const char *key, enum model_sel_op op,
                    const char *value)
{
    r->key = xstrdup(key);
    r->op = op;
    r->values = xcalloc(1, sizeof(char *));
    r->values[0] = xstrdup(value);
    r->nvalues = 1;
}

/* Appends the requirements of a matchExpressions / matchFields array. */
static int decode_reqs(json_t *list, struct model_sel_req **out, size_t *n, const char *field,
                       struct err *err)
{
    json_t *e, *val;
    size_t i, k;
    if (!json_array_size(list))
        return 0;
    *out = xrealloc(*out, (*n + json_array_size(list) + 1) * sizeof(**out));
    json_array_foreach(list, i, e)
    {
        const char *key = json_string_value(json_object_get(e, "key"));
        int op = model__sel_op(json_string_value(json_object_get(e, "operator")));
        if (!key || op < 0)
            return err_setf(err, ERR_INVALID, field, "%s[%zu]: needs a key and a known operator",
                            field, i);
        struct model_sel_req *r = &(*out)[(*n)++];
        memset(r, 0, sizeof(*r));
        r->key = xstrdup(key);
        r->op = (enum model_sel_op)op;
        json_t *values = json_object_get(e, "values");
        r->values = xcalloc(json_array_size(values) + 1, sizeof(char *));
        json_array_foreach(values, k, val)
        {
            if (json_is_string(val))
                r->values[r->nvalues++] = xstrdup(json_string_value(val));
        }
        if ((op == MODEL_OP_GT || op == MODEL_OP_LT) &&
            (r->nvalues != 1 || model__int_value(r->values[0], &r->num) < 0))
            return err_setf(err, ERR_INVALID, field, "%s[%zu].values: needs one integer", field, i);
    }
    return 0;
}

int model__decode_selector(json_t *ls, struct model_selector *out, const char *field,
                           struct err *err)
{
    memset(out, 0, sizeof(*out));
    if (!json_is_object(ls)) {
        out->none = 1;
        return 0;
    }
    json_t *ml = json_object_get(ls, "matchLabels"), *v;
    const char *k;
    out->req = xcalloc(json_object_size(ml) + 1, sizeof(*out->req));
    json_object_foreach(ml, k, v)
    {
        if (json_is_string(v))
            req_one(&out->req[out->nreq++], k, MODEL_OP_IN, json_string_value(v));
    }
    return decode_reqs(json_object_get(ls, "matchExpressions"), &out->req, &out->nreq, field, err);
}

/* Adds "key op (the pod's value)" for each key of keys the pod carries. */
static void label_keys(struct model_selector *s, json_t *keys, enum model_sel_op op,
                       const struct model_pod *p)
{
    json_t *k;
    size_t i;
    if (s->none || !json_array_size(keys))
        return;
    s->req = xrealloc(s->req, (s->nreq + json_array_size(keys) + 1) * sizeof(*s->req));
    json_array_foreach(keys, i, k)
    {
        const char *val = model_label(p->labels, p->nlabels, str_or_empty(k));
        if (val)
            req_one(&s->req[s->nreq++], json_string_value(k), op, val);
    }
}

static int decode_node_term(json_t *t, int32_t weight, struct model_node_term *out, struct err *err)
{
    memset(out, 0, sizeof(*out));
    out->weight = weight;
    int rc = decode_reqs(json_object_get(t, "matchExpressions"), &out->expr, &out->nexpr,
                         "spec.affinity.nodeAffinity.matchExpressions", err);
    if (rc == 0)
        rc = decode_reqs(json_object_get(t, "matchFields"), &out->fields, &out->nfields,
                         "spec.affinity.nodeAffinity.matchFields", err);
    return rc;
}

static int decode_node_affinity(json_t *na, struct model_affinity *p, struct err *err)
{
    json_t *req = json_object_get(na, "requiredDuringSchedulingIgnoredDuringExecution");
    json_t *pref = json_object_get(na, "preferredDuringSchedulingIgnoredDuringExecution"), *t;
    json_t *terms = json_object_get(req, "nodeSelectorTerms");
    size_t i;
    int rc = 0;
    p->has_node_req = json_is_object(req);
    p->node_req = xcalloc(json_array_size(terms) + 1, sizeof(*p->node_req));
    json_array_foreach(terms, i, t)
    {
        if ((rc = decode_node_term(t, 0, &p->node_req[p->nnode_req++], err)) < 0)
            return rc;
    }
    p->node_pref = xcalloc(json_array_size(pref) + 1, sizeof(*p->node_pref));
    json_array_foreach(pref, i, t)
    {
        int32_t w = (int32_t)json_integer_value(json_object_get(t, "weight"));
        if ((rc = decode_node_term(json_object_get(t, "preference"), w,
                                   &p->node_pref[p->nnode_pref++], err)) < 0)
            return rc;
    }
    return 0;
}

static int decode_pod_term(json_t *t, int32_t weight, const struct model_pod *p,
                           struct model_pod_term *out, struct err *err)
{
    json_t *nss = json_object_get(t, "namespaces"), *ns;
    size_t i;
    memset(out, 0, sizeof(*out));
    out->weight = weight;
    out->topology_key = xstrdup(str_or_empty(json_object_get(t, "topologyKey")));
    out->all_ns = json_is_object(json_object_get(t, "namespaceSelector"));
    out->namespaces = xcalloc(json_array_size(nss) + 1, sizeof(char *));
    json_array_foreach(nss, i, ns)
    {
        if (json_is_string(ns))
            out->namespaces[out->nnamespaces++] = xstrdup(json_string_value(ns));
    }
    int rc = model__decode_selector(json_object_get(t, "labelSelector"), &out->sel,
                                    "spec.affinity.labelSelector.matchExpressions", err);
    label_keys(&out->sel, json_object_get(t, "matchLabelKeys"), MODEL_OP_IN, p);
    label_keys(&out->sel, json_object_get(t, "mismatchLabelKeys"), MODEL_OP_NOT_IN, p);
    return rc;
}

static int decode_pod_terms(json_t *aff, const struct model_pod *p, struct model_pod_term **req,
                            size_t *nreq, struct model_pod_term **pref, size_t *npref,
                            struct err *err)
{
    json_t *r = json_object_get(aff, "requiredDuringSchedulingIgnoredDuringExecution");
    json_t *w = json_object_get(aff, "preferredDuringSchedulingIgnoredDuringExecution"), *t;
    size_t i;
    int rc = 0;
    *req = xcalloc(json_array_size(r) + 1, sizeof(**req));
    json_array_foreach(r, i, t)
    {
        if ((rc = decode_pod_term(t, 0, p, &(*req)[(*nreq)++], err)) < 0)
            return rc;
    }
    *pref = xcalloc(json_array_size(w) + 1, sizeof(**pref));
    json_array_foreach(w, i, t)
    {
        int32_t weight = (int32_t)json_integer_value(json_object_get(t, "weight"));
        if ((rc = decode_pod_term(json_object_get(t, "podAffinityTerm"), weight, p,
                                  &(*pref)[(*npref)++], err)) < 0)
            return rc;
    }
    return 0;
}

static int decode_spread(json_t *list, const struct model_pod *pod, struct model_affinity *p,
                         struct err *err)
{
    json_t *c;
    size_t i;
    p->spread = xcalloc(json_array_size(list) + 1, sizeof(*p->spread));
    json_array_foreach(list, i, c)
    {
        struct model_spread *s = &p->spread[p->nspread++];
        const char *when = json_string_value(json_object_get(c, "whenUnsatisfiable"));
        const char *aff = json_string_value(json_object_get(c, "nodeAffinityPolicy"));
        const char *taints = json_string_value(json_object_get(c, "nodeTaintsPolicy"));
        json_int_t md = json_integer_value(json_object_get(c, "minDomains"));
        s->max_skew = (int32_t)json_integer_value(json_object_get(c, "maxSkew"));
        s->topology_key = xstrdup(str_or_empty(json_object_get(c, "topologyKey")));
        s->hard = !when || !strcmp(when, "DoNotSchedule");
        s->min_domains = md > 0 ? (int32_t)md : 1;
        s->honor_affinity = !aff || !strcmp(aff, "Honor");
        s->honor_taints = taints && !strcmp(taints, "Honor");
        int rc = model__decode_selector(json_object_get(c, "labelSelector"), &s->sel,
                                        "spec.topologySpreadConstraints.labelSelector", err);
        if (rc < 0)
            return rc;
        label_keys(&s->sel, json_object_get(c, "matchLabelKeys"), MODEL_OP_IN, pod);
    }
    return 0;
}

int model__pod_affinity_decode(json_t *spec, struct model_pod *pod, struct err *err)
{
    json_t *aff = json_object_get(spec, "affinity");
    json_t *spread = json_object_get(spec, "topologySpreadConstraints");
    json_t *na = json_object_get(aff, "nodeAffinity");
    pod->aff = NULL;
    if (!json_object_size(aff) && !json_array_size(spread))
        return 0;
    struct model_affinity *p = xcalloc(1, sizeof(*p));
    p->refs = 1;
    p->node_key = na ? json_dumps(na, JSON_COMPACT | JSON_SORT_KEYS) : xstrdup("");
    int rc = decode_node_affinity(na, p, err);
    if (rc == 0)
        rc = decode_pod_terms(json_object_get(aff, "podAffinity"), pod, &p->aff_req, &p->naff_req,
                              &p->aff_pref, &p->naff_pref, err);
    if (rc == 0)
        rc = decode_pod_terms(json_object_get(aff, "podAntiAffinity"), pod, &p->anti_req,
                              &p->nanti_req, &p->anti_pref, &p->nanti_pref, err);
    if (rc == 0)
        rc = decode_spread(spread, pod, p, err);
    if (rc < 0)
        model_affinity_unref(p);
    else
        pod->aff = p;
    return rc;
}

struct model_affinity *model_affinity_ref(struct model_affinity *a)
{
    if (a)
        a->refs++;
    return a;
}

static void node_terms_release(struct model_node_term *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        model__sel_reqs_release(t[i].expr, t[i].nexpr);
        model__sel_reqs_release(t[i].fields, t[i].nfields);
    }
    free(t);
}

static void pod_terms_release(struct model_pod_term *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        model_selector_release(&t[i].sel);
        for (size_t k = 0; k < t[i].nnamespaces; k++)
            free(t[i].namespaces[k]);
        free(t[i].namespaces);
        free(t[i].topology_key);
    }
    free(t);
}

void model_affinity_unref(struct model_affinity *p)
{
    if (!p || --p->refs > 0)
        return;
    free(p->node_key);
    node_terms_release(p->node_req, p->nnode_req);
    node_terms_release(p->node_pref, p->nnode_pref);
    pod_terms_release(p->aff_req, p->naff_req);
    pod_terms_release(p->aff_pref, p->naff_pref);
    pod_terms_release(p->anti_req, p->nanti_req);
    pod_terms_release(p->anti_pref, p->nanti_pref);
    for (size_t i = 0; i < p->nspread; i++) {
        free(p->spread[i].topology_key);
        model_selector_release(&p->spread[i].sel);
    }
    free(p->spread);
    free(p);
}
