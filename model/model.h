/*
 * model.h - the object model: kinds, Kubernetes quantities, manifest decoding,
 * validation, and typed views of Node, Pod, PodGroup, ClusterNetworkTopology,
 * PriorityClass, Queue and PodDisruptionBudget.
 *
 * Objects travel through muster as jansson documents in Kubernetes shape (what
 * the store keeps and the API returns). This module turns manifest bytes into
 * such documents, validates them with precise errors, decodes validated
 * documents into the small typed structs the scheduler works on, and owns the
 * Pod fields the scheduler writes back (and the rule "a pod is terminal").
 *
 * Calling sequence (applying a manifest):
 *
 *     struct model_manifest m;
 *     json_t *errors = json_array();
 *     if (model_manifest_parse(body, len, MODEL_FMT_AUTO, &m, &err) < 0) -> 400 err.msg
 *     for each doc: model_validate(&m.docs[i], errors)   (appends every problem)
 *     if (json_array_size(errors)) -> 400, nothing written
 *     model_manifest_free(&m);
 *
 * Ownership follows jansson's words: *new* (caller frees / decrefs),
 * *borrowed* (valid while the owner lives). Typed structs own their strings;
 * release them with the matching *_release (NULL-safe, idempotent).
 *
 * yaml.h is included only by this module's manifest decoder (manifest.c) and
 * YAML emitter (yamlout.c).
 */
#ifndef MUSTER_MODEL_H
#define MUSTER_MODEL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct err;

/* ---- kinds ---- */

enum model_kind {
    MODEL_NODE,
    MODEL_POD,
    MODEL_PODGROUP,
    MODEL_TOPOLOGY,
    MODEL_PRIORITYCLASS,
    MODEL_QUEUE,
    MODEL_PDB, /* PodDisruptionBudget, policy/v1 */
    MODEL_KIND_COUNT
};

/* "Node", "Pod", "PodGroup", "ClusterNetworkTopology", "PriorityClass", "Queue",
 * "PodDisruptionBudget". Static storage. */
const char *model_kind_name(enum model_kind kind);
/* The apiVersion muster writes: "v1", "scheduling.sigs.k8s.io/v1alpha1", ... */
const char *model_kind_api_version(enum model_kind kind);
/* Volcano's API group: Queue's, and PodGroup's second group (a PodGroup is read alike from
 * scheduling.sigs.k8s.io and scheduling.volcano.sh; the stored document keeps its own). */
#define MODEL_GROUP_VOLCANO "scheduling.volcano.sh"
/* Plural resource name used in URLs and the CLI: "nodes", "pods", "podgroups",
 * "clusternetworktopologies", "priorityclasses", "queues", "poddisruptionbudgets". */
const char *model_kind_plural(enum model_kind kind);
/* Resolves a plural or singular resource name, case-insensitively ("pods", "pod", "po",
 * "podgroup", "pg", "nodes", "no", "cnt", "pc", "q", "pdb"). Returns 0 or ERR_INVALID. */
int model_kind_from_resource(const char *resource, enum model_kind *out);
/* Resolves a document's kind and apiVersion (apiVersion must match the kind's group, for
 * PodGroup one of its two groups; version may be any except for the core kinds' "v1").
 * Returns 0 or ERR_INVALID naming what is unknown. */
int model_kind_from_doc(const char *kind, const char *api_version, enum model_kind *out,
                        struct err *err);
/* 1 when objects of this kind live in a namespace (Pod, PodGroup, PodDisruptionBudget). */
int model_kind_namespaced(enum model_kind kind);
/* The store key of a validated object: "name" or "namespace/name". New string. */
char *model_object_key(enum model_kind kind, json_t *obj);

/* ---- quantities ---- */

/* Parses a Kubernetes quantity: decimal number with optional sign, fraction and
 * exponent ("1.5", "1e3", "-2"), or with a suffix: binary Ki Mi Gi Ti Pi Ei, decimal
 * n u m "" k M G T P E. With milli != 0 the result is in thousandths (cpu: "100m" ->
 * 100, "1" -> 1000); otherwise whole units, rounded up ("500m" -> 1). Exact (no
 * floating point). Returns 0, or ERR_INVALID for bad syntax, a negative value or a value
 * that does not fit in int64. */
