/*
 * resv_record.h - the records of reservations (reserve/reserve.h decides them): the stored
 * reservation, its audit records ("reserved", "unreserved"), its JSON as GET
 * /api/v1/reservations serves it, and the why's Reserved and ReservedForStarving blockers.
 *
 * Each function that writes takes the cycle (its transaction) and writes nothing else; the
 * view is the cycle's to change (sched__view_resv_put / _del, view_resv.h).
 *
 * Owns: resv_record.c. Calls: reserve/ (the plan's reason names), view/, reason/, store/.
 */
#ifndef MUSTER_SCHED_RESV_RECORD_H
#define MUSTER_SCHED_RESV_RECORD_H

#include <jansson.h>

#include "cyc.h"
#include "reason.h"
#include "view.h"

struct err;

/* Reservation r of the view as stored and served (view_resv.h lists the members), with
 * "cycle": cycle. New. */
json_t *sched__resv_json(const struct sched_view *v, const struct sv_resv *r, uint64_t cycle);
/* Stores reservation i of c's view and appends its "reserved" audit record (moved: it
 * replaces an earlier one of the job). Returns 0 or ERR_*. */
int sched__record_reserved(struct sched_cyc *c, int i, int moved, struct err *err);
/* Deletes job's stored reservation and appends its "unreserved" audit record (why:
 * "placed", "gone"). Returns 0 or ERR_*. */
int sched__record_unreserved(struct sched_cyc *c, const char *job, const char *why,
                             struct err *err);
/* Adds the Reserved blocker of reservation r (the job's own) to b. */
void sched__resv_blocker(const struct sched_view *v, const struct sv_resv *r,
                         struct sched_blockers *b);
/* Adds a ReservedForStarving blocker to b when the gate of the attempt that failed blocks
 * a reservation (the first, in slot order) holding a node that passes the static filters of
 * pod shape sh; end_ms is the job's own end (INT64_MAX: no limit). */
void sched__resv_blocked_blocker(const struct sched_view *v, const struct sv_shape *sh,
                                 int64_t end_ms, struct sched_blockers *b);

#endif
