/*
 * kube_bind.c - bind mode: one pod's part of a decision, written to the API server.
 *
 * kube_outbox.c reads the audit log (the outbox) and hands each pod of a "placed",
 * "nominated", "preempted", "evicted" or "deadline-exceeded" record here, one attempt at a
 * time; the outcome records ("bound", "bind-refused", ...) it commits with the acknowledged
 * sequence. A crash between the API call and that commit redoes the pod after
 * restart: a Binding already done answers 409 and the pod shows the same node, which
 * counts as success; an eviction of a pod already gone answers 404, also success.
 *
 * A refusal (4xx other than 409-same-node) puts the pod back in the store as the
 * API server has it (or deletes it when the server has none), so the store never
 * claims what the API server refused. Transport errors and 5xx return ERR_NETWORK:
 * the outbox retries that pod with backoff while other pods go on.
 *
 * Every request goes through kube__call (kube_call.c), which asks kube__may_write first:
 * the one gate of API writes (bindings, patches, evictions, Events, PodGroup status).
 * Below the outbox: nothing here calls back into kube_outbox.c.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "kube_writeback.h"
#include "log.h"
#include "outbox.h"
#include "scheduler.h"
#include "store.h"

#define DISRUPTION_MSG                                                                             \
    "muster: preempting to accommodate higher priority pods, preemptor: %s, triggerpod: %s"

static char *pod_path(const char *key, const char *sub)
{
    const char *slash = strchr(key, '/');
    if (!slash)
        return xasprintf("/api/v1/namespaces/default/pods/%s%s%s", key, sub ? "/" : "",
                         sub ? sub : "");
    return xasprintf("/api/v1/namespaces/%.*s/pods/%s%s%s", (int)(slash - key), key, slash + 1,
                     sub ? "/" : "", sub ? sub : "");
}

/* Puts the pod back in the store as the API server has it. */
static int resync_pod(struct kube *k, struct kube_http *h, const char *key, struct err *err)
{
    struct kube_resp r = {0};
    char *path = pod_path(key, NULL);
    int rc = kube__call(k, h, "GET", path, NULL, NULL, &r, err);
    free(path);
    if (rc < 0)
        goto out;
    if (r.status == 404) {
        if (sched_delete(k->sched, MODEL_POD, key, clock_now_ms(), err) < 0 &&
            err->code == ERR_NOT_FOUND)
            err_clear(err);
        rc = err->code;
        goto out;
    }
    struct model_manifest m = {.docs = xcalloc(1, sizeof(struct model_doc)), .n = 1};
    m.docs[0].index = 1;
    m.docs[0].obj = json_loadb(r.body, r.len, 0, NULL);
    m.docs[0].pos = json_object();
    json_t *errors = json_array(), *res = NULL;
    if (!json_is_object(m.docs[0].obj)) {
        rc = err_set(err, ERR_INVALID, "pod '%s': malformed answer from the API server", key);
    } else {
        kube__normalize(MODEL_POD, NULL, m.docs[0].obj);
        if (model_validate(&m.docs[0], errors) > 0)
            rc = err_set(err, ERR_INVALID, "pod '%s' from the API server is invalid", key);
        else if ((rc = sched_delete(k->sched, MODEL_POD, key, clock_now_ms(), err)) == 0 ||
                 rc == ERR_NOT_FOUND)
            /* sched_apply keeps a stored pod's spec.nodeName when the document has none, so
             * the refused placement is removed first and the server's pod applied fresh. */
            rc = sched_apply(k->sched, &m, clock_now_ms(), &res, err);
    }
    json_decref(errors);
    json_decref(res);
    model_manifest_free(&m);
out:
    kube__resp_release(&r);
    return rc;
}

static void add_outcome(json_t *outcomes, enum store_audit_kind kind,
                        const struct sched_outbox_rec *rec, uint64_t seq, const char *pod,
                        const char *node, const char *reason)
{
    json_t *out =
        json_pack("{s:s,s:s?,s:[s],s:s,s:{s:I}}", "kind", store_audit_kind_name(kind), "job",
                  rec->job, "pods", pod, "reason", reason, "details", "ackOf", (json_int_t)seq);
    if (node)
        json_object_set_new(out, "nodes", json_pack("[s]", node));
    json_array_append_new(outcomes, out);
}

