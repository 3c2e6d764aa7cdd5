/*
 * audit.h - the audit records of decisions that are not preemptions (audit.c; a
 * preemption's are ledger_plan.c's): an object applied or deleted, placed, running,
 * discarded, gang-timed-out, and the cycle's own record. The members write-back reads are
 * named in outbox.h. Included by why.h.
 */
#ifndef MUSTER_SCHED_AUDIT_H
#define MUSTER_SCHED_AUDIT_H

#include <jansson.h>

#include "cyc.h"
#include "store.h"

struct err;

/* Appends an audit record {"kind": what, "object": {kind, name}, "job", "cycle"} plus
 * the members of extra (borrowed; may be NULL). obj (borrowed) names the job; cycle is
 * the cycle the record belongs to (the last one for apply and delete). */
int sched__audit_object(MDB_txn *txn, uint64_t cycle, enum store_audit_kind what,
                        enum model_kind kind, const char *key, json_t *obj, json_t *extra,
                        struct err *err);
/* What an apply adds to an object's "applied" record. */
struct sched_applied {
    const char *action; /* "created", "configured", "unchanged" */
    int document;       /* the document's index in its manifest */
    const char *by;     /* the caller's member as text (sched__caller_text), or NULL */
    int status;         /* a status subresource update ("subresource": "status") */
};

/* The text of the "applied" record of object kind/key of job (may be NULL) into w, without
 * seq, ts and hash: the bytes sched__audit_object writes for a that extra, with no tree
 * built and no store touched, so an apply can write them on two threads (sched_apply.c);
 * store_audit_append_text appends them. */
void sched__audit_applied_text(struct store_jw *w, uint64_t cycle, enum model_kind kind,
                               const char *key, const char *job, const struct sched_applied *a);
/* The canonical text of sched__caller_json(by) (new); NULL when by is NULL. */
char *sched__caller_text(const struct sched_caller *by);
/* Appends rec (taken, even on failure) to c's audit log; *seq (may be NULL) its sequence.
 * Returns 0 or ERR_*. */
int sched__audit_append(struct sched_cyc *c, json_t *rec, uint64_t *seq, struct err *err);
/* The audit records of the cycle (audit.c). placed: one "placed" record per job of the
 * statement being committed (c->placed_jobs: its pods and nodes). running: pods[0..n) of job were
 * reported Running. gang_timed_out: the attempt of jobs timed out (pods: whose nominations it
 * dropped; secs: the timeout; since: when the window opened). cycle: the cycle's own record with
 * its counters (by: who asked, or NULL; *seq: its sequence). Each returns 0 or ERR_*. */
int sched__audit_placed(struct sched_cyc *c, struct err *err);
int sched__audit_running(struct sched_cyc *c, int job, const int *pods, size_t n, struct err *err);
/* pods[0..n) of job ran past spec.activeDeadlineSeconds and were marked Failed (standalone,
 * or bind mode for muster's own pods): a "deadline-exceeded" record, an outbox entry
 * (outbox.h; no "nodes"). */
int sched__audit_deadline(struct sched_cyc *c, int job, const int *pods, size_t n, struct err *err);
int sched__audit_gang_timed_out(struct sched_cyc *c, const int *jobs, size_t njobs, const int *pods,
                                size_t npods, double secs, const char *since, struct err *err);
int sched__audit_cycle(struct sched_cyc *c, size_t pending, double ms,
                       const struct sched_caller *by, uint64_t *seq, struct err *err);
/* A job's statement (c's open one) is rolled back (code, msg: why): a "discarded" audit
 * record with its pods and nodes, written only when the job's reason changed since its
 * last (a gang that partly fits is placed and rolled back every cycle). Returns 0 or ERR_*.
 * forget: job ji was placed; its next discard is recorded whatever it says. */
int sched__audit_discarded(struct sched_cyc *c, const char *job, int code, const char *msg,
                           struct err *err);
void sched__audit_discard_forget(struct sched_cyc *c, int ji);
/* {"name", "role", "address", "source"} of by, the members that are set (new); NULL when
 * by is NULL. */
json_t *sched__caller_json(const struct sched_caller *by);
/* Pods pods[0..n) of v lost their nominations outside a cycle (their node was deleted):
 * one "nominated" record per job listing them as "cleared" (outbox.h), so write-back
 * removes them on the API server too. Returns 0 or ERR_*. */
int sched__audit_nominations_cleared(MDB_txn *txn, uint64_t cycle, const struct sched_view *v,
                                     const int *pods, size_t n, struct err *err);

#endif
