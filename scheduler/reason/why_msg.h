/*
 * why_msg.h - the text of every reason message: each blocker's message, the pieces of the
 * node filter's and the topology's summaries, and the preemption part's reason. To change
 * what the why document says, change it here.
 *
 * Each message is a macro that expands to a string literal, so a call site reads
 *     sched__blocker_add(&bs, WHY_QUEUE_NOT_FOUND, extra, WHY_MSG_QUEUE_NOT_FOUND, job, queue);
 * and gcc's -Wformat checks its arguments against the format. The comment above each says
 * what its arguments are. Messages are grouped by the reason code that carries them, in
 * WHY_MAP's order (reason.h); a message assembled from pieces has its pieces here and is
 * put together where it is made. The API returns these texts as they are: changing one
 * changes what clients read, and what tests and docs/why.md quote.
 *
 * why_msg_map.h's WHY_MSG_MAP lists every message under its code; tests/test_why_msg.c
 * checks it against WHY_MAP and against the #defines here, so a new message goes in both.
 *
 * Owns: nothing but these strings. Includes only why_msg_preempt.h, the rest of them.
 */
#ifndef MUSTER_SCHED_WHY_MSG_H
#define MUSTER_SCHED_WHY_MSG_H

/* ---- SpecInvalid ---- */
/* PodGroup id; what is wrong with its network-topology spec (WHY_MSG_SPEC_UNKNOWN_LAYER,
 * WHY_MSG_TOPOLOGY_MISSING or the spec's own parse error). Also TopologyMissing's. */
#define WHY_MSG_PODGROUP_SPEC "PodGroup '%s': %s"
/* The layer the spec names; the topology's layers, comma-separated. */
#define WHY_MSG_SPEC_UNKNOWN_LAYER "network-topology-spec: unknown layer '%s' (layers: %s)"

/* ---- UnsupportedField ---- */
/* Pod key; the field; why muster does not support it. */
#define WHY_MSG_UNSUPPORTED_FIELD "pod '%s': %s: not supported by muster (%s)"

/* ---- PodGroupMissing ---- */
/* PodGroup id (the job's). */
#define WHY_MSG_PODGROUP_MISSING "PodGroup '%s' does not exist"

/* ---- PriorityClassMissing ---- */
/* PodGroup id; the PriorityClass it names. */
#define WHY_MSG_PRIORITY_CLASS_MISSING                                                             \
    "PodGroup '%s' names PriorityClass '%s', which does not exist"

/* ---- QueueNotFound ---- */
/* Job id; the queue it names. */
#define WHY_MSG_QUEUE_NOT_FOUND "job '%s' names queue '%s', which does not exist"

/* ---- QueueNotLeaf ---- */
/* Job id; the queue it names; how many child queues that queue has. */
#define WHY_MSG_QUEUE_NOT_LEAF                                                                     \
    "job '%s' names queue '%s', which has %d child queues: jobs run only in leaf queues"

/* ---- GangGroupMemberMissing ---- */
/* The missing PodGroup's id. */
#define WHY_MSG_GROUP_MEMBER_MISSING "PodGroup '%s' of the GangGroup does not exist"

/* "s" unless n is 1: "1 member pod", "3 member pods". */
#define WHY_PLURAL(n) ((n) == 1 ? "" : "s")

/* ---- MembersMissing ---- */
/* PodGroup id; member pods it has; WHY_PLURAL of it; WHY_MSG_MEMBERS_ONLY_WAITING or "";
 * minMember. */
#define WHY_MSG_MEMBERS_MISSING "PodGroup '%s' has %d member pod%s%s, minMember %d"
/* After the count when the match policy counts only pending pods. No arguments. */
#define WHY_MSG_MEMBERS_ONLY_WAITING " pending (match policy only-waiting)"
/* PodGroup id; task name; pods it has; WHY_MSG_TASK_MEMBER or WHY_MSG_TASK_PLACEABLE;
 * WHY_PLURAL of the pods; minTaskMember. Also GangShortfall's. */
