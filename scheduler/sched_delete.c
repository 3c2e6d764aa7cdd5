/*
 * sched_delete.c - the user-facing delete (sched_delete): one LMDB transaction
 * (store_write, which retries after map growth) that removes the object, fails the pods
 * of a deleted node and clears the nominations to it, drops the why document of a job that is gone
 * and audits it; only after the commit does the view forget the object (staged.h). A queue that
 * still holds jobs or child queues is refused (admit_queue.c).
 */
#include <stdlib.h>

#include "core.h"
#include "outbox.h"
#include "preempt.h"
#include "staged.h"
#include "topo.h"
#include "view.h"
#include "why.h"

struct delete_ctx {
    struct sched *s;
    enum model_kind kind;
    const char *key;
    int64_t now_ms;
    json_t *by;  /* "by" of the audit record, or NULL */
    char **keys; /* pods on a deleted node */
    size_t nkeys, capkeys;
    struct sched_staged *staged;
    size_t nstaged, capstaged;
};

static int collect_key(void *ctx, const char *key)
{
    struct delete_ctx *c = ctx;
    XGROW(c->keys, c->nkeys + 1, c->capkeys);
    c->keys[c->nkeys++] = xstrdup(key);
    return 0;
}

/* Pods bound to a deleted node fail (as the Kubernetes pod GC would have them)
 * instead of pointing at nothing. */
static int fail_pods_on_node(MDB_txn *txn, struct delete_ctx *c, json_t *failed, struct err *err)
{
    int rc = store_pods_on_node(txn, c->key, collect_key, c, err);
    for (size_t i = 0; rc == 0 && i < c->nkeys; i++) {
        json_t *pod = NULL;
        if ((rc = store_get(txn, MODEL_POD, c->keys[i], &pod, err)) < 0)
            break;
        if (model_pod_phase_terminal(model_pod_phase(pod))) {
            json_decref(pod);
            continue;
        }
        model_pod_set_phase(pod, "Failed", "NodeLost", "muster: the node of this pod was deleted");
        struct sched_staged st = {.kind = MODEL_POD};
        rc = sched__stage_decode(pod, &st, 0, err);
        if (rc == 0) {
            XGROW(c->staged, c->nstaged + 1, c->capstaged);
            c->staged[c->nstaged++] = st;
            rc = store_put(txn, MODEL_POD, pod, NULL, err);
            json_array_append_new(failed, json_string(c->keys[i]));
        }
        json_decref(pod);
    }
    return rc;
}

/* Pods nominated to a deleted node lose status.nominatedNodeName (kube-scheduler clears
 * a nomination to a node that is gone): their jobs are tried again instead of waiting for
 * room that will never come. The view lists them (it equals the store). */
static int clear_nominations(MDB_txn *txn, struct delete_ctx *c, json_t *cleared, struct err *err)
{
    const struct sched_view *v = c->s->v;
    int ni = sched__view_node(v, c->key), rc = 0;
    for (size_t i = 0; ni >= 0 && rc == 0 && i < v->nodes[ni].nnom; i++) {
        const char *key = v->pods[v->nodes[ni].nominated[i]].key;
        json_t *pod = NULL;
        if ((rc = store_get(txn, MODEL_POD, key, &pod, err)) < 0)
            break;
        model_pod_set_nominated(pod, NULL);
        struct sched_staged st = {.kind = MODEL_POD};
        if ((rc = sched__stage_decode(pod, &st, 0, err)) == 0) {
            XGROW(c->staged, c->nstaged + 1, c->capstaged);
            c->staged[c->nstaged++] = st;
            rc = store_put(txn, MODEL_POD, pod, NULL, err);
            json_array_append_new(cleared, json_string(key));
        }
        json_decref(pod);
    }
    if (rc == 0 && ni >= 0 && v->nodes[ni].nnom) /* write-back removes them from the pods */
        rc = sched__audit_nominations_cleared(txn, c->s->cycle, v, v->nodes[ni].nominated,
                                              v->nodes[ni].nnom, err);
    return rc;
}

