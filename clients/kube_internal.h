/*
 * kube_internal.h - internals of the Kubernetes mirror (clients/kube_*.c).
 *
 * kube_conn.c   connection: kubeconfig, in-cluster credentials, HTTP through libcurl
 * kube_watch.c  one watcher thread per resource: paginated list, chunked watch
 * kube_mirror.c the event queue and the batching writer
 * kube.c        open/start/close, waiting, status
 * kube_http.c   libcurl
 * kube_call.c   kube__call, the one funnel of every API write
 * kube_bind.c   write-back of one pod's decision (binding, nomination, eviction)
 * kube_outbox.c the write-back thread: the audit log as outbox, per-pod retry and
 *               give-up, the crash-safe acknowledged sequence
 * kube_events.c Events (events.k8s.io/v1, core v1 fallback)
 * kube_pgstatus.c PodGroup status (both API groups)
 * kube_lease.c  leader election: the lease thread (acquire, renew, lose, start a term)
 * kube_term.c   what the replica may do now: kube__may_write, cycles, the write-back's term
 *
 * Locking: k->mu guards the queue, every struct kube_source's state fields and the
 * counters; k->cond signals queue and sync changes. No lock is held across network
 * or store calls.
 */
#ifndef MUSTER_KUBE_INTERNAL_H
#define MUSTER_KUBE_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "kube.h"
#include "model.h"
#include "outbox.h"
#include "store.h"

/* ---- connection ---- */

struct kube_conn {
    char *server; /* "https://host:port", no trailing slash */
    char *token;
    char *ca_file, *ca_data; /* PEM file or PEM bytes (decoded) */
    size_t ca_len;
    char *cert_file, *cert_data, *key_file, *key_data;
    size_t cert_len, key_len;
    int insecure;
    char *ns;         /* context namespace or NULL */
    char *user_agent; /* NULL: "muster/VERSION"; with leader election it names the identity */
};

/* Loads a kubeconfig (YAML) and picks context (NULL: current-context). Relative file paths
 * are resolved against the kubeconfig's folder. *out new. */
int kube__conn_from_kubeconfig(const char *path, const char *context, struct kube_conn **out,
                               struct err *err);
/* In-cluster credentials: $KUBERNETES_SERVICE_HOST/PORT and sa_dir/{token,ca.crt,namespace}
 * (sa_dir NULL: /var/run/secrets/kubernetes.io/serviceaccount). ERR_NOT_FOUND when not in a
 * pod. *out new. */
int kube__conn_in_cluster(const char *sa_dir, struct kube_conn **out, struct err *err);
/* Picks per kube_options rules (kubeconfig, in-cluster, $KUBECONFIG, ~/.kube/config). */
int kube__conn_load(const char *kubeconfig, const char *context, struct kube_conn **out,
                    struct err *err);
void kube__conn_free(struct kube_conn *c);

/* One libcurl easy handle bound to a connection, used by one thread (keeps the connection
 * alive between requests). stop, when not NULL, aborts transfers once *stop is non-zero. */
struct kube_http;
struct kube_http *kube__http_new(const struct kube_conn *c, volatile int *stop);
/* Also aborts transfers once *flag is non-zero (a watcher's relist request). */
void kube__http_abort_on(struct kube_http *h, volatile int *flag);
void kube__http_free(struct kube_http *h);

struct kube_resp {
    long status;
    char *body; /* new, NUL-terminated */
    size_t len;
};
void kube__resp_release(struct kube_resp *r);

/* One request to path (with query). body may be NULL; ctype NULL means application/json.
 * timeout_ms 0: none. Returns 0 when a response arrived (any status), ERR_NETWORK. */
int kube__http_request(struct kube_http *h, const char *method, const char *path, const char *ctype,
                       const char *body, long timeout_ms, struct kube_resp *resp, struct err *err);

/* Streams a GET: each complete newline-terminated line of a 2xx body goes to line_fn
 * (return non-zero to abort the transfer). Non-2xx bodies are kept in resp. Returns 0 when
 * the stream ended (status in resp->status), ERR_NETWORK (dropped, aborted by stop or by
 * line_fn: *aborted set to 1 in that last case). */
