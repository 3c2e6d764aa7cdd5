/*
 * kube.c - the mirror's life cycle (open, start, wait, close) and its status.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "kube_internal.h"
#include "log.h"
#include "store.h"

static const struct {
    enum model_kind kind;
    const char *resource, *path, *api_version;
} SOURCES[KUBE_NSOURCES] = {
    {MODEL_NODE, "nodes", "/api/v1/nodes", "v1"},
    {MODEL_POD, "pods", "/api/v1/pods", "v1"},
    {MODEL_PODGROUP, "podgroups", "/apis/scheduling.sigs.k8s.io/v1alpha1/podgroups",
     "scheduling.sigs.k8s.io/v1alpha1"},
    {MODEL_PODGROUP, "podgroups." MODEL_GROUP_VOLCANO,
     "/apis/" MODEL_GROUP_VOLCANO "/v1beta1/podgroups", MODEL_GROUP_VOLCANO "/v1beta1"},
    {MODEL_TOPOLOGY, "clusternetworktopologies",
     "/apis/scheduling.koordinator.sh/v1alpha1/clusternetworktopologies",
     "scheduling.koordinator.sh/v1alpha1"},
    {MODEL_PRIORITYCLASS, "priorityclasses", "/apis/scheduling.k8s.io/v1/priorityclasses",
     "scheduling.k8s.io/v1"},
    {MODEL_QUEUE, "queues", "/apis/" MODEL_GROUP_VOLCANO "/v1beta1/queues",
     MODEL_GROUP_VOLCANO "/v1beta1"},
    {MODEL_PDB, "poddisruptionbudgets", "/apis/policy/v1/poddisruptionbudgets", "policy/v1"},
};

static void defaults(struct kube_options *o)
{
    struct kube_options d = KUBE_OPTIONS_INIT;
    if (o->batch_max <= 0)
        o->batch_max = d.batch_max;
    if (o->batch_ms <= 0)
        o->batch_ms = d.batch_ms;
    if (o->page_size <= 0)
        o->page_size = d.page_size;
    if (o->watch_timeout_s <= 0)
        o->watch_timeout_s = d.watch_timeout_s;
    if (o->backoff_min_ms <= 0)
        o->backoff_min_ms = d.backoff_min_ms;
    if (o->backoff_max_ms < o->backoff_min_ms)
        o->backoff_max_ms = o->backoff_min_ms * 8;
    if (o->missing_retry_ms <= 0)
        o->missing_retry_ms = d.missing_retry_ms;
    if (o->writeback_giveup_ms <= 0)
        o->writeback_giveup_ms = d.writeback_giveup_ms;
}

/* Resume points persisted by an earlier run: the store already holds those objects. */
static void load_resume(struct kube *k)
{
    MDB_txn *txn = NULL;
    struct err err = ERR_INIT;
    if (store_txn_begin(k->store, STORE_READ, &txn, &err) < 0)
        return;
    for (int i = 0; i < KUBE_NSOURCES; i++) {
        struct kube_source *src = &k->src[i];
        char *key = xasprintf("rv/%s", src->resource);
        json_t *doc = NULL;
        if (store_doc_get(txn, STORE_DB_MIRROR, key, &doc, NULL) == 0) {
            const char *rv = json_string_value(json_object_get(doc, "resourceVersion"));
            if (rv && *rv) {
                snprintf(src->rv, sizeof(src->rv), "%s", rv);
                snprintf(src->applied_rv, sizeof(src->applied_rv), "%s", rv);
                src->synced = 1;
            }
        }
        json_decref(doc);
        free(key);
    }
    store_txn_abort(&txn);
}

int kube_open(struct sched *s, struct store *st, const struct kube_options *opts, struct kube **out,
              struct err *err)
{
    struct kube_conn *conn = NULL;
    *out = NULL;
    int rc = kube__conn_load(opts->kubeconfig, opts->context, &conn, err);
    if (rc < 0)
        return rc;
    struct kube *k = xcalloc(1, sizeof(*k));
    k->sched = s;
    k->store = st;
    k->opts = *opts;
    defaults(&k->opts);
    k->conn = conn;
    if (opts->scheduler_name && *opts->scheduler_name)
        k->scheduler_name = xstrdup(opts->scheduler_name);
    k->opts.scheduler_name = k->scheduler_name;
    k->opts.kubeconfig = k->opts.context = NULL;
    pthread_mutex_init(&k->mu, NULL);
    k->pg_seen = json_object();
    pthread_cond_init(&k->cond, NULL);
    for (int i = 0; i < KUBE_NSOURCES; i++) {
        struct kube_source *src = &k->src[i];
        src->k = k;
        src->index = i;
        src->kind = SOURCES[i].kind;
        src->resource = SOURCES[i].resource;
        src->path = SOURCES[i].path;
        src->api_version = SOURCES[i].api_version;
        src->state = KUBE_LISTING;
        for (int j = 0; j < KUBE_NSOURCES; j++)
            src->shared |= j != i && SOURCES[j].kind == SOURCES[i].kind;
    }
    kube__lease_init(k);
    load_resume(k);
    *out = k;
    return 0;
}