int model_quantity_parse(const char *s, int milli, int64_t *out, struct err *err);
/* 1 when the resource is measured in thousandths ("cpu"). */
int model_resource_is_milli(const char *resource);
/* Formats a value the way kubectl would ("100m", "4", "4Gi", "1500M"). */
void model_quantity_format(int64_t value, int milli, char *buf, size_t n);

/* ---- manifests ---- */

/* NDJSON: one JSON object a line (blank lines skipped); never sniffed by AUTO. */
enum model_format { MODEL_FMT_AUTO, MODEL_FMT_YAML, MODEL_FMT_JSON, MODEL_FMT_NDJSON };

struct model_doc {
    int index;   /* 1-based position among the decoded documents (empty documents are
                    not counted; each item of a List or top-level array counts one) */
    json_t *obj; /* owned: the document */
    json_t *pos; /* owned: object mapping field path ("spec.containers[0].name") to
                    [line, col] (1-based) where known; NULL when positions were not
                    recorded (JSON input, or the fast path of model_manifest_parse) */
};

struct model_manifest {
    struct model_doc *docs;
    size_t n;
    int validated;      /* set by model_validate_all when it found no problem: sched_apply does
                           not validate the documents again */
    int fields_checked; /* set by model_validate_all only (not by the mirror, which sets
                           validated): every field was checked against the schema, so no
                           document holds an unsupported one */
};

/* Parses a YAML stream (documents separated by ---) or JSON (one object, an array of
 * objects, or a kind: List). AUTO sniffs the first non-space byte. Empty documents are
 * skipped. A kind: List is flattened into its items. On a syntax error returns ERR_INVALID
 * with "document N: <problem> at line L col C" and out is left empty. NDJSON: a syntax
 * error or a line that is not an object is "line L: <problem>"; each document's pos maps
 * "" to [its line, 1], so every problem found in it names its line. Field positions are
 * not recorded (doc.pos is NULL): see model_validate_all. */
int model_manifest_parse(const char *buf, size_t len, enum model_format fmt,
                         struct model_manifest *out, struct err *err);
void model_manifest_free(struct model_manifest *m);

/* Like model_manifest_parse, and records every field's position (slower: a map entry per
 * field). model_validate_all calls it only when it has errors to place. */
int model_manifest_parse_positions(const char *buf, size_t len, enum model_format fmt,
                                   struct model_manifest *out, struct err *err);

/* How fields outside the schema are treated (kube-apiserver's fieldValidation):
 *   STRICT  an unknown field is a problem (the default)
 *   WARN    an unknown field is dropped and reported in warnings
 *   IGNORE  an unknown field is dropped silently
 * Unknown fields are never stored. In every mode a field muster does not support (one
 * kube-scheduler's placement depends on: a hostPort, a PersistentVolumeClaim volume, ...)
 * is a problem: "<field>: not supported by muster (<what it would change>)". The field
 * schema and its classes are listed in docs/pod-spec.md. */
enum model_fields { MODEL_FIELDS_STRICT, MODEL_FIELDS_WARN, MODEL_FIELDS_IGNORE };
/* "Strict", "Warn" or "Ignore", any case. Returns 0 or ERR_INVALID (field
 * "fieldValidation"). */
int model_fields_parse(const char *s, enum model_fields *out, struct err *err);
/* "Strict", "Warn", "Ignore". Static storage. */
const char *model_fields_name(enum model_fields mode);

/* Validates every document (model_validate_fields) and appends every problem to errors and,
 * in WARN mode, every dropped unknown field to warnings (may be NULL; same shape as the
 * problems). When there are problems and src (the bytes m was parsed from, or NULL) is
 * YAML whose positions were not recorded, parses it again with positions and validates
 * again, so the messages name the line and column; valid manifests never pay for
 * positions. Returns the number of problems. */
int model_validate_all(struct model_manifest *m, const char *src, size_t len,
                       enum model_fields mode, json_t *errors, json_t *warnings);

/* model_validate, and then the document's fields against the schema of its kind (mode
 * as above; warnings may be NULL). What objects sent to muster go through; mirrored
 * objects, which cannot be refused, go through model_validate alone. */
int model_validate_fields(struct model_doc *doc, enum model_fields mode, json_t *errors,
                          json_t *warnings);

/* The path of the first field of obj that muster does not support ("spec.volumes[0].
 * persistentVolumeClaim"; new), NULL when there is none (unknown fields are not looked
 * at). *why (static storage, when why is not NULL) says what the field would change.
 * Allocates nothing when there is none. */
char *model_unsupported_field(enum model_kind kind, json_t *obj, const char **why);

