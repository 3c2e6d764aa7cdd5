/*
 * crash_support.h - helpers for the SIGKILL crash tests (test_crash.c,
 * test_crash_preempt.c): a config file, manifests posted while a kill may race the
 * request, the kill itself, and the store check after each kill.
 *
 *     char *cfg = crash_config("cycle_interval: 0.01\ngrace_period: 0\n");   new path
 *     const char *args[] = {"--config", cfg, NULL};
 *     musterd_start(&m, NULL, args);
 *     crash_post_yaml(&m, yaml);                  takes ownership of yaml
 *     crash_kill(&m, 40000);                      sleeps up to 40 ms, SIGKILL, waits
 *     int placed = crash_check_store(m.data_dir, k, extra_check, ctx);
 *     ...
 *     crash_config_free(cfg);                     unlinks and frees
 *
 * crash_check_store opens the killed musterd's store and fails the test (Check) unless
 * sched_invariants_check holds (no partial gang, no over-commit, no pod on a missing
 * node, the audit chain verifies) and every bound pod was placed by exactly one
 * "placed" audit record, on the node it is bound to; then it runs extra (may be NULL)
 * in the same read transaction.
 */
#ifndef MUSTER_TESTS_CRASH_SUPPORT_H
#define MUSTER_TESTS_CRASH_SUPPORT_H

#include "http_client.h"
#include "store.h"

/* Extra check in the store's read transaction; fails the test itself (ck_assert). */
typedef void (*crash_check_fn)(MDB_txn *txn, int kill_no, void *ctx);

/* Writes "<body>sync: full\nlog_level: error\n" to a new file under /tmp; path new. */
char *crash_config(const char *body);
/* Removes the config file and frees path (NULL-safe). */
void crash_config_free(char *path);
/* POSTs a YAML manifest; only a request that completed must have succeeded (the kill may
 * race it). Takes ownership of yaml. */
void crash_post_yaml(const struct musterd *m, char *yaml);
/* Sleeps a random time below max_us, then SIGKILLs musterd and reaps it. */
void crash_kill(struct musterd *m, int max_us);
/* Checks the store of a killed musterd (see above). Returns the number of pods the audit
 * log ever placed. */
int crash_check_store(const char *dir, int kill_no, crash_check_fn extra, void *ctx);

/* The replay check (sched_replay) over the whole log of the killed musterd's store, with
 * the scheduler options musterd ran with: every cycle decided as the log says. */
struct sched_options;
void crash_replay_store(const char *dir, const struct sched_options *opts);

#endif
