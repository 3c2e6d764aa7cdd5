/*
 * scheduler.h - the scheduler: the one path that changes cluster state.
 *
 * A `struct sched` owns the in-memory cluster view (node capacity and usage,
 * pods per node, gangs) and keeps it equal to what the store holds: it is
 * rebuilt from LMDB by sched_open and changed only by the functions below,
 * each of which writes LMDB in one write transaction and updates the view
 * only after the commit succeeded.
 *
 * Calling sequence:
 *
 *     sched_open(store, &opts, &s, &err);        rebuilds the view
 *     sched_apply(s, &manifest, now, &results, &err);   atomic apply, audit "applied"
 *     sched_cycle(s, now, &summary, &err);       one scheduling cycle, one commit
 *     sched_why(s, "default/train", &doc, &err);
 *     sched_close(s);
 *
 * Threads: every function may be called from any thread; a mutex inside
 * serializes them (HTTP handlers, the cycle timer). Readers that only need
 * stored objects should use a store read transaction instead and not take
 * the scheduler lock.
 *
 * Time: functions take now_ms from the caller (wall clock in musterd, a
 * simulated clock in `muster simulate`).
 */
#ifndef MUSTER_SCHEDULER_H
#define MUSTER_SCHEDULER_H

#include <jansson.h>
#include <stdint.h>

#include "model.h"
#include "store.h"

struct err;
struct sched;

struct sched_options {
    int mark_running; /* standalone: a bound pod is reported Running at the next cycle */
    int64_t grace_ms; /* standalone: terminating pods are removed this long after their
                         deletionTimestamp; 0 means the default, 30 s */
    int mirrored;     /* pods come and go with a Kubernetes API server: a terminating pod is
                         removed only when the API server deletes it (it may refuse an
                         eviction), never by the grace period */
    /* bind mode (mirrored): the spec.schedulerName of the pods muster binds. Such a pod
     * still running past its spec.activeDeadlineSeconds is ended by muster: marked Failed
     * (DeadlineExceeded) with a "deadline-exceeded" record, which write-back turns into a
     * status write on the API server (docs/reservations.md). NULL: mirror only, the
     * kubelet's status is waited for. Copied by sched_open. */
    const char *bind_scheduler;

    /* a preempted job's record (its job, why and preemptors) stays answerable this long
     * after its pods are gone; 0 means the default, 7 days (SCHED_RETENTION_DEFAULT_MS) */
    int64_t retention_ms;
    /* every why document stored whole: failing jobs of one cycle that differ only by their
     * name share none (why_class.c; tests compare the two forms) */
    int why_whole;
    /* every failing job's why document written from its parts: none takes the texts of the
     * job that failed before it (why_memo.c; tests compare the two) */
    int why_memo_off;
    /* the global starvation threshold: a pending job that waited longer gets a reservation
     * (docs/reservations.md; a PodGroup's or its queue's muster.io/max-wait comes first);
     * 0: none */
    int64_t max_wait_ms;
    /* the queueing strategy of queues without the muster.io/queueing-strategy annotation
     * (the built-in default queue among them): MODEL_QUEUEING_BEST_EFFORT_FIFO (0) or
     * MODEL_QUEUEING_STRICT_FIFO */
    int default_queueing;
};

#define SCHED_RETENTION_DEFAULT_MS (7LL * 24 * 3600 * 1000)

/* Opens the scheduler on an open store (borrowed; must outlive the scheduler) and rebuilds
 * the view. Returns 0 or ERR_STORE / ERR_INVALID. *out new; release with sched_close. */
int sched_open(struct store *st, const struct sched_options *opts, struct sched **out,
               struct err *err);
void sched_close(struct sched *s);

/* Applies documents atomically (create or replace), validating them (model_validate) unless
 * m->validated says model_validate_all found them valid; never changes m. Fills metadata.uid and
 * creationTimestamp when missing, sets metadata.resourceVersion to muster's own counter
 * (the mirror keeps the API server's versions in its state), writes one audit "applied" record
 * per document, commits once. *results (new) is an array with one object per document:
 * {"document": 1, "kind": "Pod", "name": "default/w-0", "action": "created"|"configured"|
 * "unchanged"}. PriorityClass documents are applied first, and every object is admitted
 * against the classes (pods get spec.priority from spec.priorityClassName or the
 * globalDefault class; see admit.c and docs/preemption.md). Standalone, Queues are admitted
 * against the queue tree (a parent that exists, no cycle; admit_queue.c). On error
 * (ERR_INVALID naming the field for an admission problem) nothing is written. */
