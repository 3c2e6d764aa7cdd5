/*
 * view_resv.h - the reservations held in the view (struct sv_resv, view_types.h), the
 * attempt's gate over them, and the time limits of jobs.
 *
 * A reservation holds nodes for one starving job until its expected start: each node at
 * most one (sv_node.resv). reserve/ decides them (reserve.h), record/ stores them, the
 * rebuild reads them back (view_load.c), and the cycle installs and drops them here.
 *
 * The gate (Slurm's backfill rule): before a job is attempted, sched__view_resv_gate marks
 * each reservation the job may not use (blocks): one of another job, of equal or higher
 * priority, whose expected start is before the job's own end (now + its limit; a job
 * without a limit ends never, so it never backfills). place_fit.c's free capacity is 0 on
 * a node of a blocking reservation. The gate bumps view.epoch whenever a mark changes,
 * so the placers' per-shape caches (place.h) never carry a decision across gates.
 * sched__view_resv_gate_off clears it after the attempt.
 *
 * Calls: view_base (jobs by name) only.
 */
#ifndef MUSTER_SCHED_VIEW_RESV_H
#define MUSTER_SCHED_VIEW_RESV_H

#include <jansson.h>
#include <stdint.h>

#include "view_types.h"

/* The stored reservation (STORE_DB_RESERVATIONS, keyed by job id; record/'s
 * sched__resv_json writes it, sched__view_resv_load reads it back):
 *   {"job", "priority", "nodes": [names], "expectedStart": RFC 3339 | null (unknown),
 *    "expectedStartMs": ms | null, "since": RFC 3339, "sinceMs": ms,
 *    "waitingFor": [job ids], "reason": "max-wait" | "strict-fifo", "cycle"} */
#define SV_RESV_M_JOB "job"
#define SV_RESV_M_PRIORITY "priority"
#define SV_RESV_M_NODES "nodes"
#define SV_RESV_M_START "expectedStart"
#define SV_RESV_M_START_MS "expectedStartMs"
#define SV_RESV_M_SINCE "since"
#define SV_RESV_M_SINCE_MS "sinceMs"
#define SV_RESV_M_WAITS "waitingFor"
#define SV_RESV_M_REASON "reason"

/* Installs the stored reservation doc (borrowed) of the rebuild: nodes the view does not
 * know, or that an earlier one holds, are left out. Returns 0 (a malformed document is
 * skipped: the next cycle decides the job's reservation again). */
int sched__view_resv_load(struct sched_view *v, json_t *doc);
/* {job: {"nodes", "expectedStartMs", "priority"}} of the live reservations, for the view's
 * dump (view_load.c). New. */
json_t *sched__view_resv_dump(const struct sched_view *v);

/* The index of job's reservation, -1 when it has none. */
int sched__view_resv_find(const struct sched_view *v, const char *job);
/* Installs r (takes ownership of its job, nodes and waits, even when it replaces), replacing
 * the job's reservation if it has one; each node of r is held by it (sv_node.resv). A node
 * already held by another reservation is taken from it (the caller decides in order: reserve/
 * never asks for one). Returns its index. */
int sched__view_resv_put(struct sched_view *v, struct sv_resv *r);
/* Drops reservation i: its nodes are free of it, the slot is reused. */
void sched__view_resv_del(struct sched_view *v, int i);
/* Frees every reservation (the view's release). */
void sched__view_resv_free(struct sched_view *v);
/* The attempt's gate: marks the reservations jobs[0..njobs) of priority prio, ending at end_ms
 * (INT64_MAX: no limit), may not use. */
void sched__view_resv_gate(struct sched_view *v, const int *jobs, size_t njobs, int32_t prio,
                           int64_t end_ms);
void sched__view_resv_gate_off(struct sched_view *v);
/* 1 when node n is held by a reservation the gate marks. */
int sched__view_resv_blocked(const struct sched_view *v, const struct sv_node *n);

/* A job's time limit in ms: its pods' largest model_pod_limit_ms, 0 when none has one. */
int64_t sched__job_limit_ms(const struct sched_view *v, const struct sv_job *j);
/* When a running job ends at the latest: the latest start of its bound, live pods (now_ms
 * for one not started) plus the job's limit; INT64_MAX when it has no limit; 0 when none
 * of its pods is bound and live. */
int64_t sched__job_end_ms(const struct sched_view *v, const struct sv_job *j, int64_t now_ms);

#endif
