/*
 * cycle_housekeeping.c - the start of a cycle: mark_running (standalone: bound pods
 * are reported Running), removal of terminating pods after their grace period, and
 * the end of the retention of preempted jobs' records (record/ledger.c).
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cycle.h"
#include "plan.h"
#include "preempt.h"

static int mark_running(struct sched_cyc *c, int ji, struct err *err)
{
    struct sv_job *j = &c->v->jobs[ji];
    int *pods = xcalloc(j->npods + 1, sizeof(int));
    size_t n = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < j->npods; i++) {
        struct sv_pod *p = &c->v->pods[j->pods[i]];
        if (!p->m.node_name || !model_pod_unstarted(&p->m))
            continue;
        json_t *obj = NULL;
        if ((rc = store_get(c->txn, MODEL_POD, p->key, &obj, err)) < 0)
            break;
        model_pod_set_phase(obj, "Running", NULL, NULL);
        rc = store_put(c->txn, MODEL_POD, obj, NULL, err);
        json_decref(obj);
        sched__view_pod_phase(c->v, j->pods[i], "Running");
        pods[n++] = j->pods[i];
    }
    c->changes += (long)n;
    if (rc == 0 && n)
        rc = sched__audit_running(c, ji, pods, n, err);
    free(pods);
    return rc;
}

/* As the kubelet does: a bound pod running longer than its spec.activeDeadlineSeconds
 * since status.startTime is marked Failed, reason DeadlineExceeded (its resources go
 * back), with one "deadline-exceeded" record per pod. Standalone every pod; in bind mode
 * only the pods muster binds (spec.schedulerName is opts->bind_scheduler), whose record
 * write-back turns into the same status on the API server (clients/kube_bind.c); mirror
 * only, none: the kubelet's status comes through the mirror. A pod of another scheduler
 * past its deadline is looked at again only when it changes (view_pod.c resets
 * v->deadline_next_ms). Looks only when v->deadline_next_ms is due, and sets it to the next
 * deadline. */
static int deadlines(struct sched_cyc *c, struct err *err)
{
    struct sched_view *v = c->v;
    int64_t next = INT64_MAX;
    int rc = 0;
    const char *ours = c->opts->bind_scheduler;
    if ((c->opts->mirrored && !ours) || c->now_ms < v->deadline_next_ms)
        return 0;
    for (size_t i = 0; rc == 0 && i < v->npods; i++) {
        struct sv_pod *p = &v->pods[i];
        if (!p->alive || p->m.deadline_ms <= 0 || !p->m.node_name || model_pod_terminal(&p->m))
            continue;
        int64_t due = (p->m.start_ms ? p->m.start_ms : c->now_ms) + p->m.deadline_ms;
        if (due > c->now_ms) {
            next = due < next ? due : next;
            continue;
        }
        json_t *obj = NULL;
        if ((rc = store_get(c->txn, MODEL_POD, p->key, &obj, err)) < 0)
            break;
        const char *sn =
            json_string_value(json_object_get(json_object_get(obj, "spec"), "schedulerName"));
        if (c->opts->mirrored && (!sn || strcmp(sn, ours))) { /* not muster's to end */
            json_decref(obj);
            continue;
        }
        model_pod_set_phase(obj, "Failed", MODEL_REASON_DEADLINE_EXCEEDED,
                            MODEL_MESSAGE_DEADLINE_EXCEEDED);
        rc = store_put(c->txn, MODEL_POD, obj, NULL, err);
        json_decref(obj);
        if (rc < 0)
            break;
        sched__view_pod_phase(v, (int)i, "Failed");
        c->changes++;
        c->s->met.deadlines++;
        int pod = (int)i;
        rc = sched__audit_deadline(c, p->job, &pod, 1, err);
    }
    if (rc == 0)
        v->deadline_next_ms = next;
    return rc;
}

int sched__housekeeping(struct sched_cyc *c, struct err *err)
{
    struct sched_view *v = c->v;
    int rc = 0;
    for (size_t i = 0; rc == 0 && c->opts->mark_running && i < v->njobs; i++)
        if (v->jobs[i].alive)
            rc = mark_running(c, (int)i, err);
    /* terminating pods past their grace period: a scan of every pod, so only while some
     * are terminating (v->ndeleting); nothing here writes the ledger's entries, so the one
     * read last is kept for the next victim (the pods of one preemption come together) */
    struct sched_ledger_seen seen = {0};
    for (size_t i = 0; rc == 0 && !c->opts->mirrored && v->ndeleting && i < v->npods; i++) {
        struct sv_pod *p = &v->pods[i];
        if (!p->alive || !p->m.deletion_ms || c->now_ms - p->m.deletion_ms < c->opts->grace_ms)
            continue;
        c->changes++;
        char *key = xstrdup(p->key);
        json_t *old = NULL;
        rc = store_delete(c->txn, MODEL_POD, key, &old, err);
        if (rc == 0) {
            json_t *extra = json_pack("{s:s}", "reason", "terminated");
            rc = sched__audit_object(c->txn, c->cycle, STORE_AUDIT_DELETED, MODEL_POD, key, old,
                                     extra, err);
            json_decref(extra);
            if (rc == 0)
                rc = sched__record_evicted(c, key, old, &seen, err);
            char *job = sched__object_job(MODEL_POD, old);
            if (rc == 0) /* after record_evicted: a victim's retention has started */
                rc = sched__why_job_gone(c->txn, c, v, job, err);
            free(job);
            sched__view_del_pod(v, key);
        }
        json_decref(old);
        free(key);
    }
    sched__ledger_seen_release(&seen);
    if (rc == 0)
        rc = deadlines(c, err);
    if (rc == 0)
        rc = sched__ledger_expire(c, err);
    return rc;
}
