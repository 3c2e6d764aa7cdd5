/*
 * ledger.h - the preemption ledger (ledger.c's opening comment: its keys and records):
 * entries written from a typed plan (plan.h, ledger_plan.c), the victims' records kept
 * after their pods are gone, and the queries GET /api/v1/preemptions answers. Included by
 * why.h; calls view/ and the why documents (a victim's document says who preempted it).
 */
#ifndef MUSTER_SCHED_LEDGER_H
#define MUSTER_SCHED_LEDGER_H

#include <jansson.h>

#include "cyc.h"
#include "store.h"

struct err;
struct preempt_plan;

/* After a commit that placed job (borrowed map pod -> node): completes its open ledger
 * entry (bound, boundAt, latencyMs). */
int sched__ledger_bound(struct sched_cyc *c, int job, json_t *map, struct err *err);
/* The ledger entry a run of sched__ledger_victim_take calls read last, kept for the next:
 * the pods of one preemption go one after another and each read the whole entry (all its
 * victims). Only while nothing writes entries in between (housekeeping's removal of
 * terminating pods); sched__ledger_seen_release ends it. */
struct sched_ledger_seen {
    uint64_t id;
    json_t *entry; /* NULL: none yet */
};
void sched__ledger_seen_release(struct sched_ledger_seen *seen);
/* A victim pod is gone (at now_ms): *victim 1 when the ledger holds it (*preemptor new:
 * the job that evicted it), and its entry is dropped; when it was its job's last
 * terminating victim, the job's retention starts (s->opts.retention_ms, and
 * s->retain_scan_ms moves up to its end). seen (may be NULL) keeps the entry read for the
 * next call. Returns 0 or ERR_*. */
int sched__ledger_victim_take(MDB_txn *txn, const struct sched_options *opts,
                              int64_t *retain_scan_ms, const char *pod, int64_t now_ms,
                              struct sched_ledger_seen *seen, int *victim, char **preemptor,
                              struct err *err);
/* ledger_room.c: the earlier entries whose victims' room plan p takes (its awaited
 * pods): [{"ledger", "preemptor", "victims", "pods"}], new; and, once the entry of p is
 * stored as id, those entries' "roomUsedBy" and their victims' "roomTakenBy". */
json_t *sched__ledger_room_from(struct sched_cyc *c, const struct preempt_plan *p);
int sched__ledger_room_record(struct sched_cyc *c, const char *preemptor, uint64_t id,
                              json_t *room_from, struct err *err);
/* The ledger's victim record of a job (ledger.c's opening comment), new, or NULL
 * when the job is no (retained) victim. preempted_by uses its own read txn. */
json_t *sched__ledger_victim_get(MDB_txn *txn, const char *job);
/* Housekeeping: drops the victim records whose retention ended (and the why documents
 * of their jobs when they have no pods), scanning only once s->retain_scan_ms is
 * reached. Returns 0 or ERR_*. */
int sched__ledger_expire(struct sched_cyc *c, struct err *err);
/* Stores the ledger entry of plan p (entry borrowed, built by ledger_plan.c; gets "id",
 * also into *id) with its indexes and the victims' records and why documents. */
int sched__ledger_add(struct sched_cyc *c, const struct preempt_plan *p, json_t *entry,
                      uint64_t *id, struct err *err);
/* The open entry of preemptor job (if any) gets "nominationsCleared" {by, byLedger, cycle,
 * ts}, and a starving job's s: "clearedBy": a higher-priority preemptor (by, its entry
 * byLedger) took its nominated nodes. */
int sched__ledger_cleared(struct sched_cyc *c, const char *job, const char *by, uint64_t by_ledger,
                          struct err *err);

/* A job that starves (preempt/'s plan for it, or for its GangGroup) until it binds or goes,
 * durably: s:<job> {"clearedBy"}, the view's sv_job.starving and cleared_by. _starving
 * stores it (clearedBy null; sched__ledger_cleared sets it), _get reads it (1 when the job
 * starves, *cleared_by new or NULL), _drop deletes it (absent: 0). */
int sched__ledger_starving(struct sched_cyc *c, const char *job, struct err *err);
int sched__ledger_starving_get(MDB_txn *txn, const char *job, char **cleared_by);
int sched__ledger_starving_drop(MDB_txn *txn, const char *job, struct err *err);

/* Sets the entries' counter to the highest entry id stored: for a store seeded with another
 * store's ledger (the replay check), whose next preemption must not take the id of an entry
 * it was seeded with (their victims' and preemptors' indexes name entries by id). Returns 0
 * or ERR_*. */
int sched__ledger_seq_from_entries(MDB_txn *txn, struct err *err);

/* The ledger's entries (GET /api/v1/preemptions, sched_preemptions's filters), new. */
int sched__ledger_list(MDB_txn *txn, const char *job, const char *victim, const char *since,
                       json_t **out, struct err *err);
/* Entry id (decimal), new. ERR_INVALID, ERR_NOT_FOUND. */
int sched__ledger_entry(MDB_txn *txn, const char *id, json_t **out, struct err *err);
#endif
