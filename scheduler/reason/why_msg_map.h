/*
 * why_msg_map.h - the index of why_msg.h: each reason code with the messages its blockers
 * and verdicts carry. tests/test_why_msg.c checks it against WHY_MAP (every code has a
 * message, in WHY_MAP's order) and against why_msg.h (every message is listed), so the
 * table and the codes cannot drift apart.
 *
 * Owns: nothing but the map. Includes reason.h (the codes) and why_msg.h (the messages).
 */
#ifndef MUSTER_SCHED_WHY_MSG_MAP_H
#define MUSTER_SCHED_WHY_MSG_MAP_H

#include "reason.h"
#include "why_msg.h"

/* X(code, messages...): every message above under each code whose blocker or verdict carries
 * it, in WHY_MAP's order; -1 for the preemption part's reasons no code carries. */
#define WHY_MSG_MAP(X)                                                                             \
    X(WHY_SPEC_INVALID, WHY_MSG_PODGROUP_SPEC, WHY_MSG_SPEC_UNKNOWN_LAYER)                         \
    X(WHY_UNSUPPORTED_FIELD, WHY_MSG_UNSUPPORTED_FIELD)                                            \
    X(WHY_PODGROUP_MISSING, WHY_MSG_PODGROUP_MISSING)                                              \
    X(WHY_PRIORITY_CLASS_MISSING, WHY_MSG_PRIORITY_CLASS_MISSING)                                  \
    X(WHY_QUEUE_NOT_FOUND, WHY_MSG_QUEUE_NOT_FOUND)                                                \
    X(WHY_QUEUE_NOT_LEAF, WHY_MSG_QUEUE_NOT_LEAF)                                                  \
    X(WHY_GROUP_MEMBER_MISSING, WHY_MSG_GROUP_MEMBER_MISSING)                                      \
    X(WHY_MEMBERS_MISSING, WHY_MSG_MEMBERS_MISSING, WHY_MSG_MEMBERS_ONLY_WAITING,                  \
      WHY_MSG_TASK_SHORT, WHY_MSG_TASK_MEMBER)                                                     \
    X(WHY_GANG_TIMED_OUT, WHY_MSG_GANG_TIMED_OUT)                                                  \
    X(WHY_NO_NODES, WHY_MSG_NO_NODES)                                                              \
    X(WHY_TOPOLOGY_MISSING, WHY_MSG_PODGROUP_SPEC, WHY_MSG_TOPOLOGY_MISSING)                       \
    X(WHY_EXCEEDS_CLUSTER, WHY_MSG_EXCEEDS_CLUSTER, WHY_MSG_EXCEEDS_CLUSTER_WHERE,                 \
      WHY_MSG_EXCEEDS_MIN_RESOURCES)                                                               \
    X(WHY_EXCEEDS_DOMAIN, WHY_MSG_EXCEEDS_DOMAIN)                                                  \
    X(WHY_EXCEEDS_ALLOCATABLE, WHY_MSG_NODE_FILTER, WHY_MSG_NF_FIT, WHY_MSG_NF_BUCKET,             \
      WHY_MSG_NF_NEED, WHY_MSG_NF_EXAMPLE, WHY_MSG_NF_TOO_MANY_PODS, WHY_MSG_NF_INSUFFICIENT)      \
    X(WHY_NO_MATCHING_NODE, WHY_MSG_NODE_FILTER, WHY_MSG_NF_UNSCHEDULABLE, WHY_MSG_NF_SELECTOR,    \
      WHY_MSG_NF_AFFINITY, WHY_MSG_NF_TAINT, WHY_MSG_NF_TAINT_KEY, WHY_MSG_NF_EX_SELECTOR,         \
      WHY_MSG_NF_EX_LABEL)                                                                         \
    X(WHY_SCHEDULING_GATED, WHY_MSG_SCHEDULING_GATED)                                              \
    X(WHY_POD_AFFINITY, WHY_MSG_NODE_FILTER, WHY_MSG_NF_POD_AFFINITY, WHY_MSG_NF_EX_POD_AFFINITY)  \
    X(WHY_POD_ANTI_AFFINITY, WHY_MSG_NODE_FILTER, WHY_MSG_NF_POD_ANTI_AFFINITY,                    \
      WHY_MSG_NF_EX_ANTI_AFFINITY)                                                                 \
    X(WHY_TOPOLOGY_SPREAD, WHY_MSG_NODE_FILTER, WHY_MSG_NF_SPREAD, WHY_MSG_NF_EX_SPREAD)           \
    X(WHY_PREEMPTION_WAITING, WHY_MSG_PREEMPTION_WAITING)                                          \
    X(WHY_PREEMPTING, WHY_MSG_PREEMPTED_PODS, WHY_MSG_PREEMPT_REUSED,                              \
      WHY_MSG_PREEMPT_CLEARED_FIRST, WHY_MSG_PREEMPT_CLEARED_MORE, WHY_MSG_PREEMPT_PDB,            \
      WHY_MSG_CHOSEN_PDB, WHY_MSG_CHOSEN_PRIORITY, WHY_MSG_CHOSEN_START, WHY_MSG_CHOSEN_NAME,      \
      WHY_MSG_CHOSEN_PLACEMENT, WHY_MSG_CHOSEN_ONLY)                                               \
    X(WHY_RECLAIMING, WHY_MSG_PREEMPTED_PODS, WHY_MSG_PREEMPT_REUSED, WHY_MSG_RECLAIMED_FROM)      \
    X(WHY_QUEUE_OVER_CAPABILITY, WHY_MSG_QUEUE_OVER_CAPABILITY, WHY_MSG_QUEUE_CAP_OWN,             \
      WHY_MSG_QUEUE_CAP_LEFT)                                                                      \
    X(WHY_TOPOLOGY_NO_DOMAIN, WHY_MSG_GATHER_SUMMARY, WHY_MSG_GATHER_PLACED, WHY_MSG_GATHER_BEST,  \
      WHY_MSG_GATHER_LIMIT_MULT, WHY_MSG_GATHER_MULT, WHY_MSG_GATHER_SATISFIED)                    \
    X(WHY_TOPOLOGY_NODESETS_FAILED, WHY_MSG_NODESETS_FAILED)                                       \
    X(WHY_WAITING_FOR_QUEUE_SHARE, WHY_MSG_WAITING_FOR_QUEUE_SHARE, WHY_MSG_QUEUE_SHARE_SURPLUS)   \
    X(WHY_RESERVED, WHY_MSG_RESERVED, WHY_MSG_RESERVED_UNKNOWN)                                    \
    X(WHY_RESERVED_FOR_OTHERS, WHY_MSG_RESERVED_FOR_OTHERS, WHY_MSG_NO_LIMIT, WHY_MSG_ENDS_AT)     \
    X(WHY_TAKEN_BY_EARLIER, WHY_MSG_TAKEN_BY_EARLIER)                                              \
    X(WHY_GANG_SHORTFALL, WHY_MSG_GANG_SHORTFALL, WHY_MSG_TASK_SHORT, WHY_MSG_TASK_PLACEABLE)      \
    X(WHY_CAPACITY_RESERVED, WHY_MSG_NODE_FILTER, WHY_MSG_NF_BUCKET_NODES, WHY_MSG_NF_RESERVED)    \
    X(WHY_INSUFFICIENT, WHY_MSG_NODE_FILTER)                                                       \
    X(WHY_PREEMPTION_NEVER, WHY_MSG_PREEMPTION_NEVER)                                              \
    X(WHY_PREEMPTION_NO_VICTIMS, WHY_MSG_NO_VICTIMS, WHY_MSG_NO_VICTIMS_QUEUE,                     \
      WHY_MSG_NO_VICTIMS_RECLAIM, WHY_MSG_NO_VICTIMS_NO_RECLAIM)                                   \
    X(WHY_PREEMPTION_NOT_HELPFUL, WHY_MSG_NOT_HELPFUL, WHY_MSG_NOT_HELPFUL_LAYER)                  \
    X(WHY_NOT_TRIED, WHY_MSG_NOT_TRIED)                                                            \
    X(WHY_PREEMPTED_BY, WHY_MSG_PREEMPTED_BY, WHY_MSG_PREEMPTED_BY_ONE, WHY_MSG_PREEMPTED_EVICTED, \
      WHY_MSG_PREEMPTED_PDB, WHY_MSG_PREEMPTED_PDB_FEWEST)                                         \
    X(-1, WHY_MSG_PREEMPT_CLEARED, WHY_MSG_PREEMPT_MOOT, WHY_MSG_PREEMPT_PLACED,                   \
      WHY_MSG_PREEMPT_DISPLACED, WHY_MSG_PREEMPT_NOT_TRIED, WHY_MSG_PREEMPT_UNTRIED,               \
      WHY_MSG_PREEMPT_VICTIM)

#endif
