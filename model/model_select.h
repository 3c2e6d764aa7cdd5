/*
 * model_select.h - labels and what matches them: label selectors, node selector terms,
 * pod (anti-)affinity, topology spread, taints and tolerations.
 *
 * The structs are decoded from validated documents (decode_affinity.c) and own their
 * strings; a pod's placement rules (struct model_affinity) are immutable and shared by
 * reference count between the pod and the scheduler's pod shapes. Matching functions
 * borrow everything they are given and keep nothing.
 */
#ifndef MUSTER_MODEL_SELECT_H
#define MUSTER_MODEL_SELECT_H

#include <stddef.h>
#include <stdint.h>

struct model_kv {
    char *key;
    char *value;
};

struct model_taint {
    char *key, *value, *effect; /* effect: NoSchedule, PreferNoSchedule, NoExecute;
                                   value "" when absent */
};

struct model_toleration {
    char *key, *op, *value, *effect; /* op: Equal or Exists; NULL key with Exists matches all;
                                        value "" when absent; NULL effect matches every effect */
};

/* ---- selectors (selector.c) ----
 *
 * Label selectors and node selector terms as Kubernetes defines them
 * (apimachinery labels.Selector, NodeSelectorRequirement): a requirement
 * In / NotIn / Exists / DoesNotExist / Gt / Lt on one key. NotIn and DoesNotExist
 * match an object without the key; Gt and Lt compare integers and never match an
 * absent or non-integer value. */
enum model_sel_op {
    MODEL_OP_IN,
    MODEL_OP_NOT_IN,
    MODEL_OP_EXISTS,
    MODEL_OP_DOES_NOT_EXIST,
    MODEL_OP_GT,
    MODEL_OP_LT
};

struct model_sel_req {
    char *key;
    enum model_sel_op op;
    char **values;
    size_t nvalues;
    int64_t num; /* Gt, Lt: values[0] as an integer */
};

/* A label selector: matchLabels and matchExpressions ANDed. An empty selector
 * ({}) matches everything; a missing one (none = 1) matches nothing. */
struct model_selector {
    struct model_sel_req *req; /* matchLabels first (as In with one value), then the expressions */
    size_t nreq;
    int none;
};

/* One nodeSelectorTerm: matchExpressions on labels and matchFields on metadata.name,
 * ANDed. A term with neither matches no node. */
struct model_node_term {
    struct model_sel_req *expr, *fields;
    size_t nexpr, nfields;
    int32_t weight; /* preferredDuringScheduling weight, 0 for required terms */
};

/* One pod (anti-)affinity term. */
struct model_pod_term {
    struct model_selector sel;
    char **namespaces; /* the namespaces the term looks in; NULL with all_ns = 0: the pod's own */
    size_t nnamespaces;
    int all_ns; /* namespaceSelector: {} */
    char *topology_key;
    int32_t weight; /* preferred terms, 0 for required terms */
};

/* One topologySpreadConstraint. */
struct model_spread {
    int32_t max_skew;
    char *topology_key;
    int hard;                  /* whenUnsatisfiable: DoNotSchedule */
    struct model_selector sel; /* matchLabelKeys already merged in from the pod's labels */
    int32_t min_domains;       /* 1 when unset */
    int honor_affinity;        /* nodeAffinityPolicy: Honor (the default) */
    int honor_taints;          /* nodeTaintsPolicy: Honor (default Ignore) */
};

/* The placement rules of a pod beyond nodeSelector and tolerations, decoded once and
 * shared (reference counted) by the pod and the scheduler's pod shapes. Immutable. */
struct model_affinity {
    int refs;
    char *node_key; /* canonical text of the nodeAffinity part ("" when none): pods with
                       equal node_key have equal node terms */
    /* nodeAffinity: required terms (ORed) and preferred terms (weighted) */
    struct model_node_term *node_req, *node_pref;
    size_t nnode_req, nnode_pref;
    int has_node_req; /* requiredDuringScheduling is set (with no terms nothing matches) */
    /* podAffinity / podAntiAffinity, required and preferred */
    struct model_pod_term *aff_req, *aff_pref, *anti_req, *anti_pref;
    size_t naff_req, naff_pref, nanti_req, nanti_pref;
    struct model_spread *spread; /* topologySpreadConstraints */
    size_t nspread;
};
/* Takes a reference (a may be NULL); returns a. */
struct model_affinity *model_affinity_ref(struct model_affinity *a);
/* Drops a reference; frees on the last. NULL-safe. */
void model_affinity_unref(struct model_affinity *a);
/* 1 when the node (name and labels) matches the term. */
int model_node_term_match(const struct model_node_term *t, const char *name,
                          const struct model_kv *labels, size_t n);

/* 1 when labels match the selector. */
int model_selector_match(const struct model_selector *s, const struct model_kv *labels, size_t n);
/* 1 when the requirement holds for the value of its key (NULL: the key is absent). */
int model_sel_req_match(const struct model_sel_req *r, const char *value);
/* The value of key among labels, or NULL. */
const char *model_label(const struct model_kv *labels, size_t n, const char *key);
void model_selector_release(struct model_selector *s);

#endif