#define WHY_MSG_TASK_SHORT "PodGroup '%s': task '%s' has %d %s pod%s, minTaskMember %d"
/* WHY_MSG_TASK_SHORT's kind of pods before placement (MembersMissing). */
#define WHY_MSG_TASK_MEMBER "member"

/* ---- GangTimedOut ---- */
/* PodGroup id; unsatisfied since (RFC 3339); timeout in seconds (double); nominations
 * dropped. */
#define WHY_MSG_GANG_TIMED_OUT                                                                     \
    "PodGroup '%s' unsatisfied since %s, longer than its timeout of %gs: %d nominations "          \
    "dropped, tried again at the next cycle"

/* ---- NoNodes ---- */
/* No arguments. */
#define WHY_MSG_NO_NODES "the cluster has no nodes"

/* ---- TopologyMissing ---- (in WHY_MSG_PODGROUP_SPEC) */
/* The MustGather's layer. */
#define WHY_MSG_TOPOLOGY_MISSING                                                                   \
    "MustGather '%s' needs the ClusterNetworkTopology 'default', which does not exist"

/* ---- ExceedsClusterCapacity ---- */
/* Quantity needed; resource; quantity the cluster has; WHY_MSG_EXCEEDS_CLUSTER_WHERE or "";
 * WHY_MSG_EXCEEDS_MIN_RESOURCES or "". */
#define WHY_MSG_EXCEEDS_CLUSTER "needs %s %s, the cluster has %s%s%s"
/* Schedulable nodes (long), when some are cordoned. */
#define WHY_MSG_EXCEEDS_CLUSTER_WHERE " on its %ld schedulable nodes"
/* When a PodGroup's spec.minResources (or minMember, for pods) is what asks for it. */
#define WHY_MSG_EXCEEDS_MIN_RESOURCES " (its PodGroup's spec.minResources)"

/* ---- ExceedsDomainCapacity ---- */
/* PodGroup; quantity needed; resource; layer; resource; the domain; quantity it has. */
#define WHY_MSG_EXCEEDS_DOMAIN                                                                     \
    "podGroup '%s' spec.minResources needs %s %s in one %s domain (MustGather), the one with "     \
    "the most %s, %s, has %s"

/* ---- the node filter: ExceedsAllocatable, NoMatchingNode, PodAffinityUnsatisfied,
 * PodAntiAffinityConflict, TopologySpreadUnsatisfied, CapacityReserved,
 * InsufficientCapacity ("pod 'default/a': 0/5 nodes fit: 3 Insufficient cpu (need 8, max
 * free 4), 2 node selector mismatch (nodeSelector zone=c on 0 nodes)") ---- */
