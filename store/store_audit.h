/*
 * store_audit.h - the append-only audit log and its hash chain (audit.c, audit_verify.c):
 * the record kinds, appending, scanning and verifying. Part of store.h, which includes it;
 * the transaction rules are store.h's.
 */
#ifndef MUSTER_STORE_AUDIT_H
#define MUSTER_STORE_AUDIT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct MDB_txn MDB_txn;
struct err;

/* ---- audit log ---- */

/* Audit record kinds: X(enum suffix, name, meaning). The closed set every writer uses,
 * store_audit_append enforces, GET /api/v1/audit?kind= validates and docs/api.md lists. */
#define STORE_AUDIT_KIND_MAP(X)                                                                    \
    X(APPLIED, "applied", "an object was created, changed or re-applied unchanged")                \
    X(DELETED, "deleted", "an object was deleted (or a terminated pod removed)")                   \
    X(CYCLE, "cycle", "a scheduling cycle committed, with its counts")                             \
    X(PLACED, "placed", "a job's pods were bound to nodes")                                        \
    X(DISCARDED, "discarded", "a job's statement was rolled back (on a change of reason)")         \
    X(UNSCHEDULABLE, "unschedulable", "a job could not be placed (on a change of reason)")         \
    X(RUNNING, "running", "standalone: bound pods were marked Running")                            \
    X(PREEMPTED, "preempted", "a victim job's pods were chosen for a preemption")                  \
    X(NOMINATED, "nominated", "a preemptor's pods were nominated to nodes")                        \
    X(EVICTED, "evicted", "a victim pod was removed after its grace period")                       \
    X(GANG_TIMED_OUT, "gang-timed-out",                                                            \
      "a gang stayed unsatisfied past its timeout: its nominations were dropped")                  \
    X(RESERVED, "reserved",                                                                        \
      "a starving job got (or moved) a reservation: its nodes and expected start")                 \
    X(UNRESERVED, "unreserved", "a job's reservation ended (placed, or its job gone)")             \
    X(DEADLINE_EXCEEDED, "deadline-exceeded",                                                      \
      "a pod ran past spec.activeDeadlineSeconds and was marked Failed")                           \
    X(BOUND, "bound", "bind mode: the API server accepted a binding")                              \
    X(BIND_REFUSED, "bind-refused", "bind mode: the API server refused a binding")                 \
    X(NOMINATE_ACKED, "nominate-acked", "bind mode: nominatedNodeName was written")                \
    X(NOMINATE_REFUSED, "nominate-refused", "bind mode: nominatedNodeName was refused")            \
    X(EVICT_ACKED, "evict-acked", "bind mode: the API server accepted an eviction")                \
    X(EVICT_REFUSED, "evict-refused", "bind mode: the API server refused an eviction")             \
    X(DEADLINE_ACKED, "deadline-acked",                                                            \
      "bind mode: the API server accepted a pod's Failed (DeadlineExceeded) status")               \
    X(DEADLINE_REFUSED, "deadline-refused",                                                        \
      "bind mode: the API server refused a pod's Failed (DeadlineExceeded) status")                \
    X(WRITEBACK_ABANDONED, "writeback-abandoned",                                                  \
      "bind mode: a pod's write-back was given up after failing for writeback_giveup")             \
    X(STARTED, "started",                                                                          \
      "musterd started on the store: its view rebuilt, its memory of waiting jobs fresh")          \
    X(CHECKPOINT, "checkpoint",                                                                    \
      "a signed checkpoint: the previous record's seq and hash, signed (audit_sig.h)")             \
    X(LEADER, "leader",                                                                            \
      "leader election: this replica started leading (previous holder, transitions, abandoned "    \
      "write-back records) or stopped (why)")

enum store_audit_kind {
#define STORE__AUDIT_ENUM(name, str, meaning) STORE_AUDIT_##name,
    STORE_AUDIT_KIND_MAP(STORE__AUDIT_ENUM)
#undef STORE__AUDIT_ENUM
        STORE_AUDIT_KIND_COUNT
};

/* "placed", ...; "unknown" when out of range. Static storage. */
const char *store_audit_kind_name(enum store_audit_kind kind);
/* Parses a kind name. Returns 0, or ERR_INVALID ("unknown audit kind 'x' (one of applied,
 * deleted, ...)", field "kind") when name is not in the table. */
int store_audit_kind_parse(const char *name, enum store_audit_kind *out, struct err *err);

/* Appends a record. rec is borrowed and completed in place: "seq" (next sequence number),
 * "ts" (RFC 3339 now, unless rec already has "ts") and "hash" = the hex SHA-256 of the
 * previous record's raw 32-byte hash (32 zero bytes before the first record) followed by
 * the canonical JSON of rec without "hash" (compact, keys sorted). rec's "kind" must be a
 * name of STORE_AUDIT_KIND_MAP (ERR_INVALID otherwise). *seq_out may be NULL. */
int store_audit_append(MDB_txn *txn, json_t *rec, uint64_t *seq_out, struct err *err);
/* Appends a record already written as text: canon[0..len) is the canonical JSON (compact,
 * keys sorted at every level) of a record of kind `kind` without "seq", "ts" and "hash",
 * as store_audit_append would write it (not checked: the caller writes its members in
 * order; its "kind" member must name kind). ts: the record's "ts" (NULL: now). The stored
 * bytes and the chain are those store_audit_append gives the same record: "seq", "ts" and
 * "hash" are spliced in where a sorted dump puts them. *seq_out may be NULL. */
int store_audit_append_text(MDB_txn *txn, enum store_audit_kind kind, const char *canon, size_t len,
                            const char *ts, uint64_t *seq_out, struct err *err);
/* Sequence number of the last record, 0 when the log is empty. */
int store_audit_last_seq(MDB_txn *txn, uint64_t *out, struct err *err);
/* Calls fn for records with from <= seq <= to (to == 0: to the end), in order; json is the
 * stored canonical record, borrowed for the call. fn returns as for store_obj_fn. */
typedef int (*store_audit_fn)(void *ctx, uint64_t seq, const char *json, size_t len);
int store_audit_scan(MDB_txn *txn, uint64_t from, uint64_t to, store_audit_fn fn, void *ctx,
                     struct err *err);

struct store_audit_verdict {
    int ok;               /* 1 when every record in range verifies */
    uint64_t from, to;    /* range actually checked */
    uint64_t checked;     /* records checked */
    uint64_t first_bad;   /* seq of the first failing record, 0 when ok */
    char reason[256];     /* "record 42: hash mismatch", "gap after record 41", ... */
    uint64_t checkpoints; /* checkpoint records met in range (audit_sig.h) */
    uint64_t signed_to;   /* newest record covered by one of them, 0: none */
};
/* Verifies the chain over [from, to] (to == 0: to the end; from == 0 or before the first
 * record kept by a prune: from that record, see audit_sig.h): every
 * sequence number present, every hash recomputes, and the head stored in metadata matches
 * the last record. A mismatch is not an error: it is reported in *out (ok = 0). */
int store_audit_verify(MDB_txn *txn, uint64_t from, uint64_t to, struct store_audit_verdict *out,
                       struct err *err);

#endif
