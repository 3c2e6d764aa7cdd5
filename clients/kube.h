/*
 * kube.h - mirror a Kubernetes cluster into muster and write decisions back.
 *
 * The mirror lists then watches Nodes, Pods, PodGroups (scheduling.sigs.k8s.io/v1alpha1
 * and, as a second source of the same kind, scheduling.volcano.sh/v1beta1),
 * ClusterNetworkTopologies (scheduling.koordinator.sh/v1alpha1), PriorityClasses,
 * Volcano's Queues and PodDisruptionBudgets (policy/v1) through libcurl, and applies every event
 * through the scheduler's mutation path (sched_apply / sched_delete), batched:
 * one transaction per batch of up to batch_max events or batch_ms of arrivals.
 * The API server's objects are the truth (managedFields stripped,
 * metadata.resourceVersion kept). Each resource's last applied resourceVersion
 * is kept in STORE_DB_MIRROR ("rv/<resource>"), so a restart resumes the watch
 * without a full list where the API server still has the history; a 410 Gone
 * relists and deletes what disappeared (of a kind with two sources, only what came from
 * the relisting source's API group). A CRD that is not installed (404 on
 * list) is reported once and retried slowly.
 *
 * Bind mode (opts.scheduler_name set): unbound pods whose spec.schedulerName is
 * not ours are not mirrored (other schedulers own them); the write-back thread
 * uses the audit log as its outbox: it reads records after its last
 * acknowledged sequence (STORE_DB_MIRROR "writeback") of kinds "placed",
 * "nominated", "preempted"/"evicted", "deadline-exceeded", performs the API calls (Binding,
 * status patches for nominatedNodeName, the DisruptionTarget condition and a deadline's
 * Failed phase, the Eviction API) and appends "bound" / "bind-refused" / "nominate-acked" /
 * "nominate-refused" / "evict-acked" / "evict-refused" / "deadline-acked" /
 * "deadline-refused" records (store.h's STORE_AUDIT_KIND_MAP) together with the new
 * acknowledged sequence in one transaction. A refused binding puts the pod back as the API server
 * has it. Transport errors and 5xx answers are retried per pod with backoff while other pods go
 * on, and given up after writeback_giveup_ms ("writeback-abandoned"). It also writes Events
 * (events.k8s.io/v1, core v1 fallback) and PodGroup status (docs/kubernetes.md).
 *
 * Calling sequence:
 *
 *     struct kube_options o = KUBE_OPTIONS_INIT;  o.kubeconfig = "...";
 *     struct kube *k;
 *     kube_open(sched, store, &o, &k, &err);     reads the kubeconfig
 *     kube_start(k, &err);                       starts the threads
 *     kube_wait_synced(k, 60000, &err);          optional: first full sync
 *     json_t *doc = kube_sources_json(k);        GET /api/v1/sources
 *     kube_close(k);                             stops and joins the threads
 *
 * Threads: one watcher per resource, one batching writer, one write-back thread
 * in bind mode, one lease thread with leader election. kube_sources_json and kube_wait_synced may
 * be called from any thread. sched and store are borrowed and must outlive the kube.
 */
#ifndef MUSTER_KUBE_H
#define MUSTER_KUBE_H

#include <jansson.h>
#include <stdint.h>

struct err;
struct sched;
struct store;
struct kube;

