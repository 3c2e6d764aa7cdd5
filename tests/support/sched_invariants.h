/*
 * sched_invariants.h - consistency checks over a whole store, for crash and
 * scheduler tests.
 *
 *     char why[512];
 *     ck_assert_msg(sched_invariants_check(st, why, sizeof(why)) == 0, "%s", why);
 *
 * Checks, in one read transaction:
 *   - no gang partially placed: for every PodGroup, bound members == 0 or
 *     >= min(minMember, member pods); for a GangGroup, when any of its PodGroups
 *     has bound members, every PodGroup in it satisfies that rule with > 0 (or has
 *     no member pods left, e.g. all removed as preemption victims);
 *   - no non-terminal pod bound to a node that does not exist;
 *   - no node over-committed: per resource, requests of its bound non-terminal
 *     pods <= allocatable ("pods" defaults to 110 when not declared);
 *   - the audit chain verifies over its whole range.
 * (min(minMember, members) keeps the rule true after users delete member pods.)
 */
#ifndef MUSTER_TESTS_SCHED_INVARIANTS_H
#define MUSTER_TESTS_SCHED_INVARIANTS_H

#include <stddef.h>

struct store;

/* 0 when every invariant holds; -1 with the first violation in msg; or a negative
 * ERR_* when the store cannot be read (message in msg). */
int sched_invariants_check(struct store *st, char *msg, size_t n);

#endif
