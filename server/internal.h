/*
 * internal.h - what the files of server/ share.
 *
 * The audit guard (audit.c). Calling sequence (daemon.c):
 *
 *     server__audit_open(c, &g, &err);        loads audit_key, checks the paths
 *     server__audit_check(g, st, &err);       start-up verification; read-only on a break
 *     server__audit_read_only(g)              NULL, or why musterd must not change state
 *     server__audit_start(g, st, api);        the checkpoint thread (only when writable)
 *     server__audit_kick(g);                  after a cycle or a change: count records
 *     server__audit_stop(g);                  before api_stop: the thread ends
 *     server__audit_close(g);                 after the last cycle: final checkpoint, free
 *
 * Threads: kick, read_only and health may be called from any thread.
 */
#ifndef MUSTER_SERVER_INTERNAL_H
#define MUSTER_SERVER_INTERNAL_H

#include <jansson.h>

#include "server.h"

struct api;
struct store;
struct server__audit;
struct store_audit_key;

/* Returns 0, ERR_IO / ERR_INVALID (a key that is not an Ed25519 private key, a witness
 * without a key or inside the data directory). *out new, even without a key (then it only
 * verifies the chain on start). */
int server__audit_open(const struct server_config *c, struct server__audit **out, struct err *err);
/* Verifies the chain since the last checkpoint (the witness's, else the store's). A broken
 * chain is logged with the record and the reason and makes the guard read-only; that is
 * not an error. Returns 0, or ERR_* when the store or the witness cannot be read. */
int server__audit_check(struct server__audit *g, struct store *st, struct err *err);
/* NULL when writable, else the reason (borrowed, valid until close). */
const char *server__audit_read_only(struct server__audit *g);
/* The key (borrowed) or NULL. */
const struct store_audit_key *server__audit_key(struct server__audit *g);
/* The newest witness checkpoint (file or ConfigMap, the newer) into *out: 1, 0 when no
 * witness holds one, or ERR_* (the file cannot be read). ctx is the guard. For
 * GET /api/v1/audit/verify, so that it judges a cut tail as the start-up check does. */
struct store_ckpt;
int server__audit_witness(void *ctx, struct store_ckpt *out, struct err *err);
/* The "audit" member of GET /api/v1/health; new. ctx is the guard. */
json_t *server__audit_health(void *ctx);
/* Starts the checkpoint thread when there is a key; api (borrowed) is made read-only if a
 * checkpoint finds the chain broken. Returns 0 or ERR_INTERNAL. */
int server__audit_start(struct server__audit *g, struct store *st, struct api *api,
                        struct err *err);
void server__audit_kick(struct server__audit *g);
/* Stops the checkpoint thread and forgets the api. NULL-safe. */
void server__audit_stop(struct server__audit *g);
/* Stops the thread if running, signs a last checkpoint when it ran and the store is still
 * writable, frees. NULL-safe. */
void server__audit_close(struct server__audit *g);

/* Retention (audit_retain.c): when the log holds more than keep records, archives the
 * records before the newest checkpoint record at least keep records back to
 * dir/audit-FIRST-LAST.ndjson and prunes them. Returns 0 (also when there is nothing to
 * do), ERR_IO (archive not written: nothing pruned) or the store's errors. With
 * hold_unshipped (accounting on), no record after the shipped cursor (ship_cursor_read)
 * is pruned, however far shipping lags: the database keeps the history the store drops. */
int server__audit_retain(struct store *st, const char *dir, uint64_t keep, int hold_unshipped,
                         const struct store_audit_key *key, struct err *err);

/* The time series sampler (sampler.c): a thread calling sched_sample every
 * c->timeseries_interval seconds (none when it is 0: *out NULL), skipped while guard says
 * read-only. Returns 0 or ERR_INTERNAL. server__sampler_stop ends and frees it (NULL-safe);
 * call it before sched_close. */
struct sched;
struct server__sampler;
int server__sampler_start(struct sched *s, const struct server_config *c,
                          struct server__audit *guard, struct server__sampler **out,
                          struct err *err);
void server__sampler_stop(struct server__sampler *sp);

/* Sets one config key as the file would (config.c). Returns 0 or ERR_INVALID naming the
 * key. */
int server__config_set(struct server_config *c, const char *key, const char *v, struct err *err);

#endif
