/*
 * validate_affinity.c - the placement rules of a Pod as kube-apiserver validates
 * them (pkg/apis/core/validation: ValidateNodeSelectorRequirement, validatePodAffinityTerm,
 * validateTopologySpreadConstraints, metav1 LabelSelector validation), each problem
 * naming its field.
 *
 * One departure: a non-empty namespaceSelector is refused, because it selects
 * Namespaces by their labels and muster does not model Namespace objects; `{}` (all
 * namespaces) and `namespaces` are supported.
 */
#include "model_select.h"
#include "validate.h"
#include "decode.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* buf (MODEL__PATH_MAX bytes) = the formatted field path, truncated when too long. */
static void __attribute__((format(printf, 2, 3))) F(char *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, MODEL__PATH_MAX, fmt, ap);
    va_end(ap);
}

static void check_label_key(struct model__vctx *v, json_t *key, const char *field)
{
    if (model__want_string(v, key, field, 1) && !model__label_key_ok(json_string_value(key)))
        model__problem(v, field, "invalid label key '%s'", json_string_value(key));
}

/* One requirement. node: a NodeSelectorRequirement (Gt and Lt allowed); fields: a
 * matchFields entry (metadata.name with In or NotIn and one value). */
static void check_req(struct model__vctx *v, json_t *e, const char *f, int node, int fields)
{
    char p[MODEL__PATH_MAX];
    if (!model__want_object(v, e, f, 1))
        return;
    json_t *op = json_object_get(e, "operator"), *values = json_object_get(e, "values"), *x;
    F(p, "%s.key", f);
    if (fields) {
        json_t *key = json_object_get(e, "key");
        if (model__want_string(v, key, p, 1) && strcmp(json_string_value(key), "metadata.name"))
            model__problem(v, p, "'%s' is not a supported field selector: only metadata.name",
                           json_string_value(key));
    } else {
        check_label_key(v, json_object_get(e, "key"), p);
    }
    F(p, "%s.operator", f);
    if (!model__want_string(v, op, p, 1))
        return;
    int o = model__sel_op(json_string_value(op));
    if (o < 0 || (!node && (o == MODEL_OP_GT || o == MODEL_OP_LT)) ||
        (fields && o != MODEL_OP_IN && o != MODEL_OP_NOT_IN)) {
        model__problem(v, p, "unknown operator '%s': must be %s", json_string_value(op),
                       fields ? "In or NotIn"
                       : node ? "In, NotIn, Exists, DoesNotExist, Gt or Lt"
                              : "In, NotIn, Exists or DoesNotExist");
        return;
    }
    F(p, "%s.values", f);
    if (values && !model__want_array(v, values, p, 0))
        return;
    size_t n = json_array_size(values), i;
    json_array_foreach(values, i, x)
    {
        char q[MODEL__PATH_MAX];
        F(q, "%s[%zu]", p, i);
        model__want_string(v, x, q, 1);
    }
    if ((o == MODEL_OP_IN || o == MODEL_OP_NOT_IN) && n == 0)
        model__problem(v, p, "must be non-empty when the operator is %s", json_string_value(op));
    else if ((o == MODEL_OP_EXISTS || o == MODEL_OP_DOES_NOT_EXIST) && n)
        model__problem(v, p, "must be empty when the operator is %s", json_string_value(op));
    else if (fields && n != 1)
        model__problem(v, p, "must have one element for metadata.name");
    else if (o == MODEL_OP_GT || o == MODEL_OP_LT) {
        int64_t num;
        const char *s = json_string_value(json_array_get(values, 0));
        if (n != 1)
            model__problem(v, p, "must have one element when the operator is %s",
                           json_string_value(op));
        else if (s && model__int_value(s, &num) < 0)
            model__problem(v, p, "'%s' is not an integer (operator %s)", s, json_string_value(op));
    }
}

static void check_reqs(struct model__vctx *v, json_t *list, const char *f, int node, int fields)
{
    json_t *e;
    size_t i;
    if (!model__want_array(v, list, f, 0))
        return;
    json_array_foreach(list, i, e)
    {
        char p[MODEL__PATH_MAX];
        F(p, "%s[%zu]", f, i);
        check_req(v, e, p, node, fields);
    }
}

void model__check_selector(struct model__vctx *v, json_t *ls, const char *f)
{
    char p[MODEL__PATH_MAX];
    const char *k;
    json_t *x;
    if (!model__want_object(v, ls, f, 0))
        return;
    F(p, "%s.matchLabels", f);
    model__want_string_map(v, json_object_get(ls, "matchLabels"), p);
    json_object_foreach(json_object_get(ls, "matchLabels"), k, x)
    {
        char q[MODEL__PATH_MAX];
        F(q, "%s.%s", p, k);
        if (!model__label_key_ok(k))
            model__problem(v, q, "invalid label key '%s'", k);
        else if (json_is_string(x) && !model__label_value_ok(json_string_value(x)))
            model__problem(v, q, "invalid label value '%s'", json_string_value(x));
    }
    F(p, "%s.matchExpressions", f);
    check_reqs(v, json_object_get(ls, "matchExpressions"), p, 0, 0);
}