typedef int (*kube_line_fn)(void *ctx, const char *line, size_t len);
int kube__http_stream(struct kube_http *h, const char *path, long timeout_ms, kube_line_fn line_fn,
                      void *ctx, struct kube_resp *resp, int *aborted, struct err *err);

/* Decodes base64 (kubeconfig *-data fields). New buffer, NUL-terminated. */
int kube__base64_decode(const char *in, char **out, size_t *out_len, struct err *err);

/* ---- sources and events ---- */

enum kube_state { KUBE_LISTING, KUBE_WATCHING, KUBE_BACKOFF, KUBE_MISSING, KUBE_SYNCED_IDLE };

struct kube;

/* The resources the mirror lists and watches (kube.c's table). PodGroups have two, one per
 * API group (scheduler-plugins', Volcano's): one kind, one store key. A source of a shared
 * kind owns the stored objects whose apiVersion is in its group (kube__source_owns): its
 * relist deletes only those, and so does its DELETE event. */
#define KUBE_NSOURCES 8

struct kube_source {
    struct kube *k;
    int index;               /* in k->src */
    const char *resource;    /* "pods", "podgroups.scheduling.volcano.sh": unique, the key of
                                its resume point and of GET /api/v1/sources */
    const char *path;        /* "/api/v1/pods" */
    const char *api_version; /* of its objects: "v1", "scheduling.volcano.sh/v1beta1" */
    enum model_kind kind;
    int shared; /* another source has the same kind */
    pthread_t thread;
    int started;
    /* guarded by k->mu */
    enum kube_state state;
    int synced;          /* applied a full list (or resumed) at least once */
    int missing_logged;  /* 404 reported once */
    char rv[64];         /* resume point of the watch */
    char applied_rv[64]; /* last resourceVersion the writer applied */
    int64_t last_event_ms;
    uint64_t events, relists, errors;
    char last_error[256];
    /* relists forced by a new term (kube_lease.c): the watcher drops its stream when
     * relist_req is set, and lists again; the writer records the generation it applied */
    volatile int relist_req;
    uint64_t list_gen, applied_gen;
};

enum kube_op { KUBE_EV_APPLY, KUBE_EV_DELETE, KUBE_EV_RV, KUBE_EV_SYNC };

struct kube_ev {
    enum kube_op op;
    struct kube_source *src;
    json_t *obj;   /* APPLY: the object (owned) ; SYNC: object of listed keys (owned) */
    char *key;     /* DELETE */
    char *invalid; /* APPLY: why the object is invalid (model_validate, run by the watch
                      thread so that the writer does not), or NULL */
    char rv[64];   /* resourceVersion after this event ("" when unknown) */
    uint64_t gen;  /* SYNC: the relist generation the list started under */
    struct kube_ev *next;
};

struct kube_counters {
    uint64_t events, batches, relists, apply_errors;
    uint64_t writebacks, writeback_failures, bindings, bind_refused, evictions, evict_refused,
        patches, ack_seq;
    uint64_t writeback_abandoned, events_written, event_failures, pg_status_patches,
        pg_status_failures;
};

enum kube_role { KUBE_FOLLOWING, KUBE_SYNCING, KUBE_LEADING };

/* Leader election, guarded by k->mu (kube_lease.c). */
struct kube_lease {
    char identity[256], ns[128], name[128];
    enum kube_role role;
    uint64_t term;           /* incremented each time this replica starts leading */
    uint64_t writeback_term; /* the term the write-back thread has taken up */
    uint64_t abandon_seq;    /* the write-back of the current term starts after this */
    int64_t renewed_ms;      /* CLOCK_MONOTONIC ms at which the last successful acquire or
                                renew was sent */
    int64_t renewed_wall_ms;
    char holder[256];      /* the lease's holder as last observed */
    char prev_holder[256]; /* the last holder other than "" observed before acquiring */
    int64_t transitions;   /* leaseTransitions as last observed */
    uint64_t acquisitions, losses, renew_failures;
    char last_loss[256];
    int cycling; /* a cycle runs (kube_cycle_begin .. _end) */
    uint64_t relist_gen;
};

