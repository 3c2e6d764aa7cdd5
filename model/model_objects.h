/*
 * model_objects.h - the typed views of every kind but Pod: Node, PodGroup (with
 * Koordinator's and Volcano's gang annotations), ClusterNetworkTopology, PriorityClass,
 * Queue and PodDisruptionBudget, and the few rules on them (built-in classes and queue,
 * budget arithmetic).
 *
 * Each *_decode reads a validated document into a struct that owns its strings; release
 * it with the matching *_release (NULL-safe, idempotent). Built-ins are static storage.
 */
#ifndef MUSTER_MODEL_OBJECTS_H
#define MUSTER_MODEL_OBJECTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "model_quantity.h"
#include "model_select.h"

struct err;

/* Set by the kubelet on every node; a decoded node without it gets its name. */
#define MODEL_LABEL_HOSTNAME "kubernetes.io/hostname"
#define MODEL_ANN_GROUPS "gang.scheduling.koordinator.sh/groups"
#define MODEL_ANN_TOPOLOGY_SPEC "gang.scheduling.koordinator.sh/network-topology-spec"
#define MODEL_ANN_MATCH_POLICY "gang.scheduling.koordinator.sh/match-policy"
/* Koordinator reads this alias when the annotation above is absent */
#define MODEL_ANN_MATCH_POLICY_ALIAS "pod-group.scheduling.sigs.k8s.io/match-policy"
/* Koordinator's gang wait time (a Go duration, "30s", "10m") for gangs without
 * spec.scheduleTimeoutSeconds */
#define MODEL_ANN_WAITING_TIME "gang.scheduling.koordinator.sh/waiting-time"
/* muster's starvation threshold (a Go duration) on a PodGroup or a Queue: a pending job
 * that waited longer gets a reservation (docs/reservations.md) */
#define MODEL_ANN_MAX_WAIT "muster.io/max-wait"
/* A Queue's queueing strategy: MODEL_QUEUEING_MAP's names (Kueue's queueingStrategy) */
#define MODEL_ANN_QUEUEING_STRATEGY "muster.io/queueing-strategy"
/* X(enum suffix, annotation value), the default first: BestEffortFIFO lets a job that does
 * not fit be passed by later ones; StrictFIFO gives the queue's head a reservation. */
#define MODEL_QUEUEING_MAP(X)                                                                      \
    X(BEST_EFFORT_FIFO, "BestEffortFIFO")                                                          \
    X(STRICT_FIFO, "StrictFIFO")
enum model_queueing {
#define MODEL__QS_ENUM(name, str) MODEL_QUEUEING_##name,
    MODEL_QUEUEING_MAP(MODEL__QS_ENUM)
#undef MODEL__QS_ENUM
        MODEL_QUEUEING_COUNT
};
/* "BestEffortFIFO", ... Static storage. */
const char *model_queueing_name(enum model_queueing q);
/* The strategy of an annotation value (exact case), -1 when unknown. */
int model_queueing_parse(const char *s);
/* Koordinator's default gang timeout (CoschedulingArgs.DefaultTimeout) */
#define MODEL_GANG_TIMEOUT_DEFAULT_MS 600000

/* Gang match policies: X(enum suffix, annotation value), the default first (Koordinator's
 * CoschedulingArgs.DefaultMatchPolicy, once-satisfied). Which pods count toward minMember:
 *   once-satisfied       bound (alive) and placed ones; a gang with minMember alive is
 *                        satisfied and places later pods one by one
 *   waiting-and-running  bound (alive) and placed ones, checked at every attempt
 *   only-waiting         only the pods placed by the attempt: every attempt places at least
 *                        minMember pods, whatever is bound already */
#define MODEL_MATCH_POLICY_MAP(X)                                                                  \
    X(ONCE_SATISFIED, "once-satisfied")                                                            \
    X(WAITING_AND_RUNNING, "waiting-and-running")                                                  \
    X(ONLY_WAITING, "only-waiting")

enum model_match_policy {
#define MODEL__MP_ENUM(name, str) MODEL_MATCH_##name,
    MODEL_MATCH_POLICY_MAP(MODEL__MP_ENUM)
#undef MODEL__MP_ENUM
        MODEL_MATCH_POLICY_COUNT
};
/* "once-satisfied", ... Static storage. */
const char *model_match_policy_name(enum model_match_policy p);
/* The policy of an annotation value (exact case), -1 when unknown. */
int model_match_policy_parse(const char *s);
/* Parses a Go duration as Koordinator's waiting-time annotation holds it ("1h30m", "90s",
 * "1.5m", "500ms"; units ns us ms s m h). Returns 0 with *ms (rounded down), or ERR_INVALID. */
int model_duration_parse(const char *s, int64_t *ms, struct err *err);

