/*
 * outbox.h - the audit records Kubernetes write-back reads, typed: the one contract
 * between the scheduler, which writes them, and bind mode (clients/kube_outbox.c), which
 * turns them into API calls. The audit log is the write-back's outbox (docs/design-notes.md).
 *
 * Outbox entries: records whose pods write-back makes one API call each for. Writers
 * (paths under scheduler/) and what each pod (pods[i], nodes[i]) becomes:
 *
 *   placed     cycle/cycle_stmt.c (sched__stmt_commit): a Binding to nodes[i]
 *   nominated  record/ledger_plan.c, a preemption's plan, and a placement that cleared
 *              lower nominations (no pods then); sched_delete.c, a node's deletion (no
 *              pods, one record per job cleared): status.nominatedNodeName = nodes[i],
 *              and removed from each pod of "cleared" (decoded as pods with no node)
 *   preempted  record/ledger_plan.c (audit_victims), one record per victim job: the
 *              DisruptionTarget condition and an Eviction; nodes[i] is where it runs
 *   evicted    record/ledger_plan.c (grace period over), sched_delete.c (the mirror's
 *              DELETE of a victim, "observed"): as preempted, unless observed (the API
 *              server removed the pod itself)
 *   deadline-exceeded  cycle/cycle_housekeeping.c (deadlines), one record per pod that ran
 *              past spec.activeDeadlineSeconds (bind mode: muster's own pods): status
 *              phase Failed, reason DeadlineExceeded; nodes[i] is where it ran
 *
 * Write-back also reads, with no call per pod:
 *   unschedulable     record/why_record.c: FailedScheduling / GangUnschedulable Events
 *   applied, deleted  record/audit.c (sched__audit_object) for sched_apply.c,
 *                     sched_delete.c, cycle/cycle_housekeeping.c: the status of the
 *                     job's PodGroup is brought up to date
 * Every other kind (cycle, bound, running, ...) is no business of write-back's.
 *
 * Members (SCHED_OUTBOX_M_*; a writer may add others, the decoder ignores them):
 *   "kind"       every record: store_audit_kind_name
 *   "job"        string; required but in evicted, applied, deleted. preempted, evicted:
 *                the victim's job; nominated: the preemptor (or the placed job)
 *   "cycle"      integer >= 0, optional: the cycle that decided
 *   "pods"       placed, nominated, preempted, evicted, deadline-exceeded: array of pod
 *                keys ("ns/name")
 *   "nodes"      the same: an array as long as "pods"; placed, nominated and
 *                deadline-exceeded: strings;
 *                preempted and evicted: string or null (the node the victim ran on),
 *                and the array may be absent there
 *   "preemptor"  preempted, evicted: the preempting job, optional
 *   "triggerPod" preempted: the preemptor's pod that asked, optional
 *   "reason"     preempted, evicted: why the victim goes, optional text;
 *                unschedulable: the primary reason's code (reason.h), required
 *   "message"    unschedulable: the primary reason's message, optional
 *   "observed"   evicted: true when the API server removed the pod itself, optional
 *   "cleared"    nominated: array of pod keys whose nominations the decision voided
 *                (optional to the decoder, always written): decoded into pods[] after
 *                the nominated ones, with node NULL
 *
 * Calling sequence:
 *     struct sched_outbox_rec r;
 *     int rc = sched_outbox_decode(audit_record, &r, &err);
 *     if (rc == 1)
 *         ... r.kind, r.job, r.pods[i].pod, r.pods[i].node ...
 *     sched_outbox_rec_release(&r);      (after any rc: r is always initialised)
 *
 * Writers: build a record with sched_outbox_encode (then add members of their own) or with
 * the SCHED_OUTBOX_M_* names, so what is written and what is read are named once, here.
 * Pure functions of their arguments: no store, no locks; any thread. In record/ so that
 * every writer (record/, preempt/, cycle/, scheduler/) may include it; it calls reason/
 * and the store's audit-kind table only.
 */
#ifndef MUSTER_SCHED_OUTBOX_H
#define MUSTER_SCHED_OUTBOX_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "reason.h"

struct err;

#define SCHED_OUTBOX_M_KIND "kind"
#define SCHED_OUTBOX_M_JOB "job"
#define SCHED_OUTBOX_M_CYCLE "cycle"
#define SCHED_OUTBOX_M_PODS "pods"
#define SCHED_OUTBOX_M_NODES "nodes"
#define SCHED_OUTBOX_M_PREEMPTOR "preemptor"
#define SCHED_OUTBOX_M_TRIGGER_POD "triggerPod"
#define SCHED_OUTBOX_M_REASON "reason"
#define SCHED_OUTBOX_M_MESSAGE "message"
#define SCHED_OUTBOX_M_OBSERVED "observed"
#define SCHED_OUTBOX_M_CLEARED "cleared"

struct sched_outbox_pod {
    char *pod;  /* "ns/name" */
    char *node; /* placed: its node; nominated: the nominated node, NULL for a nomination
                   cleared; preempted, evicted: the node it runs on, or NULL */
};

struct sched_outbox_rec {
    enum store_audit_kind kind;
    char *job;                     /* NULL only where optional (evicted, applied, deleted) */
    int64_t cycle;                 /* -1 when the record has none */
    char *preemptor;               /* preempted, evicted; or NULL */
    char *trigger_pod;             /* preempted; or NULL */
    char *reason;                  /* preempted, evicted: why the victim goes, or NULL */
    enum why_code code;            /* unschedulable: the primary reason */
    char *message;                 /* unschedulable: its message, or NULL */
    int observed;                  /* evicted: the API server already removed the pod */
    struct sched_outbox_pod *pods; /* placed, nominated, preempted, evicted, deadline-exceeded */
    size_t npods;
};

/* 1 when records of kind are outbox entries (placed, nominated, preempted, evicted,
 * deadline-exceeded). */
int sched_outbox_has_pods(enum store_audit_kind kind);

/* Decodes an audit record (borrowed) into *out, whose strings are new copies (release
 * with sched_outbox_rec_release). Returns 1 when rec is a record write-back reads (the
 * kinds above), 0 when it is of another kind (*out zeroed but for kind), ERR_INVALID when
 * it is malformed: err names the member ("audit record 'placed': member 'nodes' ...",
 * err->field the member). *out is initialised in every case. */
int sched_outbox_decode(const json_t *audit_record, struct sched_outbox_rec *out, struct err *err);

/* Frees what r holds and zeroes it (cycle -1). Accepts NULL and a released record. */
void sched_outbox_rec_release(struct sched_outbox_rec *r);

/* The record r describes, with the members above (new): what sched_outbox_decode reads
 * back as r. For writers, which may add members of their own before appending it. */
json_t *sched_outbox_encode(const struct sched_outbox_rec *r);

#endif