/* Pod key; the summary, which the pieces below make. */
#define WHY_MSG_NODE_FILTER "pod '%s': %s"
/* Nodes that fit (long); nodes (size_t). */
#define WHY_MSG_NF_FIT "%ld/%zu nodes fit"
/* ": " before the first bucket, else ", "; its nodes (long); its reason. */
#define WHY_MSG_NF_BUCKET "%s%ld %s"
/* A reserved-for bucket: the separator; its nodes (long); "" or "s"; its reason. */
#define WHY_MSG_NF_BUCKET_NODES "%s%ld node%s %s"
/* After a resource bucket: the pod's request; the most any of its nodes has free. */
#define WHY_MSG_NF_NEED " (need %s, max free %s)"
/* After a bucket with an example: the example. */
#define WHY_MSG_NF_EXAMPLE " (%s)"
/* Bucket reasons of the static filters and the pod rules. No arguments. */
#define WHY_MSG_NF_UNSCHEDULABLE "node is unschedulable"
#define WHY_MSG_NF_SELECTOR "node selector mismatch"
#define WHY_MSG_NF_AFFINITY "node affinity mismatch"
#define WHY_MSG_NF_TAINT "untolerated taint"
#define WHY_MSG_NF_POD_AFFINITY "pod affinity"
#define WHY_MSG_NF_POD_ANTI_AFFINITY "pod anti-affinity"
#define WHY_MSG_NF_SPREAD "topology spread"
/* The untolerated taint's key. */
#define WHY_MSG_NF_TAINT_KEY "untolerated taint %s"
/* The job whose nomination holds the room (CapacityReserved). */
#define WHY_MSG_NF_RESERVED "reserved for %s"
/* Short of the pods resource. No arguments. */
#define WHY_MSG_NF_TOO_MANY_PODS "Too many pods"
/* The resource the nodes are short of (InsufficientCapacity). */
#define WHY_MSG_NF_INSUFFICIENT "Insufficient %s"
/* Examples. Anti-affinity: the placed pod's key; its node. */
#define WHY_MSG_NF_EX_ANTI_AFFINITY "%s on node %s"
/* Spread: maxSkew (int); topologyKey; the node. */
#define WHY_MSG_NF_EX_SPREAD "maxSkew %d on %s, node %s"
/* Pod affinity: the first required term's topologyKey. */
#define WHY_MSG_NF_EX_POD_AFFINITY "no matching pod in its %s"
/* nodeSelector: this, then WHY_MSG_NF_EX_LABEL for each of its labels. */
#define WHY_MSG_NF_EX_SELECTOR "nodeSelector"
/* "" for the first label, else ","; key=value; nodes that carry it (long); "" or "s". */
#define WHY_MSG_NF_EX_LABEL "%s %s on %ld node%s"

/* ---- SchedulingGated ---- */
/* Pod key. */
#define WHY_MSG_SCHEDULING_GATED "pod '%s' has schedulingGates"

/* ---- PodAffinityUnsatisfied, PodAntiAffinityConflict, TopologySpreadUnsatisfied: the
 * node filter's (above) ---- */

/* ---- PreemptionWaiting (the preemption verdict) ---- */
/* Victims still terminating (with thousands separators); "" or "s". */
#define WHY_MSG_PREEMPTION_WAITING "waiting for %s victim%s to terminate"

/* ---- Preempting, Reclaiming (an executed plan's verdict, record/ledger_plan.c) ---- */
/* Victims evicted; nodes nominated; victims awaited in all (numbers with separators). */
#define WHY_MSG_PREEMPTED_PODS "preempted %s pods on %s nodes; waiting for %s victims to terminate"
/* Nodes nominated; victims awaited (all of earlier preemptions). */
#define WHY_MSG_PREEMPT_REUSED                                                                     \
    "nominated to %s nodes that earlier preemptions free; waiting for %s victims to terminate"
/* Then, each when it holds: the first job whose nominations it cleared; how many more; the
 * victims violating a budget, the first budget, " and others" or ""; the first queue
 * reclaimed from. */
#define WHY_MSG_PREEMPT_CLEARED_FIRST "; cleared the nominations of %s"
#define WHY_MSG_PREEMPT_CLEARED_MORE " and %zu more lower-priority jobs"
#define WHY_MSG_PREEMPT_PDB                                                                        \
    "; %ld of them violating PodDisruptionBudget %s%s (no plan violated fewer)"
#define WHY_MSG_RECLAIMED_FROM "; reclaimed from %s"
/* What decided the plan's nodes (the ledger's and the verdict's "chosen"), by
 * enum preempt_criterion (record/plan.h). No arguments. */
#define WHY_MSG_CHOSEN_PDB "fewest PodDisruptionBudget violations"
#define WHY_MSG_CHOSEN_PRIORITY "lowest priorities of the victims"
#define WHY_MSG_CHOSEN_START "latest start time of the highest-priority victims"
#define WHY_MSG_CHOSEN_NAME "node name (equal cost)"
#define WHY_MSG_CHOSEN_PLACEMENT "placement: the job fits only there"
#define WHY_MSG_CHOSEN_ONLY "the only nodes with victims"

