/*
 * kube_bind.c - bind mode: the audit log is the outbox.
 *
 * The thread reads audit records after the last acknowledged sequence
 * (STORE_DB_MIRROR "writeback": {"ackSeq": n}), performs the API calls the
 * scheduler's decisions need, and appends the outcome records together with the
 * new ackSeq in one transaction. A crash between the API call and that commit
 * redoes the record after restart: a Binding already done answers 409 and the
 * pod shows the same node, which counts as success; an eviction of a pod
 * already gone answers 404, also success.
 *
 * A refusal (4xx other than 409-same-node) puts the pod back in the store as the
 * API server has it (or deletes it when the server has none), so the store never
 * claims what the API server refused. Transport errors and 5xx are retried with
 * backoff for as long as the mirror runs.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "kube_internal.h"
#include "log.h"
#include "scheduler.h"
#include "store.h"

#define DISRUPTION_MSG                                                                             \
    "muster: preempting to accommodate higher priority pods, preemptor: %s, triggerpod: %s"

struct outcome {
    json_t *recs; /* audit records to append with the ack */
};

static void count(struct kube *k, uint64_t *field)
{
    pthread_mutex_lock(&k->mu);
    (*field)++;
    pthread_mutex_unlock(&k->mu);
}

static char *pod_path(const char *key, const char *sub)
{
    const char *slash = strchr(key, '/');
    if (!slash)
        return xasprintf("/api/v1/namespaces/default/pods/%s%s%s", key, sub ? "/" : "",
                         sub ? sub : "");
    return xasprintf("/api/v1/namespaces/%.*s/pods/%s%s%s", (int)(slash - key), key, slash + 1,
                     sub ? "/" : "", sub ? sub : "");
}

static const char *status_message(struct kube_resp *r, char *buf, size_t n)
{
    json_t *doc = json_loadb(r->body ? r->body : "", r->len, 0, NULL);
    const char *m = json_string_value(json_object_get(doc, "message"));
    snprintf(buf, n, "HTTP %ld%s%s", r->status, m ? ": " : "", m ? m : "");
    json_decref(doc);
    return buf;
}

/* One API call, retried while the server is unreachable or answers 5xx. Returns 0 with
 * a 2xx-4xx answer in r, or ERR_UNAVAILABLE when the mirror stops meanwhile. */
static int call(struct kube *k, struct kube_http *h, const char *method, const char *path,
                const char *ctype, json_t *body, struct kube_resp *r, struct err *err)
{
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    int64_t backoff = k->opts.backoff_min_ms;
    int rc;
    for (;;) {
        if (!kube__may_write(k)) {
            rc = err_set(err, ERR_UNAVAILABLE, "%s '%s': this replica may not write now", method,
                         path);
            break;
        }
        rc = kube__http_request(h, method, path, ctype, text, 30000, r, err);
        if (rc == 0 && r->status < 500)
            break;
        count(k, &k->c.writeback_failures);
        if (rc == 0)
            err_set(err, ERR_NETWORK, "%s '%s': HTTP %ld", method, path, r->status);
        log_warn("kube: write-back: %s; retrying", err->msg);
        if (kube__sleep(k, backoff / 2 + random() % (backoff / 2 + 1))) {
            rc = err_set(err, ERR_UNAVAILABLE, "stopping");
            break;
        }
        backoff = backoff * 2 > k->opts.backoff_max_ms ? k->opts.backoff_max_ms : backoff * 2;
    }
    if (rc == 0)
        count(k, &k->c.writebacks);
    free(text);
    return rc;
}