int sched_apply(struct sched *s, struct model_manifest *m, int64_t now_ms, json_t **results,
                struct err *err);

/* Who asked for a change: written as "by": {"name", "role", "address", "source"} into the
 * audit records of an apply, a delete or a cycle run on request. Every member may be NULL
 * (left out). Borrowed for the call. Offline callers (simulate, the mirror, the cycle timer)
 * use the entry points without a caller, which write no "by". */
struct sched_caller {
    const char *name;    /* the credential's name: "alice", "system:serviceaccount:ns:sa" */
    const char *role;    /* "viewer", "operator", "admin" */
    const char *address; /* the client's IP address */
    const char *source;  /* where the identity came from: "tokens-file", "token", ... */
};

/* sched_apply, sched_delete and sched_cycle with the caller named in their audit records
 * (every "applied" / "deleted" record; the "cycle" record). by may be NULL. */
int sched_apply_by(struct sched *s, struct model_manifest *m, int64_t now_ms,
                   const struct sched_caller *by, json_t **results, struct err *err);
int sched_delete_by(struct sched *s, enum model_kind kind, const char *key, int64_t now_ms,
                    const struct sched_caller *by, struct err *err);
/* The status subresource of many pods at once (POST /api/v1/pods/status): each document is
 * a Pod (metadata.namespace/name) whose status replaces the stored pod's; nothing else of
 * the document is read, as Kubernetes' pods/status ignores the rest. Atomic as sched_apply,
 * with the same results and "applied" records (with "subresource": "status"). Errors
 * name the document: ERR_INVALID (not a Pod, no status object, the merged pod invalid),
 * ERR_NOT_FOUND (no such pod). */
int sched_apply_status_by(struct sched *s, struct model_manifest *m, int64_t now_ms,
                          const struct sched_caller *by, json_t **results, struct err *err);
/* One line of an apply's results, typed. */
struct sched_apply_line {
    int document; /* the document's number (model_doc.index) */
    enum model_kind kind;
    const char *action; /* "created", "configured", "unchanged" (static) */
    char *name;         /* the object's key (owned) */
};
struct sched_apply_lines {
    struct sched_apply_line *v;
    size_t n, cap;
};
/* An apply's parts, their times summed in muster_apply_seconds_total: sched_apply_lines times
 * LOCK to VIEW, the caller that read the documents adds its parts (sched_apply_timed). */
enum sched_apply_phase {
    SCHED_APPLY_BODY,     /* the request's body read */
    SCHED_APPLY_PARSE,    /* its documents parsed */
    SCHED_APPLY_VALIDATE, /* validated */
    SCHED_APPLY_LOCK,     /* waiting for the scheduler's lock (a cycle holds it) */
    SCHED_APPLY_WRITE,    /* the transaction's writes: objects, history, audit, indexes */
    SCHED_APPLY_COMMIT,   /* its commit, the fsync included */
    SCHED_APPLY_VIEW,     /* the view's take (a big apply's: what outlasts the commit) */
    SCHED_APPLY_REPLY,    /* the reply made and written */
    SCHED_APPLY_PHASES
};
/* Adds ns nanoseconds to phase p of the applies' times (any thread, no lock). */
void sched_apply_timed(struct sched *s, enum sched_apply_phase p, int64_t ns);
/* sched_apply_by, or with status set sched_apply_status_by, with the results in *lines (in
 * document order; emptied first), for a caller that writes them out itself: the API's
 * reply of 55,000 lines is not made into a tree first. */
int sched_apply_lines(struct sched *s, struct model_manifest *m, int64_t now_ms,
                      const struct sched_caller *by, int status, struct sched_apply_lines *lines,
                      struct err *err);
void sched_apply_lines_release(struct sched_apply_lines *lines);
int sched_cycle_by(struct sched *s, int64_t now_ms, const struct sched_caller *by, json_t **summary,
                   struct err *err);

/* Deletes an object (audit "deleted"). Returns 0, ERR_NOT_FOUND, ERR_STORE, or
 * ERR_CONFLICT for a built-in PriorityClass (system-cluster-critical,
 * system-node-critical), which cannot be deleted, and (standalone) for a Queue that holds a
 * job that is not Finished or is the spec.parent of a stored queue (the message counts the
 * jobs and names one, or names the children; a stored "default" is always deleted: the
 * built-in default takes over). The built-in default when not stored: ERR_NOT_FOUND. */
int sched_delete(struct sched *s, enum model_kind kind, const char *key, int64_t now_ms,
                 struct err *err);

