/*
 * why.h - the records of decisions: the why document, the preemption ledger and the audit
 * records written from what the attempt and the search decided (typed: reason.h), once,
 * here. record/ is the scheduler's only writer of those JSON documents.
 *
 * Files, the why document's lowest first (each calls only those before it): why_parts.c (as JSON:
 * blockers, verdict, the parts an attempt's members share), why_queue.c (a queue's part),
 * why_filter.c (node-filter histogram, jobs ahead), why_mem.c (the cycle's why writer, its node
 * filters; each job's memory between cycles, why_mem.h), why_text.c (the document's parts as text),
 * why_class.c (failing jobs that differ only by their name share one stored document), why_memo.c
 * (a failing job whose outcome is the last one's but for its id takes its texts), why_record.c
 * (the document, its history); then audit.c (audit.h: the cycle's audit records but
 * preemptions'), ledger.c (ledger.h: the preemption ledger), ledger_plan.c (plan.h: a
 * preemption's records from its typed plan), why_gone.c (a document goes with its job), outbox.c /
 * outbox.h (the audit records Kubernetes write-back reads, typed: its public contract with
 * clients/).
 *
 * Calls: place/ (the node filter asks fit and the pod rules), queue/, view/, reason/.
 * The why writer (struct sched_why_writer, why_mem.c) is the cycle's memory of what it
 * wrote; the cycle holds it (c->why) and frees it with sched__why_writer_free.
 */
#ifndef MUSTER_SCHED_WHY_H
#define MUSTER_SCHED_WHY_H

#include <jansson.h>

#include "cyc.h"
#include "reason.h"
#include "store.h"
#include "why_mem.h"

struct err;
struct place_req;
struct place_result;
struct preempt_cleared;

/* The text of a queue part's plan members, kept between calls (zero-initialised with q -1;
 * sched__queue_tail_release). */
struct sched_queue_tail {
    int q;
    size_t nres;
    int64_t *vec; /* the deserved, capability and guarantee the text was written from */
    struct store_jw text;
};
void sched__queue_tail_release(struct sched_queue_tail *t);

/* The cycle's why writer: the parts the last document written shares with the next one
 * (hundreds of jobs fail in a row with the same parts), and the cycle's shared documents.
 * The queue part of queue queue_q at plan_epoch queue_epoch: allocations move only when
 * plan_epoch does. */
struct sched_why_memo;
struct sched_why_writer {
    int queue_q; /* queue_text is queue queue_q's part at plan_epoch queue_epoch */
    uint64_t queue_epoch;
    json_t *ahead; /* the last "ahead" part written and its text */
    char *ahead_text;
    json_t *nf; /* the last node-filter part written and its text */
    char *nf_text;
    struct store_jw queue_text;         /* NUL-terminated */
    struct sched_queue_tail queue_tail; /* its plan members' text */
    struct sched_why_classes *classes;  /* this cycle's shared documents (why_class.c) */
    void (*classes_free)(struct sched_why_classes *); /* why_class.c's, set with them */
    struct sched_nf *nf_shape; /* the cycle's node filters by pod shape (why_mem.c) */
    size_t nnf, capnf;
    struct store_jw text; /* the record or document being written (reused) */
    json_t *blockers;     /* the last "blockers" part written (held) and its text */
    struct store_jw blockers_text;
    struct sched_why_memo *memo;                /* the last failing job's outcome (why_memo.c) */
    void (*memo_free)(struct sched_why_memo *); /* why_memo.c's, set with it */
    int64_t submitted_ms; /* the last job creation a "placed" record wrote, and its text */
    char submitted[40];   /* ("" until one) */
};
/* The writer's text buffer, emptied (borrowed, valid until the next call). */
struct store_jw *sched__why_text(struct sched_cyc *c);
/* c->why, created when NULL (why_mem.c). */
struct sched_why_writer *sched__why_w(struct sched_cyc *c);
/* Frees c->why and every part of it (NULL-safe). */
void sched__why_writer_free(struct sched_cyc *c);

