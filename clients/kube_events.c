/*
 * kube_events.c - Kubernetes Events for muster's decisions (bind mode).
 *
 * Events are written as client-go's tools/events writes them: an events.k8s.io/v1
 * Event named "<object>.<unix nanoseconds in hex>" in the object's namespace, with
 * reportingController "muster", reportingInstance "<hostname>_<pid>", eventTime
 * (MicroTime), action, reason, note and type. A cluster that does not serve
 * events.k8s.io (404) gets core v1 Events (involvedObject, message, source,
 * first/lastTimestamp, count) from then on.
 *
 * Events are best effort: one attempt through kube__call (the one funnel of API
 * writes), a failure is counted (eventFailures) and logged at most every 10 s, and
 * never fails the caller.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "kube_writeback.h"
#include "log.h"
#include "outbox.h"
#include "store.h"

#define NOTE_MAX 1024 /* events.k8s.io/v1 rejects a longer note */
#define LOG_EVERY_MS 10000

static void host_name(char *buf, size_t n)
{
    if (gethostname(buf, n - 1) < 0 || !buf[0])
        snprintf(buf, n, "localhost");
    buf[n - 1] = '\0';
}

void kube__event_instance(char *buf, size_t n)
{
    char host[256] = "";
    host_name(host, sizeof(host));
    snprintf(buf, n, "%s_%ld", host, (long)getpid());
}

/* "2026-11-23T14:33:21.123456Z" (metav1.MicroTime) and the RFC 3339 second. */
static void micro_time(int64_t ns, char *micro, size_t mn, char *sec, size_t sn)
{
    time_t t = (time_t)(ns / 1000000000);
    struct tm tm;
    gmtime_r(&t, &tm);
    char base[32];
    strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(micro, mn, "%s.%06ldZ", base, (long)((ns % 1000000000) / 1000));
    snprintf(sec, sn, "%sZ", base);
}

/* The regarding / involvedObject reference of the stored object (uid as the API server
 * gave it; empty when the object is gone from the store). New. */
static json_t *reference(struct kube *k, enum model_kind kind, const char *key)
{
    MDB_txn *txn = NULL;
    json_t *obj = NULL;
    const char *slash = strchr(key, '/');
    json_t *ref = json_pack("{s:s,s:s#,s:s,s:s}", "kind", model_kind_name(kind), "namespace",
                            slash ? key : "default", slash ? (int)(slash - key) : 7, "name",
                            slash ? slash + 1 : key, "apiVersion", model_kind_api_version(kind));
    if (store_txn_begin(k->store, STORE_READ, &txn, NULL) == 0 &&
        store_get(txn, kind, key, &obj, NULL) == 0) {
        json_t *md = json_object_get(obj, "metadata");
        const char *uid = json_string_value(json_object_get(md, "uid"));
        const char *av = json_string_value(json_object_get(obj, "apiVersion"));
        if (uid)
            json_object_set_new(ref, "uid", json_string(uid));
        if (av)
            json_object_set_new(ref, "apiVersion", json_string(av));
    }
    store_txn_abort(&txn);
    json_decref(obj);
    return ref;
}

static json_t *body_events_v1(const struct kube_event *ev, json_t *ref, const char *name,
                              const char *micro, const char *note)
{
    char inst[320];
    kube__event_instance(inst, sizeof(inst));
    return json_pack("{s:s,s:s,s:{s:s,s:O},s:s,s:s,s:s,s:s,s:s,s:s,s:s,s:O}", "apiVersion",
                     "events.k8s.io/v1", "kind", "Event", "metadata", "name", name, "namespace",
                     json_object_get(ref, "namespace"), "eventTime", micro, "reportingController",
                     KUBE_EVENT_CONTROLLER, "reportingInstance", inst, "action", ev->action,
                     "reason", ev->reason, "note", note, "type", ev->warning ? "Warning" : "Normal",
                     "regarding", ref);
}