struct kube_options {
    const char *kubeconfig;      /* NULL: in-cluster service account, else $KUBECONFIG,
                                    else ~/.kube/config */
    const char *context;         /* NULL: current-context */
    const char *scheduler_name;  /* NULL: mirror only; "muster": bind mode */
    int batch_max;               /* events per transaction (default 500) */
    int batch_ms;                /* max wait to fill a batch (default 50) */
    int page_size;               /* list limit (default 500) */
    int watch_timeout_s;         /* timeoutSeconds of a watch request (default 300) */
    int64_t backoff_min_ms;      /* error backoff, doubled up to max, with jitter */
    int64_t backoff_max_ms;      /* (defaults 200 ms and 30 s) */
    int64_t missing_retry_ms;    /* retry of a resource whose CRD is missing (default 60 s) */
    int64_t writeback_giveup_ms; /* bind mode: a pod's write-back failing (transport, 5xx)
                                    this long is given up (default 5 min) */
    /* Leader election (kube_lease.c, docs/kubernetes.md "Leader election"): off unless
     * leader_elect. Durations as client-go's: the lease is held for lease_duration_ms after
     * its last renewal as others observe it; the leader stops acting once renew_deadline_ms
     * passed since its last successful renewal; every retry_period_ms it renews (or, as a
     * follower, tries to acquire). 0: 15 s, 10 s and 2 s. */
    int leader_elect;
    int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;
    const char *lease_namespace; /* NULL: the connection's namespace, else "default" */
    const char *lease_name;      /* NULL: "muster" */
    const char *identity;        /* holderIdentity; NULL: hostname + "_" + pid */
    /* Called (from the lease thread) when a term starts: the caller's cycle wake-up, so the
     * first cycle does not wait for the timer. NULL: none. */
    void (*on_leading)(void *ctx);
    void *on_leading_ctx;
};

#define KUBE_OPTIONS_INIT                                                                          \
    {                                                                                              \
        NULL, NULL, NULL, 500, 50, 500, 300, 200, 30000, 60000, 300000, 0, 0, 0, 0, NULL, NULL,    \
            NULL, NULL, NULL                                                                       \
    }

/* Reads the connection (kubeconfig or in-cluster credentials) and prepares the mirror.
 * Starts nothing. Returns 0, ERR_INVALID (bad kubeconfig, unknown context: the message
 * names it), ERR_IO (unreadable file), ERR_NOT_FOUND (no kubeconfig and not in a pod).
 * *out new; release with kube_close. */
int kube_open(struct sched *s, struct store *st, const struct kube_options *opts, struct kube **out,
              struct err *err);

/* What kube_open would refuse in opts (the kubeconfig, its context, in-cluster
 * credentials), refused the same way, with nothing kept or started. */
int kube_check(const struct kube_options *opts, struct err *err);

/* Starts the watcher, writer and (bind mode) write-back threads. Returns 0 or
 * ERR_INTERNAL. */
int kube_start(struct kube *k, struct err *err);

/* Waits until every installed resource has been synced once (listed or resumed and
 * applied). Returns 0 or ERR_UNAVAILABLE on timeout (message lists what is not synced). */
int kube_wait_synced(struct kube *k, int64_t timeout_ms, struct err *err);

/* Waits until the write-back has acknowledged every audit record up to the current last
 * sequence (bind mode). Returns 0 or ERR_UNAVAILABLE on timeout. */
int kube_wait_writeback(struct kube *k, int64_t timeout_ms, struct err *err);

/* Status for GET /api/v1/sources (new):
 * {"server": url, "mode": "mirror"|"bind", "schedulerName": s|null,
 *  "sources": [{"resource": "pods", "kind": "Pod", "apiVersion": "v1",
 *               "state": "synced"|"listing"|"watching"|
 *               "backoff"|"missing", "synced": bool, "resourceVersion": "123",
 *               "lastEvent": rfc3339|null, "events": n, "relists": n, "errors": n,
 *               "lastError": msg|null}],
 *  "counters": {"events": n, "batches": n, "relists": n, "applyErrors": n,
 *               "writebacks": n, "writebackFailures": n, "bindings": n,
 *               "bindRefused": n, "evictions": n, "evictRefused": n,
 *               "patches": n, "ackSeq": n},
 *  "leaderElection": kube_leader_json's document (only with leader election)} */
json_t *kube_sources_json(struct kube *k);

