/*
 * place.h - placement: does a pod shape fit a node, which node to choose, and the
 * placers that put an attempt's pending pods on nodes. The one header of place/ for the
 * parts above it (record/, preempt/, cycle/, the entry points): it includes every part's
 * header. Inside place/ each file includes only the parts below it.
 *
 * Calling sequence: the attempt fills a struct place_req (its members and their gang
 * counts, its pending pods in placement order, the merged topology spec) and calls
 * sched__place (or sched__place_nominated) with a struct place_result it initialised;
 * the placer allocates each pod it places through the open statement (cyc.h,
 * sched__stmt_alloc) and reports everything else in the result: the pods placed per
 * member, the first pod of each member it could not place, the why's topology part and
 * the blockers it found. The request is never written; a dry run (preemption's re-plan)
 * uses a result of its own.
 *
 * Files, each with its header, lowest first; each calls only files listed before it (in
 * brackets: the ones it calls):
 *   place_fit      static filters, free capacity with reservations, fit count, the score
 *   place_req      the request and result, when the members' gangs are met (minMember,
 *                  Volcano's minTaskMember)
 *   place_heap     the binpack pick's per-shape heap (fit)
 *   place_rules    pod affinity, anti-affinity, topology spread (fit)
 *   place_pick     the best node for a pod: candidates, scan, heap (fit, heap, rules)
 *   place_gather   topology gather: the spec, the attempt's state, offer slots (fit, req)
 *   place_index    the index of domains that hold a gang (gather)
 *   place_cands    the gather candidates in try order (index, gather, fit)
 *   place_nodeset  filling candidates, node-set tries, the why's topology part (cands,
 *                  index, gather, rules, fit, req)
 *   place          the choice of placer, binpack, nominated (nodeset, pick, rules, fit, req)
 * and kbest.h (the best k of n: cands, index, nodeset).
 *
 * Calls: view/ and reason/ only.
 */
#ifndef MUSTER_SCHED_PLACE_H
#define MUSTER_SCHED_PLACE_H

#include "cyc.h"
#include "place_cands.h"
#include "place_fit.h"
#include "place_gather.h"
#include "place_heap.h"
#include "place_index.h"
#include "place_pick.h"
#include "place_req.h"
#include "place_rules.h"
#include "reason.h"
#include "topo.h"
#include "view.h"

/* Places rq's pods: gather when a member asks for a strategy and some member still needs
 * its gang (a satisfied gang places later pods one by one: under MustGather inside the
 * layer's domain its bound pods run in, TopologyNoDomain for a pod that fits none of its
 * nodes), else binpack (each pod, in order, on the best node by score). Returns 0 or ERR_*; pods
 * that do not fit stay unplaced. */
int sched__place(struct sched_cyc *c, const struct place_req *rq, struct place_result *out,
                 struct err *err);
/* 1 when every pending pod of rq is nominated (a preemptor's). */
int sched__place_nominated_all(const struct sched_view *v, const struct place_req *rq);
/* Nominations are binding: each pod on its nominated node (static filters, free capacity
 * with the members' own nominations not reserved against them, pod rules). */
void sched__place_nominated(struct sched_cyc *c, const struct place_req *rq,
                            struct place_result *out);

#endif