/* An Event on a pod about an audit record (its cycle and seq appended to the note). */
static void pod_event(struct kube *k, struct kube_http *h, const char *pod, const char *reason,
                      const char *action, const struct sched_outbox_rec *rec, uint64_t seq,
                      const char *fmt, const char *a, const char *b)
{
    char note[900];
    snprintf(note, sizeof(note), fmt, a ? a : "", b ? b : "");
    char *full = rec->cycle >= 0
                     ? xasprintf("%s (muster cycle %lld, audit seq %llu)", note,
                                 (long long)rec->cycle, (unsigned long long)seq)
                     : xasprintf("%s (muster audit seq %llu)", note, (unsigned long long)seq);
    struct kube_event ev = {MODEL_POD, pod, reason, action, 0, full};
    kube__event(k, h, &ev);
    free(full);
}

static int bind_pod(struct kube *k, struct kube_http *h, const struct sched_outbox_rec *rec,
                    uint64_t seq, const char *pod, const char *node, json_t *o, struct err *err)
{
    struct kube_resp r = {0};
    const char *slash = strchr(pod, '/');
    char *path = pod_path(pod, "binding");
    char msg[512];
    json_t *body = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s}}", "apiVersion", "v1", "kind",
                             "Binding", "metadata", "name", slash ? slash + 1 : pod, "namespace",
                             "default", "target", "apiVersion", "v1", "kind", "Node", "name", node);
    if (slash)
        json_object_set_new(json_object_get(body, "metadata"), "namespace",
                            json_stringn(pod, (size_t)(slash - pod)));
    int rc = kube__call(k, h, "POST", path, NULL, body, &r, err);
    free(path);
    json_decref(body);
    if (rc < 0)
        goto out;
    if (r.status == 200 || r.status == 201) {
        kube__count(k, &k->c.bindings);
        add_outcome(o, STORE_AUDIT_BOUND, rec, seq, pod, node,
                    "binding accepted by the API server");
        pod_event(k, h, pod, "Scheduled", "Binding", rec, seq, "Successfully assigned %s to %s",
                  pod, node);
        goto out;
    }
    kube__status_message(&r, msg, sizeof(msg));
    if (r.status == 409) { /* already bound: to the same node is success */
        struct kube_resp g = {0};
        char *gp = pod_path(pod, NULL);
        rc = kube__call(k, h, "GET", gp, NULL, NULL, &g, err);
        free(gp);
        json_t *doc = rc == 0 && g.status == 200 ? json_loadb(g.body, g.len, 0, NULL) : NULL;
        const char *on =
            json_string_value(json_object_get(json_object_get(doc, "spec"), "nodeName"));
        int same = on && !strcmp(on, node);
        json_decref(doc);
        kube__resp_release(&g);
        if (rc < 0)
            goto out;
        if (same) {
            kube__count(k, &k->c.bindings);
            add_outcome(o, STORE_AUDIT_BOUND, rec, seq, pod, node, "already bound to this node");
            goto out;
        }
    }
    kube__count(k, &k->c.bind_refused);
    log_warn("kube: binding of pod '%s' to node '%s' refused: %s", pod, node, msg);
    add_outcome(o, STORE_AUDIT_BIND_REFUSED, rec, seq, pod, node, msg);
    rc = resync_pod(k, h, pod, err);
out:
    kube__resp_release(&r);
    return rc;
}

static int nominate_pod(struct kube *k, struct kube_http *h, const struct sched_outbox_rec *rec,
                        uint64_t seq, const char *pod, const char *node, json_t *o, struct err *err)
{
    struct kube_resp r = {0};
    char *path = pod_path(pod, "status");
    char msg[512];
    /* no node: the decision voided the nomination; a merge patch's null removes it */
    json_t *body = json_pack("{s:{s:o}}", "status", "nominatedNodeName",
                             node ? json_string(node) : json_null());
    int rc = kube__call(k, h, "PATCH", path, "application/merge-patch+json", body, &r, err);
    free(path);
    json_decref(body);
    if (rc == 0) {
        kube__count(k, &k->c.patches);
        int ok = r.status < 300 || (!node && r.status == 404); /* a pod gone has none */
        add_outcome(o, ok ? STORE_AUDIT_NOMINATE_ACKED : STORE_AUDIT_NOMINATE_REFUSED, rec, seq,
                    pod, node,
                    !ok    ? kube__status_message(&r, msg, sizeof(msg))
                    : node ? "nominatedNodeName set"
                           : "nominatedNodeName removed");
        if (ok && node)
            pod_event(k, h, pod, "Nominated", "Scheduling", rec, seq,
                      "Nominated to node %s%s: it runs once its preemption victims are gone", node,
                      "");
    }
    kube__resp_release(&r);
    return rc;
}

