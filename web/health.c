/* health.c - GET /healthz (liveness) and GET /metrics (Prometheus text format). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "alloc.h"
#include "cached_reads.h"
#include "front.h"
#include "handlers.h"
#include "http.h"
#include "scheduler.h"
#include "store.h"

json_t *api__leader_state(struct api *api)
{
    json_t *st = api->leader ? api->leader(api->leader_ctx) : NULL;
    return st ? st : json_pack("{s:s,s:n}", "role", "standalone", "leader");
}

/* {"role", "leader"} of the election's state, added to doc. */
static json_t *with_role(struct api *api, json_t *doc)
{
    json_t *st = api__leader_state(api);
    json_object_set(doc, "role", json_object_get(st, "role"));
    json_object_set(doc, "leader", json_object_get(st, "leader"));
    json_decref(st);
    return doc;
}

/* Alive, whatever the state: a read-only musterd (a broken audit chain) still serves the
 * evidence, so it says why it changes nothing ("readOnly") rather than failing the probe. */
void api__healthz(struct req *r)
{
    json_t *doc = json_pack("{s:s, s:s}", "status", "ok", "version", MUSTER_VERSION);
    pthread_mutex_lock(&r->api->ro_mu);
    if (r->api->read_only)
        json_object_set_new(doc, "readOnly", json_string(r->api->read_only));
    pthread_mutex_unlock(&r->api->ro_mu);
    if (r->api->accounting)
        json_object_set_new(doc, "accounting", r->api->accounting(r->api->accounting_ctx));
    api__reply_json(r, 200, with_role(r->api, doc));
}

/* Ready once every mirrored source has synced (or is not served): a follower is ready
 * too, it serves reads. Standalone: always. */
void api__readyz(struct req *r)
{
    json_t *src = r->api->sources ? r->api->sources(r->api->sources_ctx) : NULL;
    size_t i, waiting = 0;
    json_t *s;
    json_array_foreach(json_object_get(src, "sources"), i, s)
    {
        const char *state = json_string_value(json_object_get(s, "state"));
        waiting +=
            !json_is_true(json_object_get(s, "synced")) && !(state && !strcmp(state, "missing"));
    }
    json_decref(src);
    json_t *doc =
        json_pack("{s:s, s:s}", "status", waiting ? "syncing" : "ready", "version", MUSTER_VERSION);
    api__reply_json(r, waiting ? 503 : 200, with_role(r->api, doc));
}

void api__health(struct req *r)
{
    json_t *audit = r->api->audit_health ? r->api->audit_health(r->api->audit_health_ctx)
                                         : json_pack("{s:b}", "checkpoints", 0);
    int read_only;

    pthread_mutex_lock(&r->api->ro_mu);
    read_only = r->api->read_only != NULL;
    pthread_mutex_unlock(&r->api->ro_mu);
    json_t *doc = json_pack("{s:s, s:s, s:b, s:o}", "status", read_only ? "read-only" : "ok",
                            "version", MUSTER_VERSION, "readOnly", read_only, "audit", audit);
    if (r->api->accounting)
        json_object_set_new(doc, "accounting", r->api->accounting(r->api->accounting_ctx));
    api__reply_json(r, 200, doc);
}

static void append(char **buf, size_t *len, size_t *cap, const char *text)
{
    size_t n = strlen(text);

    XGROW(*buf, *len + n + 1, *cap);
    memcpy(*buf + *len, text, n + 1);
    *len += n;
}

static void leader_metrics(struct api *api, char **buf, size_t *len, size_t *cap)
{
    json_t *st = api__leader_state(api);
    char text[1536];
    snprintf(text, sizeof(text),
             "# HELP muster_leader 1 when this musterd leads (or runs alone), 0 on a follower.\n"
             "# TYPE muster_leader gauge\nmuster_leader %d\n",
             strcmp(json_string_value(json_object_get(st, "role")), "follower") != 0);
    append(buf, len, cap, text);
    if (api->leader) {
        snprintf(text, sizeof(text),
                 "# HELP muster_leader_acquisitions_total Terms this musterd started as leader.\n"
                 "# TYPE muster_leader_acquisitions_total counter\n"
                 "muster_leader_acquisitions_total %lld\n"
                 "# HELP muster_leader_losses_total Terms this musterd ended (lease lost or "
                 "released).\n"
                 "# TYPE muster_leader_losses_total counter\nmuster_leader_losses_total %lld\n"
                 "# HELP muster_lease_renew_failures_total Lease acquire or renew attempts "
                 "that failed (transport, 409, 429, 5xx).\n"
                 "# TYPE muster_lease_renew_failures_total counter\n"
                 "muster_lease_renew_failures_total %lld\n"
                 "# HELP muster_lease_transitions The Lease's leaseTransitions as last observed.\n"
                 "# TYPE muster_lease_transitions gauge\nmuster_lease_transitions %lld\n",
                 (long long)json_integer_value(json_object_get(st, "acquisitions")),
                 (long long)json_integer_value(json_object_get(st, "losses")),
                 (long long)json_integer_value(json_object_get(st, "renewFailures")),
                 (long long)json_integer_value(json_object_get(st, "leaseTransitions")));
        append(buf, len, cap, text);
    }
    json_decref(st);
}

/* The mirror's counters (GET /api/v1/sources "counters") as muster_kube_<name>_total,
 * camelCase made snake_case; ackSeq is a gauge. */
