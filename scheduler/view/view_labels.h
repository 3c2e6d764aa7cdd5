/*
 * view_labels.h - the view's index of pod labels, inter-pod terms and node labels
 * (view_labels.c), which the pod rules (place/place_rules.c) ask. Part of the view
 * (view.h includes it).
 */
#ifndef MUSTER_SCHED_VIEW_LABELS_H
#define MUSTER_SCHED_VIEW_LABELS_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"

struct sched_view;
struct sv_job;
struct sv_pod;
struct sv_node;
struct sv_shape;

/* ---- pod label and term index (view_labels.c) ----
 *
 * The pod rules (place_rules.c) ask "which placed pods carry these labels" and "which
 * placed pods have a term that may select this pod". Both are answered from lists
 * keyed by one "key=value" pair: a pod is listed under each of its labels, and each of
 * its inter-pod terms under one pair its selector requires (terms without such a pair
 * are listed under "" and always checked). Entries are removed lazily: an entry whose
 * pod slot died or was reused (gen) is dropped when a walk meets it. */
struct sv_ref {
    int pod;
    uint32_t gen;
    int term; /* SV_TERM_* << 16 | index, for term lists */
};
struct sv_reflist {
    struct sv_ref *r;
    size_t n, cap;
};
enum { SV_TERM_AFF_REQ, SV_TERM_ANTI_REQ, SV_TERM_AFF_PREF, SV_TERM_ANTI_PREF };

/* Live nodes carrying one label pair (or, for a key list, the key with any value). */
struct sv_nodes {
    int *ix;
    size_t n, cap;
    char *pair; /* pair lists: "key\x1fvalue" */
    int *vals;  /* key lists: the key's pair lists (indexes into view.nls) */
    size_t nvals, capvals;
};

/* 1 when the pod has inter-pod (anti-)affinity terms. */
int sched__pod_has_terms(const struct sv_pod *p);
/* Index maintenance, called by put/del of pods. */
void sched__view_index_pod(struct sched_view *v, int pi);
/* Calls fn for every placed pod (counted: bound or placed in the running cycle, not
 * terminal) whose labels match sel; the caller checks namespaces. Stops when fn returns
 * non-zero, and returns that. */
typedef int (*sv_pod_fn)(struct sched_view *v, int pi, void *ctx);
int sched__view_pods_matching(struct sched_view *v, const struct model_selector *sel, sv_pod_fn fn,
                              void *ctx);
/* Calls fn(v, pod, term, ctx) for every inter-pod term of a placed pod whose selector may
 * match labels (the caller matches it fully). */
typedef int (*sv_term_fn)(struct sched_view *v, int pi, int term, void *ctx);
int sched__view_terms_for(struct sched_view *v, const struct model_kv *labels, size_t n,
                          sv_term_fn fn, void *ctx);
/* The live nodes labelled key=value, or carrying key (value NULL); NULL when none.
 * Borrowed until the next node change. */
const struct sv_nodes *sched__view_nodes_labelled(struct sched_view *v, const char *key,
                                                  const char *value);
/* The same for a pair written "key\x1fvalue". */
const struct sv_nodes *sched__view_nodes_pair(struct sched_view *v, const char *pair);
void sched__view_node_labels_free(struct sched_view *v);
/* The term of pod pi named by an sv_ref.term. */
const struct model_pod_term *sched__view_term(const struct sched_view *v, int pi, int term);

#endif