static int delete_fn(MDB_txn *txn, void *ctx, struct err *err)
{
    struct delete_ctx *c = ctx;
    json_t *old = NULL, *extra = json_object();
    enum store_audit_kind what = STORE_AUDIT_DELETED;
    for (size_t i = 0; i < c->nkeys; i++)
        free(c->keys[i]);
    c->nkeys = 0;
    sched__staged_release(c->staged, c->nstaged);
    c->nstaged = 0;
    int rc = 0;
    if (c->kind == MODEL_PRIORITYCLASS && model_priorityclass_builtin(c->key)) {
        rc = err_set(err, ERR_CONFLICT,
                     "priorityclass '%s' is a system priority class and cannot be deleted", c->key);
        goto out;
    }
    rc = store_delete(txn, c->kind, c->key, &old, err);
    if (rc == 0 && c->kind == MODEL_QUEUE) /* the view is as before the delete */
        rc = sched__queue_deletable(c->s, c->key, err);
    if (rc < 0)
        goto out;
    if (c->kind == MODEL_NODE) {
        json_t *failed = json_array();
        json_object_set_new(extra, "failedPods", failed);
        if ((rc = fail_pods_on_node(txn, c, failed, err)) < 0)
            goto out;
        json_t *cleared = json_array();
        json_object_set_new(extra, "clearedNominations", cleared);
        if ((rc = clear_nominations(txn, c, cleared, err)) < 0)
            goto out;
    }
    if (c->kind == MODEL_PODGROUP) /* its pods, if any are left, are still its job */
        rc = sched__why_job_gone(txn, NULL, c->s->v, c->key, err);
    if (c->kind == MODEL_POD) {
        /* A victim deleted before its grace period ended is no victim of a later pod
         * of that name. */
        char *preemptor = NULL;
        int victim = 0;
        rc = sched__ledger_victim_take(txn, &c->s->opts, &c->s->retain_scan_ms, c->key, c->now_ms,
                                       NULL, &victim, &preemptor, err);
        /* the job goes with its last pod (a victim's record stays until its retention
         * ends, record/ledger.c) */
        char *job = sched__object_job(MODEL_POD, old);
        if (rc == 0)
            rc = sched__why_job_gone(txn, NULL, c->s->v, job, err);
        free(job);
        /* A mirror's DELETE of a pending victim is the eviction done: audited as one
         * ("observed": write-back has nothing left to call) */
        if (rc == 0 && victim && c->s->opts.mirrored) {
            what = STORE_AUDIT_EVICTED;
            const char *node =
                json_string_value(json_object_get(json_object_get(old, "spec"), "nodeName"));
            json_object_update_new(
                extra, json_pack("{s:[s],s:[s?],s:s?,s:s,s:b}", SCHED_OUTBOX_M_PODS, c->key,
                                 SCHED_OUTBOX_M_NODES, node, SCHED_OUTBOX_M_PREEMPTOR, preemptor,
                                 SCHED_OUTBOX_M_REASON, "removed by the API server",
                                 SCHED_OUTBOX_M_OBSERVED, 1));
        }
        free(preemptor);
        if (rc < 0)
            goto out;
    }
    if (c->by)
        json_object_set(extra, "by", c->by);
    rc = sched__audit_object(txn, c->s->cycle, what, c->kind, c->key, old, extra, err);
    if (rc == 0 && c->kind == MODEL_NODE) /* detailStatus changes in the same transaction */
        rc = sched__topo_status_sync(txn, err);
out:
    json_decref(old);
    json_decref(extra);
    return rc;
}

int sched_delete(struct sched *s, enum model_kind kind, const char *key, int64_t now_ms,
                 struct err *err)
{
    return sched_delete_by(s, kind, key, now_ms, NULL, err);
}

int sched_delete_by(struct sched *s, enum model_kind kind, const char *key, int64_t now_ms,
                    const struct sched_caller *by, struct err *err)
{
    struct delete_ctx c = {
        .s = s, .kind = kind, .key = key, .now_ms = now_ms, .by = sched__caller_json(by)};
    pthread_mutex_lock(&s->mu);
    int rc = store_write(s->st, delete_fn, &c, err);
    if (rc == 0) {
        sched__staged_take(s->v, c.staged, c.nstaged);
        if (kind == MODEL_NODE)
            sched__view_del_node(s->v, key);
        else if (kind == MODEL_POD)
            sched__view_del_pod(s->v, key);
        else if (kind == MODEL_PODGROUP)
            sched__view_del_pg(s->v, key);
        else if (kind == MODEL_PRIORITYCLASS)
            sched__view_del_class(s->v, key);
        else if (kind == MODEL_QUEUE)
            sched__view_del_queue(s->v, key);
        else if (kind == MODEL_PDB)
            sched__view_del_pdb(s->v, key);
        else
            sched__view_del_topo(s->v);
    }
    pthread_mutex_unlock(&s->mu);
    for (size_t i = 0; i < c.nkeys; i++)
        free(c.keys[i]);
    free(c.keys);
    sched__staged_release(c.staged, c.nstaged);
    free(c.staged);
    json_decref(c.by);
    return rc;
}
