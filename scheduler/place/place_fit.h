/*
 * place_fit.h - does a pod shape fit a node: the per-node facts every placer and pod rule
 * reads. Static filters (schedulable, nodeSelector, required node affinity, taints), free
 * capacity with the reservations of nominated pods, how many pods fit one after another,
 * the binpack score and the static preferences. Pure functions of the view: nothing is
 * cached or written here.
 *
 * Calls: view/ only, nothing of place/ (place_fit.c is the bottom of the folder: the
 * heap, the pod rules, the pick and the gather placer call it).
 */
#ifndef MUSTER_SCHED_PLACE_FIT_H
#define MUSTER_SCHED_PLACE_FIT_H

#include "view.h"

/* Why a shape cannot use a node: the static filters (place_fit.c), then the pod rules
 * (place_rules.h), in the order they are checked. */
enum {
    SCHED_FIT_OK,
    SCHED_FIT_UNSCHEDULABLE,
    SCHED_FIT_SELECTOR,
    SCHED_FIT_AFFINITY, /* required node affinity */
    SCHED_FIT_TAINT,    /* an untolerated NoSchedule or NoExecute taint */
    /* the pod rules (place_rules.c) */
    SCHED_FIT_POD_AFFINITY,
    SCHED_FIT_POD_ANTI_AFFINITY,
    SCHED_FIT_SPREAD,
};

/* SCHED_FIT_OK or the first static reason the shape cannot use the node. */
int sched__fit_static(const struct sv_node *n, const struct sv_shape *sh);
/* 1 when the node matches the shape's nodeSelector and required node affinity. */
int sched__fit_node_affinity(const struct sv_node *n, const struct sv_shape *sh);
/* 1 when the shape tolerates every NoSchedule and NoExecute taint of the node. */
int sched__fit_taints(const struct sv_node *n, const struct sv_shape *sh);
/* The node's first NoSchedule or NoExecute taint the shape does not tolerate, or NULL. */
const struct model_taint *sched__fit_untolerated(const struct sv_node *n,
                                                 const struct sv_shape *sh);
/* The static preferences of a node for a shape: *aff the summed weights of the preferred
 * node affinity terms it matches, *taints its untolerated PreferNoSchedule taints. */
void sched__fit_prefs(const struct sv_node *n, const struct sv_shape *sh, long *aff, long *taints);
/* -1 when every request fits the free capacity, else the index (in sh->req) of the
 * first request that does not. self: the pod, whose own nomination is not a reservation. */
int sched__fit_res(const struct sched_view *v, const struct sv_node *n, const struct sv_shape *sh,
                   int self);
int64_t sched__free(const struct sched_view *v, const struct sv_node *n, int r, int32_t prio,
                    int self);
/* The job of the first pod nominated to n whose reservation counts against pod self of
 * priority prio (the rule of sched__free), or -1: the why names whom capacity is held for. */
int sched__reserver(const struct sched_view *v, const struct sv_node *n, int32_t prio, int self);
/* Free amount of resource r on n for a pod of priority prio belonging to one of jobs: the
 * jobs' own nominations do not reserve against them. sched__free is this for self's job. */
int64_t sched__free_for(const struct sched_view *v, const struct sv_node *n, int r, int32_t prio,
                        const int *jobs, size_t njobs);
/* How many pods requesting req[0..nreq) fit on n one after another, at most cap, with
 * free capacity counted by sched__free_for (static filters are the caller's): the one
 * count behind the gather placer's offer slots and the topology API's largestGang. */
long sched__fit_count(const struct sched_view *v, const struct sv_node *n, const struct sv_req *req,
                      int nreq, int32_t prio, const int *jobs, size_t njobs, long cap);
/* Node score for placing the shape (higher is better): the binpack score, mean over
 * requested resources of used/allocatable after placement. Replaceable. */
double sched__score(const struct sched_view *v, const struct sv_node *n, const struct sv_shape *sh);

#endif