struct model_node {
    char *name;
    struct model_kv *labels; /* always with MODEL_LABEL_HOSTNAME */
    size_t nlabels;
    struct model_res *allocatable;
    size_t nallocatable;
    int unschedulable;
    struct model_taint *taints;
    size_t ntaints;
    /* status.conditions holds type Ready with a status other than "True" (a node without
     * conditions, as a manifest node is, counts as ready). Shown, never scheduled on: as
     * in Kubernetes, a NotReady node keeps pods off through its not-ready taint. */
    int not_ready;
};

/* One gatherStrategy entry of the network-topology-spec annotation. */
struct model_gather {
    char *layer; /* as written; matched against the topology's layers case-insensitively */
    int must;    /* MustGather, else PreferGather */
    /* podCountMultiple: every domain of the layer takes a multiple of this many of the
     * job's pods; 1 when absent, zero or negative (Koordinator ignores those; apply
     * refuses them), capped at INT32_MAX */
    int32_t pod_count_multiple;
};

/* One entry of a PodGroup's spec.minTaskMember (Volcano): a task needs min pods. */
struct model_task_min {
    char *task;
    int32_t min; /* >= 0 */
};

struct model_podgroup {
    char *ns, *name;
    int32_t min_member;              /* spec.minMember; Volcano's CRD allows 0 or none: read as 1 */
    struct model_res *min_resources; /* spec.minResources, sorted by name (Volcano's enqueue
                                        checks it against the queue's capability) */
    size_t nmin_resources;
    struct model_task_min *min_tasks; /* spec.minTaskMember, sorted by task */
    size_t nmin_tasks;
    char **groups; /* the groups annotation as "ns/name" keys (includes itself when set) */
    size_t ngroups;
    /* The network-topology-spec annotation, decoded once. A malformed one does not fail
     * the decode (a mirrored PodGroup cannot be refused): gather holds the entries before
     * the first bad one and spec_error says what is wrong with it. */
    int has_spec; /* the annotation is set */
    struct model_gather *gather;
    size_t ngather;
    char *spec_error;     /* NULL when the annotation is well-formed */
    char *priority_class; /* spec.priorityClassName, NULL when absent or empty: the job's
                             priority is the class's value (resolved by the scheduler) */
    char *queue;          /* spec.queue, NULL when absent or empty (the job's queue is then
                             MODEL_QUEUE_DEFAULT) */
    int64_t creation_ms;
    enum model_match_policy match_policy; /* the match-policy annotation; an unknown value
                                             falls back to the default, as Koordinator does */
    /* How long the gang may stay unsatisfied: spec.scheduleTimeoutSeconds when > 0, else
     * the waiting-time annotation when valid and > 0, else MODEL_GANG_TIMEOUT_DEFAULT_MS
     * (Koordinator's precedence, util.GetWaitTimeDuration). */
    int64_t timeout_ms;
    int64_t max_wait_ms; /* the MODEL_ANN_MAX_WAIT annotation, 0 when absent or invalid */
};

struct model_layer {
    char *name;   /* topologyLayer, e.g. "BlockLayer" */
    char *parent; /* parentTopologyLayer or NULL for the root layer */
    char **label_keys;
    size_t nlabel_keys;
};

struct model_topology {
    char *name;
    struct model_layer *layers; /* as listed in spec.networkTopologySpec */
    size_t nlayers;
};

/* A PriorityClass (scheduling.k8s.io/v1, cluster-scoped): the value pods naming it get
 * as spec.priority, and their spec.preemptionPolicy. */
struct model_priorityclass {
    char *name;
    int32_t value;
    int global_default; /* globalDefault: pods naming no class get this one */
    int preempt_never;  /* preemptionPolicy == Never (default PreemptLowerPriority) */
};

/* The highest value a user-defined class may have (Kubernetes HighestUserDefinablePriority);
 * only the built-in system- classes are above it. */
#define MODEL_PRIORITY_USER_MAX 1000000000
/* The reserved name prefix of the built-in classes. */
#define MODEL_PRIORITY_SYSTEM_PREFIX "system-"

/* The built-in classes every cluster has (Kubernetes pkg/apis/scheduling: system-cluster-
 * critical 2000000000 and system-node-critical 2000001000, PreemptLowerPriority, not
 * globalDefault): the one table behind validation of system- names, the scheduler's
 * lookup and the API's listing. model_priorityclass_builtin returns the class of this
 * name (static storage, never freed) or NULL; model_priorityclass_builtin_json the i-th
 * built-in as a document (new), NULL past the last. */
const struct model_priorityclass *model_priorityclass_builtin(const char *name);
json_t *model_priorityclass_builtin_json(size_t i);

/* A Queue (scheduling.volcano.sh/v1beta1, cluster-scoped): a share of the cluster for the
 * jobs that name it (docs/queues.md). Resource lists are sorted by name, values as in
 * struct model_res. */
