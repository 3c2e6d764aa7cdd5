/*
 * kube_mirror.c - the event queue and the batching writer: events from the
 * watchers are applied through the scheduler (sched_apply / sched_delete) in
 * batches, and each resource's applied resourceVersion is persisted after the
 * batch that contained it committed.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "kube_internal.h"
#include "log.h"
#include "scheduler.h"
#include "store.h"

#define QUEUE_MAX 100000

void kube__ev_free(struct kube_ev *ev)
{
    if (!ev)
        return;
    json_decref(ev->obj);
    free(ev->key);
    free(ev->invalid);
    free(ev);
}

void kube__enqueue(struct kube *k, struct kube_ev *ev)
{
    pthread_mutex_lock(&k->mu);
    while (k->qlen >= QUEUE_MAX && !k->stop)
        pthread_cond_wait(&k->cond, &k->mu);
    if (k->tail)
        k->tail->next = ev;
    else
        k->head = ev;
    k->tail = ev;
    k->qlen++;
    if (k->qlen == 1 || k->qlen == (size_t)k->opts.batch_max)
        pthread_cond_broadcast(&k->cond);
    pthread_mutex_unlock(&k->mu);
}

void kube__deadline_ts(int64_t ms_from_now, struct timespec *ts)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_sec += ms_from_now / 1000;
    ts->tv_nsec += (ms_from_now % 1000) * 1000000L;
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

int kube__sleep(struct kube *k, int64_t ms)
{
    struct timespec ts;
    kube__deadline_ts(ms, &ts);
    pthread_mutex_lock(&k->mu);
    while (!k->stop && pthread_cond_timedwait(&k->cond, &k->mu, &ts) == 0)
        ;
    int stop = k->stop;
    pthread_mutex_unlock(&k->mu);
    return stop;
}

void kube__source_error(struct kube_source *src, const char *msg)
{
    pthread_mutex_lock(&src->k->mu);
    src->errors++;
    int same = !strcmp(src->last_error, msg);
    /* cut to the field's size on purpose */
    snprintf(src->last_error, sizeof(src->last_error), "%.*s", (int)sizeof(src->last_error) - 1,
             msg);
    pthread_mutex_unlock(&src->k->mu);
    if (!same)
        log_warn("kube: %s", msg);
}

void kube__normalize(enum model_kind kind, const char *api_version, json_t *obj)
{
    if (!json_string_value(json_object_get(obj, "kind")))
        json_object_set_new(obj, "kind", json_string(model_kind_name(kind)));
    if (!json_string_value(json_object_get(obj, "apiVersion")))
        json_object_set_new(obj, "apiVersion",
                            json_string(api_version ? api_version : model_kind_api_version(kind)));
    json_object_del(json_object_get(obj, "metadata"), "managedFields");
}

/* The group of an apiVersion ("" for the core "v1"): its length before the '/'. */
static size_t group_len(const char *api_version)
{
    const char *slash = strchr(api_version, '/');
    return slash ? (size_t)(slash - api_version) : 0;
}

int kube__source_owns(const struct kube_source *src, json_t *obj)
{
    const char *api = json_string_value(json_object_get(obj, "apiVersion"));
    if (!src->shared)
        return 1;
    size_t n = group_len(src->api_version);
    return api && group_len(api) == n && !strncmp(api, src->api_version, n);
}

/* ---- the writer ---- */

/* Notes the API server's resourceVersion of a PodGroup about to be applied (rv NULL: one
 * about to be deleted). Before the store has it, so a status sync that reads the store
 * after this never judges by an older version than pg_seen names (kube_pgstatus.c). */
static void note_pg(struct kube *k, enum model_kind kind, const char *key, const char *rv)
{
    if (kind != MODEL_PODGROUP || !key)
        return;
    pthread_mutex_lock(&k->mu);
    if (rv)
        json_object_set_new(k->pg_seen, key, json_string(rv));
    else
        json_object_del(k->pg_seen, key);
    pthread_mutex_unlock(&k->mu);
}

char *kube__pg_seen(struct kube *k, const char *key)
{
    pthread_mutex_lock(&k->mu);
    const char *rv = json_string_value(json_object_get(k->pg_seen, key));
    char *out = rv ? xstrdup(rv) : NULL;
    pthread_mutex_unlock(&k->mu);
    return out;
}

struct batch {
    struct kube *k;
    struct model_manifest m;
    size_t cap;
    json_t *index;              /* "<kind>/<key>" -> position in m.docs */
    char rv[KUBE_NSOURCES][64]; /* by source index */
    int synced[KUBE_NSOURCES];
    uint64_t gen[KUBE_NSOURCES]; /* relist generation applied */
    uint64_t events;
};

