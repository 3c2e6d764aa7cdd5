/* timeseries.c - GET /api/v1/timeseries (the samples sched_sample stored, as columns) and
 * the Grafana JSON data source routes over the same samples: GET /api/v1/grafana (the
 * connection test), POST /api/v1/grafana/search and /metrics (the series names), POST
 * /api/v1/grafana/query (each target as [value, time ms] pairs). docs/api.md says each. */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "handlers.h"
#include "http.h"
#include "scheduler.h"

#define MAX_SERIES 32

/* "90s", "15m", "6h", "2d" or plain seconds: ms into *out. -1 when it is none of those. */
static int parse_span(const char *s, int64_t *out)
{
    char *end = NULL;
    double x = strtod(s, &end);
    double unit = 1000;
    if (end == s || x <= 0)
        return -1;
    if (*end == 's')
        end++;
    else if (*end == 'm')
        unit = 60e3, end++;
    else if (*end == 'h')
        unit = 3600e3, end++;
    else if (*end == 'd')
        unit = 86400e3, end++;
    if (*end)
        return -1;
    *out = (int64_t)(x * unit);
    return 0;
}

/* Splits "a,b" (new copy in *buf) into prefixes; returns how many (at most MAX_SERIES). */
static size_t split_series(char *buf, const char **out)
{
    size_t n = 0;
    for (char *tok = strtok(buf, ","); tok && n < MAX_SERIES; tok = strtok(NULL, ","))
        if (*tok)
            out[n++] = tok;
    return n;
}

void api__timeseries(struct req *r)
{
    struct err err = ERR_INIT;
    char *since = NULL, *series = NULL;
    int64_t from = 0, to = 0, span = 0;
    const char *prefixes[MAX_SERIES];
    size_t n = 0;
    json_t *doc = NULL;

    if (api__query_time_or_reply(r, "from", &from) < 0 ||
        api__query_time_or_reply(r, "to", &to) < 0 ||
        api__query_str_or_reply(r, "since", &since) < 0 ||
        api__query_str_or_reply(r, "series", &series) < 0)
        goto out;
    if (since && (from || parse_span(since, &span) < 0)) {
        err_setf(&err, ERR_INVALID, "since",
                 from ? "query parameters 'since' and 'from' cannot be combined"
                      : "query parameter 'since': '%s' is not a duration (\"90s\", \"15m\", "
                        "\"6h\", \"2d\" or seconds)",
                 since);
        api__reply_error(r, &err);
        goto out;
    }
    if (span)
        from = clock_now_ms() - span;
    if (to && from > to) {
        err_setf(&err, ERR_INVALID, "from", "query parameter 'from' is after 'to'");
        api__reply_error(r, &err);
        goto out;
    }
    if (series)
        n = split_series(series, prefixes);
    if (sched_timeseries(r->api->sched, from, to, prefixes, n, &doc, &err) < 0) {
        api__reply_error(r, &err);
        goto out;
    }
    json_object_set_new(doc, "interval", json_real(r->api->timeseries_interval));
    api__reply_json(r, 200, doc);
out:
    free(since);
    free(series);
}

void api__grafana_test(struct req *r)
{
    api__reply_json(r, 200, json_pack("{s:s}", "status", "ok"));
}

/* Every series name of the newest samples (those of the last hour, else the last one
 * kept), sorted. New. */
static json_t *series_names(struct req *r, struct err *err)
{
    json_t *doc = NULL, *names = json_array(), *col;
    const char *name;
    if (sched_timeseries(r->api->sched, clock_now_ms() - 3600 * 1000, 0, NULL, 0, &doc, err) < 0) {
        json_decref(names);
        return NULL;
    }
    json_object_foreach(json_object_get(doc, "series"), name, col)
        json_array_append_new(names, json_string(name));
    json_decref(doc);
    return names;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

void api__grafana_search(struct req *r)
{
    struct err err = ERR_INIT;
    size_t len;
    char *body = api__body_or_reply(r, &len); /* Grafana sends {"target": ""}: not needed */
    if (!body)
        return;
    free(body);
    json_t *names = series_names(r, &err);
    if (!names) {
        api__reply_error(r, &err);
        return;
    }
    size_t n = json_array_size(names);
    json_t **v = malloc((n + 1) * sizeof(*v));
    for (size_t i = 0; i < n; i++)
        v[i] = json_incref(json_array_get(names, i));
    qsort(v, n, sizeof(*v), cmp_names);
    json_array_clear(names);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(names, v[i]);
    free(v);
    api__reply_json(r, 200, names);
}

/* Grafana's range {"from": RFC 3339, "to": RFC 3339} into ms; 0 when absent. */
static int grafana_range(json_t *range, int64_t *from, int64_t *to, struct err *err)
{
    const char *f = json_string_value(json_object_get(range, "from"));
    const char *t = json_string_value(json_object_get(range, "to"));
    if (f && clock_parse_rfc3339(f, from, err) < 0)
        return err_setf(err, ERR_INVALID, "range.from", "range.from: '%s' is not an RFC 3339 time",
                        f);
    if (t && clock_parse_rfc3339(t, to, err) < 0)
        return err_setf(err, ERR_INVALID, "range.to", "range.to: '%s' is not an RFC 3339 time", t);
    return 0;
}

void api__grafana_query(struct req *r)
{
    struct err err = ERR_INIT;
    json_error_t jerr;
    json_t *q = NULL, *targets = NULL, *range = NULL, *doc = NULL, *out = NULL, *t;
    int64_t from = 0, to = 0;
    size_t len, i;
    char *body = api__body_or_reply(r, &len);
    if (!body)
        return;
    q = json_loadb(body, len, 0, &jerr);
    free(body);
    if (!q || json_unpack_ex(q, &jerr, 0, "{s:o, s?o}", "targets", &targets, "range", &range) < 0 ||
        !json_is_array(targets)) {
        err_setf(&err, ERR_INVALID, "targets",
                 "a query needs {\"targets\": [{\"target\": name}], "
                 "\"range\"?: {\"from\", \"to\"}}: %s",
                 q ? (json_is_array(targets) ? jerr.text : "'targets' must be an array")
                   : jerr.text);
        api__reply_error(r, &err);
        goto out;
    }
    if (grafana_range(range, &from, &to, &err) < 0 ||
        sched_timeseries(r->api->sched, from, to, NULL, 0, &doc, &err) < 0) {
        api__reply_error(r, &err);
        goto out;
    }
    out = json_array();
    json_t *times = json_object_get(doc, "times");
    json_array_foreach(targets, i, t)
    {
        const char *name = json_string_value(json_object_get(t, "target"));
        if (!name) {
            err_setf(&err, ERR_INVALID, "targets", "targets[%zu] has no \"target\" name", i);
            api__reply_error(r, &err);
            goto out;
        }
        json_t *col = json_object_get(json_object_get(doc, "series"), name), *points = json_array();
        for (size_t k = 0; k < json_array_size(col); k++)
            if (!json_is_null(json_array_get(col, k)))
                json_array_append_new(
                    points, json_pack("[O, O]", json_array_get(col, k), json_array_get(times, k)));
        json_array_append_new(out, json_pack("{s:s, s:o}", "target", name, "datapoints", points));
    }
    api__reply_json(r, 200, out);
    out = NULL;
out:
    json_decref(out);
    json_decref(doc);
    json_decref(q);
}
