/*
 * sched_stress.h - the checks the scheduler stress test (tests/test_stress.c) runs after
 * every cycle, over one store snapshot plus the live scheduler.
 *
 *     struct stress_check k;
 *     stress_check_init(&k);
 *     ... after each sched_cycle (cycle number from its summary):
 *     if (stress_check_run(&k, st, s, cycle, msg, sizeof(msg)) < 0) -> fail with msg
 *     stress_check_release(&k);
 *
 * stress_check_run asserts, beyond sched_invariants_check_ex (incremental audit chain; gangs
 * the audit log shows disturbed by hand exempt from the gang rule):
 *   - every bound pod's spec.nodeName equals the node of its last "placed" audit record,
 *     and every pod a "placed" record names is bound (pods are never re-created under
 *     the same name by the stress test);
 *   - reservations: for every pod Q placed in this cycle, on its node, the requests of the
 *     bound non-terminal pods that are not terminating, plus those of the pending pods
 *     nominated there with priority >= Q's (other than Q's own GangGroup), fit the
 *     allocatable (DESIGN.md section 3, Fit);
 *   - every ledger victim is marked (deletionTimestamp and a DisruptionTarget condition)
 *     or gone, and every pod marked with DisruptionTarget is a ledger victim;
 *   - every job in state Pending, Unschedulable, Starving or Pipelined has a stored why
 *     document whose primary code is one of why.h's.
 */
#ifndef MUSTER_TESTS_SCHED_STRESS_H
#define MUSTER_TESTS_SCHED_STRESS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct store;
struct sched;

struct stress_check {
    json_t *placed;        /* pod key -> node of its last "placed" record */
    uint64_t audit_seen;   /* last audit record read into placed */
    uint64_t audit_verify; /* verify the chain from here on next time */
    json_t *cycle_placed;  /* pod keys placed in the cycle being checked */
    json_t *pod_job;       /* pod key -> job, from "placed" records */
    json_t *disturbed;     /* gangs whose bound members were deleted or finished by hand,
                              or whose PodGroup was deleted: exempt from the gang rule */
    long checked_reservations, checked_victims, checked_whys;
};

void stress_check_init(struct stress_check *k);
void stress_check_release(struct stress_check *k);
/* 0 when every check holds, -1 with the first violation in msg. */
int stress_check_run(struct stress_check *k, struct store *st, struct sched *s, uint64_t cycle,
                     char *msg, size_t n);

#endif
