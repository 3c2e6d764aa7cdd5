/*
 * reason.h - why a job is not placed, as types: the reason codes in one table (WHY_MAP),
 * the blockers an attempt collects and the preemption verdict. Every part below the
 * records decides in these; only record/ turns them into JSON (why.h).
 *
 * The enum order IS the precedence: a lower value wins. A job's primary reason
 * is its blocker with the lowest value. Each code has one class. Codes are
 * stable strings in the API ("MembersMissing"); docs/why.md lists them. The text of every
 * reason message is in why_msg.h, grouped by these codes.
 *
 * Owns: reason.c. Calls: base/ only.
 */
#ifndef MUSTER_SCHED_REASON_H
#define MUSTER_SCHED_REASON_H

#include <jansson.h>

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
    X(EXCEEDS_DOMAIN, "ExceedsDomainCapacity", NEVER)                                              \
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
    X(RESERVED, "Reserved", WAITING)                                                               \
    X(RESERVED_FOR_OTHERS, "ReservedForStarving", ORDER)                                           \
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
/* "4,800": n with thousands separators into buf (reason messages count so). Returns buf. */
const char *sched__preempt_count(long n, char *buf, size_t len);

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
/* Appends src's blockers to dst, leaving src empty. */
void sched__blockers_take(struct sched_blockers *dst, struct sched_blockers *src);
void sched__blockers_release(struct sched_blockers *bs);
/* The primary blocker: the first of the lowest code (the enum order is the precedence);
 * NULL when nothing blocks. Borrowed. */
const struct sched_blocker *sched__blockers_primary(const struct sched_blockers *bs);
/* The document's "blockers": [{"class", "code", "message", ...extra}]. New. */

/* ---- the preemption part of the why document ---- */

struct sched_preempt_verdict {
    int code;      /* WHY_* of the outcome, -1 when preemption was not tried */
    int attempted; /* victims were chosen and marked */
    int blocks;    /* the code is also one of the job's blockers (Preempting, PreemptionWaiting) */
    char reason[256];
    json_t *detail; /* owned, may be NULL: more members of the document's object */
};
/* {"attempted", "code", "reason", ...detail}. New. */
void sched__preempt_verdict_release(struct sched_preempt_verdict *v);

#endif
