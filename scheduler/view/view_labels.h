/*
 * view_labels.h - the view's index of pod labels, inter-pod terms and node labels
 * (view_labels.c), which the pod rules (place/place_rules.c) ask. The index's records
 * (struct sv_ref, sv_reflist, sv_nodes) and how it is kept are in view_part_types.h.
 *
 * Calls only the string map. The pod put and delete (view_pod.c) keep it.
 */
#ifndef MUSTER_SCHED_VIEW_LABELS_H
#define MUSTER_SCHED_VIEW_LABELS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "view_types.h"

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