/* Runs one scheduling cycle in one write transaction. *summary (new, may be NULL):
 * {"cycle": N, "placed": pods, "jobsPlaced": n, "discarded": n, "unschedulable": n,
 *  "attempted": jobs attempted, "waiting": jobs left out (they wait for a change),
 *  "idle": false, "durationMs": x, "auditSeq": n}. When no job is due and the housekeeping
 * has nothing to do, a cycle without a caller (sched_cycle, or sched_cycle_by with by NULL)
 * writes nothing and takes no number: "idle": true, N is the last cycle that wrote, no
 * "auditSeq". A cycle with a caller is always written (its record names the caller). */
int sched_cycle(struct sched *s, int64_t now_ms, json_t **summary, struct err *err);

/* Job states: X(enum suffix, name, meaning), in the order the API lists them. The one
 * list behind the jobs API, its validation, the metrics and docs/api.md. */
#define SCHED_JOB_STATE_MAP(X)                                                                     \
    X(PENDING, "Pending", "not tried by a scheduling cycle yet")                                   \
    X(UNSCHEDULABLE, "Unschedulable", "the last attempt failed; the why says why")                 \
    X(STARVING, "Starving", "preempted for, its nominations cleared by a higher-priority job")     \
    X(PIPELINED, "Pipelined", "pods nominated: waiting for preemption victims to terminate")       \
    X(TIMED_OUT, "TimedOut",                                                                       \
      "a gang unsatisfied past its timeout: nominations dropped, tried again next cycle")          \
    X(SCHEDULED, "Scheduled", "at least minMember pods bound")                                     \
    X(RUNNING, "Running", "at least minMember pods bound and Running")                             \
    X(PREEMPTED, "Preempted",                                                                      \
      "a preemption victim: its pods terminate or are gone; the why names the preemptors")         \
    X(FINISHED, "Finished", "every pod Succeeded or Failed")

enum sched_job_state {
#define SCHED__STATE_ENUM(name, str, meaning) SCHED_JOB_##name,
    SCHED_JOB_STATE_MAP(SCHED__STATE_ENUM)
#undef SCHED__STATE_ENUM
        SCHED_JOB_STATE_COUNT
};

/* "Pending", ... Static storage. */
const char *sched_job_state_name(enum sched_job_state state);
/* Parses a state name (exact case). Returns 0, or ERR_INVALID naming the state and
 * listing every state ("unknown job state 'x' (one of Pending, ...)"). */
int sched_job_state_parse(const char *name, enum sched_job_state *out, struct err *err);

/* Jobs (gangs; a pod without a group is a job of one). state: NULL for all, or a state
 * name (sched_job_state_parse; ERR_INVALID when unknown). *out new array. */
int sched_jobs(struct sched *s, const char *state, json_t **out, struct err *err);
/* One page of sched_jobs, in id order: the jobs whose id sorts after `after` (NULL: from
 * the first), at most limit of them (0: no limit). *more (may be NULL) is 1 when jobs
 * beyond the page exist, 0 when the page is the last. Only the page's jobs are made into
 * JSON; the view's lock is held for one pass over the jobs. Errors as sched_jobs; *out new,
 * NULL on failure. */
int sched_jobs_page(struct sched *s, const char *state, const char *after, size_t limit,
                    json_t **out, int *more, struct err *err);
/* One job by id "ns/name". ERR_NOT_FOUND when unknown. *out new; "preemptedBy" is the
 * ledger's victim record of the job (every preemptor, retention) or null. A preemption
 * victim whose pods are gone stays answerable (state Preempted, "retained": true) until
 * its retention ends (sched_options.retention_ms); sched_jobs lists it too. */
int sched_job(struct sched *s, const char *id, json_t **out, struct err *err);
/* The why document of a job (docs/why.md), also of a retained victim (above), with
 * "preemptedBy" and "retention" when it is a victim. ERR_NOT_FOUND when unknown. *out new. */
int sched_why(struct sched *s, const char *id, json_t **out, struct err *err);
/* The why documents of n ids as sched_why makes them, taking the lock twice in all
 * (the background remaker of the API's answers, web/readcache.c): out[i] new, or NULL
 * where sched_why would fail. */
void sched_whys(struct sched *s, size_t n, const char *const *ids, json_t **out);
/* Appends entry (borrowed; {"code", ...}, completed with "ts" of now_ms and "cycle") to the
 * history of job's why document, as an event outside a cycle (bind mode's
 * WritebackAbandoned, docs/why.md). Returns 0, ERR_NOT_FOUND (the job has no document). */
int sched_why_note(struct sched *s, const char *job, json_t *entry, int64_t now_ms,
                   struct err *err);