static void check_node_term(struct model__vctx *v, json_t *t, const char *f)
{
    char p[MODEL__PATH_MAX];
    if (!model__want_object(v, t, f, 1))
        return;
    F(p, "%s.matchExpressions", f);
    check_reqs(v, json_object_get(t, "matchExpressions"), p, 1, 0);
    F(p, "%s.matchFields", f);
    check_reqs(v, json_object_get(t, "matchFields"), p, 1, 1);
}

static void check_weight(struct model__vctx *v, json_t *t, const char *f)
{
    char p[MODEL__PATH_MAX];
    F(p, "%s.weight", f);
    model__want_int(v, json_object_get(t, "weight"), p, 1, 1, 100);
}

/* parent.preferredDuringSchedulingIgnoredDuringExecution: [{weight 1-100, member: term}]. */
static void check_preferred(struct model__vctx *v, json_t *parent, const char *f,
                            const char *member,
                            void (*check)(struct model__vctx *, json_t *, const char *))
{
    char p[MODEL__PATH_MAX], q[MODEL__PATH_MAX], r[MODEL__PATH_MAX];
    json_t *pref = json_object_get(parent, "preferredDuringSchedulingIgnoredDuringExecution"), *t;
    size_t i;
    F(p, "%s.preferredDuringSchedulingIgnoredDuringExecution", f);
    if (!model__want_array(v, pref, p, 0))
        return;
    json_array_foreach(pref, i, t)
    {
        F(q, "%s[%zu]", p, i);
        if (!model__want_object(v, t, q, 1))
            continue;
        check_weight(v, t, q);
        F(r, "%s.%s", q, member);
        check(v, json_object_get(t, member), r);
    }
}

static void check_node_affinity(struct model__vctx *v, json_t *na, const char *f)
{
    char p[MODEL__PATH_MAX], q[MODEL__PATH_MAX];
    json_t *t;
    size_t i;
    if (!model__want_object(v, na, f, 0))
        return;
    json_t *req = json_object_get(na, "requiredDuringSchedulingIgnoredDuringExecution");
    F(p, "%s.requiredDuringSchedulingIgnoredDuringExecution", f);
    if (model__want_object(v, req, p, 0)) {
        json_t *terms = json_object_get(req, "nodeSelectorTerms");
        F(q, "%s.nodeSelectorTerms", p);
        if (model__want_array(v, terms, q, 1) && json_array_size(terms) == 0)
            model__problem(v, q, "must have at least one term");
        json_array_foreach(terms, i, t)
        {
            char r[MODEL__PATH_MAX];
            F(r, "%s[%zu]", q, i);
            check_node_term(v, t, r);
        }
    }
    check_preferred(v, na, f, "preference", check_node_term);
}

static void check_label_keys(struct model__vctx *v, json_t *keys, json_t *ls, const char *f)
{
    json_t *k;
    size_t i;
    if (!model__want_array(v, keys, f, 0))
        return;
    json_array_foreach(keys, i, k)
    {
        char p[MODEL__PATH_MAX];
        F(p, "%s[%zu]", f, i);
        check_label_key(v, k, p);
        if (json_is_string(k) &&
            json_object_get(json_object_get(ls, "matchLabels"), json_string_value(k)))
            model__problem(v, p, "'%s' is also in labelSelector.matchLabels", json_string_value(k));
    }
}

static void check_pod_term(struct model__vctx *v, json_t *t, const char *f)
{
    char p[MODEL__PATH_MAX];
    json_t *ns, *x;
    size_t i;
    if (!model__want_object(v, t, f, 1))
        return;
    F(p, "%s.topologyKey", f);
    json_t *key = json_object_get(t, "topologyKey");
    if (model__want_string(v, key, p, 1)) {
        if (!*json_string_value(key))
            model__problem(v, p, "must not be empty");
        else if (!model__label_key_ok(json_string_value(key)))
            model__problem(v, p, "invalid label key '%s'", json_string_value(key));
    }
    json_t *ls = json_object_get(t, "labelSelector");
    F(p, "%s.labelSelector", f);
    model__check_selector(v, ls, p);
    F(p, "%s.namespaces", f);
    ns = json_object_get(t, "namespaces");
    if (model__want_array(v, ns, p, 0))
        json_array_foreach(ns, i, x)
        {
            char q[MODEL__PATH_MAX];
            F(q, "%s[%zu]", p, i);
            if (model__want_string(v, x, q, 1) && !model__dns_label(json_string_value(x)))
                model__problem(v, q, "invalid namespace '%s'", json_string_value(x));
        }
    F(p, "%s.namespaceSelector", f);
    json_t *nsel = json_object_get(t, "namespaceSelector");
    if (model__want_object(v, nsel, p, 0) && json_object_size(nsel))
        model__problem(v, p,
                       "only {} (every namespace) is supported: muster does not model Namespace "
                       "labels; list the namespaces in 'namespaces' instead");
    F(p, "%s.matchLabelKeys", f);
    check_label_keys(v, json_object_get(t, "matchLabelKeys"), ls, p);
    F(p, "%s.mismatchLabelKeys", f);
    check_label_keys(v, json_object_get(t, "mismatchLabelKeys"), ls, p);
}

