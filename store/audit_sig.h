/*
 * audit_sig.h - signed checkpoints of the audit chain, the witness file, pruning behind a
 * checkpoint and offline verification of an export.
 *
 * The hash chain (store.h) shows that records fit together; it cannot show that nobody
 * rewrote a record and recomputed every later hash and the head. A checkpoint is the
 * statement "record <seq> has hash <hash>", made at <time> and signed with an Ed25519 key
 * kept outside the store. It is appended to the chain itself as a record of kind
 * "checkpoint" (so an export carries it) and, by the caller, to a witness file on another
 * path (one JSON line per checkpoint, fsynced), so that a deleted tail is seen too.
 *
 * Calling sequence (musterd):
 *
 *     store_audit_key_load("audit.pem", &key, &err);        Ed25519 private key (PEM)
 *     store_witness_last("witness.ndjson", &w, &found, &err);
 *     store_audit_check_start(txn, key, found ? &w : NULL, &verdict, &err);   read txn
 *     ...
 *     store_audit_checkpoint(txn, key, &cp, &err);           write txn; commit, then
 *     store_witness_append("witness.ndjson", &cp, &err);     outside the transaction
 *
 * Offline (muster audit verify --key): store_audit_offline_new, one
 * store_audit_offline_line per NDJSON line, store_audit_offline_finish.
 *
 * Keys are immutable once loaded and may be used from any thread.
 */
#ifndef MUSTER_STORE_AUDIT_SIG_H
#define MUSTER_STORE_AUDIT_SIG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct err;
struct store_audit_key;

#define STORE_CKPT_HASH_LEN 32
#define STORE_CKPT_SIG_LEN 64

struct store_ckpt {
    uint64_t seq;                            /* the record whose hash is signed */
    unsigned char hash[STORE_CKPT_HASH_LEN]; /* that record's hash */
    char time[40];                           /* RFC 3339, when it was signed */
    char key[17];                            /* key id: 16 hex digits */
    unsigned char sig[STORE_CKPT_SIG_LEN];   /* Ed25519 over store_ckpt_message */
};

/* Loads an Ed25519 key from a PEM file: a private key (can sign and verify) or a public key
 * (verify only). Returns 0, ERR_IO ("cannot open audit key 'k.pem': ...") or ERR_INVALID
 * ("audit key 'k.pem' is not an Ed25519 key in PEM"). *out new; free with
 * store_audit_key_free. */
int store_audit_key_load(const char *path, struct store_audit_key **out, struct err *err);
/* NULL-safe. */
void store_audit_key_free(struct store_audit_key *key);
/* 1 when the key holds the private half. */
int store_audit_key_can_sign(const struct store_audit_key *key);
/* 16 hex digits of SHA-256 over the raw public key. Borrowed, valid while key lives. */
const char *store_audit_key_id(const struct store_audit_key *key);

/* Key rotation. A retired key (PEM, private or public: only its public half is kept) still
 * verifies the checkpoints it signed before the rotation; retire keys oldest first. Along
 * the chain the signing keys may only move forward (retired 0, 1, ..., then the key
 * itself): a checkpoint signed by an older key after one signed by a newer key is refused,
 * so a leaked retired key cannot sign new history. Returns 0, ERR_IO / ERR_INVALID as
 * store_audit_key_load (prefixed "retired audit key"), or ERR_INVALID when the key is the
 * audit key itself or already retired. Not thread-safe: retire before sharing the key. */
int store_audit_key_retire(struct store_audit_key *key, const char *path, struct err *err);
/* store_audit_key_retire for each path of a list separated by commas (oldest first);
 * NULL or "" retires nothing. */
int store_audit_key_retire_list(struct store_audit_key *key, const char *list, struct err *err);
/* Where the key with this id stands in the rotation: its index among the retired keys, the
 * number of retired keys for the key itself, -1 when unknown. */
int store_audit_key_rank(const struct store_audit_key *key, const char *id);
/* The retired keys' ids, oldest first: fills up to n of ids (borrowed), returns how many. */
size_t store_audit_key_retired(const struct store_audit_key *key, const char **ids, size_t n);

/* Fills cp->key, cp->time (now) and cp->sig for cp->seq and cp->hash. Returns 0 or
 * ERR_INVALID (a public-only key cannot sign). */
int store_ckpt_sign(const struct store_audit_key *key, struct store_ckpt *cp, struct err *err);
/* 0 when cp is signed by key or one of its retired keys, else ERR_INVALID naming the record
 * and why ("checkpoint of record 42 is signed by key 'ab..', not by the audit key 'cd..'",
 * "... signature does not verify"). */
int store_ckpt_verify(const struct store_audit_key *key, const struct store_ckpt *cp,
                      struct err *err);
/* {"seq","hash","time","key","sig"}; new. */
json_t *store_ckpt_json(const struct store_ckpt *cp);
/* Parses what store_ckpt_json made. Returns 0 or ERR_INVALID naming the bad field. */
int store_ckpt_parse(json_t *doc, struct store_ckpt *cp, struct err *err);

/* ---- in the store ---- */