/* The field schema as Markdown: per kind, the honoured fields, the known fields beside them
 * and every unsupported field with what it would change (docs/pod-spec.md). New. */
char *model_fields_doc(void);

/* Validates one document and normalizes it in place (metadata.namespace defaults to
 * "default" for namespaced kinds). Appends one object per problem to errors:
 *   {"document": 3, "kind": "Pod", "name": "default/w-1",
 *    "field": "spec.containers[0].resources.requests.cpu",
 *    "message": "document 3 (Pod default/w-1), spec.containers[0].resources.requests.cpu:
 *                invalid quantity '12x' at line 40 col 18", "line": 40, "col": 18}
 * Returns the number of problems appended (0 when valid). */
int model_validate(struct model_doc *doc, json_t *errors);

/* The deepest nesting muster accepts in a document: more than any Kubernetes object needs,
 * and it bounds the recursion of everything that later walks a stored object (validation,
 * encoding, every GET reply on civetweb's small worker stacks). */
#define MODEL_MAX_DEPTH 64
/* 1 when v holds a value nested deeper than MODEL_MAX_DEPTH; *path (new) is then where
 * ("spec.a.b[3]"), else 0. */
int model_too_deep(json_t *v, char **path);

/* Emits a JSON value as YAML (block style, kubectl-like) into a new string. */
char *model_yaml_dump(json_t *value);

/* JSON read as json_loadb(s, n, flags) reads it, with flags 0 or (reject_dups)
 * JSON_REJECT_DUPLICATES, without jansson's lexer (json_read.c): the same value, member
 * order included, or NULL where the reader gives up (a rarer form, or bytes that are not
 * JSON): then json_loadb answers, errors and all. New. */
json_t *model_json_read(const char *s, size_t n, int reject_dups);
/* json_loadb(s, n, 0, jerr) as it answers, value and errors (*jerr set only on error),
 * read by model_json_read where it can. New, or NULL. */
json_t *model_json_load(const char *s, size_t n, json_error_t *jerr);

/* ---- typed views (decoded from validated documents) ---- */

/* A pod joins a PodGroup of its namespace through this label (scheduler-plugins,
 * Koordinator) or, when the label is absent or empty, through MODEL_ANN_GROUP_NAME. */
#define MODEL_LABEL_POD_GROUP "pod-group.scheduling.sigs.k8s.io"
/* Volcano's pod annotation naming the pod's PodGroup (v1beta1.KubeGroupNameAnnotationKey,
 * read by Volcano's getJobID in pkg/scheduler/api/job_info.go). */
#define MODEL_ANN_GROUP_NAME "scheduling.k8s.io/group-name"
/* Volcano's task of a pod (batch.TaskSpecKey: the job's task name), the key of
 * spec.minTaskMember. Volcano's getTaskRole reads the annotation, then the label. */
#define MODEL_ANN_TASK_SPEC "volcano.sh/task-spec"
/* The PodGroup name of a pod document: the MODEL_LABEL_POD_GROUP label, else the
 * MODEL_ANN_GROUP_NAME annotation (non-empty strings), else NULL. Borrowed from pod. The
 * one rule behind model_pod.group, the store's pods-by-group index and audit records. */
const char *model_pod_group_name(json_t *pod);
/* Set by the kubelet on every node; a decoded node without it gets its name. */
#define MODEL_LABEL_HOSTNAME "kubernetes.io/hostname"
#define MODEL_ANN_TOPOLOGY_INDEX "gang.scheduling.koordinator.sh/network-topology-index"
#define MODEL_ANN_GROUPS "gang.scheduling.koordinator.sh/groups"
#define MODEL_ANN_TOPOLOGY_SPEC "gang.scheduling.koordinator.sh/network-topology-spec"
#define MODEL_ANN_MATCH_POLICY "gang.scheduling.koordinator.sh/match-policy"
/* Koordinator reads this alias when the annotation above is absent */
#define MODEL_ANN_MATCH_POLICY_ALIAS "pod-group.scheduling.sigs.k8s.io/match-policy"
/* Koordinator's gang wait time (a Go duration, "30s", "10m") for gangs without
 * spec.scheduleTimeoutSeconds */
#define MODEL_ANN_WAITING_TIME "gang.scheduling.koordinator.sh/waiting-time"
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

struct model_kv {
    char *key;
    char *value;
};

