/*
 * why.h - the why document: reason codes in one enum, the typed blockers and
 * preemption verdict an attempt collects, and the writer of the document.
 *
 * The enum order IS the precedence: a lower value wins. A job's primary reason
 * is its blocker with the lowest value. Each code has one class. Codes are
 * stable strings in the API ("MembersMissing"); docs/why.md lists them.
 *
 * Inside the scheduler reasons travel typed (struct sched_blocker); they become
 * JSON once per attempt, where the why documents are written (cycle_attempt.c ->
 * why_record.c). Files: why.c (codes, blockers, sched_why), why_record.c (the
 * document and its history), why_text.c (its parts as text), why_class.c (failing jobs
 * that differ only by their name share one stored document), why_filter.c (node-filter
 * histogram, jobs ahead).
 */
#ifndef MUSTER_SCHED_WHY_H
#define MUSTER_SCHED_WHY_H

#include <jansson.h>
#include "store.h"

struct err;
struct sched_cyc;
struct sched_view;

enum why_class {
    WHY_CLASS_NEVER,
    WHY_CLASS_POLICY,
    WHY_CLASS_ORDER,
    WHY_CLASS_CAPACITY,
    WHY_CLASS_TOPOLOGY,
    WHY_CLASS_GANG,
    WHY_CLASS_PREEMPTION,
    WHY_CLASS_WAITING
};

/* X(name, code string, class) in precedence order (first = highest). */
#define WHY_MAP(X)                                                                                 \
    X(SPEC_INVALID, "SpecInvalid", NEVER)                                                          \
    X(UNSUPPORTED_FIELD, "UnsupportedField", NEVER)                                                \
    X(PODGROUP_MISSING, "PodGroupMissing", WAITING)                                                \
    X(PRIORITY_CLASS_MISSING, "PriorityClassMissing", WAITING)                                     \
    X(QUEUE_NOT_FOUND, "QueueNotFound", WAITING)                                                   \
    X(QUEUE_NOT_LEAF, "QueueNotLeaf", POLICY)                                                      \
    X(GROUP_MEMBER_MISSING, "GangGroupMemberMissing", GANG)                                        \
    X(MEMBERS_MISSING, "MembersMissing", GANG)                                                     \
    X(GANG_TIMED_OUT, "GangTimedOut", GANG)                                                        \
    X(NO_NODES, "NoNodes", WAITING)                                                                \
    X(TOPOLOGY_MISSING, "TopologyMissing", WAITING)                                                \
    X(EXCEEDS_CLUSTER, "ExceedsClusterCapacity", NEVER)                                            \
    X(EXCEEDS_ALLOCATABLE, "ExceedsAllocatable", NEVER)                                            \
    X(NO_MATCHING_NODE, "NoMatchingNode", POLICY)                                                  \
    X(SCHEDULING_GATED, "SchedulingGated", WAITING)                                                \
    X(POD_AFFINITY, "PodAffinityUnsatisfied", POLICY)                                              \
    X(POD_ANTI_AFFINITY, "PodAntiAffinityConflict", POLICY)                                        \
    X(TOPOLOGY_SPREAD, "TopologySpreadUnsatisfied", POLICY)                                        \
    X(PREEMPTION_WAITING, "PreemptionWaiting", PREEMPTION)                                         \
    X(PREEMPTING, "Preempting", PREEMPTION)                                                        \
    X(RECLAIMING, "Reclaiming", PREEMPTION)                                                        \
    X(QUEUE_OVER_CAPABILITY, "QueueOverCapability", POLICY)                                        \
    X(TOPOLOGY_NO_DOMAIN, "TopologyNoDomain", TOPOLOGY)                                            \
    X(TOPOLOGY_NODESETS_FAILED, "TopologyNodeSetsFailed", TOPOLOGY)                                \
    X(WAITING_FOR_QUEUE_SHARE, "WaitingForQueueShare", WAITING)                                    \
    X(TAKEN_BY_EARLIER, "TakenByEarlierJobs", ORDER)                                               \
    X(GANG_SHORTFALL, "GangShortfall", GANG)                                                       \
    X(CAPACITY_RESERVED, "CapacityReserved", CAPACITY)                                             \
    X(INSUFFICIENT, "InsufficientCapacity", CAPACITY)                                              \
    X(PREEMPTION_NEVER, "PreemptionPolicyNever", POLICY)                                           \
    X(PREEMPTION_NO_VICTIMS, "PreemptionNoVictims", PREEMPTION)                                    \
    X(PREEMPTION_NOT_HELPFUL, "PreemptionNotHelpful", PREEMPTION)                                  \
    X(NOT_TRIED, "NotTried", WAITING)                                                              \
    X(PREEMPTED_BY, "PreemptedBy", PREEMPTION)