/* Puts the pod back in the store as the API server has it. */
static int resync_pod(struct kube *k, struct kube_http *h, const char *key, struct err *err)
{
    struct kube_resp r = {0};
    char *path = pod_path(key, NULL);
    int rc = call(k, h, "GET", path, NULL, NULL, &r, err);
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
    struct model_manifest m = {xcalloc(1, sizeof(struct model_doc)), 1};
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

static void add_outcome(struct outcome *o, enum store_audit_kind kind, json_t *rec, uint64_t seq,
                        const char *pod, const char *node, const char *reason)
{
    const char *job = json_string_value(json_object_get(rec, "job"));
    json_t *out =
        json_pack("{s:s,s:s?,s:[s],s:s,s:{s:I}}", "kind", store_audit_kind_name(kind), "job", job,
                  "pods", pod, "reason", reason, "details", "ackOf", (json_int_t)seq);
    if (node)
        json_object_set_new(out, "nodes", json_pack("[s]", node));
    json_array_append_new(o->recs, out);
}

static int bind_pod(struct kube *k, struct kube_http *h, json_t *rec, uint64_t seq, const char *pod,
                    const char *node, struct outcome *o, struct err *err)
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
    int rc = call(k, h, "POST", path, NULL, body, &r, err);
    free(path);
    json_decref(body);
    if (rc < 0)
        goto out;
    if (r.status == 200 || r.status == 201) {
        count(k, &k->c.bindings);
        add_outcome(o, STORE_AUDIT_BOUND, rec, seq, pod, node,
                    "binding accepted by the API server");
        goto out;
    }
    status_message(&r, msg, sizeof(msg));
    if (r.status == 409) { /* already bound: to the same node is success */
        struct kube_resp g = {0};
        char *gp = pod_path(pod, NULL);
        rc = call(k, h, "GET", gp, NULL, NULL, &g, err);
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
            count(k, &k->c.bindings);
            add_outcome(o, STORE_AUDIT_BOUND, rec, seq, pod, node, "already bound to this node");
            goto out;
        }
    }
    count(k, &k->c.bind_refused);
    log_warn("kube: binding of pod '%s' to node '%s' refused: %s", pod, node, msg);
    add_outcome(o, STORE_AUDIT_BIND_REFUSED, rec, seq, pod, node, msg);
    rc = resync_pod(k, h, pod, err);
out:
    kube__resp_release(&r);
    return rc;
}

static int nominate_pod(struct kube *k, struct kube_http *h, json_t *rec, uint64_t seq,
                        const char *pod, const char *node, struct outcome *o, struct err *err)
{
    struct kube_resp r = {0};
    char *path = pod_path(pod, "status");
    char msg[512];
    json_t *body = json_pack("{s:{s:s}}", "status", "nominatedNodeName", node);
    int rc = call(k, h, "PATCH", path, "application/merge-patch+json", body, &r, err);
    free(path);
    json_decref(body);
    if (rc == 0) {
        count(k, &k->c.patches);
        int ok = r.status < 300;
        add_outcome(o, ok ? STORE_AUDIT_NOMINATE_ACKED : STORE_AUDIT_NOMINATE_REFUSED, rec, seq,
                    pod, node, ok ? "nominatedNodeName set" : status_message(&r, msg, sizeof(msg)));
    }
    kube__resp_release(&r);
    return rc;
}