static void apply_one_by_one(struct batch *b)
{
    for (size_t i = 0; i < b->m.n; i++) {
        struct model_manifest one = {.docs = &b->m.docs[i], .n = 1, .validated = 1};
        struct err err = ERR_INIT;
        json_t *res = NULL;
        if (sched_apply(b->k->sched, &one, clock_now_ms(), &res, &err) < 0) {
            pthread_mutex_lock(&b->k->mu);
            b->k->c.apply_errors++;
            pthread_mutex_unlock(&b->k->mu);
            log_warn("kube: apply: %s", err.msg);
        }
        json_decref(res);
    }
}

static void flush(struct batch *b)
{
    if (b->m.n == 0)
        return;
    struct err err = ERR_INIT;
    json_t *res = NULL;
    b->m.validated = 1; /* the watch thread validated every document (apply_ev) */
    if (sched_apply(b->k->sched, &b->m, clock_now_ms(), &res, &err) < 0) {
        log_warn("kube: batch apply of %zu objects failed (%s); applying one by one", b->m.n,
                 err.msg);
        apply_one_by_one(b);
    }
    json_decref(res);
    model_manifest_free(&b->m);
    b->cap = 0;
    json_object_clear(b->index);
}

static void delete_one(struct batch *b, struct kube_source *src, const char *key);

static const char *pod_field(json_t *pod, const char *part, const char *name)
{
    return json_string_value(json_object_get(json_object_get(pod, part), name));
}