/* ---- QueueOverCapability ---- */
/* Queue; allocated quantity; resource; quantity asked; job id; the ceiling's quantity;
 * resource; WHY_MSG_QUEUE_CAP_OWN or WHY_MSG_QUEUE_CAP_LEFT. */
#define WHY_MSG_QUEUE_OVER_CAPABILITY "queue %s: %s %s allocated + %s asked by '%s' > %s %s (%s)"
/* The ceiling is the queue's own capability. No arguments. */
#define WHY_MSG_QUEUE_CAP_OWN "its capability"
/* The ceiling is lower: the parents' capability and the other queues' guarantees. */
#define WHY_MSG_QUEUE_CAP_LEFT "what its capability and the other queues' guarantees leave it"

/* ---- TopologyNoDomain: the topology part's summary ("MustGather BlockLayer: 0/4 blocks
 * hold 8 pods; best b1 holds 6 (cpu)"), also inside TopologyNodeSetsFailed's ---- */
/* MustGather or PreferGather; layer; domains that hold the job (size_t); domains (size_t);
 * the layer's plural ("blocks"); pods needed; WHY_PLURAL of them. */
#define WHY_MSG_GATHER_SUMMARY "%s %s: %zu/%zu %s hold %d pod%s"
/* Layer of the chosen domain; its name; its offer slots (long). */
#define WHY_MSG_GATHER_PLACED "; placed in %s %s (offer slots %ld)"
/* The best domain; pods it holds (long); " (", its limit, ")" or three "". */
#define WHY_MSG_GATHER_BEST "; best %s holds %ld%s%s%s"
/* The limit podCountMultiple, before its entries ("BlockLayer=4, NodeTopologyLayer=2"). */
#define WHY_MSG_GATHER_LIMIT_MULT "podCountMultiple "
/* The job's podCountMultiple entries, when the summary has not named them. */
#define WHY_MSG_GATHER_MULT "; podCountMultiple %s"
/* A satisfied gang's later pod: the MustGather layer, the layer, the domain, the pod key. */
#define WHY_MSG_GATHER_SATISFIED                                                                   \
    "MustGather %s: the gang runs in %s %s; pod '%s' fits none of its nodes"

/* ---- TopologyNodeSetsFailed ---- */
/* Domains tried; candidates; pods needed; the topology summary (above). */
#define WHY_MSG_NODESETS_FAILED                                                                    \
    "tried %d of %d domains that hold %d pods by offer slots; none placed the whole job: %s"

/* ---- WaitingForQueueShare ---- */
/* Queue; allocated quantity; resource; quantity asked; deserved quantity; resource. */
#define WHY_MSG_WAITING_FOR_QUEUE_SHARE                                                            \
    "queue %s: %s %s allocated + %s asked > its deserved %s %s, so it cannot reclaim what "        \
    "other queues borrow; it waits for idle capacity"
/* Queue, allocated and asked with units, pod key, deserved with unit, the waiting queue. */
#define WHY_MSG_QUEUE_SHARE_SURPLUS                                                                \
    "queue %s: %s %s allocated + %s asked by '%s' > its deserved %s %s while queue %s waits "      \
    "below its share; pods beyond minMember wait for it"

/* ---- Reserved ---- */
/* Running jobs it waits for; nodes reserved; the expected start ("14:02:10", or "unknown
 * (a job it waits for has no time limit)"). */
#define WHY_MSG_RESERVED "waiting for %zu jobs on %zu nodes, expected start %s"
/* The start of WHY_MSG_RESERVED when a job it waits for has no limit. */
#define WHY_MSG_RESERVED_UNKNOWN "unknown (a job it waits for has no time limit)"