struct kube {
    struct sched *sched;
    struct store *store;
    struct kube_options opts;
    char *scheduler_name;
    struct kube_conn *conn;
    struct kube_source src[KUBE_NSOURCES];
    volatile int stop;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    struct kube_ev *head, *tail;
    size_t qlen;
    struct kube_counters c;
    pthread_t writer, binder;
    int writer_started, binder_started;
    int writer_busy;
    struct kube_lease lease;
    pthread_t leaser;
    int leaser_started;
    volatile int lease_stop;  /* set after the other threads are joined: release, end */
    int events_core;          /* events.k8s.io answered 404: core v1 Events */
    int64_t event_log_ms;     /* last logged Event failure (monotonic) */
    uint64_t event_log_quiet; /* failures not logged since */
};

/* Queues an event (takes ownership of ev); blocks while the queue is very long. */
void kube__enqueue(struct kube *k, struct kube_ev *ev);
void kube__ev_free(struct kube_ev *ev);
/* 1 when this replica may write to the API server now (bindings, patches, evictions,
 * Events, PodGroup status): leader election is off, or this replica holds the Lease and
 * its renew deadline has not passed (kube_lease.c). Every write goes through kube_call.c's
 * kube__call(), which asks this first; a 0 stops the write before it leaves. */
int kube__may_write(struct kube *k);
/* 1 when the last successful renewal (sent at k->lease.renewed_ms) is younger than the
 * renew deadline at now (CLOCK_MONOTONIC ms). Lock held. */
int kube__lease_fresh(struct kube *k, int64_t now);
/* The CLOCK_REALTIME time ms_from_now ahead, for pthread_cond_timedwait on k->cond. */
void kube__deadline_ts(int64_t ms_from_now, struct timespec *ts);
/* Sleeps up to ms, waking early when the kube stops. Returns 1 when stopping. */
int kube__sleep(struct kube *k, int64_t ms);
/* Records an error on a source (log once per distinct message burst). */
void kube__source_error(struct kube_source *src, const char *msg);
/* Prepares an API object for the store: sets kind and apiVersion when missing (api_version
 * NULL: the kind's, model_kind_api_version), strips managedFields. */
void kube__normalize(enum model_kind kind, const char *api_version, json_t *obj);
/* 1 when src owns the stored object obj (borrowed): src is its kind's only source, or obj's
 * apiVersion is in src's API group. */
int kube__source_owns(const struct kube_source *src, json_t *obj);

void *kube__watch_main(void *arg);  /* arg: struct kube_source */
void *kube__writer_main(void *arg); /* arg: struct kube */
void *kube__bind_main(void *arg);   /* arg: struct kube */
void *kube__lease_main(void *arg);  /* arg: struct kube */
/* kube_lease.c: fills the election's defaults, identity, namespace and name (copied from
 * the options, which are cleared) and the User-Agent naming the identity. */
void kube__lease_init(struct kube *k);

/* kube_lease.c: 1 when the writer applies events as the API server's truth, resetting a
 * stored pod whose node or deletion the API server does not have (a follower, or a replica
 * syncing after winning the lease: any placement the store holds is an earlier term's). */
int kube__authoritative(struct kube *k);
/* kube_lease.c, for the write-back thread before each pass: 0 when it must wait (this
 * replica does not lead), 1 when it may go on, 2 when a new term starts: it takes the term
 * up, and must drop what it holds of earlier terms (those records are abandoned) and go on
 * after *from (the last audit record when the term started). */
int kube__writeback_turn(struct kube *k, uint64_t *my_term, uint64_t *from);

/* ---- write-back: kube_call.c, then kube_events.c, kube_pgstatus.c, kube_bind.c, and
 * kube_outbox.c on top; each calls only the ones before it ---- */

/* Every request write-back makes (writes, and the reads that decide them): asks
 * kube__may_write first (ERR_UNAVAILABLE when it says no), then makes one attempt.
 * Returns 0 with an answer below 500 in r, ERR_NETWORK for a transport error or a 5xx
 * (counted in writebackFailures; r may hold the 5xx). Release r in every case. */
int kube__call(struct kube *k, struct kube_http *h, const char *method, const char *path,
               const char *ctype, json_t *body, struct kube_resp *r, struct err *err);
