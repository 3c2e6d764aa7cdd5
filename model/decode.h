/*
 * decode.h - decoding inside model/ (prefix model__): resource lists, a pod's placement
 * rules and selectors, and the pod fields the pod rules read.
 *
 * Decoders read validated documents (borrowed) into structs that own their strings; on
 * failure they return ERR_INVALID naming the field and leave nothing allocated.
 */
#ifndef MUSTER_MODEL_DECODE_H
#define MUSTER_MODEL_DECODE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "model_pod.h"
#include "model_quantity.h"
#include "model_select.h"

struct err;
struct model_node;

/* A resource list (map of name -> quantity, NULL for none) decoded and sorted by name
 * (decode.c). Returns 0 or ERR_INVALID naming field; *out is then NULL. */
int model__res_list(json_t *map, const char *field, struct model_res **out, size_t *n,
                    struct err *err);
void model__res_free(struct model_res *r, size_t n);

/* Node n's labels with MODEL_LABEL_HOSTNAME, its name, when they have none (decode.c;
 * decode_stored_node.c too). */
void model__node_hostname(struct model_node *n);

/* A resource list being summed (decode.c; decode_stored.c reads pods with it too): add each
 * quantity (MODEL__RES_SUM adds, saturating at INT64_MAX; MODEL__RES_MAX keeps the larger),
 * bound each to MODEL_QUANTITY_MAX, then finish (sorted by name; the list moves to *out).
 * Free what is left with model__res_acc_free. */
struct model__res_acc {
    struct model_res *r;
    size_t n, cap;
};
enum { MODEL__RES_SUM, MODEL__RES_MAX };
void model__res_add(struct model__res_acc *a, const char *name, int64_t value, int mode);
void model__res_bound(struct model__res_acc *a);
void model__res_finish(struct model__res_acc *a, struct model_res **out, size_t *n);
void model__res_acc_free(struct model__res_acc *a);

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
/* Decodes a metav1.LabelSelector; a missing one (not an object) selects nothing (none = 1).
 * Returns 0 or ERR_INVALID naming field (decode_affinity.c). */
int model__decode_selector(json_t *ls, struct model_selector *out, const char *field,
                           struct err *err);
/* Frees n requirements and the array (selector.c). */
void model__sel_reqs_release(struct model_sel_req *r, size_t n);

#endif
