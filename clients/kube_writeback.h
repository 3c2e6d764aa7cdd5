/*
 * kube_writeback.h - bind mode's write-back: muster's decisions, read from the audit log
 * (the outbox, scheduler/record/outbox.h), written to the API server.
 *
 * Layers, each calling only the ones above it in this list:
 *   kube_call.c     kube__call, the one funnel of every API request write-back makes
 *   kube_events.c   Events; kube_pgstatus.c  PodGroup status
 *   kube_bind.c     one pod's part of a decision (binding, nomination, eviction)
 *   kube_outbox.c   the write-back thread (kube__bind_main): scans the outbox, retries,
 *                   gives up, commits outcomes with the acknowledged sequence
 * Records travel typed (struct sched_outbox_rec, borrowed by every call here); the outcome
 * records write-back appends are JSON it builds itself. Calls run on the write-back thread
 * or its workers, each with its own struct kube_http; counters are taken under k->mu.
 */
#ifndef MUSTER_KUBE_WRITEBACK_H
#define MUSTER_KUBE_WRITEBACK_H

#include "kube_internal.h"
#include "outbox.h"

/* ---- the funnel (kube_call.c) ---- */

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

/* ---- one pod of a decision (kube_bind.c) ---- */

/* One pod (of rec->pods) of an outbox entry (scheduler/record/outbox.h; "placed": binding,
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

/* ---- the outbox (kube_outbox.c; its thread is kube__bind_main) ---- */

/* In txn: appends outcomes (audit records, borrowed, appended as copies) and writes the
 * write-back document {"ackSeq": ack, "done": done}. */
int kube__writeback_commit(MDB_txn *txn, json_t *outcomes, uint64_t ack, json_t *done,
                           struct err *err);
/* Write-back of one audit record, each pod once, outcomes and ackSeq committed together
 * (exposed for tests). Returns 0 when every pod was decided, or ERR_* when one must be
 * retried (nothing is committed then) or rec is malformed (sched_outbox_decode). */
int kube__bind_record(struct kube *k, struct kube_http *h, uint64_t seq, json_t *rec,
                      struct err *err);

#endif
