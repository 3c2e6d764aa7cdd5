/*
 * model_pod.h - a Pod: its typed view (struct model_pod), the labels and annotations that
 * tie it to a gang and a queue, and the rules every layer asks of it: which PodGroup it is
 * in, whether it is terminal, pending or holding its gang place, and the fields the
 * scheduler writes into a stored Pod (pod.c, the one place that edits them).
 *
 * A decoded pod owns its strings (release with model_pod_release); the rules borrow the
 * pod and keep nothing; the setters edit a document in place (see below).
 */
#ifndef MUSTER_MODEL_POD_H
#define MUSTER_MODEL_POD_H

#include <jansson.h>
#include <stdint.h>

#include "model_quantity.h"
#include "model_select.h"

struct err;

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
/* Koordinator's place of a pod in its gang's network-topology order (model_pod.topo_index) */
#define MODEL_ANN_TOPOLOGY_INDEX "gang.scheduling.koordinator.sh/network-topology-index"
/* The queue of a pod without a PodGroup (Volcano's annotation). */
#define MODEL_ANN_QUEUE_NAME "scheduling.volcano.sh/queue-name"
/* muster's estimate of a pod's runtime (a Go duration, > 0): a time limit that ends nothing
 * (docs/reservations.md); spec.activeDeadlineSeconds, when set, is the limit instead. */
#define MODEL_ANN_EXPECTED_RUNTIME "muster.io/expected-runtime"
/* The reason of a pod ended by spec.activeDeadlineSeconds, as the kubelet writes it. */
#define MODEL_REASON_DEADLINE_EXCEEDED "DeadlineExceeded"
/* the kubelet's status.message for it (pkg/kubelet/active_deadline.go) */
#define MODEL_MESSAGE_DEADLINE_EXCEEDED                                                            \
    "Pod was active on the node longer than the specified deadline"

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
    int64_t start_ms;           /* status.startTime (the kubelet's, or muster's at its binding),
                                   0 when absent: not started */
    int64_t deadline_ms;        /* spec.activeDeadlineSeconds in ms, 0 when absent: enforced */
    int64_t expected_ms;        /* the MODEL_ANN_EXPECTED_RUNTIME annotation in ms, 0 when absent or
                                   invalid (a mirrored pod cannot be refused): an estimate */
    int preempted; /* status.conditions has DisruptionTarget True, reason PreemptionByScheduler:
                      the pod is a victim of preemption */
    /* The first field muster does not support (model_unsupported_field), NULL when none:
     * a mirrored pod that carries one is not placed. unsupported_why: static storage. */
    char *unsupported;
    const char *unsupported_why;
};

/* The pod's time limit in ms: spec.activeDeadlineSeconds when set, else the expected-runtime
 * annotation, else 0 (none). The one rule behind a job's limit (its pods' largest). */
int64_t model_pod_limit_ms(const struct model_pod *p);

/* Decodes a validated document; returns 0 or ERR_INVALID with a field path. On failure out
 * is released. Release with model_pod_release. */
int model_pod_decode(json_t *obj, struct model_pod *out, struct err *err);
/* model_pod_decode of a document whose unsupported fields were refused (a manifest with
 * fields_checked: model_validate_all names each one as an error). The schema walk that
 * looks for one is skipped, a tenth of the decode; unsupported stays NULL. */
int model_pod_decode_refused(json_t *obj, struct model_pod *out, struct err *err);
/* model_pod_decode of a stored pod read straight from its JSON text (json, len bytes, no
 * document built), with its binding record applied (bind_node and bind_ts; both NULL when
 * it has none) as model_pod_set_bound applies it to the document: what a restart reads for
 * each of its pods (decode_stored.c). Only a bound pod of the common shape is read; the
 * field muster does not support is not looked for (unsupported stays NULL): it is read
 * only while a pod waits, and a bound pod waits again only through a new document, which
 * is decoded in full. Returns 1 with *out filled (release with model_pod_release), or 0
 * with *out zeroed: the caller parses the document and uses model_pod_decode (an unbound
 * pod, another shape, anything model_pod_decode would refuse). */
int model_pod_decode_stored(const char *json, size_t len, const char *bind_node,
                            const char *bind_ts, struct model_pod *out);
void model_pod_release(struct model_pod *p);

/* ---- pods: the fields muster writes, "terminal" and "pending" (pod.c) ----
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