/* The preemption ledger, oldest first (*out new array). job: only this preemptor; victim:
 * only entries evicting this pod or a pod of this job; since: an RFC 3339 time or a cycle
 * number (entries at or after it). NULL or "" for no filter. Returns 0, ERR_INVALID
 * (since), ERR_STORE. Reads a store snapshot; does not take the scheduler lock. */
int sched_preemptions(struct sched *s, const char *job, const char *victim, const char *since,
                      json_t **out, struct err *err);

/* The reservations of starving jobs (docs/reservations.md), in job id order, each
 * {"job", "priority", "nodes", "expectedStart" (RFC 3339, null: unknown), "expectedStartMs",
 * "since", "sinceMs", "waitingFor", "reason" ("max-wait" | "strict-fifo"), "cycle"}: what
 * the last cycle stored. *out new array. Returns 0 or ERR_STORE. Reads a store snapshot;
 * does not take the scheduler lock. */
int sched_reservations(struct sched *s, json_t **out, struct err *err);

/* One ledger entry by id (a decimal number, as "ledger" in why documents and victim
 * records). *out new. Returns 0, ERR_INVALID (id), ERR_NOT_FOUND, ERR_STORE. Reads a
 * store snapshot; does not take the scheduler lock. */
int sched_preemption(struct sched *s, const char *id, json_t **out, struct err *err);

/* The cluster view as deterministic JSON (nodes with allocatable / requested, pods with
 * node, nomination and requests, jobs with members, queues with allocated / pending
 * requests), for tests and debugging: equal
 * (json_equal) views mean equal scheduling state. *out new. sched_view_dump_store dumps a
 * view rebuilt from the store right now instead of the live one. */
json_t *sched_view_dump(struct sched *s);
int sched_view_dump_store(struct sched *s, json_t **out, struct err *err);

/* Queues (docs/queues.md): fair share as the last cycle computed it, allocation as it is
 * now. sched_queues: *out (new) an array of queue objects sorted by name, every stored
 * Queue plus the built-in "default" when it is not stored. sched_queue: one queue, with
 * "pendingJobs" and "runningJobs" (job ids) added; ERR_NOT_FOUND when unknown. A queue:
 *   {"name", "parent" (null for a top-level queue), "children": [names], "weight",
 *    "reclaimable", "builtin" (the default queue, not stored),
 *    "share": allocated / deserved of its dominant resource (0 when it has nothing),
 *    "dominantResource": name or null, "rank": its place in the last cycle's queue order
 *    (1 first; 0 when no cycle ran or it had no pending job),
 *    "jobs": {"pending": n, "running": n}, "reclaims": {"by": n, "from": n} (ledger
 *    entries of kind reclaim for and against its jobs),
 *    "resources": {res: {"allocated", "deserved", "request", "guarantee", "capability"
 *      (null: not limited), "borrowed" (allocated above deserved), "lent" (deserved it
 *      does not use that other queues borrow)}} in model units (cpu in thousandths,
 *      memory in bytes), for every resource ("pods" left out) the queue has, deserves,
 *      requests, is guaranteed or limited in,
 *    "allocated", "deserved", "capability", "guarantee", "borrowed", "lent": {res:
 *      quantity string} (model_quantity_format) of the same numbers, zeros left out}.
 * Returns 0 or ERR_NOT_FOUND. */
int sched_queues(struct sched *s, json_t **out, struct err *err);
int sched_queue(struct sched *s, const char *name, json_t **out, struct err *err);

/* Writes a "started" audit record (musterd calls it once it opened the store): the view was
 * rebuilt from the store, so the scheduler's memory (which jobs wait for what, sched__wait_*)
 * starts afresh here, which the replay check does again at this record. {"kind", "cycle":
 * the last cycle, "clockMs": now_ms}. Returns 0 or the store's error. */
int sched_started(struct sched *s, int64_t now_ms, struct err *err);

/* Test hook: the scheduler's lock taken by a thread of its own and held, as a long cycle
 * holds it, until sched_hold_release (from any thread). Returns once the lock is held;
 * every entry point that takes the lock waits until then. New; never NULL. */
struct sched_hold;
struct sched_hold *sched_hold(struct sched *s);
/* Gives the lock back and frees h. NULL-safe. */
void sched_hold_release(struct sched_hold *h);

/* Prometheus text exposition of scheduler metrics, appended to a new string. */
char *sched_metrics(struct sched *s);

/* The cluster as the UI's pages read it (sched_pages.h), the cluster as it was (sched_at.h),
 * what-ifs and the replay check (sched_whatif.h). */
#include "sched_at.h"
#include "sched_pages.h"
#include "sched_whatif.h"

#endif