struct model_res {
    char *name;    /* "cpu", "memory", "pods", "nvidia.com/gpu", ... */
    int64_t value; /* cpu in thousandths, everything else in whole units */
};

struct model_taint {
    char *key, *value, *effect; /* effect: NoSchedule, PreferNoSchedule, NoExecute;
                                   value "" when absent */
};

struct model_toleration {
    char *key, *op, *value, *effect; /* op: Equal or Exists; NULL key with Exists matches all;
                                        value "" when absent; NULL effect matches every effect */
};

/* ---- selectors (selector.c) ----
 *
 * Label selectors and node selector terms as Kubernetes defines them
 * (apimachinery labels.Selector, NodeSelectorRequirement): a requirement
 * In / NotIn / Exists / DoesNotExist / Gt / Lt on one key. NotIn and DoesNotExist
 * match an object without the key; Gt and Lt compare integers and never match an
 * absent or non-integer value. */
enum model_sel_op {
    MODEL_OP_IN,
    MODEL_OP_NOT_IN,
    MODEL_OP_EXISTS,
    MODEL_OP_DOES_NOT_EXIST,
    MODEL_OP_GT,
    MODEL_OP_LT
};

struct model_sel_req {
    char *key;
    enum model_sel_op op;
    char **values;
    size_t nvalues;
    int64_t num; /* Gt, Lt: values[0] as an integer */
};

/* A label selector: matchLabels and matchExpressions ANDed. An empty selector
 * ({}) matches everything; a missing one (none = 1) matches nothing. */
struct model_selector {
    struct model_sel_req *req; /* matchLabels first (as In with one value), then the expressions */
    size_t nreq;
    int none;
};

/* One nodeSelectorTerm: matchExpressions on labels and matchFields on metadata.name,
 * ANDed. A term with neither matches no node. */
struct model_node_term {
    struct model_sel_req *expr, *fields;
    size_t nexpr, nfields;
    int32_t weight; /* preferredDuringScheduling weight, 0 for required terms */
};

/* One pod (anti-)affinity term. */
struct model_pod_term {
    struct model_selector sel;
    char **namespaces; /* the namespaces the term looks in; NULL with all_ns = 0: the pod's own */
    size_t nnamespaces;
    int all_ns; /* namespaceSelector: {} */
    char *topology_key;
    int32_t weight; /* preferred terms, 0 for required terms */
};

/* One topologySpreadConstraint. */
struct model_spread {
    int32_t max_skew;
    char *topology_key;
    int hard;                  /* whenUnsatisfiable: DoNotSchedule */
    struct model_selector sel; /* matchLabelKeys already merged in from the pod's labels */
    int32_t min_domains;       /* 1 when unset */
    int honor_affinity;        /* nodeAffinityPolicy: Honor (the default) */
    int honor_taints;          /* nodeTaintsPolicy: Honor (default Ignore) */
};

/* The placement rules of a pod beyond nodeSelector and tolerations, decoded once and
 * shared (reference counted) by the pod and the scheduler's pod shapes. Immutable. */
struct model_affinity {
    int refs;
    char *node_key; /* canonical text of the nodeAffinity part ("" when none): pods with
                       equal node_key have equal node terms */
    /* nodeAffinity: required terms (ORed) and preferred terms (weighted) */
    struct model_node_term *node_req, *node_pref;
    size_t nnode_req, nnode_pref;
    int has_node_req; /* requiredDuringScheduling is set (with no terms nothing matches) */
    /* podAffinity / podAntiAffinity, required and preferred */
    struct model_pod_term *aff_req, *aff_pref, *anti_req, *anti_pref;
    size_t naff_req, naff_pref, nanti_req, nanti_pref;
    struct model_spread *spread; /* topologySpreadConstraints */
    size_t nspread;
};
/* Takes a reference (a may be NULL); returns a. */
struct model_affinity *model_affinity_ref(struct model_affinity *a);
/* Drops a reference; frees on the last. NULL-safe. */
void model_affinity_unref(struct model_affinity *a);
/* 1 when the node (name and labels) matches the term. */
int model_node_term_match(const struct model_node_term *t, const char *name,
                          const struct model_kv *labels, size_t n);

/* 1 when labels match the selector. */
int model_selector_match(const struct model_selector *s, const struct model_kv *labels, size_t n);
/* 1 when the requirement holds for the value of its key (NULL: the key is absent). */
int model_sel_req_match(const struct model_sel_req *r, const char *value);
/* The value of key among labels, or NULL. */
const char *model_label(const struct model_kv *labels, size_t n, const char *key);
void model_selector_release(struct model_selector *s);

