/*
 * validate.h - validation inside model/ (prefix model__): the context one document is
 * checked in, the typed checks every validator uses (validate_base.c, which calls nothing
 * above it), and the validator of each kind, which model_validate (validate.c) dispatches to.
 *
 * A problem is appended to the context's errors (a JSON array the caller owns) with the
 * document's label and, where positions were recorded, the field's line and column. The
 * checks borrow the values they look at and never keep them.
 */
#ifndef MUSTER_MODEL_VALIDATE_H
#define MUSTER_MODEL_VALIDATE_H

#include <jansson.h>
#include <limits.h>

#include "model_kind.h"
#include "model_manifest.h"

#define MODEL__PATH_MAX 512

/* One document being validated: where problems go and how they are labelled. */
struct model__vctx {
    struct model_doc *doc;
    json_t *errors;
    enum model_kind kind;
    char kind_name[64]; /* as written, "" when absent */
    char name[320];     /* "ns/name" or "name", "" when absent */
    int count;
};

/* buf (MODEL__PATH_MAX bytes) as snprintf(buf, MODEL__PATH_MAX, "%s.%s", base, key) would
 * write it (base may be buf), without printf: the paths of the fields a valid document has
 * are made for every document. */
void model__path(char *buf, const char *base, const char *key);
/* The same for "%s[%zu]", base and i. */
void model__path_index(char *buf, const char *base, size_t i);

/* Appends a problem at field ("" for the document itself). */
void model__problem(struct model__vctx *v, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends a report like model__problem's to list (warnings), without counting it. */
void model__report(struct model__vctx *v, json_t *list, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Walks obj against the schema of v->kind (schema.c): unsupported fields and wrong shapes
 * are problems in every mode; unknown fields are problems (STRICT), or are dropped from obj
 * with a report appended to warnings (WARN; warnings may be NULL) or silently (IGNORE). */
void model__check_fields(struct model__vctx *v, json_t *obj, enum model_fields mode,
                         json_t *warnings);

/* Type checks: each reports "must be ..." at field and returns 0 when val is
 * present with the wrong type, 1 when it is usable. Absent (NULL) values return 0
 * and report "missing required field" only when required. */
int model__want_object(struct model__vctx *v, json_t *val, const char *field, int required);
int model__want_array(struct model__vctx *v, json_t *val, const char *field, int required);
int model__want_string(struct model__vctx *v, json_t *val, const char *field, int required);
int model__want_bool(struct model__vctx *v, json_t *val, const char *field);
/* An integer within [min, max]. */
int model__want_int(struct model__vctx *v, json_t *val, const char *field, int required,
                    json_int_t min, json_int_t max);
/* annotations[key], when present, is a positive Go duration (model_duration_parse). */
void model__want_duration_ann(struct model__vctx *v, json_t *annotations, const char *key);
/* A string in the NULL-terminated list. */
int model__want_enum(struct model__vctx *v, json_t *val, const char *field, int required,
                     const char *const *allowed);
/* An object whose values are all strings. */
void model__want_string_map(struct model__vctx *v, json_t *val, const char *field);
/* parent[key] if present must be a map of resource name -> quantity; numbers are
 * normalized to strings. */
void model__want_quantities(struct model__vctx *v, json_t *parent, const char *key,
                            const char *field);
/* The same, for what a node claims or a pod asks: each at most MODEL_QUANTITY_MAX. */
void model__want_claims(struct model__vctx *v, json_t *parent, const char *key, const char *field);
/* DNS-1123 subdomain (names) and label (namespaces, container names). */
int model__dns_subdomain(const char *s);
int model__dns_label(const char *s);
/* Label keys ([prefix/]name) and values (empty, or up to 63 of [A-Za-z0-9-_.]). */
int model__label_key_ok(const char *k);
int model__label_value_ok(const char *s);

/* spec.preemptionPolicy of a Pod and preemptionPolicy of a PriorityClass, NULL-terminated. */
extern const char *const model__preemption_policies[];

void model__validate_node(struct model__vctx *v, json_t *obj);
void model__validate_pod(struct model__vctx *v, json_t *obj);
/* Kubernetes' rule for extended resources in every container (model_extended_check) and
 * the group-name annotation's PodGroup name: what an API apply refuses. Not in
 * model_validate: a mirrored pod that breaks them is stored (and, for the first, never
 * placed: its decode reports the field as unsupported). */
void model__validate_pod_extended(struct model__vctx *v, json_t *obj);
void model__validate_podgroup(struct model__vctx *v, json_t *obj);
void model__validate_topology(struct model__vctx *v, json_t *obj);
void model__validate_priorityclass(struct model__vctx *v, json_t *obj);
void model__validate_queue(struct model__vctx *v, json_t *obj);
void model__validate_pdb(struct model__vctx *v, json_t *obj);

/* spec.affinity and spec.topologySpreadConstraints of a pod (validate_affinity.c). */
void model__validate_affinity(struct model__vctx *v, json_t *spec);

/* A metav1.LabelSelector (matchLabels, matchExpressions) checked at field f
 * (validate_affinity.c). */
void model__check_selector(struct model__vctx *v, json_t *ls, const char *f);

#endif