enum why_code {
#define WHY__ENUM(name, str, cls) WHY_##name,
    WHY_MAP(WHY__ENUM)
#undef WHY__ENUM
        WHY_CODE_COUNT
};

/* "MembersMissing"; "Unknown" when out of range. Static storage. */
const char *why_code_name(int code);
/* The code of a name ("MembersMissing"), -1 when unknown (stored documents only: inside
 * the scheduler codes travel as the enum). */
int why_code_from_name(const char *name);
enum why_class why_code_class(int code);
/* "NEVER", "POLICY", ... Static storage. */
const char *why_class_name(enum why_class cls);

/* ---- blockers: why a job is not placed, typed until the why document is written ---- */

struct sched_blocker {
    enum why_code code;
    char *message; /* owned */
    json_t *extra; /* owned, may be NULL: more members of the document's blocker object */
};

struct sched_blockers {
    struct sched_blocker *b;
    size_t n, cap;
};

/* Adds a blocker; takes ownership of extra (may be NULL). */
void sched__blocker_add(struct sched_blockers *bs, enum why_code code, json_t *extra,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Drops the blockers added after the first n. */
void sched__blockers_truncate(struct sched_blockers *bs, size_t n);
void sched__blockers_release(struct sched_blockers *bs);
/* The primary blocker: the first of the lowest code (the enum order is the precedence);
 * NULL when nothing blocks. Borrowed. */
const struct sched_blocker *sched__blockers_primary(const struct sched_blockers *bs);
/* The document's "blockers": [{"class", "code", "message", ...extra}]. New. */
json_t *sched__blockers_json(const struct sched_blockers *bs);

/* ---- the preemption part of the why document ---- */

struct sched_preempt_verdict {
    int code;      /* WHY_* of the outcome, -1 when preemption was not tried */
    int attempted; /* victims were chosen and marked */
    int blocks;    /* the code is also one of the job's blockers (Preempting, PreemptionWaiting) */
    char reason[256];
    json_t *detail; /* owned, may be NULL: more members of the document's object */
};
/* {"attempted", "code", "reason", ...detail}. New. */
json_t *sched__preempt_verdict_json(const struct sched_preempt_verdict *v);
void sched__preempt_verdict_release(struct sched_preempt_verdict *v);

/* ---- the why document written by the cycle (why_record.c, why_filter.c) ---- */

struct sched_why_input {
    int state;                           /* enum sched_job_state */
    const struct sched_blocker *primary; /* NULL when nothing blocks */
    json_t *blockers;                    /* sched__blockers_json of the attempt (borrowed) */
    json_t *gang;                        /* borrowed, may be NULL */
    json_t *nf;                          /* node filter, borrowed, may be NULL */
    json_t *ahead;                       /* borrowed, may be NULL */
    json_t *placement;                   /* pod -> node of this cycle, borrowed, may be NULL */
    json_t *topology;                    /* topology part, borrowed, may be NULL */
    json_t *preemption;                  /* preemption verdict, borrowed, may be NULL */
};
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
/* Job ji was preempted: stores its why document, state Preempted, primary PreemptedBy
 * naming every preemptor of rec (the ledger's victim record, borrowed) with its ledger
 * entry, "preemptedBy" (rec's preemptors), a history entry. Returns 0 or ERR_*. */
int sched__why_preempted(struct sched_cyc *c, int job, json_t *rec, struct err *err);
/* The primary code of a job without a why document (no cycle tried it): PodGroupMissing,
 * NotTried, or -1 when nothing blocks it (bound: Scheduled, Running, Finished). Under the
 * scheduler's lock. */
struct sched;
struct sv_job;
int sched__why_untried_code(struct sched *s, const struct sv_job *j);
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
char *sched__why_mid_text(struct sched_cyc *c, const struct sched_why_input *in, int primary,
                          json_t *topology);

/* ---- failing jobs that share one stored document (why_class.c) ---- */

struct sv_job;
struct sched_why_classes;
/* A document as text, in parts (compact JSON objects as store_json_text writes them, the
 * tail with at least one member). Borrowed. */
struct sched_why_text {
    char *idh;         /* {"job","state","cycle","auditSeq"} */
    char *mid;         /* {"primary","blockers","gang","nodeFilter","topology","preemption"} */
    const char *ahead; /* the "ahead" value */
    char *tail;        /* {"history"[,"placement"][,"gangTimeout"]} */
    const char *queue; /* the "queue" value */
    const char *primary_code; /* the primary's code name (shareable documents) */
    int shareable;            /* Unschedulable, a primary, not placed */
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
void sched__why_class_free(struct sched_cyc *c);
/* The class a stored document is a record of (borrowed), or NULL for a whole document. */
const char *sched__why_class_of(json_t *doc);
/* The last class document a reader used (a batch of reads in one transaction reads each
 * class once); zero-initialised, released with sched__why_class_cache_release. */
struct sched_why_class_cache {
    char *key, *tmpl;
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

#endif
