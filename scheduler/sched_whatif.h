/*
 * sched_whatif.h - deciding again without writing: what-ifs on a copy of the current state
 * (whatif.c) and the replay check of the audit log (audit_replay.c). Part of the scheduler's
 * interface; scheduler.h includes it.
 */
#ifndef MUSTER_SCHED_WHATIF_H
#define MUSTER_SCHED_WHATIF_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct err;
struct sched;

/* What-ifs (whatif.c, docs/whatif.md): what the next cycle would do after the changes of
 * `in`, run with the real apply, delete and cycle on a copy of the current state that lives
 * in a dry store session (store_dry_begin): nothing is written, s's lock is never taken
 * (its cycles go on meanwhile), no audit record is kept. One runs at a time (they take one
 * core at most); others wait their turn. The changes: m (may be NULL or empty) applied as
 * sched_apply would, the nodes of cordon marked spec.unschedulable, the objects of drop deleted, in
 * that order. *out (new):
 *   {"basedOn": {"cycle", "auditSeq", "time"}: the state it started from and its clock,
 *    "changes": [sched_apply's results, then {"kind","name","action":"deleted"}],
 *    "cycle": the cycle's summary (sched_cycle),
 *    "jobs": [per job of m's pods and PodGroups: sched_job's document with "why" (sched_why)
 *             and "wouldPlace" (Scheduled or Running after the cycle)],
 *    "others": {"displaced", "placed", "changed": [{"id", "before", "after"}]}: the other
 *             jobs whose state the changes and the cycle changed (placed before and not after; the
 * reverse; any other change but Pending, Unschedulable and TimedOut among themselves: a job that
 * still waits is no change), "preemptions": the ledger entries the cycle
 * made (sched_preemptions), "records": the audit records it would have appended, the changes' among
 * them}. Returns 0, ERR_INVALID (a document, as sched_apply; a cordon of a node that does not
 * exist; a drop of an object that does not exist, field "cordon" / "delete"), ERR_STORE. */
struct sched_whatif_drop {
    enum model_kind kind;
    const char *key;
};
struct sched_whatif {
    struct model_manifest *m;
    const char *const *cordon;
    size_t ncordon;
    const struct sched_whatif_drop *drop;
    size_t ndrop;
};
int sched_whatif(struct sched *s, const struct sched_whatif *in, int64_t now_ms, json_t **out,
                 struct err *err);

/* The replay check (audit_replay.c, docs/api.md "GET /api/v1/audit/replay"): the scheduler run
 * again over the inputs the log recorded up to `to` (0: the last record), every cycle's
 * decisions after audit record `from` compared with the log's. With exact set it runs from
 * the last "started" record at or before `from`, else the log's first record (where the live
 * scheduler's waiting jobs are known); otherwise, or when neither is kept (a pruned log),
 * from `from` with the tried jobs parked anew. A `from` inside a cycle's transaction stands
 * for the cycle record that ends it. Reads the live store in one read transaction and never
 * takes s's lock; works in a scratch store of its own under $TMPDIR, removed after. *out
 * (new): {"from", "to", "replayedFrom": where it ran from, "exact": begun where the waiting
 * jobs are known, "ok": no difference, "cycles": compared, "decisions": logged decisions
 * compared, "inputs": applies and deletes replayed after from, "differences": n,
 * "cyclesDiffering": [{"cycle", "seq", "logged", "replayed": the decisions (kind, job,
 * object, pods, nodes, preemptor) as sorted canonical JSON strings}]}. Returns 0,
 * ERR_INVALID ("from" before the history kept, a range outside the log; field from / to),
 * ERR_STORE, ERR_IO. */
int sched_replay(struct sched *s, uint64_t from, uint64_t to, int exact, json_t **out,
                 struct err *err);

#endif
