/*
 * place_req.h - what a placer is asked (struct place_req: an attempt's members, their
 * gang counts, the pending pods, the merged topology spec) and what it returns (struct
 * place_result), and when the members' gangs are met: minMember and Volcano's
 * minTaskMember (place_req.c).
 *
 * Ownership: the attempt owns the request and never has it written; a result is the
 * caller's, set up with sched__place_result_init and freed with
 * sched__place_result_release (a dry run uses a result of its own).
 *
 * Calls: view/ and reason/ only, nothing of place/.
 */
#ifndef MUSTER_SCHED_PLACE_REQ_H
#define MUSTER_SCHED_PLACE_REQ_H

#include <jansson.h>

#include "reason.h"
#include "view.h"

/* A PodGroup's network-topology-spec resolved against the tree (sched__gather_spec,
 * place_gather.h), or the members' specs merged. */
struct gather_spec {
    int must;       /* depth of the narrowest MustGather layer, -1 none */
    int prefer;     /* depth of the narrowest PreferGather layer, -1 none */
    char layer[64]; /* the layer named in the why (MustGather first) */
    int job;        /* the view's job whose PodGroup gave the spec (its podCountMultiple
                       entries apply), -1 none; set by the caller of sched__gather_spec */
};

/* One member of an attempt: the job, or one PodGroup of its GangGroup. */
struct place_member {
    int bound;     /* pods bound before the attempt (Failed and Succeeded ones not counted) */
    int base;      /* of those, the ones that count toward minMember: bound, or 0 under the
                      only-waiting match policy; the gang needs base + placed >= minMember */
    int pending;   /* pending pods */
    int satisfied; /* a gang satisfied before: its later pods are placed one by one */
};

/* What a placer is asked. Members are in id order; jobs[i] is the job of m[i], kept as an
 * int array because fit takes the member jobs in that form. */
struct place_req {
    int *jobs;
    struct place_member *m;
    size_t njobs;
    int *pods; /* pending pods in placement order */
    size_t npods;
    int has_spec;            /* some member has a usable network-topology-spec */
    struct gather_spec spec; /* the members' specs merged: the narrowest layers */
};

/* What topology gather did (place_nodeset.c), for the why document's topology part
 * (record/ writes it). Layers are depths of the view's topology tree (its layer names:
 * sched__topo_layer_name); names are borrowed from the view, valid for the cycle. */
#define PLACE_TOPO_BEST 3
struct place_topology {
    const struct sched_topo *tree; /* the tree the depths are of */
    int must;                      /* MustGather, else PreferGather */
    int depth;                     /* the layer it gathers in */
    int job_pods;                  /* the job's pods */
    int needed;                    /* pods a domain must hold */
    int candidates;                /* candidate domains */
    size_t holding;                /* domains of the layer that hold the job */
    struct place_topo_best {
        const char *name;
        long holds;
        const char *limit;   /* what limits it ("podCountMultiple", a resource), or NULL */
    } best[PLACE_TOPO_BEST]; /* the layer's best domains */
    size_t nbest;
    struct place_topo_try {
        int depth;
        const char *name;
        long offer; /* its offer slots */
        int placed; /* pods placed when it was tried */
        int ok;     /* the job was placed in it */
    } * tried;      /* every candidate tried, in order */
    size_t ntried;
    int32_t *mult; /* [nlayers + 1] the job's podCountMultiple by depth, NULL when none */
    size_t nmult;
    char summary[512]; /* one line: the blockers' message too */
};

/* What a placer returns. */
struct place_result {
    int *placed;                     /* [njobs] pods placed per member */
    int *fail_pod;                   /* [njobs] first pod of the member not placed, -1 */
    struct place_topology *topology; /* what gather did (new), NULL without gather */
    struct sched_blockers blockers;  /* what the placer found in the way */
};
/* An empty result for njobs members; release frees what it holds (not the struct). */
void sched__place_result_init(struct place_result *r, size_t njobs);
void sched__place_result_release(struct place_result *r);
/* Frees a topology account (NULL-safe). */
void sched__place_topology_free(struct place_topology *t);

/* The member index of job in rq, -1 when it is not a member. */
int sched__place_member(const struct place_req *rq, int job);
/* 1 when every member that still needs its gang has minMember pods bound + placed (res)
 * and no task of it is short (sched__job_tasks_short with pending 0). */
int sched__place_members_met(const struct sched_view *v, const struct place_req *rq,
                             const struct place_result *res);

/* Volcano's minTaskMember: 1 when some task of job j's PodGroup has fewer pods than its
 * minimum: placed ones (bound or placed by the open statement), or with pending != 0
 * every alive one (bound, placed or pending); msg (may be NULL) says which. */
int sched__job_tasks_short(const struct sched_view *v, const struct sv_job *j, int pending,
                           char *msg, size_t n);

#endif
