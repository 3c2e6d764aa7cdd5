/*
 * pdb.c - the PodDisruptionBudget kind (policy/v1): validation of one document, the typed
 * decode and the disruption controller's arithmetic.
 *
 * Validation follows kubernetes' pkg/apis/policy/validation (ValidatePodDisruptionBudgetSpec):
 * minAvailable and maxUnavailable are each an integer >= 0 or a percentage "N%" no greater
 * than 100%, and not both set; the selector is a valid label selector; an
 * unhealthyPodEvictionPolicy is IfHealthyBudget or AlwaysAllow. Budgets sent to muster (not
 * mirrored) are also admitted (model_pdb_admit), which refuses what Kubernetes accepts but no
 * two components read alike. A mirrored budget cannot be refused: it is stored as the API
 * server has it and decoded as kube-scheduler reads it.
 */
#include "model_select.h"
#include "model_objects.h"
#include "validate.h"
#include "decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"

static const char *const eviction_policies[] = {"IfHealthyBudget", "AlwaysAllow", NULL};

/* "N%" with N decimal digits: 0 and *pct = N, else -1 (IsValidPercent). */
static int parse_percent(const char *s, int64_t *pct)
{
    size_t n = strlen(s);
    if (n < 2 || n > 12 || s[n - 1] != '%')
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *pct = v;
    return 0;
}

/* ValidatePositiveIntOrPercent and IsNotMoreThan100Percent. */
static void check_int_or_percent(struct model__vctx *v, json_t *x, const char *field)
{
    int64_t pct;
    if (json_is_integer(x)) {
        if (json_integer_value(x) < 0)
            model__problem(v, field, "must be greater than or equal to 0");
        else if (json_integer_value(x) > INT32_MAX)
            model__problem(v, field, "must be at most %d", INT32_MAX);
    } else if (!json_is_string(x) || parse_percent(json_string_value(x), &pct) < 0) {
        model__problem(v, field, "must be an integer or percentage (e.g '5%%')");
    } else if (pct > 100) {
        model__problem(v, field, "must not be greater than 100%%");
    }
}

static int selector_empty(json_t *sel)
{
    return !json_object_size(json_object_get(sel, "matchLabels")) &&
           !json_array_size(json_object_get(sel, "matchExpressions"));
}

void model__validate_pdb(struct model__vctx *v, json_t *obj)
{
    json_t *spec = json_object_get(obj, "spec");
    if (!model__want_object(v, spec, "spec", 1) || !spec)
        return;
    json_t *min = json_object_get(spec, "minAvailable");
    json_t *max = json_object_get(spec, "maxUnavailable");
    if (min)
        check_int_or_percent(v, min, "spec.minAvailable");
    if (max)
        check_int_or_percent(v, max, "spec.maxUnavailable");
    if (min && max)
        model__problem(v, "spec", "minAvailable and maxUnavailable cannot be both set");
    json_t *sel = json_object_get(spec, "selector");
    if (sel && !json_is_null(sel) && model__want_object(v, sel, "spec.selector", 0))
        model__check_selector(v, sel, "spec.selector");
    model__want_enum(v, json_object_get(spec, "unhealthyPodEvictionPolicy"),
                     "spec.unhealthyPodEvictionPolicy", 0, eviction_policies);
    json_t *status = json_object_get(obj, "status");
    if (!model__want_object(v, status, "status", 0) || !status)
        return;
    static const char *const counts[] = {"disruptionsAllowed", "currentHealthy", "desiredHealthy",
                                         "expectedPods", "observedGeneration"};
    for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
        char f[MODEL__PATH_MAX];
        snprintf(f, sizeof(f), "status.%s", counts[i]);
        model__want_int(v, json_object_get(status, counts[i]), f, 0, 0, INT32_MAX);
    }
    model__want_string_map(v, json_object_get(status, "disruptedPods"), "status.disruptedPods");
}

int model_pdb_admit(json_t *obj, struct err *err)
{
    json_t *spec = json_object_get(obj, "spec"), *sel = json_object_get(spec, "selector");
    if (!json_object_get(spec, "minAvailable") && !json_object_get(spec, "maxUnavailable"))
        return err_setf(err, ERR_INVALID, "spec",
                        "spec: one of minAvailable and maxUnavailable must be set (without "
                        "either the disruption controller allows no disruption)");
    if (!json_is_object(sel))
        return err_setf(err, ERR_INVALID, "spec.selector",
                        "spec.selector: must be set (a budget without a selector protects no "
                        "pod from preemption)");
    if (selector_empty(sel))
        return err_setf(err, ERR_INVALID, "spec.selector",
                        "spec.selector: must not be empty (the disruption controller counts "
                        "every pod of the namespace with it, kube-scheduler's preemption none)");
    return 0;
}

