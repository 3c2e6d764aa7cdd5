/*
 * why_store.h - the why DB (STORE_DB_WHY) checked against the scheduler's view, for tests
 * that create, place and delete jobs.
 *
 *     char why[512];
 *     ck_assert_msg(why_store_check(u.s, u.st, why, sizeof(why)) == 0, "%s", why);
 *
 * Checks, in one read transaction, under the scheduler's lock:
 *   - every job document (a key without the "~class/" prefix) names a job of the view, or
 *     a preemption victim the ledger still retains ("v:<job>" in STORE_DB_PREEMPTIONS);
 *   - every class record's class document ("~class/<cycle>/<n>") is stored, and its count
 *     ("~class/<cycle>/<n>/members") equals the number of records naming it;
 *   - no class document or count is left that no record names;
 *   - a view job that read its document (why_loaded) names the class its record names.
 * The scheduler must be idle (no cycle, apply or delete under way in another thread).
 */
#ifndef MUSTER_TESTS_WHY_STORE_H
#define MUSTER_TESTS_WHY_STORE_H

#include <jansson.h>
#include <stddef.h>

struct sched;
struct store;

/* Every stored why document (job records and class documents) by key, read in one
 * transaction (new). Aborts (the test fails) when the store cannot be read. */
json_t *why_store_all(struct store *st);

/* 0 when the why DB holds exactly what it should; -1 with the first violation in msg; or
 * a negative ERR_* when the store cannot be read (message in msg). */
int why_store_check(struct sched *s, struct store *st, char *msg, size_t n);

#endif