static void check_pod_terms(struct model__vctx *v, json_t *aff, const char *f)
{
    char p[MODEL__PATH_MAX], q[MODEL__PATH_MAX];
    json_t *t;
    size_t i;
    if (!model__want_object(v, aff, f, 0))
        return;
    json_t *req = json_object_get(aff, "requiredDuringSchedulingIgnoredDuringExecution");
    F(p, "%s.requiredDuringSchedulingIgnoredDuringExecution", f);
    if (model__want_array(v, req, p, 0))
        json_array_foreach(req, i, t)
        {
            F(q, "%s[%zu]", p, i);
            check_pod_term(v, t, q);
        }
    check_preferred(v, aff, f, "podAffinityTerm", check_pod_term);
}

static const char *const whens[] = {"DoNotSchedule", "ScheduleAnyway", NULL};
static const char *const policies[] = {"Honor", "Ignore", NULL};

static void check_spread(struct model__vctx *v, json_t *list, size_t i, json_t *c)
{
    char f[MODEL__PATH_MAX], p[MODEL__PATH_MAX];
    F(f, "spec.topologySpreadConstraints[%zu]", i);
    if (!model__want_object(v, c, f, 1))
        return;
    F(p, "%s.maxSkew", f);
    model__want_int(v, json_object_get(c, "maxSkew"), p, 1, 1, 2147483647);
    F(p, "%s.topologyKey", f);
    json_t *key = json_object_get(c, "topologyKey"),
           *when = json_object_get(c, "whenUnsatisfiable");
    if (model__want_string(v, key, p, 1)) {
        if (!*json_string_value(key))
            model__problem(v, p, "must not be empty");
        else if (!model__label_key_ok(json_string_value(key)))
            model__problem(v, p, "invalid label key '%s'", json_string_value(key));
    }
    F(p, "%s.whenUnsatisfiable", f);
    int when_ok = model__want_enum(v, when, p, 1, whens);
    F(p, "%s.minDomains", f);
    json_t *md = json_object_get(c, "minDomains");
    if (model__want_int(v, md, p, 0, 1, 2147483647) && when_ok &&
        strcmp(json_string_value(when), "DoNotSchedule"))
        model__problem(v, p, "can only be set when whenUnsatisfiable is DoNotSchedule");
    F(p, "%s.nodeAffinityPolicy", f);
    model__want_enum(v, json_object_get(c, "nodeAffinityPolicy"), p, 0, policies);
    F(p, "%s.nodeTaintsPolicy", f);
    model__want_enum(v, json_object_get(c, "nodeTaintsPolicy"), p, 0, policies);
    F(p, "%s.labelSelector", f);
    json_t *ls = json_object_get(c, "labelSelector");
    model__check_selector(v, ls, p);
    F(p, "%s.matchLabelKeys", f);
    check_label_keys(v, json_object_get(c, "matchLabelKeys"), ls, p);
    for (size_t j = 0; j < i && json_is_string(key) && json_is_string(when); j++) {
        json_t *o = json_array_get(list, j);
        if (json_equal(json_object_get(o, "topologyKey"), key) &&
            json_equal(json_object_get(o, "whenUnsatisfiable"), when))
            model__problem(v, f, "duplicate constraint: {%s, %s} is also constraint %zu",
                           json_string_value(key), json_string_value(when), j);
    }
}

void model__validate_affinity(struct model__vctx *v, json_t *spec)
{
    json_t *aff = json_object_get(spec, "affinity"), *list, *c;
    size_t i;
    if (model__want_object(v, aff, "spec.affinity", 0)) {
        check_node_affinity(v, json_object_get(aff, "nodeAffinity"), "spec.affinity.nodeAffinity");
        check_pod_terms(v, json_object_get(aff, "podAffinity"), "spec.affinity.podAffinity");
        check_pod_terms(v, json_object_get(aff, "podAntiAffinity"),
                        "spec.affinity.podAntiAffinity");
    }
    list = json_object_get(spec, "topologySpreadConstraints");
    if (model__want_array(v, list, "spec.topologySpreadConstraints", 0))
        json_array_foreach(list, i, c) check_spread(v, list, i, c);
    model__want_claims(v, spec, "overhead", "spec.overhead");
    json_t *gates = json_object_get(spec, "schedulingGates"), *g;
    if (model__want_array(v, gates, "spec.schedulingGates", 0))
        json_array_foreach(gates, i, g)
        {
            char p[MODEL__PATH_MAX];
            F(p, "spec.schedulingGates[%zu]", i);
            if (model__want_object(v, g, p, 1)) {
                char q[MODEL__PATH_MAX];
                F(q, "%s.name", p);
                model__want_string(v, json_object_get(g, "name"), q, 1);
            }
        }
}