static void decode_intstr(json_t *x, struct model_intstr *out)
{
    int64_t pct;
    memset(out, 0, sizeof(*out));
    if (json_is_integer(x) && json_integer_value(x) >= 0 && json_integer_value(x) <= INT32_MAX) {
        out->set = 1;
        out->value = (int32_t)json_integer_value(x);
    } else if (json_is_string(x) && parse_percent(json_string_value(x), &pct) == 0 && pct <= 100) {
        out->set = out->percent = 1;
        out->value = (int32_t)pct;
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int model_pdb_decode(json_t *obj, struct model_pdb *out, struct err *err)
{
    json_t *meta = json_object_get(obj, "metadata"), *spec = json_object_get(obj, "spec");
    json_t *status = json_object_get(obj, "status");
    const char *name = json_string_value(json_object_get(meta, "name"));
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *policy = json_string_value(json_object_get(spec, "unhealthyPodEvictionPolicy"));

    memset(out, 0, sizeof(*out));
    if (!name || !*name)
        return err_setf(err, ERR_INVALID, "metadata.name", "poddisruptionbudget without a name");
    out->name = xstrdup(name);
    out->ns = xstrdup(ns && *ns ? ns : "default");
    decode_intstr(json_object_get(spec, "minAvailable"), &out->min_available);
    decode_intstr(json_object_get(spec, "maxUnavailable"), &out->max_unavailable);
    out->always_allow = policy && !strcmp(policy, "AlwaysAllow");
    json_t *sel = json_object_get(spec, "selector");
    int rc = 0;
    if (json_is_object(sel) && !selector_empty(sel))
        rc = model__decode_selector(sel, &out->sel, "spec.selector", err);
    else
        out->sel.none = 1; /* kube-scheduler: a nil or empty selector matches nothing */
    json_t *allowed = json_object_get(status, "disruptionsAllowed");
    if (json_is_integer(allowed)) {
        json_int_t a = json_integer_value(allowed);
        out->has_status = 1;
        out->disruptions_allowed = a < 0 ? 0 : a > INT32_MAX ? INT32_MAX : (int32_t)a;
    }
    json_t *healthy = json_object_get(status, "currentHealthy");
    out->current_healthy = json_is_integer(healthy) && json_integer_value(healthy) >= 0 &&
                                   json_integer_value(healthy) <= INT32_MAX
                               ? (int32_t)json_integer_value(healthy)
                               : -1;
    json_t *dp = json_object_get(status, "disruptedPods"), *t;
    const char *pod;
    out->disrupted = xcalloc(json_object_size(dp) + 1, sizeof(char *));
    json_object_foreach(dp, pod, t) out->disrupted[out->ndisrupted++] = xstrdup(pod);
    qsort(out->disrupted, out->ndisrupted, sizeof(char *), cmp_str);
    if (rc < 0)
        model_pdb_release(out);
    return rc;
}

int model_pdb_disrupted(const struct model_pdb *b, const char *pod_name)
{
    return b->ndisrupted &&
           bsearch(&pod_name, b->disrupted, b->ndisrupted, sizeof(char *), cmp_str) != NULL;
}

/* GetScaledValueFromIntOrPercent with roundUp. */
static int64_t scaled(const struct model_intstr *x, int32_t total)
{
    return x->percent ? ((int64_t)x->value * total + 99) / 100 : x->value;
}

int32_t model_pdb_allowed(const struct model_pdb *b, int32_t expected, int32_t healthy,
                          int32_t *desired)
{
    int64_t want = 0;
    if (b->max_unavailable.set) {
        int64_t d = expected - scaled(&b->max_unavailable, expected);
        want = d < 0 ? 0 : d;
    } else if (b->min_available.set) {
        want = scaled(&b->min_available, expected);
    }
    if (desired)
        *desired = (int32_t)want;
    int64_t allowed = healthy - want;
    return expected <= 0 || allowed <= 0 ? 0 : (int32_t)allowed;
}

void model_pdb_release(struct model_pdb *b)
{
    if (!b)
        return;
    free(b->ns);
    free(b->name);
    model_selector_release(&b->sel);
    for (size_t i = 0; i < b->ndisrupted; i++)
        free(b->disrupted[i]);
    free(b->disrupted);
    memset(b, 0, sizeof(*b));
}