static int evict_pod(struct kube *k, struct kube_http *h, const struct sched_outbox_rec *rec,
                     uint64_t seq, const char *pod, json_t *o, struct err *err)
{
    struct kube_resp r = {0};
    /* "preempted" records name the victim's job in job and the preemptor apart */
    const char *job = rec->preemptor ? rec->preemptor : rec->job;
    const char *trig = rec->trigger_pod;
    char *path = pod_path(pod, "status"),
         *m = xasprintf(DISRUPTION_MSG, job ? job : "", trig ? trig : (job ? job : ""));
    char ts[40], msg[512];
    const char *slash = strchr(pod, '/');
    clock_format_rfc3339(clock_now_ms(), ts, sizeof(ts));
    json_t *body =
        json_pack("{s:{s:[{s:s,s:s,s:s,s:s,s:s}]}}", "status", "conditions", "type",
                  MODEL_COND_DISRUPTION_TARGET, "status", "True", "reason",
                  MODEL_REASON_PREEMPTION_BY_SCHEDULER, "message", m, "lastTransitionTime", ts);
    int rc =
        kube__call(k, h, "PATCH", path, "application/strategic-merge-patch+json", body, &r, err);
    free(path);
    free(m);
    json_decref(body);
    if (rc < 0)
        goto out;
    kube__count(k, &k->c.patches);
    path = pod_path(pod, "eviction");
    body = json_pack("{s:s,s:s,s:{s:s,s:s#}}", "apiVersion", "policy/v1", "kind", "Eviction",
                     "metadata", "name", slash ? slash + 1 : pod, "namespace",
                     slash ? pod : "default", slash ? (int)(slash - pod) : 7);
    rc = kube__call(k, h, "POST", path, NULL, body, &r, err);
    free(path);
    json_decref(body);
    if (rc < 0)
        goto out;
    if (r.status < 300 || r.status == 404) {
        kube__count(k, &k->c.evictions);
        add_outcome(o, STORE_AUDIT_EVICT_ACKED, rec, seq, pod, NULL,
                    r.status == 404 ? "pod already gone" : "eviction accepted by the API server");
        if (r.status < 300)
            pod_event(k, h, pod, "Preempted", "Preempting", rec, seq,
                      "Preempted by %s (trigger pod %s)", job, trig ? trig : job);
        goto out;
    }
    kube__count(k, &k->c.evict_refused);
    kube__status_message(&r, msg, sizeof(msg));
    log_warn("kube: eviction of pod '%s' refused: %s", pod, msg);
    add_outcome(o, STORE_AUDIT_EVICT_REFUSED, rec, seq, pod, NULL, msg);
    rc = resync_pod(k, h, pod, err);
out:
    kube__resp_release(&r);
    return rc;
}

/* A pod of muster's that ran past spec.activeDeadlineSeconds ("deadline-exceeded"): its
 * status written as the kubelet writes it (pkg/kubelet/active_deadline.go), phase Failed,
 * reason DeadlineExceeded, through the status subresource (strategic merge patch). A
 * scheduler cannot stop containers; the kubelet does when the pod's phase is terminal. Not
 * an eviction: a PodDisruptionBudget may refuse one, and a deadline is no voluntary
 * disruption. Not a DELETE: the pod and its reason would be gone before a Job controller
 * or kubectl saw them (docs/reservations.md). A pod already gone (404) counts as done; a
 * refusal puts the pod back as the API server has it. */