struct model_node {
    char *name;
    struct model_kv *labels; /* always with MODEL_LABEL_HOSTNAME */
    size_t nlabels;
    struct model_res *allocatable;
    size_t nallocatable;
    int unschedulable;
    struct model_taint *taints;
    size_t ntaints;
};

struct model_pod {
    char *ns, *name, *uid;
    char *group;        /* model_pod_group_name, NULL when none */
    char *task;         /* Volcano's task: the MODEL_ANN_TASK_SPEC annotation, else label; NULL */
    int64_t topo_index; /* network-topology-index annotation, -1 when absent */
    char *queue;        /* the queue-name annotation (a pod without a PodGroup joins it), NULL */
    struct model_res *requests; /* effective requests as kube-scheduler counts them: containers
                                   and sidecars, the max with each init container, plus
                                   spec.overhead */
    size_t nrequests;
    int32_t priority;
    int preempt_never; /* spec.preemptionPolicy == Never */
    struct model_kv *node_selector;
    size_t nnode_selector;
    struct model_toleration *tolerations;
    size_t ntolerations;
    struct model_kv *labels; /* metadata.labels, sorted by key */
    size_t nlabels;
    struct model_affinity *aff; /* spec.affinity and topologySpreadConstraints; NULL when
                                   the pod has none. Shared: see model_affinity_ref */
    int gated;                  /* spec.schedulingGates is not empty */
    char *node_name;            /* spec.nodeName, NULL when unbound */
    char *phase;                /* status.phase, "Pending" by default */
    char *nominated_node;       /* status.nominatedNodeName or NULL */
    int64_t creation_ms;        /* metadata.creationTimestamp, 0 when absent */
    int64_t deletion_ms;        /* metadata.deletionTimestamp, 0 when absent */
    int preempted; /* status.conditions has DisruptionTarget True, reason PreemptionByScheduler:
                      the pod is a victim of preemption */
    /* The first field muster does not support (model_unsupported_field), NULL when none:
     * a mirrored pod that carries one is not placed. unsupported_why: static storage. */
    char *unsupported;
    const char *unsupported_why;
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
};

/* The queue of jobs that name none; it exists without being stored (weight 1, no limits),
 * and a stored Queue of this name replaces it. */
#define MODEL_QUEUE_DEFAULT "default"
/* The root of the queue tree: top-level queues name it as spec.parent or name none. */
#define MODEL_QUEUE_ROOT "root"
/* The queue of a pod without a PodGroup (Volcano's annotation). */
#define MODEL_ANN_QUEUE_NAME "scheduling.volcano.sh/queue-name"
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
int model_pod_decode(json_t *obj, struct model_pod *out, struct err *err);
/* model_pod_decode of a document whose unsupported fields were refused (a manifest with
 * fields_checked: model_validate_all names each one as an error). The schema walk that
 * looks for one is skipped, a tenth of the decode; unsupported stays NULL. */
int model_pod_decode_refused(json_t *obj, struct model_pod *out, struct err *err);
int model_podgroup_decode(json_t *obj, struct model_podgroup *out, struct err *err);
int model_topology_decode(json_t *obj, struct model_topology *out, struct err *err);
int model_priorityclass_decode(json_t *obj, struct model_priorityclass *out, struct err *err);
int model_queue_decode(json_t *obj, struct model_queue *out, struct err *err);
int model_pdb_decode(json_t *obj, struct model_pdb *out, struct err *err);
void model_node_release(struct model_node *n);
/* 1 when a and b are the same for scheduling: name, labels, allocatable, cordon and taints,
 * each in the same order (a node's heartbeat changes none of them). */
int model_node_same(const struct model_node *a, const struct model_node *b);
void model_pod_release(struct model_pod *p);
void model_podgroup_release(struct model_podgroup *g);
void model_topology_release(struct model_topology *t);
void model_priorityclass_release(struct model_priorityclass *pc);
void model_queue_release(struct model_queue *q);
void model_pdb_release(struct model_pdb *b);

