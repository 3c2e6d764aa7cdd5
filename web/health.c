/* health.c - GET /healthz (liveness) and GET /metrics (Prometheus text format). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

void api__healthz(struct req *r)
{
    api__reply_json(r, 200, json_pack("{s:s, s:s}", "status", "ok", "version", MUSTER_VERSION));
}

void api__health(struct req *r)
{
    json_t *audit = r->api->audit_health ? r->api->audit_health(r->api->audit_health_ctx)
                                         : json_pack("{s:b}", "checkpoints", 0);
    int read_only;

    pthread_mutex_lock(&r->api->ro_mu);
    read_only = r->api->read_only != NULL;
    pthread_mutex_unlock(&r->api->ro_mu);
    api__reply_json(r, 200,
                    json_pack("{s:s, s:s, s:b, s:o}", "status", read_only ? "read-only" : "ok",
                              "version", MUSTER_VERSION, "readOnly", read_only, "audit", audit));
}

static void append(char **buf, size_t *len, size_t *cap, const char *text)
{
    size_t n = strlen(text);

    XGROW(*buf, *len + n + 1, *cap);
    memcpy(*buf + *len, text, n + 1);
    *len += n;
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

void api__metrics(struct req *r)
{
    char *sched = sched_metrics(r->api->sched);
    char *buf = NULL, line[256];
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
    char refused[1024];
    api__auth_metrics(r->api, refused, sizeof(refused));
    append(&buf, &len, &cap, refused);
    if (store_stats(r->api->st, &st, NULL) == 0) {
        snprintf(line, sizeof(line),
                 "# HELP muster_store_map_bytes LMDB map size.\n"
                 "# TYPE muster_store_map_bytes gauge\nmuster_store_map_bytes %zu\n"
                 "# HELP muster_store_used_bytes LMDB pages in use.\n"
                 "# TYPE muster_store_used_bytes gauge\nmuster_store_used_bytes %zu\n",
                 st.map_size, st.used_bytes);
        append(&buf, &len, &cap, line);
    }
    json_t *sources = r->api->sources ? r->api->sources(r->api->sources_ctx) : NULL;
    append_kube(&buf, &len, &cap, json_object_get(sources, "counters"));
    json_decref(sources);
    api__reply_raw(r, 200, "text/plain; version=0.0.4", buf, len, NULL);
    free(buf);
}