/* The node filter of pod pi's shape in this cycle (why_mem.c): computed once per shape while
 * the view's epoch holds and no pod was bound since (a pod with rules of its own: every
 * time), with the jobs placed earlier in the cycle that took its room. Borrowed, valid until
 * the next call. */
struct sched_nf {
    json_t *nf;    /* sched__node_filter's histogram */
    json_t *ahead; /* sched__ahead's jobs, [] when capacity is not the reason */
    int code;      /* sched__node_filter's *code */
    uint64_t epoch;
    size_t nbinds; /* the view's binds at that epoch when made (view_bind.c's log) */
};
const struct sched_nf *sched__why_nf(struct sched_cyc *c, int pi);
/* The code of shape's node filter computed in this cycle, -2 when none was (nodes do not
 * change within a cycle, so any of the cycle's is good). */
int sched__why_nf_code(const struct sched_cyc *c, int shape);

/* The document's "blockers": [{"class", "code", "message", ...extra}]. New. */
json_t *sched__blockers_json(const struct sched_blockers *bs);
/* {"attempted", "code", "reason", ...detail}. New. */
json_t *sched__preempt_verdict_json(const struct sched_preempt_verdict *v);

/* An attempt's outcome, typed, as the why documents of its members read it (all borrowed):
 * what it asked and placed, its blockers, the preemption verdict (code -1: not tried),
 * why preemption could not help ("" when it could) and the lower preemptors whose room it
 * took. */
struct sched_why_outcome {
    const struct place_req *rq;
    const struct place_result *res;
    const struct sched_blockers *blockers;
    const struct sched_preempt_verdict *preempt;
    const char *moot;
    const struct preempt_cleared *displaced;
};
/* The parts every member's document shares, made once per attempt (why_parts.c): "gang",
 * "blockers", "preemption" and "topology" (NULL when there is nothing to say). Release
 * them. topology_json: the topology part of what gather did (new; NULL for NULL). */
struct sched_why_shared {
    json_t *gang, *blockers, *preemption, *topology;
};
struct place_topology;
json_t *sched__topology_json(const struct place_topology *t);
void sched__why_shared(const struct sched_view *v, const struct sched_why_outcome *o,
                       struct sched_why_shared *out);
void sched__why_shared_release(struct sched_why_shared *sh);

/* ---- the why document written by the cycle (why_record.c, why_filter.c) ---- */

struct sched_why_input {
    int state;                               /* enum sched_job_state */
    const struct sched_blocker *primary;     /* NULL when nothing blocks */
    json_t *blockers;                        /* sched__blockers_json of the attempt (borrowed) */
    json_t *gang;                            /* borrowed, may be NULL */
    json_t *nf;                              /* node filter, borrowed, may be NULL */
    json_t *ahead;                           /* borrowed, may be NULL */
    const struct sched_placement *placement; /* what this cycle placed, borrowed, may be NULL */
    json_t *topology;                        /* topology part, borrowed, may be NULL */
    json_t *preemption;                      /* preemption verdict, borrowed, may be NULL */
    json_t *backfill; /* a placement on nodes reserved for others (cycle_reserve.c), borrowed,
                         may be NULL */
    /* the attempt's typed outcome, which the why memo keeps (why_memo.c); may be NULL */
    const struct sched_why_outcome *outcome;
    /* the memo's answer (sched__why_memo_answer), NULL when the text is written from the
     * parts above: the members from "primary" to "preemption", the id marked (a reference
     * sched__why_record takes), and the blockers' text (keys sorted, the caller's); tmpl: the
     * former's members (why_class.c's class template, borrowed) */
    struct why_mid *mid;
    char *blockers_text;
    const char *tmpl;
};
/* The why memo (why_memo.c): when the failing one-job attempt's outcome o (the job's id
 * `id`) is the last kept one's but for the id, fills in's mid_text, blockers_text and tmpl
 * and returns 1 (the blockers, gang, topology and preemption parts need not be made); else
 * 0. */
int sched__why_memo_answer(struct sched_cyc *c, const struct sched_why_outcome *o,
                           struct sched_why_input *in, const char *id);