static json_t *body_core_v1(const struct kube_event *ev, json_t *ref, const char *name,
                            const char *sec, const char *note)
{
    char inst[320], host[256] = "";
    kube__event_instance(inst, sizeof(inst));
    host_name(host, sizeof(host));
    return json_pack("{s:s,s:s,s:{s:s,s:O},s:O,s:s,s:s,s:s,s:s,s:s,s:i,s:{s:s,s:s},s:s,s:s,s:s}",
                     "apiVersion", "v1", "kind", "Event", "metadata", "name", name, "namespace",
                     json_object_get(ref, "namespace"), "involvedObject", ref, "reason", ev->reason,
                     "message", note, "type", ev->warning ? "Warning" : "Normal", "firstTimestamp",
                     sec, "lastTimestamp", sec, "count", 1, "source", "component",
                     KUBE_EVENT_CONTROLLER, "host", host, "reportingComponent",
                     KUBE_EVENT_CONTROLLER, "reportingInstance", inst, "action", ev->action);
}

static void failed(struct kube *k, const struct kube_event *ev, const char *why)
{
    int64_t now = clock_mono_ms();
    int say = 0;
    uint64_t quiet = 0;
    pthread_mutex_lock(&k->mu);
    k->c.event_failures++;
    if (!k->event_log_ms || now - k->event_log_ms >= LOG_EVERY_MS) {
        say = 1;
        quiet = k->event_log_quiet;
        k->event_log_ms = now;
        k->event_log_quiet = 0;
    } else {
        k->event_log_quiet++;
    }
    pthread_mutex_unlock(&k->mu);
    if (say && quiet)
        log_warn("kube: event %s on %s '%s' not written: %s (and %llu more since the last "
                 "report)",
                 ev->reason, model_kind_name(ev->kind), ev->key, why, (unsigned long long)quiet);
    else if (say)
        log_warn("kube: event %s on %s '%s' not written: %s", ev->reason, model_kind_name(ev->kind),
                 ev->key, why);
}

int kube__event(struct kube *k, struct kube_http *h, const struct kube_event *ev)
{
    struct kube_resp r = {0};
    struct err err = ERR_INIT;
    char micro[48], sec[40], name[320], msg[512], note[NOTE_MAX + 1];
    int64_t ns = clock_now_ms() * 1000000 + (clock_mono_ns() % 1000000);
    micro_time(ns, micro, sizeof(micro), sec, sizeof(sec));
    snprintf(note, sizeof(note), "%s", ev->note);
    json_t *ref = reference(k, ev->kind, ev->key);
    const char *nsname = json_string_value(json_object_get(ref, "namespace"));
    snprintf(name, sizeof(name), "%s.%llx", json_string_value(json_object_get(ref, "name")),
             (unsigned long long)ns);
    int rc = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        pthread_mutex_lock(&k->mu);
        int core = k->events_core;
        pthread_mutex_unlock(&k->mu);
        char *path = core ? xasprintf("/api/v1/namespaces/%s/events", nsname)
                          : xasprintf("/apis/events.k8s.io/v1/namespaces/%s/events", nsname);
        json_t *body = core ? body_core_v1(ev, ref, name, sec, note)
                            : body_events_v1(ev, ref, name, micro, note);
        kube__resp_release(&r);
        rc = kube__call(k, h, "POST", path, NULL, body, &r, &err);
        free(path);
        json_decref(body);
        if (rc == 0 && r.status == 404 && !core) { /* events.k8s.io not served */
            pthread_mutex_lock(&k->mu);
            k->events_core = 1;
            pthread_mutex_unlock(&k->mu);
            log_info("kube: events.k8s.io/v1 not served; writing core v1 Events");
            continue;
        }
        break;
    }
    if (rc < 0) {
        failed(k, ev, err.msg);
    } else if (r.status >= 300) {
        failed(k, ev, kube__status_message(&r, msg, sizeof(msg)));
        rc = ERR_INVALID;
    } else {
        kube__count(k, &k->c.events_written);
    }
    kube__resp_release(&r);
    json_decref(ref);
    return rc;
}

