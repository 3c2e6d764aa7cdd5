/*
 * place_nodeset.h - the gather placer: fills the candidates in try order, each try its
 * own statement, and writes the why's topology part (place_nodeset.c).
 *
 * Calls: place_cands.h (the candidates), place_index.h (the why's layer statistics),
 * place_gather.h (offer slots, the state), place_rules.h and place_fit.h (a pod on a
 * node), place_req.h (the request and result), kbest.h and view/ (cyc.h: the statement).
 */
#ifndef MUSTER_SCHED_PLACE_NODESET_H
#define MUSTER_SCHED_PLACE_NODESET_H

#include "cyc.h"
#include "err.h"
#include "place_req.h"

/* Places rq's pods by topology gather (sched__place chose it: some member has a usable
 * spec and still needs its gang): allocates each pod it places through the open statement
 * and reports the rest, the why's topology part and the blockers in out. Returns 0. */
int sched__place_gather(struct sched_cyc *c, const struct place_req *rq, struct place_result *out,
                        struct err *err);

#endif
