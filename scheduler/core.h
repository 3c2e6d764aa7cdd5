/*
 * core.h - struct sched, the object every part of the scheduler hangs off, and the
 * helpers the entry points share (sched.c, sched_apply.c, sched_delete.c, jobs.c, nodes.c,
 * metrics.c).
 *
 * The parts, each with its header: view.h (the cluster view), topo.h (the topology
 * tree), place.h (fit and placers), cycle.h (the cycle, statements, attempts),
 * preempt.h (job-level preemption and the ledger), why.h (reason codes and the why
 * document). Entry points (scheduler.h) take s->mu; everything below runs under it.
 */
#ifndef MUSTER_SCHED_CORE_H
#define MUSTER_SCHED_CORE_H

#include <pthread.h>
#include <stdint.h>

#include "scheduler.h"
#include "cycle.h"
#include "view.h"

/* A random (version 4) UUID, "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx" (uuid.c). */
void sched__uuid_v4(char out[37]);
/* The job an object belongs to ("ns/group" or "ns/pod"); NULL for nodes. New. */
char *sched__object_job(enum model_kind kind, json_t *obj);

/* Admits an applied object (admit.c: the Kubernetes Priority admission plugin's rules)
 * against the classes cs, editing obj (borrowed) in place: a pod gets spec.priority,
 * spec.preemptionPolicy and spec.priorityClassName from its class; old (borrowed, NULL on
 * create) is the stored object. mirrored: the API server admitted it; nothing is
 * refused. Returns 0 or ERR_INVALID naming the field (spec.priorityClassName,
 * spec.priority, spec.preemptionPolicy, value, globalDefault). */
int sched__admit(const struct sv_classes *cs, enum model_kind kind, json_t *obj, json_t *old,
                 int mirrored, struct err *err);
/* Standalone: refuses a pending pod whose required rule names a topologyKey that no node
 * carries: neither a node of the view nor one of keys (the label keys of the nodes of the
 * manifest being applied). Nothing is refused while the cluster has no node. */
int sched__admit_topology_keys(struct sched_view *v, const struct sched_strmap *keys, json_t *obj,
                               struct err *err);
/* Whether sched__admit_topology_keys looks at any topology key of obj: 0 when it admits obj
 * whatever the view and the keys (no spec.nodeName, no required rule, no spread constraint). */
int sched__admit_topology_keys_named(json_t *obj);

/* Standalone: admits the Queues of manifest m (validated) against the queues of v and of
 * m itself (admit_queue.c): spec.parent names a queue that exists or "root", parents form
 * no cycle, "root" names no parent, spec.dequeueStrategy is not "fifo". Returns 0 or
 * ERR_INVALID naming the field, the document and the queues involved. */
int sched__admit_queues(const struct sched_view *v, const struct model_manifest *m,
                        struct err *err);
/* 0 when the stored queue name may be deleted; ERR_CONFLICT when a job that is not
 * Finished is in it (the message counts them and names one) or a stored queue names it as
 * spec.parent (named). Mirrored, and a stored "default" (the built-in takes over), are
 * never refused. Under s->mu. */
int sched__queue_deletable(struct sched *s, const char *name, struct err *err);

/* The queues as sched_queues documents them (queue_api.c), under s->mu, sorted by name,
 * new; "reclaims" are 0 (the ledger is not read under the lock). */
json_t *sched__queues_json(struct sched *s);

/* The primary code of a job without a why document (no cycle tried it): PodGroupMissing,
 * NotTried, or -1 when nothing blocks it (bound: Scheduled, Running, Finished); st is the
 * job's state (sched__job_state), which the caller has. Under the scheduler's lock
 * (why_api.c). */
int sched__why_untried_code(const struct sv_job *j, enum sched_job_state st);
/* The live scheduler parks a job its cycle tried and left unplaced until an event it
 * waits on (room freed, a queue or topology change, ...) or its backoff; a view loaded
 * afresh (a what-if's, the replay check's) has parked nothing, so its cycle would try every
 * waiting job again, as after a restart. This parks each job of w's view that has work and
 * whose last attempt (its result, given back from its stored why document when the view
 * was loaded: cycle.c) left it waiting, on every kind of event it may: changes made next
 * wake exactly what they would wake in the live view (fresh.c). A gang that timed out is
 * tried again next cycle, as live. */
void sched__park_tried(struct sched *w, int64_t now_ms);
/* The ledger's victim record of job, read in its own transaction; new or NULL. */
json_t *sched__ledger_preempted_by(struct sched *s, const char *job);

#endif