/* Keeps in->outcome (when one the memo answers for) with the texts written from it: mid
 * (sched__why_mid_text's) and the blockers' text. */
void sched__why_memo_keep(struct sched_cyc *c, const struct sched_why_input *in, const char *id,
                          const char *mid, const char *blockers);
/* Loads the job's scheduling memory from its stored why document once (history, last
 * reason, the gang timeout window); the cycle's attempts call it before reading them. */
void sched__why_load(struct sched_cyc *c, int job);
/* Stores the job's why document when it changed; writes "unschedulable" on a change
 * of reason. */
int sched__why_record(struct sched_cyc *c, int job, const struct sched_why_input *in,
                      struct err *err);
/* The document a reader serves from stored `doc` (borrowed) of job ji: a placed job's small
 * record (why_record.c) completed with what every placed job says and what the view knows
 * now (the gang timeout), members in the order of a full document, `state` as
 * given; any other document as it is. New. Under the scheduler's lock. */
json_t *sched__why_expand(const struct sched_view *v, int ji, json_t *doc, const char *state);
/* The state job's stored why document recorded (*out; a placed job's small record:
 * Scheduled): 0, or -1 when it has none or names no state. */
int sched__why_stored_state(MDB_txn *txn, const char *job, enum sched_job_state *out);
/* Job ji was preempted: stores its why document, state Preempted, primary PreemptedBy
 * naming every preemptor of rec (the ledger's victim record, borrowed) with its ledger
 * entry, "preemptedBy" (rec's preemptors), a history entry. Returns 0 or ERR_*. */
int sched__why_preempted(struct sched_cyc *c, int job, json_t *rec, struct err *err);
/* Appends entry (borrowed) to job's stored why history (and to its memory in m, when
 * loaded) (sched_why_note), creating a small
 * document for a job of v not tried since. ERR_NOT_FOUND when the job has none. */
int sched__why_note_add(MDB_txn *txn, struct sched_view *v, struct sched_why_memory *m,
                        const char *job, json_t *entry, struct err *err);
/* Jobs placed earlier in this cycle on nodes where pod pi would otherwise fit. New. */
json_t *sched__ahead(struct sched_cyc *c, int pi);
/* Node-filter histogram for pod pi (new): {"total","fit","reasons":[...],"summary"}.
 * *code: WHY_NO_NODES, WHY_NO_MATCHING_NODE, WHY_EXCEEDS_ALLOCATABLE, WHY_INSUFFICIENT,
 * WHY_CAPACITY_RESERVED (every node short of room is short only because of another job's
 * nomination),
 * WHY_POD_AFFINITY, WHY_POD_ANTI_AFFINITY, WHY_TOPOLOGY_SPREAD, or -1 when the pod fits
 * somewhere. *own: pod rules applied, so the histogram is the pod's, not its shape's. */
json_t *sched__node_filter(struct sched_view *v, int pi, int *code, int *own);

/* ---- the document as text (why_text.c) ---- */

/* {"job","state","cycle","auditSeq"} as store_json_text writes it. New. */
char *sched__why_id_head(const char *job, const char *state, uint64_t cycle, uint64_t seq);
/* {"primary","blockers","gang","nodeFilter","topology","preemption"} of the input as
 * store_json_text writes it (topology: the part the document has; the node filter's text is
 * kept in c for the next job of its shape). New. */
struct sched_why_input;
/* The text of a "blockers" part, keys sorted (the audit record's canonical form, and the
 * why document's: one text for both), "null" for NULL. Borrowed, valid until the next call
 * with another part: the members of one attempt share theirs. */
const char *sched__why_blockers_text(struct sched_cyc *c, json_t *blockers);
char *sched__why_mid_text(struct sched_cyc *c, const struct sched_why_input *in, int primary,
                          json_t *topology);

/* ---- failing jobs that share one stored document (why_class.c) ---- */

struct sv_job;
struct sched_why_classes;
/* A document as text, in parts (compact JSON objects as store_json_text writes them, the
 * tail with at least one member). Borrowed. */