static int same_str(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* sched_apply keeps a stored pod's spec.nodeName and deletion when the applied document
 * has none (a binding in flight must not be undone by an unrelated update). Where the
 * API server is the truth (kube__authoritative), a placement or a deletion only the store
 * has belongs to an earlier term that was never written: the stored pod is removed so
 * the server's is applied fresh, as kube_bind.c's resync_pod does for a refused binding. */
static void reset_stale_pod(struct batch *b, struct kube_source *src, json_t *obj)
{
    MDB_txn *txn = NULL;
    json_t *old = NULL;
    char *key = model_object_key(MODEL_POD, obj);
    if (key && store_txn_begin(b->k->store, STORE_READ, &txn, NULL) == 0)
        store_get(txn, MODEL_POD, key, &old, NULL);
    store_txn_abort(&txn);
    const char *node = pod_field(old, "spec", "nodeName");
    if (old && ((node && !same_str(node, pod_field(obj, "spec", "nodeName"))) ||
                (pod_field(old, "metadata", "deletionTimestamp") &&
                 !pod_field(obj, "metadata", "deletionTimestamp")))) {
        log_info("kube: pod '%s': the store's placement or deletion is not the API server's: "
                 "reset",
                 key);
        flush(b); /* an earlier event of the batch may be for this pod */
        delete_one(b, src, key);
    }
    json_decref(old);
    free(key);
}

static void add_apply(struct batch *b, struct kube_ev *ev)
{
    if (ev->invalid) {
        pthread_mutex_lock(&b->k->mu);
        b->k->c.apply_errors++;
        pthread_mutex_unlock(&b->k->mu);
        kube__source_error(ev->src, ev->invalid);
        return;
    }
    struct model_doc doc = {.index = (int)b->m.n + 1, .obj = ev->obj, .pos = json_object()};
    ev->obj = NULL;
    if (ev->src->kind == MODEL_POD && kube__authoritative(b->k))
        reset_stale_pod(b, ev->src, doc.obj);
    char *key = model_object_key(ev->src->kind, doc.obj);
    note_pg(b->k, ev->src->kind, key,
            json_string_value(
                json_object_get(json_object_get(doc.obj, "metadata"), "resourceVersion")));
    char *ik = xasprintf("%d/%s", (int)ev->src->kind, key);
    json_t *at = json_object_get(b->index, ik);
    if (at) { /* a later event for the same object replaces the earlier one */
        struct model_doc *d = &b->m.docs[json_integer_value(at)];
        json_decref(d->obj);
        json_decref(d->pos);
        d->obj = doc.obj;
        d->pos = doc.pos;
    } else {
        XGROW(b->m.docs, b->m.n + 1, b->cap);
        json_object_set_new(b->index, ik, json_integer((json_int_t)b->m.n));
        b->m.docs[b->m.n++] = doc;
    }
    free(key);
    free(ik);
}

/* The stored object of a shared kind came from src (it may since have been replaced by
 * the other source's object of the same key, which src does not delete). */
static int stored_from(struct batch *b, struct kube_source *src, const char *key)
{
    MDB_txn *txn = NULL;
    json_t *obj = NULL;
    if (!src->shared)
        return 1;
    if (store_txn_begin(b->k->store, STORE_READ, &txn, NULL) == 0)
        store_get(txn, src->kind, key, &obj, NULL);
    store_txn_abort(&txn);
    int owns = !obj || kube__source_owns(src, obj);
    json_decref(obj);
    return owns;
}

static void delete_one(struct batch *b, struct kube_source *src, const char *key)
{
    struct err err = ERR_INIT;
    if (!stored_from(b, src, key))
        return;
    note_pg(b->k, src->kind, key, NULL);
    if (sched_delete(b->k->sched, src->kind, key, clock_now_ms(), &err) < 0 &&
        err.code != ERR_NOT_FOUND) {
        pthread_mutex_lock(&b->k->mu);
        b->k->c.apply_errors++;
        pthread_mutex_unlock(&b->k->mu);
        kube__source_error(src, err.msg);
    }
}

struct stale {
    const struct kube_source *src;
    MDB_txn *txn;
    json_t *listed;
    json_t *gone; /* array of keys */
};

/* Only an object the list did not name is read: after an initial sync that is none. */
static int stale_fn(void *ctx, const char *key)
{
    struct stale *s = ctx;
    json_t *obj = NULL;
    if (json_object_get(s->listed, key) || store_get(s->txn, s->src->kind, key, &obj, NULL) < 0)
        return 0;
    if (kube__source_owns(s->src, obj))
        json_array_append_new(s->gone, json_string(key));
    json_decref(obj);
    return 0;
}

/* After a full list: whatever the store has of this source that the list did not is
 * gone (a PodGroup of the other group is not). */
static void sync_deletes(struct batch *b, struct kube_ev *ev)
{
    struct stale s = {ev->src, NULL, ev->obj, json_array()};
    struct err err = ERR_INIT;
    if (store_txn_begin(b->k->store, STORE_READ, &s.txn, &err) == 0)
        store_each_key(s.txn, ev->src->kind, stale_fn, &s, &err);
    store_txn_abort(&s.txn);
    size_t i;
    json_t *key;
    json_array_foreach(s.gone, i, key) delete_one(b, ev->src, json_string_value(key));
    json_decref(s.gone);
}

static int persist_fn(MDB_txn *txn, void *ctx, struct err *err)
{
    struct batch *b = ctx;
    for (int i = 0; i < KUBE_NSOURCES; i++) {
        if (!b->rv[i][0])
            continue;
        char *key = xasprintf("rv/%s", b->k->src[i].resource);
        json_t *doc = json_pack("{s:s}", "resourceVersion", b->rv[i]);
        int rc = store_doc_put(txn, STORE_DB_MIRROR, key, doc, err);
        json_decref(doc);
        free(key);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void apply_batch(struct kube *k, struct kube_ev *list)
{
    struct batch b = {.k = k, .index = json_object()};
    for (struct kube_ev *ev = list, *next; ev; ev = next) {
        next = ev->next;
        int i = ev->src->index;
        switch (ev->op) {
        case KUBE_EV_APPLY:
            b.events++;
            add_apply(&b, ev);
            break;
        case KUBE_EV_DELETE:
            b.events++;
            flush(&b);
            delete_one(&b, ev->src, ev->key);
            break;
        case KUBE_EV_SYNC:
            flush(&b);
            sync_deletes(&b, ev);
            b.synced[i] = 1;
            if (ev->gen > b.gen[i])
                b.gen[i] = ev->gen;
            break;
        case KUBE_EV_RV:
            break;
        }
        if (ev->rv[0])
            snprintf(b.rv[i], sizeof(b.rv[i]), "%s", ev->rv);
        kube__ev_free(ev);
    }
    flush(&b);
    struct err err = ERR_INIT;
    if (store_write(k->store, persist_fn, &b, &err) < 0)
        log_warn("kube: cannot persist resourceVersions: %s", err.msg);
    pthread_mutex_lock(&k->mu);
    for (int i = 0; i < KUBE_NSOURCES; i++) {
        if (b.rv[i][0])
            snprintf(k->src[i].applied_rv, sizeof(k->src[i].applied_rv), "%s", b.rv[i]);
        if (b.synced[i])
            k->src[i].synced = 1;
        if (b.gen[i] > k->src[i].applied_gen)
            k->src[i].applied_gen = b.gen[i];
    }
    k->c.events += b.events;
    k->c.batches++;
    pthread_mutex_unlock(&k->mu);
    json_decref(b.index);
}

void *kube__writer_main(void *arg)
{
    struct kube *k = arg;
    pthread_mutex_lock(&k->mu);
    for (;;) {
        while (!k->head && !k->stop)
            pthread_cond_wait(&k->cond, &k->mu);
        if (k->stop)
            break;
        struct timespec ts;
        kube__deadline_ts(k->opts.batch_ms, &ts);
        while (k->qlen < (size_t)k->opts.batch_max && !k->stop &&
               pthread_cond_timedwait(&k->cond, &k->mu, &ts) == 0)
            ;
        struct kube_ev *list = k->head, *last = k->head;
        size_t n = 1;
        while (last->next && n < (size_t)k->opts.batch_max) {
            last = last->next;
            n++;
        }
        k->head = last->next;
        if (!k->head)
            k->tail = NULL;
        last->next = NULL;
        k->qlen -= n;
        k->writer_busy = 1;
        pthread_cond_broadcast(&k->cond);
        pthread_mutex_unlock(&k->mu);
        apply_batch(k, list);
        pthread_mutex_lock(&k->mu);
        k->writer_busy = 0;
        pthread_cond_broadcast(&k->cond);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}