/* ---- pods: the fields muster writes, and "terminal" (pod.c) ----
 *
 * The scheduler records its decisions in stored Pod documents: spec.nodeName (a
 * binding), status.phase / reason / message, status.nominatedNodeName,
 * status.conditions and metadata.deletionTimestamp. Every such edit goes through the
 * functions below, and every layer asks model_pod_terminal (or, holding only a phase,
 * model_pod_phase_terminal) whether a pod is done.
 *
 * The setters edit pod (borrowed, an object) in place and create status, spec or
 * metadata when missing. They replace members and never edit a value they replace: a
 * new status.conditions array is built each time, so a pod made as a shallow copy of a
 * stored document with its own copy of status (json_copy of both) can be edited while
 * the stored document stays intact. Timestamps (ts) are RFC 3339 strings, copied.
 *
 * Calling sequence (binding a pod):
 *
 *     json_t *pod = json_copy(old);                          shares every member
 *     json_object_set_new(pod, "spec", json_copy(old_spec));     own copies of the
 *     json_object_set_new(pod, "status", json_copy(old_status)); objects edited
 *     model_pod_set_bound(pod, "n1", ts);                    old is unchanged
 */

/* The condition the scheduler sets on a preemption victim (model_pod_set_condition with
 * status "True"), as Kubernetes names them (v1.DisruptionTarget,
 * v1.PodReasonPreemptionByScheduler); model_pod_decode reads it back as model_pod.preempted. */
#define MODEL_COND_DISRUPTION_TARGET "DisruptionTarget"
#define MODEL_REASON_PREEMPTION_BY_SCHEDULER "PreemptionByScheduler"

/* 1 when phase is "Succeeded" or "Failed": the pod is done and holds no resources.
 * NULL (no phase, which means Pending) is not terminal. */
int model_pod_phase_terminal(const char *phase);
/* model_pod_phase_terminal of a decoded pod's phase. */
int model_pod_terminal(const struct model_pod *p);
/* 1 when the pod holds its place in its gang: bound (spec.nodeName) and not terminal.
 * Failed and Succeeded members never count toward minMember (issue #11): a gang of 3 with
 * 2 members Failed has 1 member alive, not 3, however it started. Every layer that counts a
 * gang (attempts, job states, tests/support/sched_invariants.c) asks this; the sched case
 * gang_succeeded_members_count pins it. */
int model_pod_gang_bound(const struct model_pod *p);
/* 1 when the pod has not started and is not going away: no metadata.deletionTimestamp and
 * phase Pending (NULL reads as Pending), bound or not. The scheduler marks such a bound pod
 * Running in standalone mode (mark_running). */
int model_pod_unstarted(const struct model_pod *p);
/* 1 when the pod waits for a node: unbound (no spec.nodeName) and model_pod_unstarted.
 * The one "pending" rule: the scheduler's view, the jobs it attempts and the store's
 * pending index all ask it. */
int model_pod_is_pending(const struct model_pod *p);
/* model_pod_is_pending of a pod document (borrowed), reading its fields as model_pod_decode
 * does: the same answer as decoding it and asking the typed form. */
int model_pod_json_pending(json_t *pod);
/* status.phase, or "Pending" when absent. Borrowed, valid until the phase changes. */
const char *model_pod_phase(json_t *pod);
/* status (borrowed, valid while pod holds it), created as {} when missing. */
json_t *model_pod_status(json_t *pod);
/* Sets status.phase; reason and message, when not NULL, set status.reason and
 * status.message (NULL leaves what is there). */
void model_pod_set_phase(json_t *pod, const char *phase, const char *reason, const char *message);
/* Sets status.nominatedNodeName to node, or removes it when node is NULL (a pod without
 * status is left without one). */
void model_pod_set_nominated(json_t *pod, const char *node);
/* Removes every condition of this type and appends {"type", "status", "reason",
 * "message", "lastTransitionTime": ts} after the others (which keep their order);
 * a NULL reason or message is left out. */
void model_pod_set_condition(json_t *pod, const char *type, const char *status, const char *reason,
                             const char *message, const char *ts);
/* *ms = the lastTransitionTime of the first condition of this type that has a valid one.
 * Returns 0, or ERR_NOT_FOUND (*ms unchanged). Changes nothing. */
int model_pod_condition_time(json_t *pod, const char *type, int64_t *ms);
/* Sets metadata.deletionTimestamp. */
void model_pod_set_deletion(json_t *pod, const char *ts);
/* Binds the pod to node: spec.nodeName = node, status.phase "Pending" when it has none,
 * status.nominatedNodeName removed, condition PodScheduled "True" at ts. */
void model_pod_set_bound(json_t *pod, const char *node, const char *ts);

#endif
