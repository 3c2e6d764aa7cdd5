/*
 * internal.h - helpers shared by the files of model/ (prefix model__).
 *
 * Scalar resolution is shared by the manifest decoder (which turns plain YAML
 * scalars into typed JSON values) and the YAML emitter (which must quote any
 * string that would re-parse as something else), so both agree by construction.
 */
#ifndef MUSTER_MODEL_INTERNAL_H
#define MUSTER_MODEL_INTERNAL_H

#include <jansson.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Resolves a plain (unquoted) YAML scalar per the YAML 1.1 rules Kubernetes users
 * expect: null (~, null, empty), booleans (true/false/yes/no/on/off in lower, Title or
 * UPPER case), integers (decimal, 0x hex, 0o and 1.1-style 0 octal, +/- sign) and
 * reals (1.5, 1e3, .5). Anything else, including .inf and .nan, stays a string.
 * Returns a new value. */
json_t *model__scalar_resolve(const char *s, size_t len);

/* Shortest decimal text that reads back as the same double, always containing
 * '.', 'e' or being inf/nan, so it re-parses as a real. */
void model__real_format(double v, char *buf, size_t n);

/* Parses the YAML stream in buf into docs (appended to out); see model_manifest_parse.
 * Returns 0 or ERR_INVALID with "document N: ... at line L col C". */
int model__yaml_parse(const char *buf, size_t len, int want_pos, struct model_manifest *out,
                      struct err *err);

/* manifest_json.c: JSON (one value: an object, an array of objects or a kind: List) and
 * NDJSON (one object a line) into docs appended to out; see model_manifest_parse for the
 * errors. */
int model__json_parse(const char *buf, size_t len, struct model_manifest *out, struct err *err);
int model__ndjson_parse(const char *buf, size_t len, struct model_manifest *out, struct err *err);

/* Appends a decoded top-level value to out: objects as one document, arrays and
 * kind: List as their items (positions re-keyed). Takes ownership of obj and pos. */
void model__manifest_add(struct model_manifest *out, json_t *obj, json_t *pos);

/* Records [line, col] under path in pos (NULL: positions are not being recorded). */
void model__pos_set(json_t *pos, const char *path, int line, int col);

/* ---- validation (validate.c, validate_kinds.c) ---- */

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
/* A string in the NULL-terminated list. */
int model__want_enum(struct model__vctx *v, json_t *val, const char *field, int required,
                     const char *const *allowed);
/* An object whose values are all strings. */
void model__want_string_map(struct model__vctx *v, json_t *val, const char *field);
/* parent[key] if present must be a map of resource name -> quantity; numbers are
 * normalized to strings. */
void model__want_quantities(struct model__vctx *v, json_t *parent, const char *key,
                            const char *field);
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
void model__validate_podgroup(struct model__vctx *v, json_t *obj);
void model__validate_topology(struct model__vctx *v, json_t *obj);
void model__validate_priorityclass(struct model__vctx *v, json_t *obj);
void model__validate_queue(struct model__vctx *v, json_t *obj);
void model__validate_pdb(struct model__vctx *v, json_t *obj);

/* A resource list (map of name -> quantity, NULL for none) decoded and sorted by name
 * (decode.c). Returns 0 or ERR_INVALID naming field; *out is then NULL. */
int model__res_list(json_t *map, const char *field, struct model_res **out, size_t *n,
                    struct err *err);
void model__res_free(struct model_res *r, size_t n);
/* spec.affinity and spec.topologySpreadConstraints of a pod (validate_affinity.c). */
void model__validate_affinity(struct model__vctx *v, json_t *spec);

/* ---- the pod fields the pod rules read (pod.c) ---- */

/* metadata.<key> as an RFC 3339 time in ms since the epoch; 0 when absent, null, not a
 * string or not RFC 3339 (so a time of exactly the epoch reads as none). */
int64_t model__time_ms(json_t *meta, const char *key);

/* What "pending" (model_pod_is_pending) reads of a pod document, read one way for
 * model_pod_decode and model_pod_json_pending alike: spec.nodeName and status.phase,
 * borrowed from the pod, NULL when absent, empty or not a string (a NULL phase is
 * Pending); metadata.deletionTimestamp by model__time_ms. */
struct model__pod_state {
    const char *node_name, *phase;
    int64_t deletion_ms;
};
void model__pod_state(json_t *pod, struct model__pod_state *out);

/* ---- decoding the placement rules of a pod (decode_affinity.c) ---- */

/* Decodes spec.affinity and spec.topologySpreadConstraints (matchLabelKeys resolved
 * against out's labels, decoded first) into out->aff (NULL when the pod has neither).
 * Returns 0 or ERR_INVALID naming the field. */
int model__pod_affinity_decode(json_t *spec, struct model_pod *out, struct err *err);
/* The operator's enum model_sel_op, -1 when unknown (decode_affinity.c). */
int model__sel_op(const char *s);
/* A whole decimal integer (as Gt / Lt values and the labels they compare): 0 or -1. */
int model__int_value(const char *s, int64_t *out);
/* A metav1.LabelSelector (matchLabels, matchExpressions) checked at field f
 * (validate_affinity.c). */
void model__check_selector(struct model__vctx *v, json_t *ls, const char *f);
/* Decodes a metav1.LabelSelector; a missing one (not an object) selects nothing (none = 1).
 * Returns 0 or ERR_INVALID naming field (decode_affinity.c). */
int model__decode_selector(json_t *ls, struct model_selector *out, const char *field,
                           struct err *err);
/* Frees n requirements and the array (selector.c). */
void model__sel_reqs_release(struct model_sel_req *r, size_t n);

#endif