struct sched_why_text {
    char *idh;                 /* {"job","state","cycle","auditSeq"} */
    const struct why_mid *mid; /* {"primary","blockers","gang","nodeFilter","topology",
                                  "preemption"} */
    const char *ahead;         /* the "ahead" value */
    char *tail;                /* {"history"[,"placement"][,"gangTimeout"]} */
    const char *queue;         /* the "queue" value */
    const char *primary_code;  /* the primary's code name (shareable documents) */
    int shareable;             /* Unschedulable, a primary, not placed */
    const char *tmpl; /* mid's members with the job's id marked when known (mid marked), else
                         NULL */
};
/* Stores job j's document {idh..., mid..., "ahead", tail..., "queue"}: whole, or, when it
 * is shareable and an earlier job of this cycle's has the same text up to the job's own
 * id, as a record naming their class. Takes one off the class j's stored record named.
 * Returns 0 or ERR_*. */
int sched__why_class_put(struct sched_cyc *c, struct sv_job *j, const struct sched_why_text *t,
                         struct err *err);
/* j's stored document is about to be replaced: one record fewer names its class. */
void sched__why_class_leave(struct sched_cyc *c, struct sv_job *j);
/* Writes this cycle's class documents and counts (before the commit). Returns 0 or ERR_*. */
int sched__why_class_flush(struct sched_cyc *c, struct err *err);
/* s (len bytes) with every occurrence of id, left to right, replaced by the class marker
 * (a control character JSON text never holds raw). New. */
char *sched__why_mark(const char *s, size_t len, const char *id);
/* s with every marker replaced by id. New. */
char *sched__why_unmark(const char *s, const char *id);
/* The class a stored document is a record of (borrowed), or NULL for a whole document. */
const char *sched__why_class_of(json_t *doc);
/* The last class document a reader used (a batch of reads in one transaction reads each
 * class once); zero-initialised, released with sched__why_class_cache_release. */
struct sched_why_class_cache {
    char *key, *tmpl;
    uint64_t at; /* 0: the stored class documents; else as the object history had them at
                    this audit record (a why asked about the past) */
};
void sched__why_class_cache_release(struct sched_why_class_cache *k);
/* *doc (stored, replaced) completed when it is a class record: the document the job had,
 * member for member. k: valid for one read transaction. Returns 0, or ERR_STORE when its
 * class document is missing or bad. */
int sched__why_class_complete(MDB_txn *txn, json_t **doc, struct sched_why_class_cache *k,
                              struct err *err);
/* Deletes job's stored why document (absent: 0); a record's class loses a member, counted
 * in cycle c, or at once when c is NULL. In a cycle (c), v's job of that id forgets its
 * class; without one the view is left as it is (an apply changes it after its commit). */
int sched__why_doc_drop(MDB_txn *txn, struct sched_cyc *c, struct sched_view *v, const char *job,
                        struct err *err);
/* job's last stored object was just removed or moved in txn, perhaps (why_gone.c): when
 * the store holds nothing of it (no PodGroup, no pod of its group, no lone pod of that key)
 * and it is no retained preemption victim, its why document is dropped as
 * sched__why_doc_drop does (c: in a cycle, or NULL). Returns 0 or ERR_*. */
int sched__why_job_gone(MDB_txn *txn, struct sched_cyc *c, struct sched_view *v, const char *job,
                        struct err *err);

/* Writes the queue part of a why document to w: {"name", "share"[, "dominantResource"],
 * "rank", "allocated", "deserved", "capability", "guarantee"} (quantities), or null for
 * q < 0. cache: the plan members' text, reused while they are unchanged. */
void sched__queue_why_text(const struct sched_view *v, int q, struct store_jw *w,
                           struct sched_queue_tail *cache);
/* {res: quantity} of vec's non-zero entries (limited: entries >= 0 of a capability). New. */
json_t *sched__queue_quantities(const struct sched_view *v, const int64_t *vec, int limited);

#include "audit.h"
#include "ledger.h"

#endif
