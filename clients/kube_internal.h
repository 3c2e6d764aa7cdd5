/*
 * kube_internal.h - internals of the Kubernetes mirror (clients/kube_*.c): the sources,
 * the event queue, leader election and struct kube that every part shares. The parts
 * have headers of their own: kube_conn.h (connection and HTTP, included here) and
 * kube_writeback.h (bind mode's write-back).
 *
 * kube_conn.c   connection: kubeconfig, in-cluster credentials
 * kube_http.c   HTTP through libcurl
 * kube_watch.c  one watcher thread per resource: paginated list, chunked watch
 * kube_mirror.c the event queue and the batching writer
 * kube.c        open/start/close, waiting, status
 * kube_lease.c  leader election: the lease thread (acquire, renew, lose, start a term)
 * kube_term.c   what the replica may do now: kube__may_write, cycles, the write-back's term
 * kube_review.c TokenReview / SubjectAccessReview for musterd's own API
 * kube_witness.c a ConfigMap as second witness of the audit log's checkpoints
 * write-back    kube_call.c, kube_events.c, kube_pgstatus.c, kube_bind.c, kube_outbox.c
 *               (kube_writeback.h)
 *
 * Locking: k->mu guards the queue, every struct kube_source's state fields, the
 * counters and pg_seen; k->cond signals queue and sync changes. No lock is held across
 * network or store calls.
 */
#ifndef MUSTER_KUBE_INTERNAL_H
#define MUSTER_KUBE_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "kube.h"
#include "kube_conn.h"
#include "model.h"
#include "store.h"

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
    /* The audit log's last record when kube_start ran: on the first start in bind mode the
     * write-back begins after it, whenever its thread gets to run (kube_outbox.c). */
    uint64_t start_seq;
    int writer_busy;
    struct kube_lease lease;
    pthread_t leaser;
    int leaser_started;
    volatile int lease_stop;  /* set after the other threads are joined: release, end */
    int events_core;          /* events.k8s.io answered 404: core v1 Events */
    int64_t event_log_ms;     /* last logged Event failure (monotonic) */
    uint64_t event_log_quiet; /* failures not logged since */
    /* PodGroup key -> the API server's resourceVersion of the last event of it the writer
     * applied (under mu): tells kube_pgstatus.c whether the mirror is past its own patch. */
    json_t *pg_seen;
};

/* kube_mirror.c: the resourceVersion pg_seen holds for the PodGroup key (new), or NULL. */
char *kube__pg_seen(struct kube *k, const char *key);

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

#endif
