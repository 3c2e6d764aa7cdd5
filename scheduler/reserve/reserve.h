/*
 * reserve.h - reservations: no gang starves (docs/reservations.md).
 *
 * A pending job that has waited longer than its starvation threshold (the PodGroup's
 * muster.io/max-wait, else its queue's, else sched_options.max_wait_ms), or that heads a
 * StrictFIFO queue, gets a reservation when its attempt fails: the nodes, within its
 * topology rules, that will be free soonest by the running jobs' time limits, and the
 * expected start. Other jobs may use those nodes only when their own limit ends before
 * that start (Slurm's backfill rule, the gate of view_resv.h); a job without a limit never
 * does. One reservation per node: a later starving job reserves among the nodes no earlier
 * one holds, and queues behind when they are not enough (it gets none until they are).
 *
 * A reservation stays as it was decided while it holds: its nodes are still its own and
 * its expected start has not passed. Only then, or for a job without one, is it decided
 * again: deciding reads every running pod, and a decision that moved with every job placed
 * ahead would rewrite (and audit) every later reservation in every cycle.
 *
 * Calling sequence (cycle/cycle_reserve.c): sched__reserve_starving decides whether a failed
 * job starves; sched__reserve_plan decides its reservation as a typed result (struct
 * reserve_plan: nothing is written or installed here); record/ writes it
 * (sched__record_reservation) and the cycle installs it in the view
 * (sched__view_resv_put).
 *
 * The plan. For the attempt's pod shape (its first pending pod's; the pods of a gang are
 * one shape in the traces and manifests muster is given, and a mixed gang is reserved
 * for its first shape) each node that passes the shape's static filters and is held by no
 * other reservation frees room in steps: now, what is free; then, one running pod after
 * another in the order of their jobs' expected ends (sched__job_end_ms), what is free once
 * they are gone. The steps of every node are sorted by time (then node name) and taken
 * until they hold the pods the job still needs; the expected start is the time of the
 * last one taken. Under MustGather this runs per domain of the layer and the domain that
 * starts soonest wins. A node whose room needs a job without a limit to end frees it
 * "never" (INT64_MAX): such steps are taken last and make the start unknown.
 *
 * Calls: place/ (static fit), queue/ nothing, view/, reason/. Owns reserve.c.
 */
#ifndef MUSTER_SCHED_RESERVE_H
#define MUSTER_SCHED_RESERVE_H

#include <stdint.h>

#include "place.h"
#include "view.h"

/* At most this many reservations are held at once (Slurm bounds its backfill work the same
 * way, bf_max_job_test): a starving job beyond them gets none and waits behind in order
 * until one ends. */
#define RESERVE_MAX 128

/* The reason a job gets a reservation */
enum reserve_reason { RESERVE_MAX_WAIT, RESERVE_STRICT_FIFO };
/* "max-wait", "strict-fifo". Static storage. */
const char *sched__reserve_reason_name(enum reserve_reason r);

/* A reservation decided for one job. Release with sched__reserve_plan_release. */
struct reserve_plan {
    int job;          /* the job (view index) */
    int32_t prio;     /* its priority */
    int64_t start_ms; /* expected start, >= now; INT64_MAX unknown */
    int *nodes;       /* node indexes, name order */
    size_t nnodes;
    int *waits; /* running jobs (view indexes) that must end first, id order */
    size_t nwaits;
    const char *domain; /* the MustGather domain (borrowed from the topology tree), NULL */
    enum reserve_reason reason;
};

/* The job's starvation threshold in ms: its PodGroup's max-wait, else its queue's, else
 * def_ms; 0 when none (it never starves by waiting). */
int64_t sched__reserve_threshold(const struct sched_view *v, const struct sv_job *j,
                                 int64_t def_ms);
/* 1 when job ji has waited (now - sched__job_creation) longer than its threshold. */
int sched__reserve_waited(const struct sched_view *v, int ji, int64_t now_ms, int64_t def_ms);

/* Decides the reservation of the attempt rq (its first job is the one reserved). Returns 1
 * with *out filled (release it), 0 when no set of nodes could ever hold the pods it needs
 * (then *out is empty). Changes nothing. */
int sched__reserve_plan(struct sched_view *v, const struct place_req *rq, int64_t now_ms,
                        enum reserve_reason reason, struct reserve_plan *out);
void sched__reserve_plan_release(struct reserve_plan *p);
/* 1 when p holds the same nodes with the same start and waits as reservation r. */
int sched__reserve_plan_same(const struct sched_view *v, const struct reserve_plan *p,
                             const struct sv_resv *r);

#endif
