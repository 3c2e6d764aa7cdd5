/*
 * sched_util.h - helpers for scheduler tests: a scheduler on a fresh store,
 * applying YAML, reading case folders under tests/data/sched/.
 *
 *     struct sched_util u;
 *     sched_util_open(&u, NULL);                 temp dir, store (sync none), scheduler
 *     sched_util_apply(&u, "kind: Node ...", 1000);   fails the test on error
 *     json_t *sum = sched_util_cycle(&u, 2000);
 *     sched_util_close(&u);                      closes and removes the directory
 */
#ifndef MUSTER_TESTS_SCHED_UTIL_H
#define MUSTER_TESTS_SCHED_UTIL_H

#include <jansson.h>
#include <stdint.h>

#include "scheduler.h"

struct sched_util {
    char *dir;
    struct store *st;
    struct sched *s;
    struct sched_options opts;
};

void sched_util_open(struct sched_util *u, const struct sched_options *opts);
void sched_util_close(struct sched_util *u);
/* Closes and reopens the scheduler (a rebuild from the store). */
void sched_util_reopen(struct sched_util *u);
/* Applies a YAML stream; returns the results array (new). Fails the test on error. */
json_t *sched_util_apply(struct sched_util *u, const char *yaml, int64_t now_ms);
/* sched_util_apply of the YAML printf makes of fmt (at most 1 KiB), its answer dropped. */
void sched_util_applyf(struct sched_util *u, int64_t now_ms, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The value of the scheduler's counter name (sched_metrics), which must be there. */
long sched_util_metric(struct sched_util *u, const char *name);
/* Runs one cycle; returns the summary (new). Fails the test on error. */
json_t *sched_util_cycle(struct sched_util *u, int64_t now_ms);
/* A stored pod (new) or NULL. */
json_t *sched_util_pod(struct sched_util *u, const char *key);
/* spec.nodeName of a stored pod ("" when unbound; NULL when missing). New. */
char *sched_util_node_of(struct sched_util *u, const char *key);
/* All audit records as a JSON array (new). */
json_t *sched_util_audit(struct sched_util *u);
/* Number of audit records of a kind (and job, when not NULL). */
int sched_util_audit_count(struct sched_util *u, const char *kind, const char *job);

/* The scheduler's answers (new); each fails the test on error. */
json_t *sched_util_why(struct sched_util *u, const char *id);
json_t *sched_util_job(struct sched_util *u, const char *id);
/* {job id: "state reason"} of every job s knows (s: u->s, or another scheduler on u's
 * store, such as a fresh sched_open's). */
json_t *sched_util_job_states(struct sched *s);
/* The preemption ledger filtered by job, victim and since (each may be NULL). */
json_t *sched_util_ledger(struct sched_util *u, const char *job, const char *victim,
                          const char *since);
/* o.a.b as a string (borrowed) or NULL. */
const char *sched_util_str2(json_t *o, const char *a, const char *b);

/* Shared preemption clusters (preempt_data.c): two 4-cpu nodes with a priority-1 pod each
 * (lo-1, lo-2); a priority-100 4-cpu pod named by the %s. */
extern const char sched_util_two_preemptions[];
extern const char sched_util_hi_pod[];
/* On sched_util_two_preemptions: hi-1 preempts lo-1 in the cycle at 2 s, hi-2 preempts lo-2
 * in the cycle at 6 s. */
void sched_util_two_rounds(struct sched_util *u);
/* Opens u (grace 10 s) on one 4-cpu node with lo (priority 1) on it; mid (50) preempts lo
 * at 2 s and is nominated to n1; hi (100, 4 cpu) is applied at 2.5 s. */
void sched_util_mid_nominated_then_hi(struct sched_util *u);

/* Reads a whole file into a new string; NULL when it cannot be read. */
char *sched_util_read(const char *path);
/* Sorted names of the case folders under tests/data/<area>/ (new array). */
json_t *sched_util_cases(const char *area);
/* Absolute path of tests/data/<area>/<rel> (new). */
char *sched_util_case_path(const char *area, const char *rel);

/* A case folder tests/data/<area>/<name>/ holds cluster.yaml and expected.json. Loads both,
 * opens u (opts, or options.mark_running from expected.json when opts is NULL), applies the
 * cluster at t = 1 s and runs expected.json's "cycles" cycles (default 1) at 2 s, 3 s, ...
 * Returns expected.json (new); fails the test when a file cannot be read. */
json_t *sched_util_case_run(struct sched_util *u, const char *area, const char *name,
                            const struct sched_options *opts);
/* Runs expected.json's "after" events of cycle number `cycle` (1 first) at now_ms, between
 * that cycle and the next: [{"cycle": 1, "delete": ["Node/n1", "Pod/default/low"]}] (kind
 * as the CLI names it, then the key). sched_util_case_run calls it after every cycle (at
 * half a tick past it); runners of their own call it the same way. */
void sched_util_case_after(struct sched_util *u, const char *name, json_t *exp, int cycle,
                           int64_t now_ms);
/* Checks the expectations every case folder may hold: "placements" (pod -> node), "states"
 * (job -> state), "audit" (record kind -> count) and "queues" (sched_util_expect_queues). */
void sched_util_case_expect(struct sched_util *u, const char *name, json_t *exp);

/* The member of doc at path ("primary/message", "gang/0/bound"), borrowed, or NULL. An
 * array is indexed by number; "~1" in a key stands for "/" and "~0" for "~", as in a JSON
 * pointer ("resources/nvidia.com~1gpu/deserved"). */
json_t *sched_util_at_path(json_t *doc, const char *path);
/* 1 when got (may be NULL) matches want: a string is a substring of got, null matches an
 * absent or null member, a number equals got numerically (integer or real; relative 1e-6),
 * anything else json_equal. */
int sched_util_match(json_t *got, json_t *want);
/* Fails the test (naming case name and what) unless every {path: expected} of fields
 * matches doc (sched_util_match). */
void sched_util_expect_paths(const char *name, const char *what, json_t *doc, json_t *fields);
/* "why": {job: {path: expected}} against each job's why document (sched_util_match). */
void sched_util_expect_why(struct sched_util *u, const char *name, json_t *exp);
/* "queues": {queue: {path: expected}} against sched_queue (scheduler.h documents the
 * object: "share", "resources/cpu/deserved", "jobs/pending", ...; sched_util_match). */
void sched_util_expect_queues(struct sched_util *u, const char *name, json_t *exp);

#endif