#define FAILED_PODS_MAX 100 /* FailedScheduling Events per record */

struct pending {
    MDB_txn *txn;
    const char *scheduler;
    json_t *pods; /* pending pods of ours, key order */
};

static int pending_pod(void *ctx, const char *key)
{
    struct pending *p = ctx;
    json_t *pod = NULL;
    if (json_array_size(p->pods) >= FAILED_PODS_MAX ||
        store_get(p->txn, MODEL_POD, key, &pod, NULL) < 0)
        return 0;
    json_t *spec = json_object_get(pod, "spec");
    const char *node = json_string_value(json_object_get(spec, "nodeName"));
    const char *sn = json_string_value(json_object_get(spec, "schedulerName"));
    if ((!node || !*node) && sn && p->scheduler && !strcmp(sn, p->scheduler))
        json_array_append_new(p->pods, json_string(key));
    json_decref(pod);
    return 0;
}

/* The job's PodGroup exists (*is_group) and its pending pods of this scheduler (new). */
static json_t *job_pending_pods(struct kube *k, const char *job, int *is_group)
{
    MDB_txn *txn = NULL;
    json_t *pg = NULL;
    struct pending p = {NULL, k->scheduler_name, json_array()};
    *is_group = 0;
    if (store_txn_begin(k->store, STORE_READ, &txn, NULL) < 0)
        return p.pods;
    p.txn = txn;
    *is_group = store_get(txn, MODEL_PODGROUP, job, &pg, NULL) == 0;
    if (*is_group)
        store_pods_of_group(txn, job, pending_pod, &p, NULL);
    else
        pending_pod(&p, job); /* a lone pod is its own job */
    store_txn_abort(&txn);
    json_decref(pg);
    return p.pods;
}

/* The cycle of rec as its Events print it (0 when the record has none). */
static long long cycle_of(const struct sched_outbox_rec *rec)
{
    return rec->cycle >= 0 ? (long long)rec->cycle : 0;
}

void kube__events_unschedulable(struct kube *k, struct kube_http *h, uint64_t seq,
                                const struct sched_outbox_rec *rec)
{
    const char *job = rec->job, *code = why_code_name(rec->code);
    if (!job)
        return;
    int group = 0;
    json_t *pods = job_pending_pods(k, job, &group);
    char *note =
        xasprintf("%s (muster: %s, cycle %lld, audit seq %llu)", rec->message ? rec->message : code,
                  code, cycle_of(rec), (unsigned long long)seq);
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        struct kube_event ev = {
            MODEL_POD, json_string_value(p), "FailedScheduling", "Scheduling", 1, note};
        kube__event(k, h, &ev);
    }
    if (group) {
        struct kube_event ev = {MODEL_PODGROUP, job, "GangUnschedulable", "Scheduling", 1, note};
        kube__event(k, h, &ev);
    }
    free(note);
    json_decref(pods);
}

void kube__event_gang_scheduled(struct kube *k, struct kube_http *h, uint64_t seq,
                                const struct sched_outbox_rec *rec)
{
    const char *job = rec->job;
    MDB_txn *txn = NULL;
    json_t *pg = NULL;
    int group = 0;
    if (!job || store_txn_begin(k->store, STORE_READ, &txn, NULL) < 0)
        return;
    group = store_get(txn, MODEL_PODGROUP, job, &pg, NULL) == 0;
    store_txn_abort(&txn);
    json_decref(pg);
    if (!group)
        return;
    char *note =
        xasprintf("%zu pod%s of gang %s bound (muster cycle %lld, audit seq %llu)", rec->npods,
                  rec->npods == 1 ? "" : "s", job, cycle_of(rec), (unsigned long long)seq);
    struct kube_event ev = {MODEL_PODGROUP, job, "GangScheduled", "Scheduling", 0, note};
    kube__event(k, h, &ev);
    free(note);
}