struct model_queue {
    char *name;
    int32_t weight;               /* spec.weight, >= 1 (default 1) */
    struct model_res *capability; /* spec.capability: the ceiling; a resource not listed is
                                     not limited */
    size_t ncapability;
    struct model_res *guarantee; /* spec.guarantee.resource: the floor reserved for it */
    size_t nguarantee;
    int reclaimable; /* spec.reclaimable (default 1): other queues may take back what it
                        borrowed */
    char *parent;    /* spec.parent, NULL for a top-level queue (parent MODEL_QUEUE_ROOT) */
    int64_t creation_ms;
    enum model_queueing queueing; /* MODEL_ANN_QUEUEING_STRATEGY, default BestEffortFIFO */
    int queueing_set;             /* the annotation is set (else the scheduler's default) */
    int64_t max_wait_ms;          /* MODEL_ANN_MAX_WAIT: its jobs' default, 0 none */
};

/* The queue of jobs that name none; it exists without being stored (weight 1, no limits),
 * and a stored Queue of this name replaces it. */
#define MODEL_QUEUE_DEFAULT "default"
/* The root of the queue tree: top-level queues name it as spec.parent or name none. */
#define MODEL_QUEUE_ROOT "root"
/* The built-in default queue as a document (new). */
json_t *model_queue_default_json(void);

/* A PodDisruptionBudget (policy/v1, namespaced): how many of the pods its selector matches
 * may be disrupted at once. muster reads it when choosing preemption victims
 * (docs/preemption.md, "PodDisruptionBudgets"); the disruption controller's status is taken
 * as it comes (mirror mode) or computed by the scheduler when the object has none. */
struct model_intstr {
    int set;
    int percent;   /* the value was a string "N%" */
    int32_t value; /* N, >= 0 once validated */
};
struct model_pdb {
    char *ns, *name;
    struct model_intstr min_available, max_unavailable; /* exactly one is set once validated */
    struct model_selector sel; /* none = 1 when absent or empty: selects nothing, as
                                  kube-scheduler's preemption reads it */
    int always_allow;          /* spec.unhealthyPodEvictionPolicy: AlwaysAllow */
    int has_status;            /* status.disruptionsAllowed is present (the controller's) */
    int32_t disruptions_allowed;
    int32_t current_healthy; /* status.currentHealthy, -1 when absent */
    char **disrupted;        /* status.disruptedPods: pod names, sorted */
    size_t ndisrupted;
};
/* What muster refuses in a budget sent to it (standalone applies; mirrored budgets are
 * taken as they come) beyond model_validate: neither minAvailable nor maxUnavailable (the
 * disruption controller then allows no disruption), and a missing or empty selector (the
 * disruption controller of policy/v1 selects every pod of the namespace with it,
 * kube-scheduler's preemption none). Returns 0 or ERR_INVALID naming the field. */
int model_pdb_admit(json_t *obj, struct err *err);
/* 1 when pod name is in the budget's status.disruptedPods (its eviction was processed). */
int model_pdb_disrupted(const struct model_pdb *b, const char *pod_name);
/* The disruption controller's arithmetic (pkg/controller/disruption): with expected
 * matching pods of which healthy are healthy, the disruptions allowed now (>= 0);
 * *desired (may be NULL) the desired healthy count. Percentages round up. */
int32_t model_pdb_allowed(const struct model_pdb *b, int32_t expected, int32_t healthy,
                          int32_t *desired);

/* Each decodes a validated document; returns 0 or ERR_INVALID with a field path.
 * On failure out is released. Release with the matching *_release. */
int model_node_decode(json_t *obj, struct model_node *out, struct err *err);
/* model_node_decode of a stored node read straight from its JSON text (json, len bytes, no
 * document built): what a restart reads for each of its nodes (decode_stored_node.c).
 * Returns 1 with *out filled (release with model_node_release), or 0 with *out zeroed:
 * the caller parses the document and uses model_node_decode (a shape the reader leaves to
 * it, or anything model_node_decode would refuse). */
int model_node_decode_stored(const char *json, size_t len, struct model_node *out);
int model_podgroup_decode(json_t *obj, struct model_podgroup *out, struct err *err);
int model_topology_decode(json_t *obj, struct model_topology *out, struct err *err);
int model_priorityclass_decode(json_t *obj, struct model_priorityclass *out, struct err *err);
int model_queue_decode(json_t *obj, struct model_queue *out, struct err *err);
int model_pdb_decode(json_t *obj, struct model_pdb *out, struct err *err);
void model_node_release(struct model_node *n);
/* 1 when a and b are the same for scheduling: name, labels, allocatable, cordon, taints and
 * readiness, each in the same order (a node's heartbeat changes none of them). */
int model_node_same(const struct model_node *a, const struct model_node *b);
void model_podgroup_release(struct model_podgroup *g);
void model_topology_release(struct model_topology *t);
void model_priorityclass_release(struct model_priorityclass *pc);
void model_queue_release(struct model_queue *q);
void model_pdb_release(struct model_pdb *b);

#endif
