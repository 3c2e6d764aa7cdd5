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
 * (min(minMember, members) keeps the rule true after users delete member pods; a gang
 * the preemption ledger lists in cost.brokenGangs is exempt: preemption evicts only the
 * pods it needs and may leave a gang below minMember, DESIGN.md section 3.)
 */
#ifndef MUSTER_TESTS_SCHED_INVARIANTS_H
#define MUSTER_TESTS_SCHED_INVARIANTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct store;

/* 0 when every invariant holds; -1 with the first violation in msg; or a negative
 * ERR_* when the store cannot be read (message in msg). */
int sched_invariants_check(struct store *st, char *msg, size_t n);
/* The same, verifying the audit chain only from record audit_from on (0: from the start;
 * the record at audit_from is hashed over its predecessor, so the link is checked too),
 * and not checking the gangs named as keys of exempt (borrowed, may be NULL) nor the
 * GangGroups holding them: gangs whose bound members a test deleted or failed by hand. */
int sched_invariants_check_ex(struct store *st, uint64_t audit_from, json_t *exempt, char *msg,
                              size_t n);

#endif