int kube_check(const struct kube_options *opts, struct err *err)
{
    struct kube_conn *conn = NULL;
    int rc = kube__conn_load(opts->kubeconfig, opts->context, &conn, err);
    kube__conn_free(conn);
    return rc;
}

int kube_start(struct kube *k, struct err *err)
{
    srandom((unsigned)clock_mono_ns());
    /* read here, before any thread starts: what the mirror applies from now on is after it */
    MDB_txn *txn = NULL;
    int rc = store_txn_begin(k->store, STORE_READ, &txn, err);
    if (rc == 0)
        rc = store_audit_last_seq(txn, &k->start_seq, err);
    store_txn_abort(&txn);
    if (rc < 0)
        return rc;
    if (pthread_create(&k->writer, NULL, kube__writer_main, k) != 0)
        return err_set(err, ERR_INTERNAL, "cannot start the mirror's writer thread");
    k->writer_started = 1;
    for (int i = 0; i < KUBE_NSOURCES; i++) {
        if (pthread_create(&k->src[i].thread, NULL, kube__watch_main, &k->src[i]) != 0)
            return err_set(err, ERR_INTERNAL, "cannot start the watcher of '%s'",
                           k->src[i].resource);
        k->src[i].started = 1;
    }
    if (k->scheduler_name) {
        if (pthread_create(&k->binder, NULL, kube__bind_main, k) != 0)
            return err_set(err, ERR_INTERNAL, "cannot start the write-back thread");
        k->binder_started = 1;
    }
    if (k->opts.leader_elect) {
        if (pthread_create(&k->leaser, NULL, kube__lease_main, k) != 0)
            return err_set(err, ERR_INTERNAL, "cannot start the leader election thread");
        k->leaser_started = 1;
        log_info("kube: leader election on lease '%s/%s' as '%s'", k->lease.ns, k->lease.name,
                 k->lease.identity);
    }
    log_info("kube: mirroring '%s'%s%s", k->conn->server,
             k->scheduler_name ? ", binding pods of "
                                 "scheduler "
                               : "",
             k->scheduler_name ? k->scheduler_name : "");
    return 0;
}

/* Waits on k->cond until done(k) holds (lock held while testing). */
static int wait_until(struct kube *k, int (*done)(struct kube *), int64_t timeout_ms)
{
    struct timespec ts;
    kube__deadline_ts(timeout_ms, &ts);
    int ok = 0;
    pthread_mutex_lock(&k->mu);
    for (;;) {
        if ((ok = done(k)) || k->stop)
            break;
        if (pthread_cond_timedwait(&k->cond, &k->mu, &ts) != 0) {
            ok = done(k);
            break;
        }
    }
    pthread_mutex_unlock(&k->mu);
    return ok;
}

static int all_synced(struct kube *k)
{
    for (int i = 0; i < KUBE_NSOURCES; i++)
        if (!k->src[i].synced && k->src[i].state != KUBE_MISSING)
            return 0;
    return !k->head && !k->writer_busy;
}

int kube_wait_synced(struct kube *k, int64_t timeout_ms, struct err *err)
{
    if (wait_until(k, all_synced, timeout_ms))
        return 0;
    char buf[256] = "";
    pthread_mutex_lock(&k->mu);
    for (int i = 0; i < KUBE_NSOURCES; i++)
        if (!k->src[i].synced && k->src[i].state != KUBE_MISSING)
            snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " '%s'", k->src[i].resource);
    pthread_mutex_unlock(&k->mu);
    return err_set(err, ERR_UNAVAILABLE, "mirror not synced after %lld ms:%s",
                   (long long)timeout_ms, buf[0] ? buf : " events still queued");
}

static uint64_t last_audit_seq(struct kube *k)
{
    MDB_txn *txn = NULL;
    uint64_t seq = 0;
    if (store_txn_begin(k->store, STORE_READ, &txn, NULL) == 0)
        store_audit_last_seq(txn, &seq, NULL);
    store_txn_abort(&txn);
    return seq;
}

