/*
 * audit_support.h - the audit log's signed checkpoints under test: a temporary root with
 * an Ed25519 key (and a second, foreign one), a musterd that checkpoints every 4 records
 * into a witness file next to it, HTTP helpers, an attacker's tools on the stopped store
 * (rewrite a record and recompute the chain, cut the tail) and offline verification.
 *
 *     struct audit_env e;
 *     audit_env_init(&e);                 keys, config; e.m.root is the temp dir
 *     audit_env_run_and_stop(&e, 6);      records and at least two checkpoints
 *     struct store *st = audit_env_open_store(&e);  ... tamper ... store_close(st);
 *     audit_env_start(&e);
 *     musterd_cleanup(&e.m);
 *
 * Every helper fails the test (ck_assert) when the thing it does fails.
 */
#ifndef MUSTER_TESTS_AUDIT_SUPPORT_H
#define MUSTER_TESTS_AUDIT_SUPPORT_H

#include <jansson.h>
#include <stdint.h>

#include "http_client.h"
#include "store.h"

struct audit_env {
    struct musterd m;
    char key[320], pub[320], other[320], witness[320], config[320];
    int token; /* musterd runs with --token s3cret (auth on): send it */
};

/* A temp root with a key, another key, a config (checkpoint every 4 records) outside the
 * data directory. */
void audit_env_init(struct audit_env *e);
/* Starts musterd on the root with the key, the witness and the config. */
void audit_env_start(struct audit_env *e);
/* GET path, which must answer 200; the JSON body (new). */
json_t *audit_env_get(struct audit_env *e, const char *path);
/* POST path with a YAML body (or none); the status, and the body (new) in *reply when
 * reply is not NULL. */
long audit_env_post(struct audit_env *e, const char *path, const char *body, char **reply);
/* Applies n nodes and runs a cycle after each: a few records each. */
void audit_env_activity(struct audit_env *e, int first, int n);
/* Lines in the witness file (0 when it is missing). */
int audit_env_witness_lines(struct audit_env *e);
/* Runs musterd, makes records, waits for checkpoints, stops (a last checkpoint). */
void audit_env_run_and_stop(struct audit_env *e, int nodes);
/* The stopped musterd's store, opened by the test. */
struct store *audit_env_open_store(struct audit_env *e);
/* store_audit_fn: appends each record, parsed, to the JSON array ctx. */
int audit_collect_raw(void *ctx, uint64_t seq, const char *json, size_t len);
/* The attacker: rewrites record k, recomputes every later hash and the head, and makes
 * every later checkpoint record name the new hashes (it cannot sign them). */
void audit_rewrite_recompute(struct store *st, uint64_t k);
/* The attacker with mdb_dump/mdb_load: changes record k's text (a field "forged") and
 * keeps its stored hash, so the records after it still fit. */
void audit_edit_text(struct store *st, uint64_t k);
/* Verifies NDJSON text as `muster audit verify --key key_path` does. */
struct store_audit_verdict audit_offline(const char *export_text, const char *key_path);
/* The same with retired keys (paths separated by commas, oldest first), as
 * `muster audit verify --key key_path --retired-keys retired` does. */
struct store_audit_verdict audit_offline_rotated(const char *export_text, const char *key_path,
                                                 const char *retired);
/* GET /api/v1/audit: the whole log as NDJSON (new). */
char *audit_env_export(struct audit_env *e);
/* The "audit" member of GET /api/v1/health (new). */
json_t *audit_env_health(struct audit_env *e);
/* The seq signed by the witness file's last checkpoint. */
uint64_t audit_env_witness_seq(struct audit_env *e);
/* Cuts the log after record last (deletes the rest, sets the head back to it). */
void audit_truncate(struct store *st, uint64_t last);

#endif