static int evict_pod(struct kube *k, struct kube_http *h, json_t *rec, uint64_t seq,
                     const char *pod, struct outcome *o, struct err *err)
{
    struct kube_resp r = {0};
    /* "preempted" records name the victim's job in "job" and the preemptor apart */
    const char *job = json_string_value(json_object_get(rec, "preemptor"));
    if (!job)
        job = json_string_value(json_object_get(rec, "job"));
    const char *trig = json_string_value(json_object_get(rec, "triggerPod"));
    char *path = pod_path(pod, "status"),
         *m = xasprintf(DISRUPTION_MSG, job ? job : "", trig ? trig : (job ? job : ""));
    char ts[40], msg[512];
    const char *slash = strchr(pod, '/');
    clock_format_rfc3339(clock_now_ms(), ts, sizeof(ts));
    json_t *body = json_pack("{s:{s:[{s:s,s:s,s:s,s:s,s:s}]}}", "status", "conditions", "type",
                             "DisruptionTarget", "status", "True", "reason",
                             "PreemptionByScheduler", "message", m, "lastTransitionTime", ts);
    int rc = call(k, h, "PATCH", path, "application/strategic-merge-patch+json", body, &r, err);
    free(path);
    free(m);
    json_decref(body);
    if (rc < 0)
        goto out;
    count(k, &k->c.patches);
    path = pod_path(pod, "eviction");
    body = json_pack("{s:s,s:s,s:{s:s,s:s#}}", "apiVersion", "policy/v1", "kind", "Eviction",
                     "metadata", "name", slash ? slash + 1 : pod, "namespace",
                     slash ? pod : "default", slash ? (int)(slash - pod) : 7);
    rc = call(k, h, "POST", path, NULL, body, &r, err);
    free(path);
    json_decref(body);
    if (rc < 0)
        goto out;
    if (r.status < 300 || r.status == 404) {
        count(k, &k->c.evictions);
        add_outcome(o, STORE_AUDIT_EVICT_ACKED, rec, seq, pod, NULL,
                    r.status == 404 ? "pod already gone" : "eviction accepted by the API server");
        goto out;
    }
    count(k, &k->c.evict_refused);
    status_message(&r, msg, sizeof(msg));
    log_warn("kube: eviction of pod '%s' refused: %s", pod, msg);
    add_outcome(o, STORE_AUDIT_EVICT_REFUSED, rec, seq, pod, NULL, msg);
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

struct ack_ctx {
    json_t *recs;
    uint64_t seq;
};

static int ack_fn(MDB_txn *txn, void *ctx, struct err *err)
{
    struct ack_ctx *a = ctx;
    size_t i;
    json_t *rec;
    json_array_foreach(a->recs, i, rec)
    {
        json_t *copy = json_deep_copy(rec); /* completed in place; a retry needs the original */
        int rc = store_audit_append(txn, copy, NULL, err);
        json_decref(copy);
        if (rc < 0)
            return rc;
    }
    json_t *doc = json_pack("{s:I}", "ackSeq", (json_int_t)a->seq);
    int rc = store_doc_put(txn, STORE_DB_MIRROR, "writeback", doc, err);
    json_decref(doc);
    return rc;
}

int kube__bind_record(struct kube *k, struct kube_http *h, uint64_t seq, json_t *rec,
                      struct err *err)
{
    enum store_audit_kind kind;
    int known =
        store_audit_kind_parse(json_string_value(json_object_get(rec, "kind")), &kind, NULL) == 0;
    json_t *pods = json_object_get(rec, "pods"), *nodes = json_object_get(rec, "nodes");
    struct outcome o = {json_array()};
    int rc = 0;
    int evicting = known && (kind == STORE_AUDIT_PREEMPTED || kind == STORE_AUDIT_EVICTED);
    if (evicting && json_is_array(json_object_get(rec, "victims")))
        pods = json_object_get(rec, "victims");
    for (size_t i = 0; known && i < json_array_size(pods) && rc == 0; i++) {
        const char *pod = json_string_value(json_array_get(pods, i));
        const char *node = json_string_value(json_array_get(nodes, i));
        /* muster binds and nominates only its own pods, but a victim may belong to any
         * scheduler: like kube-scheduler's preemption, any lower-priority pod can be one */
        if (!pod || (!evicting && !ours(k, pod)))
            continue;
        if (kind == STORE_AUDIT_PLACED && node)
            rc = bind_pod(k, h, rec, seq, pod, node, &o, err);
        else if (kind == STORE_AUDIT_NOMINATED && node)
            rc = nominate_pod(k, h, rec, seq, pod, node, &o, err);
        else if (evicting)
            rc = evict_pod(k, h, rec, seq, pod, &o, err);
    }
    if (rc == 0) {
        struct ack_ctx a = {o.recs, seq};
        rc = store_write(k->store, ack_fn, &a, err);
        if (rc == 0) {
            pthread_mutex_lock(&k->mu);
            k->c.ack_seq = seq;
            pthread_mutex_unlock(&k->mu);
        }
    }
    json_decref(o.recs);
    return rc;
}

/* The records write-back acts on. */
static int wanted(const char *name)
{
    enum store_audit_kind kind;
    if (store_audit_kind_parse(name, &kind, NULL) < 0)
        return 0;
    return kind == STORE_AUDIT_PLACED || kind == STORE_AUDIT_NOMINATED ||
           kind == STORE_AUDIT_PREEMPTED || kind == STORE_AUDIT_EVICTED;
}

struct scan {
    json_t *recs; /* [[seq, rec], ...] */
    uint64_t last;
};

static int scan_fn(void *ctx, uint64_t seq, const char *json, size_t len)
{
    struct scan *s = ctx;
    json_t *rec = json_loadb(json, len, 0, NULL);
    s->last = seq;
    if (wanted(json_string_value(json_object_get(rec, "kind"))))
        json_array_append_new(s->recs, json_pack("[I,o]", (json_int_t)seq, rec));
    else
        json_decref(rec);
    return json_array_size(s->recs) >= 64 ? 1 : 0;
}

static uint64_t load_ack(struct kube *k)
{
    MDB_txn *txn = NULL;
    json_t *doc = NULL;
    uint64_t ack = 0;
    int found = 0;
    if (store_txn_begin(k->store, STORE_READ, &txn, NULL) == 0) {
        found = store_doc_get(txn, STORE_DB_MIRROR, "writeback", &doc, NULL) == 0;
        if (found)
            ack = (uint64_t)json_integer_value(json_object_get(doc, "ackSeq"));
        else /* first start in bind mode: decisions from before are not ours to replay */
            store_audit_last_seq(txn, &ack, NULL);
    }
    store_txn_abort(&txn);
    json_decref(doc);
    return ack;
}

struct count_ctx {
    uint64_t n;
};

static int count_fn(void *ctx, uint64_t seq, const char *json, size_t len)
{
    json_t *rec = json_loadb(json, len, 0, NULL);
    (void)seq;
    ((struct count_ctx *)ctx)->n += wanted(json_string_value(json_object_get(rec, "kind")));
    json_decref(rec);
    return 0;
}

int kube__bind_abandon(struct kube *k, MDB_txn *txn, uint64_t *from, uint64_t *to, uint64_t *count,
                       struct err *err)
{
    struct count_ctx c = {0};
    pthread_mutex_lock(&k->mu);
    *from = k->c.ack_seq + 1;
    pthread_mutex_unlock(&k->mu);
    int rc = store_audit_last_seq(txn, to, err);
    if (rc == 0 && *to >= *from)
        rc = store_audit_scan(txn, *from, *to, count_fn, &c, err);
    *count = c.n;
    if (rc < 0)
        return rc;
    json_t *doc = json_pack("{s:I}", "ackSeq", (json_int_t)*to);
    rc = store_doc_put(txn, STORE_DB_MIRROR, "writeback", doc, err);
    json_decref(doc);
    return rc;
}

void *kube__bind_main(void *arg)
{
    struct kube *k = arg;
    struct kube_http *h = kube__http_new(k->conn, &k->stop);
    uint64_t ack = load_ack(k);
    pthread_mutex_lock(&k->mu);
    k->c.ack_seq = ack;
    pthread_mutex_unlock(&k->mu);
    uint64_t term = 0;
    while (h && !k->stop) {
        if (!kube__writeback_turn(k, &term, &ack)) { /* a follower writes nothing */
            kube__sleep(k, 50);
            continue;
        }
        struct scan s = {json_array(), ack};
        MDB_txn *txn = NULL;
        if (store_txn_begin(k->store, STORE_READ, &txn, NULL) == 0)
            store_audit_scan(txn, ack + 1, 0, scan_fn, &s, NULL);
        store_txn_abort(&txn);
        size_t i;
        json_t *e;
        int failed = 0;
        json_array_foreach(s.recs, i, e)
        {
            struct err err = ERR_INIT;
            uint64_t seq = (uint64_t)json_integer_value(json_array_get(e, 0));
            if (kube__bind_record(k, h, seq, json_array_get(e, 1), &err) < 0) {
                if (!k->stop)
                    log_warn("kube: write-back of audit record %llu: %s", (unsigned long long)seq,
                             err.msg);
                failed = 1;
                break;
            }
            ack = seq;
        }
        /* Nothing wanted up to s.last: only the in-memory mark moves; the persisted
         * ackSeq catches up with the next handled record. */
        if (!failed && json_array_size(s.recs) == 0 && s.last > ack) {
            ack = s.last;
            pthread_mutex_lock(&k->mu);
            k->c.ack_seq = ack;
            pthread_mutex_unlock(&k->mu);
        }
        int idle = json_array_size(s.recs) == 0;
        json_decref(s.recs);
        if (failed || idle)
            kube__sleep(k, failed ? k->opts.backoff_min_ms : 50);
    }
    kube__http_free(h);
    return NULL;
}