static void append_kube(char **buf, size_t *len, size_t *cap, json_t *counters)
{
    const char *name;
    json_t *v;
    char metric[64], line[1024];
    json_object_foreach(counters, name, v)
    {
        size_t n = 0;
        for (const char *p = name; *p && n + 2 < sizeof(metric); p++) {
            if (*p >= 'A' && *p <= 'Z') {
                metric[n++] = '_';
                metric[n++] = (char)(*p - 'A' + 'a');
            } else {
                metric[n++] = *p;
            }
        }
        metric[n] = '\0';
        int gauge = !strcmp(name, "ackSeq");
        snprintf(line, sizeof(line),
                 "# HELP muster_kube_%s%s Kubernetes mirror: %s (GET /api/v1/sources).\n"
                 "# TYPE muster_kube_%s%s %s\nmuster_kube_%s%s %" JSON_INTEGER_FORMAT "\n",
                 metric, gauge ? "" : "_total", name, metric, gauge ? "" : "_total",
                 gauge ? "gauge" : "counter", metric, gauge ? "" : "_total", json_integer_value(v));
        append(buf, len, cap, line);
    }
}

/* The shipper's state (ship.h) as muster_accounting_*. */
static void accounting_metrics(struct api *api, char **buf, size_t *len, size_t *cap)
{
    char text[2048];
    if (!api->accounting)
        return;
    json_t *st = api->accounting(api->accounting_ctx);
    snprintf(text, sizeof(text),
             "# HELP muster_accounting_connected 1 while the accounting database is connected.\n"
             "# TYPE muster_accounting_connected gauge\nmuster_accounting_connected %d\n"
             "# HELP muster_accounting_shipped_seq The last audit record shipped.\n"
             "# TYPE muster_accounting_shipped_seq gauge\nmuster_accounting_shipped_seq %lld\n"
             "# HELP muster_accounting_lag_records Audit records not shipped yet.\n"
             "# TYPE muster_accounting_lag_records gauge\nmuster_accounting_lag_records %lld\n"
             "# HELP muster_accounting_lag_seconds Age of the oldest audit record not shipped.\n"
             "# TYPE muster_accounting_lag_seconds gauge\nmuster_accounting_lag_seconds %.3f\n"
             "# HELP muster_accounting_records_total Audit records shipped by this process.\n"
             "# TYPE muster_accounting_records_total counter\n"
             "muster_accounting_records_total %lld\n"
             "# HELP muster_accounting_batches_total Batches committed by this process.\n"
             "# TYPE muster_accounting_batches_total counter\n"
             "muster_accounting_batches_total %lld\n"
             "# HELP muster_accounting_failures_total Failed connections and batches.\n"
             "# TYPE muster_accounting_failures_total counter\n"
             "muster_accounting_failures_total %lld\n",
             json_is_true(json_object_get(st, "connected")),
             (long long)json_integer_value(json_object_get(st, "shippedSeq")),
             (long long)json_integer_value(json_object_get(st, "lagRecords")),
             json_number_value(json_object_get(st, "lagSeconds")),
             (long long)json_integer_value(json_object_get(st, "records")),
             (long long)json_integer_value(json_object_get(st, "batches")),
             (long long)json_integer_value(json_object_get(st, "failures")));
    append(buf, len, cap, text);
    json_decref(st);
}

void api__metrics(struct req *r)
{
    char *sched = sched_metrics(r->api->sched);
    char *buf = NULL, line[512];
    size_t len = 0, cap = 0;
    struct store_stats st;

    append(&buf, &len, &cap, sched ? sched : "");
    free(sched);
    append(&buf, &len, &cap,
           "# HELP muster_http_requests_total HTTP requests served, by status class.\n"
           "# TYPE muster_http_requests_total counter\n");
    for (int c = 1; c <= 5; c++) {
        /* this request is not counted yet: it is counted after its reply */
        snprintf(line, sizeof(line), "muster_http_requests_total{class=\"%dxx\"} %llu\n", c,
                 (unsigned long long)__atomic_load_n(&r->api->by_class[c], __ATOMIC_RELAXED));
        append(&buf, &len, &cap, line);
    }
    snprintf(line, sizeof(line),
             "# HELP muster_http_front_answers_total Requests the front end answered itself, "
             "from the read cache, without civetweb's workers.\n"
             "# TYPE muster_http_front_answers_total counter\n"
             "muster_http_front_answers_total %llu\n"
             "# HELP muster_http_front_realtime 1 when the front end's thread runs a real-time "
             "policy (front_priority realtime, or the process's).\n"
             "# TYPE muster_http_front_realtime gauge\n"
             "muster_http_front_realtime %d\n",
             (unsigned long long)__atomic_load_n(&r->api->front_answers, __ATOMIC_RELAXED),
             r->api->front ? api__front_realtime(r->api->front) : 0);
    append(&buf, &len, &cap, line);
    char refused[1024];
    api__auth_metrics(r->api, refused, sizeof(refused));
    append(&buf, &len, &cap, refused);
    char reads[1536];
    api__readcache_metrics(r->api, reads, sizeof(reads));
    append(&buf, &len, &cap, reads);
    if (store_stats(r->api->st, &st, NULL) == 0) {
        snprintf(line, sizeof(line),
                 "# HELP muster_store_map_bytes LMDB map size.\n"
                 "# TYPE muster_store_map_bytes gauge\nmuster_store_map_bytes %zu\n"
                 "# HELP muster_store_used_bytes LMDB pages in use.\n"
                 "# TYPE muster_store_used_bytes gauge\nmuster_store_used_bytes %zu\n",
                 st.map_size, st.used_bytes);
        append(&buf, &len, &cap, line);
    }
    leader_metrics(r->api, &buf, &len, &cap);
    accounting_metrics(r->api, &buf, &len, &cap);
    json_t *sources = r->api->sources ? r->api->sources(r->api->sources_ctx) : NULL;
    append_kube(&buf, &len, &cap, json_object_get(sources, "counters"));
    json_decref(sources);
    api__reply_raw(r, 200, "text/plain; version=0.0.4", buf, len, NULL);
    free(buf);
}