/* Adds one to a counter of k->c (field points into it) under k->mu. */
void kube__count(struct kube *k, uint64_t *field);
/* "HTTP 409: message" of an answer, into buf. */
const char *kube__status_message(struct kube_resp *r, char *buf, size_t n);

/* One pod (of rec->pods) of an outbox entry (scheduler/outbox.h; "placed": binding,
 * "nominated": nominatedNodeName, "preempted"/"evicted": DisruptionTarget and eviction),
 * one attempt. Outcome records ("bound", "bind-refused", ...) are appended to outcomes
 * (array, borrowed). Returns 0 when the API server decided (accepted or refused),
 * ERR_NETWORK / ERR_UNAVAILABLE when it must be retried. */
int kube__bind_pod(struct kube *k, struct kube_http *h, uint64_t seq,
                   const struct sched_outbox_rec *rec, const struct sched_outbox_pod *pod,
                   json_t *outcomes, struct err *err);
/* 1 when write-back calls the API server for rec->pods[i]: every victim of "preempted",
 * of "evicted" unless observed (the API server removed the pod), and of "placed" and
 * "nominated" only pods of this scheduler (a store read). */
int kube__pod_acted(struct kube *k, const struct sched_outbox_rec *rec, size_t i);
/* A binding given up: the store's pod loses its spec.nodeName (the API server never had
 * it), so the next cycle places it again. */
int kube__unbind_local(struct kube *k, const char *pod, struct err *err);

/* In txn: appends outcomes (audit records, borrowed, appended as copies) and writes the
 * write-back document {"ackSeq": ack, "done": done} (kube_outbox.c). */
int kube__writeback_commit(MDB_txn *txn, json_t *outcomes, uint64_t ack, json_t *done,
                           struct err *err);
/* kube_outbox.c: write-back of one audit record, each pod once, outcomes and ackSeq
 * committed together (exposed for tests). Returns 0 when every pod was decided, or ERR_* when one
 * must be retried (nothing is committed then). */
int kube__bind_record(struct kube *k, struct kube_http *h, uint64_t seq, json_t *rec,
                      struct err *err);

/* ---- Events (kube_events.c) ---- */

#define KUBE_EVENT_CONTROLLER "muster"

struct kube_event {
    enum model_kind kind; /* MODEL_POD or MODEL_PODGROUP */
    const char *key;      /* "ns/name" */
    const char *reason;   /* "Scheduled" */
    const char *action;   /* "Binding" */
    int warning;          /* type Warning, else Normal */
    const char *note;     /* cut at 1 kB */
};
/* "<hostname>_<pid>": reportingInstance. */
void kube__event_instance(char *buf, size_t n);
/* Writes one Event, best effort: 0, or ERR_* after counting and (rate-limited) logging
 * the failure. Never retried. */
int kube__event(struct kube *k, struct kube_http *h, const struct kube_event *ev);
/* FailedScheduling on the pending pods of an "unschedulable" record's job and
 * GangUnschedulable on its PodGroup. */
void kube__events_unschedulable(struct kube *k, struct kube_http *h, uint64_t seq,
                                const struct sched_outbox_rec *rec);
/* GangScheduled on the PodGroup of a "placed" record whose pods were all bound. */
void kube__event_gang_scheduled(struct kube *k, struct kube_http *h, uint64_t seq,
                                const struct sched_outbox_rec *rec);

/* ---- PodGroup status (kube_pgstatus.c) ---- */

/* Brings the status of PodGroup key to what muster knows when it differs from the
 * mirrored one and from what this process wrote last to that object (written[key]:
 * {"uid", "status"}; updated).
 * 0 when nothing was needed, the patch was accepted, or key is not a PodGroup;
 * ERR_NETWORK (retry) or ERR_INVALID / ERR_NOT_FOUND (refused). */
int kube__pg_status_sync(struct kube *k, struct kube_http *h, json_t *written, const char *key,
                         struct err *err);
/* Two PodGroup conditions equal but for lastTransitionTime and transitionID. */
int kube__pg_condition_same(json_t *a, json_t *b);

#endif
