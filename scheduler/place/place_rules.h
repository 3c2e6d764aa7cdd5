/*
 * place_rules.h - the rules that tie a pod to other pods (kube-scheduler's InterPodAffinity
 * and PodTopologySpread): required and preferred pod (anti-)affinity, the symmetry of
 * placed pods' terms, topology spread (place_rules.c).
 *
 * Calling sequence: sched__rules_prepare counts what pod pi's rules need, once per pick;
 * sched__rules_filter and the raw scores then answer per node; sched__rules_release,
 * always, before another prepare on the same view (the per-node arrays are view memory).
 *
 * Calls: place_fit.h (node affinity and taints, for spread's node policies; the
 * SCHED_FIT_* codes) and view/.
 */
#ifndef MUSTER_SCHED_PLACE_RULES_H
#define MUSTER_SCHED_PLACE_RULES_H

#include "place_fit.h"
#include "view.h"

struct sched_rules_spread {
    const struct model_spread *c;
    struct sched_strmap dom; /* "key\x1fvalue" -> matching pods, for every counted domain */
    size_t ndom;
    int64_t min;   /* the global minimum (0 below minDomains) */
    int self;      /* the pod matches its own selector */
    double weight; /* scoring: log(domains + 2) */
};

/* What one pod's rules need, counted for one pick ("key\x1fvalue" = a topology pair). */
struct sched_rules {
    const struct sv_pod *p;
    int active; /* some rule applies: the pick must filter and score per node */
    /* [naff] per required affinity term: the term's pairs -> placed pods matching every
     * required affinity term (the pod's terms, each counted under its own topologyKey) */
    struct sched_strmap *aff;
    size_t naff, aff_n;
    int self_all;               /* the pod matches all its required affinity terms */
    struct sched_strmap forbid; /* pair -> a placed pod that keeps the pod out (anti-affinity) */
    struct sched_strmap score;  /* pair -> inter-pod preference (biased, see place_rules.c) */
    int has_score;
    struct sched_rules_spread *sp;
    size_t nsp;
    /* per node (view.nnodes when prepared), in view memory: the verdict and the raw scores */
    struct sched_view *v; /* set when the arrays are in use */
    size_t nn;
    signed char *fail;    /* SCHED_FIT_OK or the rule the node breaks */
    int *by;              /* see sched__rules_filter */
    long *ipa, *sps;      /* InterPodAffinity and PodTopologySpread raw scores */
    unsigned char *sp_ok; /* the node carries every ScheduleAnyway key */
};

/* Counts what pod pi's rules and placed pods' terms need; returns r->active. Release
 * with sched__rules_release whatever it returns, before preparing another (one at a time
 * per view: the per-node arrays live in the view). */
int sched__rules_prepare(struct sched_view *v, int pi, struct sched_rules *r);
void sched__rules_release(struct sched_rules *r);
/* SCHED_FIT_OK or the first rule node n breaks; *by: the placed pod that keeps the pod
 * out (anti-affinity) or the index of the spread constraint that fails, else -1. */
int sched__rules_filter(const struct sched_rules *r, int ni, int *by);
/* InterPodAffinity's raw score of n (before normalization). */
long sched__rules_affinity_score(const struct sched_rules *r, int ni);
/* PodTopologySpread's raw score of n for the ScheduleAnyway constraints; returns 0 when
 * the node is ignored (lacks a key) or there are none. */
int sched__rules_spread_score(const struct sched_rules *r, int ni, long *raw);

#endif