/* TokenReview (authentication.k8s.io/v1) of a bearer token presented to musterd: 0 with
 * *user (new) the review's status.user ({"username", "uid", "groups"}), ERR_UNAUTHORIZED
 * when the API server does not authenticate it, ERR_NETWORK / ERR_UNAVAILABLE when it
 * cannot tell (unreachable, or an answer other than 201: the mirror's account needs
 * "create" on tokenreviews, see examples/rbac.yaml). Any thread; blocks up to 10 s. */
int kube_token_review(struct kube *k, const char *token, json_t **user, struct err *err);
/* SubjectAccessReview (authorization.k8s.io/v1): may user (a TokenReview's status.user,
 * borrowed) do verb on resource of API group group? 0 with *allowed, or as above. */
int kube_access_review(struct kube *k, json_t *user, const char *group, const char *resource,
                       const char *verb, int *allowed, struct err *err);

/* ---- leader election (kube_lease.c) ----
 *
 * With opts.leader_elect a lease thread holds or watches the Lease
 * coordination.k8s.io/v1 NS/NAME as client-go's leaderelection does. A replica that wins
 * it first relists every source (its store is brought back to the API server's state) and
 * abandons the write-back records of earlier terms (an audit record "leader" says how
 * many), then leads: it runs cycles and writes. Without leader_elect every call below
 * answers as the only replica would. */

/* 1 when this replica leads (may run cycles and write), 0 when it follows (also while it
 * syncs after winning the lease). holder (n bytes, may be NULL) gets the lease's holder as
 * last observed, "" when none is known (or election is off). Any thread. */
int kube_leader(struct kube *k, char *holder, size_t n);
/* The cycle thread asks before each cycle: 1 (and a cycle is marked running until
 * kube_cycle_end) when this replica leads with a renewal younger than the renew deadline,
 * else 0 (no cycle). A new term does not start while a cycle of the old one runs. */
int kube_cycle_begin(struct kube *k);
void kube_cycle_end(struct kube *k);
/* The election's state (new), NULL when election is off:
 * {"role": "leader"|"follower", "state": "leading"|"syncing"|"following", "identity",
 *  "leader": holder|null, "lease": "NS/NAME", "leaseDurationSeconds", "renewDeadlineSeconds",
 *  "retryPeriodSeconds", "leaseTransitions", "lastRenew": rfc3339|null, "term",
 *  "acquisitions", "losses", "renewFailures", "lastLoss": reason|null} */
json_t *kube_leader_json(struct kube *k);

/* Stops and joins the threads, frees everything; a leader releases its Lease first
 * (holderIdentity cleared, as client-go's ReleaseOnCancel), so the next replica takes over
 * at once. NULL-safe. */
void kube_close(struct kube *k);

/* ---- the audit witness ConfigMap (docs/security.md "The audit log") ----
 *
 * A ConfigMap ("NAME" in the connection's namespace, or "NS/NAME") whose data.checkpoint
 * holds the newest signed checkpoint line. Independent of the mirror: its own connection,
 * used by one thread at a time. Needs get, create and patch on configmaps. */
struct kube_witness;
/* Reads the connection as kube_open does. Returns 0 or its errors. *out new. */
int kube_witness_open(const struct kube_options *opts, const char *name, struct kube_witness **out,
                      struct err *err);
/* data.checkpoint (new) into *line, NULL when the ConfigMap or the key is absent. Returns 0,
 * ERR_NETWORK, ERR_INVALID (the API server refused: the message has its answer). */
int kube_witness_get(struct kube_witness *w, char **line, struct err *err);
/* Sets data.checkpoint (merge patch; creates the ConfigMap on 404). Errors as _get. */
int kube_witness_put(struct kube_witness *w, const char *line, struct err *err);
/* "NS/NAME" into buf. */
const char *kube_witness_name(const struct kube_witness *w, char *buf, size_t n);
/* NULL-safe. */
void kube_witness_close(struct kube_witness *w);

#endif