/* In a write transaction: when the chain head is not already a checkpoint record, signs
 * {head seq, head hash, now} and appends it as a "checkpoint" record (kind checkpoint,
 * field "checkpoint"). *out receives the checkpoint. Returns 0, 1 when there was nothing
 * new to sign (empty log, or the head is a checkpoint signed by this key; one signed by a
 * retired key is signed again, which records the rotation), or ERR_* as store_audit_append. */
int store_audit_checkpoint(MDB_txn *txn, const struct store_audit_key *key, struct store_ckpt *out,
                           struct err *err);
/* Sequence number of the newest checkpoint record (0: none) and of the last record. */
int store_audit_ckpt_state(MDB_txn *txn, uint64_t *ckpt_record, uint64_t *head, struct err *err);

/* Like store_audit_verify, and every checkpoint record met must name the record before it
 * with that record's hash and, when key is not NULL, carry a signature that verifies with
 * key. out->checkpoints counts them, out->signed_to is the newest covered seq. */
int store_audit_verify_signed(MDB_txn *txn, uint64_t from, uint64_t to,
                              const struct store_audit_key *key, struct store_audit_verdict *out,
                              struct err *err);

/* The start-up check. Anchors at the witness checkpoint w (NULL: none; its signature is
 * checked with key when key is not NULL): the log must still hold record w->seq with
 * exactly w->hash (a rewrite before it changes that hash; a deleted tail loses the
 * record). Without a usable witness it anchors at the newest checkpoint record, else at
 * the first record. From the anchor to the head the chain is verified as by
 * store_audit_verify_signed. A broken chain is not an error: it is in *out. */
int store_audit_check_start(MDB_txn *txn, const struct store_audit_key *key,
                            const struct store_ckpt *w, struct store_audit_verdict *out,
                            struct err *err);

/* store_audit_verify_signed over [from, to], and first, when w (a witness's newest
 * checkpoint; NULL: none) lies within the range, the check of the start-up check: the log
 * must still hold record w->seq with w->hash, signed (with key), so that a tail cut below
 * a witnessed checkpoint, or a rewrite with every later hash recomputed, is found here as
 * on start. A broken chain is not an error: it is in *out. */
int store_audit_verify_witnessed(MDB_txn *txn, uint64_t from, uint64_t to,
                                 const struct store_audit_key *key, const struct store_ckpt *w,
                                 struct store_audit_verdict *out, struct err *err);

/* In a write transaction: deletes every record before the newest checkpoint record at or
 * before `before` (its signature checked with key when not NULL), so that record becomes
 * the first one and the chain verifies from the hash it signs. *first_kept receives its
 * seq. Returns 0, ERR_NOT_FOUND ("no checkpoint record at or before record 12: nothing can
 * be pruned"), ERR_INVALID (bad signature) or ERR_STORE. */
int store_audit_prune(MDB_txn *txn, uint64_t before, const struct store_audit_key *key,
                      uint64_t *first_kept, uint64_t *deleted, struct err *err);
/* store_audit_prune in a write transaction of its own (store_write). */
int store_audit_prune_write(struct store *st, uint64_t before, const struct store_audit_key *key,
                            uint64_t *first_kept, uint64_t *deleted, struct err *err);
/* Seq of the newest checkpoint record at or before `at` (0: the end), 0 when none is kept. */
int store_audit_find_checkpoint(MDB_txn *txn, uint64_t at, uint64_t *seq, struct err *err);
/* The first record kept by the last prune (1 when never pruned). */
int store_audit_first_seq(MDB_txn *txn, uint64_t *out, struct err *err);

/* ---- the witness file ---- */

/* Appends cp as one JSON line (O_APPEND) and fsyncs the file. Returns 0 or ERR_IO. */
int store_witness_append(const char *path, const struct store_ckpt *cp, struct err *err);
/* Reads the newest complete line of the witness file. *found = 0 when the file is missing
 * or empty. A torn last line (no newline: a crash while writing) is skipped. Returns 0,
 * ERR_IO, or ERR_INVALID ("witness 'w' line 7 is not a checkpoint: ..."). */
int store_witness_last(const char *path, struct store_ckpt *out, int *found, struct err *err);

/* ---- offline verification of an NDJSON export ---- */

struct store_audit_offline;

/* key is borrowed (may be NULL: checkpoints are then checked for fit, not signature). */
struct store_audit_offline *store_audit_offline_new(const struct store_audit_key *key);
/* The export must hold record cp->seq with exactly cp->hash (the newest checkpoint of a
 * witness, its signature checked by the caller): _finish reports a cut export otherwise,
 * and a differing hash is a rewrite. An export that starts after cp->seq (pruned) is not
 * held to it. Call before the first line. */
void store_audit_offline_expect(struct store_audit_offline *o, const struct store_ckpt *cp);
/* Feeds one line (without the newline; empty lines are skipped). Returns 0 to go on, 1 once
 * the chain is broken (the verdict says where; later lines are ignored). */
int store_audit_offline_line(struct store_audit_offline *o, const char *line, size_t len);
/* Fills *out (an empty export is broken: there is nothing to verify) and frees o. */
void store_audit_offline_finish(struct store_audit_offline *o, struct store_audit_verdict *out);

#endif