int kube_wait_writeback(struct kube *k, int64_t timeout_ms, struct err *err)
{
    int64_t end = clock_mono_ms() + timeout_ms;
    /* The write-back appends records itself, so the target moves: wait until caught up. */
    for (;;) {
        uint64_t last = last_audit_seq(k);
        pthread_mutex_lock(&k->mu);
        uint64_t ack = k->c.ack_seq;
        pthread_mutex_unlock(&k->mu);
        if (ack >= last)
            return 0;
        if (clock_mono_ms() >= end || kube__sleep(k, 20))
            return err_set(err, ERR_UNAVAILABLE, "write-back at audit seq %llu of %llu",
                           (unsigned long long)ack, (unsigned long long)last);
    }
}

static const char *state_name(struct kube_source *src)
{
    if (src->state == KUBE_MISSING)
        return "missing";
    if (src->state == KUBE_BACKOFF)
        return "backoff";
    if (src->state == KUBE_LISTING)
        return "listing";
    return src->synced ? "synced" : "watching";
}

json_t *kube_sources_json(struct kube *k)
{
    json_t *arr = json_array();
    pthread_mutex_lock(&k->mu);
    for (int i = 0; i < KUBE_NSOURCES; i++) {
        struct kube_source *s = &k->src[i];
        char ts[40] = "";
        if (s->last_event_ms)
            clock_format_rfc3339(s->last_event_ms, ts, sizeof(ts));
        json_array_append_new(
            arr,
            json_pack("{s:s,s:s,s:s,s:s,s:b,s:s,s:s?,s:I,s:I,s:I,s:s?}", "resource", s->resource,
                      "kind", model_kind_name(s->kind), "apiVersion", s->api_version, "state",
                      state_name(s), "synced", s->synced, "resourceVersion", s->applied_rv,
                      "lastEvent", ts[0] ? ts : NULL, "events", (json_int_t)s->events, "relists",
                      (json_int_t)s->relists, "errors", (json_int_t)s->errors, "lastError",
                      s->last_error[0] ? s->last_error : NULL));
    }
    struct kube_counters c = k->c;
    pthread_mutex_unlock(&k->mu);
    json_t *counters =
        json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "events",
                  (json_int_t)c.events, "batches", (json_int_t)c.batches, "relists",
                  (json_int_t)c.relists, "applyErrors", (json_int_t)c.apply_errors, "writebacks",
                  (json_int_t)c.writebacks, "writebackFailures", (json_int_t)c.writeback_failures,
                  "bindings", (json_int_t)c.bindings, "bindRefused", (json_int_t)c.bind_refused,
                  "evictions", (json_int_t)c.evictions, "evictRefused", (json_int_t)c.evict_refused,
                  "patches", (json_int_t)c.patches, "ackSeq", (json_int_t)c.ack_seq);
    json_object_update_new(counters,
                           json_pack("{s:I,s:I,s:I,s:I,s:I}", "writebackAbandoned",
                                     (json_int_t)c.writeback_abandoned, "eventsWritten",
                                     (json_int_t)c.events_written, "eventFailures",
                                     (json_int_t)c.event_failures, "podGroupStatusPatches",
                                     (json_int_t)c.pg_status_patches, "podGroupStatusFailures",
                                     (json_int_t)c.pg_status_failures));
    json_t *doc = json_pack("{s:s,s:s,s:s?,s:o,s:o}", "server", k->conn->server, "mode",
                            k->scheduler_name ? "bind" : "mirror", "schedulerName",
                            k->scheduler_name, "sources", arr, "counters", counters);
    json_t *le = kube_leader_json(k);
    if (le)
        json_object_set_new(doc, "leaderElection", le);
    return doc;
}

void kube_close(struct kube *k)
{
    if (!k)
        return;
    pthread_mutex_lock(&k->mu);
    k->stop = 1;
    pthread_cond_broadcast(&k->cond);
    pthread_mutex_unlock(&k->mu);
    for (int i = 0; i < KUBE_NSOURCES; i++)
        if (k->src[i].started)
            pthread_join(k->src[i].thread, NULL);
    if (k->binder_started)
        pthread_join(k->binder, NULL);
    if (k->writer_started)
        pthread_join(k->writer, NULL);
    if (k->leaser_started) { /* last: it releases the Lease once nothing else writes */
        pthread_mutex_lock(&k->mu);
        k->lease_stop = 1;
        pthread_cond_broadcast(&k->cond);
        pthread_mutex_unlock(&k->mu);
        pthread_join(k->leaser, NULL);
    }
    for (struct kube_ev *ev = k->head, *next; ev; ev = next) {
        next = ev->next;
        kube__ev_free(ev);
    }
    pthread_cond_destroy(&k->cond);
    pthread_mutex_destroy(&k->mu);
    kube__conn_free(k->conn);
    json_decref(k->pg_seen);
    free(k->scheduler_name);
    free(k);
}