static int end_pod(struct kube *k, struct kube_http *h, const struct sched_outbox_rec *rec,
                   uint64_t seq, const char *pod, const char *node, json_t *o, struct err *err)
{
    struct kube_resp r = {0};
    char *path = pod_path(pod, "status");
    char msg[512];
    json_t *body =
        json_pack("{s:{s:s,s:s,s:s}}", "status", "phase", "Failed", "reason",
                  MODEL_REASON_DEADLINE_EXCEEDED, "message", MODEL_MESSAGE_DEADLINE_EXCEEDED);
    int rc =
        kube__call(k, h, "PATCH", path, "application/strategic-merge-patch+json", body, &r, err);
    free(path);
    json_decref(body);
    if (rc < 0)
        goto out;
    if (r.status < 300 || r.status == 404) {
        kube__count(k, &k->c.patches);
        add_outcome(o, STORE_AUDIT_DEADLINE_ACKED, rec, seq, pod, node,
                    r.status == 404 ? "pod already gone"
                                    : "status Failed (DeadlineExceeded) written");
        if (r.status < 300)
            pod_event(k, h, pod, MODEL_REASON_DEADLINE_EXCEEDED, "Killing", rec, seq, "%s%s",
                      MODEL_MESSAGE_DEADLINE_EXCEEDED, "");
        goto out;
    }
    kube__status_message(&r, msg, sizeof(msg));
    log_warn("kube: Failed status of pod '%s' past its deadline refused: %s", pod, msg);
    add_outcome(o, STORE_AUDIT_DEADLINE_REFUSED, rec, seq, pod, node, msg);
    rc = resync_pod(k, h, pod, err);
out:
    kube__resp_release(&r);
    return rc;
}

/* 1 when the pod (in the store) is one this mirror binds. */
static int ours(struct kube *k, const char *pod)
{
    MDB_txn *txn = NULL;
    json_t *obj = NULL;
    int yes = 0;
    if (store_txn_begin(k->store, STORE_READ, &txn, NULL) == 0 &&
        store_get(txn, MODEL_POD, pod, &obj, NULL) == 0) {
        const char *sn =
            json_string_value(json_object_get(json_object_get(obj, "spec"), "schedulerName"));
        yes = sn && !strcmp(sn, k->scheduler_name);
    }
    store_txn_abort(&txn);
    json_decref(obj);
    return yes;
}

int kube__pod_acted(struct kube *k, const struct sched_outbox_rec *rec, size_t i)
{
    switch (rec->kind) {
    case STORE_AUDIT_EVICTED: /* observed: the API server removed the pod, nothing to evict */
        return !rec->observed;
    case STORE_AUDIT_PREEMPTED:
        /* a victim may belong to any scheduler: like kube-scheduler's preemption, any
         * lower-priority pod can be one */
        return 1;
    case STORE_AUDIT_PLACED:
    case STORE_AUDIT_NOMINATED: /* muster binds, nominates and ends only its own pods */
    case STORE_AUDIT_DEADLINE_EXCEEDED:
        return ours(k, rec->pods[i].pod);
    default:
        return 0;
    }
}

int kube__bind_pod(struct kube *k, struct kube_http *h, uint64_t seq,
                   const struct sched_outbox_rec *rec, const struct sched_outbox_pod *pod,
                   json_t *outcomes, struct err *err)
{
    if (rec->kind == STORE_AUDIT_PLACED)
        return bind_pod(k, h, rec, seq, pod->pod, pod->node, outcomes, err);
    if (rec->kind == STORE_AUDIT_NOMINATED)
        return nominate_pod(k, h, rec, seq, pod->pod, pod->node, outcomes, err);
    if (rec->kind == STORE_AUDIT_DEADLINE_EXCEEDED)
        return end_pod(k, h, rec, seq, pod->pod, pod->node, outcomes, err);
    return evict_pod(k, h, rec, seq, pod->pod, outcomes, err);
}

int kube__unbind_local(struct kube *k, const char *pod, struct err *err)
{
    MDB_txn *txn = NULL;
    json_t *obj = NULL;
    int rc = store_txn_begin(k->store, STORE_READ, &txn, err);
    if (rc == 0)
        rc = store_get(txn, MODEL_POD, pod, &obj, err);
    store_txn_abort(&txn);
    if (rc < 0) {
        json_decref(obj);
        return rc == ERR_NOT_FOUND ? (err_clear(err), 0) : rc;
    }
    json_object_del(json_object_get(obj, "spec"), "nodeName");
    json_object_del(json_object_get(obj, "status"), "nominatedNodeName");
    struct model_manifest m = {.docs = xcalloc(1, sizeof(struct model_doc)), .n = 1};
    m.docs[0].index = 1;
    m.docs[0].obj = obj;
    m.docs[0].pos = json_object();
    json_t *res = NULL;
    /* sched_apply keeps a stored pod's spec.nodeName when the document has none */
    if ((rc = sched_delete(k->sched, MODEL_POD, pod, clock_now_ms(), err)) == 0 ||
        rc == ERR_NOT_FOUND)
        rc = sched_apply(k->sched, &m, clock_now_ms(), &res, err);
    json_decref(res);
    model_manifest_free(&m);
    return rc;
}