/* ---- ReservedForStarving ---- */
/* Nodes; the starving job; its expected start; the job's own end ("ends 14:05:00", or
 * WHY_MSG_NO_LIMIT). */
#define WHY_MSG_RESERVED_FOR_OTHERS                                                                \
    "%zu nodes are reserved for starving job '%s' (expected start %s) and this job %s: it may "    \
    "use them only if it ends before that start"
#define WHY_MSG_NO_LIMIT "has no time limit (activeDeadlineSeconds or muster.io/expected-runtime)"
#define WHY_MSG_ENDS_AT "ends at %s"

/* ---- TakenByEarlierJobs ---- */
/* Jobs placed earlier; pod key. */
#define WHY_MSG_TAKEN_BY_EARLIER                                                                   \
    "%d jobs placed earlier in this cycle took nodes pod '%s' would fit on"

/* ---- GangShortfall (and WHY_MSG_TASK_SHORT) ---- */
/* PodGroup id; minMember; pods placeable. */
#define WHY_MSG_GANG_SHORTFALL "PodGroup '%s': minMember %d, placeable %d"
/* WHY_MSG_TASK_SHORT's kind of pods after placement (GangShortfall). */
#define WHY_MSG_TASK_PLACEABLE "placeable"

/* ---- PreemptionPolicyNever (the preemption verdict) ---- */
/* No arguments. */
#define WHY_MSG_PREEMPTION_NEVER "policy Never"

/* ---- PreemptionNoVictims (the preemption verdict) ---- */
/* Nodes that failed for resources (with thousands separators). */
#define WHY_MSG_NO_VICTIMS "no lower-priority pods on %s nodes that failed for resources"
/* With queues: the job's queue; what reclaim found (the two below); nodes, as above. */
#define WHY_MSG_NO_VICTIMS_QUEUE                                                                   \
    "no lower-priority pods of queue %s, and %s, on %s nodes that failed for resources"
#define WHY_MSG_NO_VICTIMS_RECLAIM "no job of another queue that reclaim may take"
#define WHY_MSG_NO_VICTIMS_NO_RECLAIM                                                              \
    "no reclaimable queue above its deserved share to reclaim from"

/* ---- PreemptionNotHelpful (the preemption verdict) ---- */
/* Potential victims (with thousands separators). */
#define WHY_MSG_NOT_HELPFUL                                                                        \
    "preemption would not help: even with all %s potential victims removed the job does not fit"
/* Potential victims, as above; the MustGather layer; the job's pods (as above). */
#define WHY_MSG_NOT_HELPFUL_LAYER                                                                  \
    "preemption would not help: even with all %s potential victims removed no %s domain holds "    \
    "%s pods"

/* ---- NotTried ---- */
/* No arguments. */
#define WHY_MSG_NOT_TRIED "the job has not been tried by a scheduling cycle yet"

/* ---- PreemptedBy ("preempted by prod/a (ledger entry 3) and prod/b (ledger entry 4); 8
 * pods evicted; violating PodDisruptionBudget prod/db (no plan violated fewer)") ---- */
#define WHY_MSG_PREEMPTED_BY "preempted by"
/* The message so far; " ", ", " or " and "; preemptor; its ledger entry (long long). */
#define WHY_MSG_PREEMPTED_BY_ONE "%s%s%s (ledger entry %lld)"
/* The message so far; pods evicted (size_t); "" or "s"; WHY_MSG_PREEMPTED_PDB, the budget
 * and WHY_MSG_PREEMPTED_PDB_FEWEST, or three "". */
#define WHY_MSG_PREEMPTED_EVICTED "%s; %zu pod%s evicted%s%s%s"
#define WHY_MSG_PREEMPTED_PDB "; violating PodDisruptionBudget "
#define WHY_MSG_PREEMPTED_PDB_FEWEST " (no plan violated fewer)"

#include "why_msg_preempt.h" /* the preemption part's reasons no code carries */

#endif
