/* manifests.c - POST /api/v1/manifests: parse, validate every document, apply atomically;
 * POST /api/v1/whatif: the same bodies, tried on a copy of the state (sched_whatif).
 *
 * ?fieldValidation=Strict|Warn|Ignore (default: the api's field_validation) says what
 * becomes of fields outside the schema, as in kube-apiserver: a 400 naming each one, or
 * dropped with a "Warning: 299 - ..." header each and a "warnings" list in the reply, or
 * dropped silently. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "access.h"
#include "alloc.h"
#include "clock.h"
#include "handlers.h"
#include "http.h"
#include "model.h"
#include "scheduler.h"

/* 0 with *fmt set from Content-Type, or replies 415 and returns -1. The dispatcher has
 * already refused a POST without a JSON or YAML type (api__content_type_ok). */
static int format_or_reply(struct req *r, enum model_format *fmt)
{
    const char *ct = api__header(r, "Content-Type");

    *fmt = MODEL_FMT_AUTO;
    if (api__content_format(ct, fmt) == 0)
        return 0;
    api__reply_errorf(r, ERR_UNSUPPORTED,
                      "content type '%.*s' is not supported; use application/json, "
                      "application/yaml or application/x-ndjson",
                      ct ? (int)strcspn(ct, "; \t") : 0, ct ? ct : "");
    return -1;
}

/* 0, or replies 400 naming the first document nested too deeply and where. */
static int depth_or_reply(struct req *r, const struct model_manifest *m)
{
    size_t i = 0;
    char *path = NULL;
    if (model_manifest_too_deep(m, &i, &path)) {
        struct err err = ERR_INIT;
        err_setf(&err, ERR_INVALID, path,
                 "document %d: nested more than %d levels deep at '%.200s%s'", m->docs[i].index,
                 MODEL_MAX_DEPTH, path, strlen(path) > 200 ? "..." : "");
        api__reply_error_extra(r, &err,
                               json_pack("{s:[{s:i, s:s, s:s}]}", "errors", "document",
                                         m->docs[i].index, "field", err.field, "message", err.msg));
        free(path);
        return -1;
    }
    return 0;
}

/* The mode of the request, or replies 400 and returns -1. */
static int fields_or_reply(struct req *r, enum model_fields *mode)
{
    struct err err = ERR_INIT;
    char *s = NULL;
    *mode = r->api->field_validation;
    if (api__query_str_or_reply(r, "fieldValidation", &s) < 0)
        return -1;
    if (s && model_fields_parse(s, mode, &err) < 0) {
        api__utf8_scrub(err.msg);
        api__reply_error(r, &err);
        free(s);
        return -1;
    }
    free(s);
    return 0;
}

/* At most this many Warning headers; civetweb keeps 64 response headers in all. */
#define MAX_WARNING_HEADERS 20

/* The reply's Warning header lines (new; NULL when there are no warnings), one per dropped
 * field: Warning: 299 - "unknown field \"spec.priorty\" (document 1, Pod default/w)". */
static char *warning_headers(json_t *warnings)
{
    size_t i, n = json_array_size(warnings);
    json_t *w;
    char *buf = NULL;
    size_t len = 0;
    if (!n)
        return NULL;
    FILE *f = open_memstream(&buf, &len);
    json_array_foreach(warnings, i, w)
    {
        char text[768];
        if (i == MAX_WARNING_HEADERS) {
            snprintf(text, sizeof(text),
                     "%zu more unknown fields dropped: see the reply's warnings", n - i);
        } else {
            const char *kind = json_string_value(json_object_get(w, "kind"));
            const char *name = json_string_value(json_object_get(w, "name"));
            snprintf(text, sizeof(text), "unknown field \"%s\" (document %d%s%s%s%s)",
                     json_string_value(json_object_get(w, "field")),
                     (int)json_integer_value(json_object_get(w, "document")), kind ? ", " : "",
                     kind ? kind : "", name ? " " : "", name ? name : "");
        }
        fputs(i ? "\r\nWarning: 299 - \"" : "Warning: 299 - \"", f);
        for (const char *p = text; *p; p++) /* a quoted-string on one line */
            if (*p == '"' || *p == '\\')
                fprintf(f, "\\%c", *p);
            else
                fputc((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p, f);
        fputc('"', f);
        if (i == MAX_WARNING_HEADERS)
            break;
    }
    fclose(f);
    return buf;
}

/* The time since t into *ns; returns now. */
static int64_t lap(int64_t *ns, int64_t t)
{
    int64_t now = clock_mono_ns();
    *ns = now - t;
    return now;
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strchr(" \t\r\n", s[i]))
            return 0;
    return 1;
}

/* The reply of an apply: 201 when it created an object, {"results": [...]} and "warnings"
 * when there are any, written from the lines as api__reply_json_extra writes a tree
 * (compact, in this member order). */
static void reply_lines(struct req *r, const struct sched_apply_lines *l, json_t *warnings,
                        const char *headers)
{
    int created = 0;
    struct store_jw w = STORE_JW_INIT;
    store_jw_lit(&w, "{\"results\":[");
    for (size_t i = 0; i < l->n; i++) {
        const struct sched_apply_line *x = &l->v[i];
        if (i)
            store_jw_lit(&w, ",");
        store_jw_lit(&w, "{\"document\":");
        store_jw_int(&w, x->document);
        store_jw_lit(&w, ",\"kind\":");
        store_jw_str(&w, model_kind_name(x->kind));
        store_jw_lit(&w, ",\"name\":");
        store_jw_str(&w, x->name);
        store_jw_lit(&w, ",\"action\":");
        store_jw_str(&w, x->action);
        store_jw_lit(&w, "}");
        created |= !strcmp(x->action, "created");
    }
    store_jw_lit(&w, "]");
    if (json_array_size(warnings)) {
        store_jw_lit(&w, ",\"warnings\":");
        store_jw_value(&w, warnings, 0);
    }
    store_jw_lit(&w, "}\n"); /* as api__reply_json_extra ends a reply */
    api__reply_raw(r, created ? 201 : 200, "application/json", w.buf, w.len, headers);
    store_jw_release(&w);
}

/* The request's manifest into *m, parsed and (unless status) validated, with the dropped
 * fields' warnings in *warnings (new); an empty body is an empty manifest when may_be_empty.
 * The time taken reading the body, parsing and validating goes to ns[SCHED_APPLY_BODY..
 * SCHED_APPLY_VALIDATE]. Returns 0, or replies 400 / 413 / 415 naming what is wrong and
 * returns -1. */
static int manifest_or_reply(struct req *r, int status, int may_be_empty, struct model_manifest *m,
                             json_t **warnings, int64_t *ns)
{
    int64_t t = clock_mono_ns();
    struct err err = ERR_INIT;
    enum model_format fmt;
    enum model_fields mode = MODEL_FIELDS_STRICT;
    json_t *errors = NULL;
    size_t len = 0;
    int rc = -1;

    *warnings = json_array();
    if (format_or_reply(r, &fmt) < 0 || (!status && fields_or_reply(r, &mode) < 0))
        return -1;
    char *body = api__body_or_reply(r, &len);
    if (!body)
        return -1;
    t = lap(&ns[SCHED_APPLY_BODY], t);
    if (blank(body, len)) {
        if (may_be_empty)
            rc = 0;
        else
            api__reply_errorf(r, ERR_INVALID,
                              "the request body is empty: send YAML or JSON manifests");
        goto out;
    }
    const char *nul = memchr(body, '\0', len);
    if (nul) {
        /* the parsers would stop there and blame the end of the input */
        api__reply_errorf(r, ERR_INVALID, "the request body holds a NUL byte at offset %zu",
                          (size_t)(nul - body));
        goto out;
    }
    if (model_manifest_parse(body, len, fmt, m, &err) < 0) {
        api__reply_error_extra(r, &err, json_pack("{s:[{s:s}]}", "errors", "message", err.msg));
        goto out;
    }
    t = lap(&ns[SCHED_APPLY_PARSE], t);
    if (m->n == 0 && !may_be_empty) {
        api__reply_errorf(r, ERR_INVALID, "the manifest holds no documents");
        goto out;
    }
    if (depth_or_reply(r, m) < 0)
        goto out;
    errors = json_array();
    if (!status && model_validate_all(m, body, len, mode, errors, *warnings) > 0) {
        size_t n = json_array_size(errors);
        err_set(&err, ERR_INVALID, "%zu error%s", n, n == 1 ? "" : "s");
        api__reply_error_extra(r, &err, json_pack("{s:O}", "errors", errors));
        goto out;
    }
    lap(&ns[SCHED_APPLY_VALIDATE], t);
    rc = 0;
out:
    json_decref(errors);
    free(body);
    return rc;
}

/* POST /api/v1/manifests, and with status set POST /api/v1/pods/status: the same bodies,
 * but each document's status replaces a stored pod's (sched_apply_status_by validates the
 * pods merged, so the documents are not validated alone). */
static void apply(struct req *r, int status)
{
    struct model_manifest m = {0};
    struct err err = ERR_INIT;
    struct sched_apply_lines lines = {0};
    json_t *warnings = NULL;
    char *headers = NULL;
    int changed = 0;
    int64_t ns[SCHED_APPLY_PHASES] = {0};

    if (manifest_or_reply(r, status, 0, &m, &warnings, ns) < 0)
        goto out;
    struct sched_caller by = api__caller(r);
    if (sched_apply_lines(r->api->sched, &m, clock_now_ms(), &by, status, &lines, &err) < 0) {
        api__reply_error(r, &err);
        goto out;
    }
    changed = 1;
    int64_t t = clock_mono_ns();
    headers = warning_headers(warnings);
    reply_lines(r, &lines, warnings, headers);
    lap(&ns[SCHED_APPLY_REPLY], t);
    /* the parts between, sched_apply_lines timed */
    static const enum sched_apply_phase ours[] = {SCHED_APPLY_BODY, SCHED_APPLY_PARSE,
                                                  SCHED_APPLY_VALIDATE, SCHED_APPLY_REPLY};
    for (size_t i = 0; i < sizeof(ours) / sizeof(*ours); i++)
        sched_apply_timed(r->api->sched, ours[i], ns[ours[i]]);
out:
    sched_apply_lines_release(&lines);
    free(headers);
    json_decref(warnings);
    model_manifest_free(&m);
    /* The cycle the change wakes runs after the apply's own work (its reply, freeing the
     * parsed manifest: 10 ms for 9,000 objects) instead of beside it on the same cores. */
    if (changed)
        api__changed(r->api);
}

/* The comma-separated list of query parameter name into *items (new strings, *n of them;
 * none when absent). Returns 0, or replies 400 (an empty item) and returns -1. */
static int list_or_reply(struct req *r, const char *name, char ***items, size_t *n)
{
    char *s = NULL;
    *items = NULL;
    *n = 0;
    if (api__query_str_or_reply(r, name, &s) < 0)
        return -1;
    for (char *p = s, *tok; p; p = tok ? tok + 1 : NULL) {
        tok = strchr(p, ',');
        size_t len = tok ? (size_t)(tok - p) : strlen(p);
        if (len == 0) {
            api__reply_errorf(r, ERR_INVALID, "query parameter '%s': an empty item in '%s'", name,
                              s);
            free(s);
            return -1;
        }
        *items = xrealloc(*items, (*n + 1) * sizeof(**items));
        (*items)[(*n)++] = xstrndup(p, len);
    }
    free(s);
    return 0;
}

static void free_list(char **items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(items[i]);
    free(items);
}

/* ?delete=KIND/NAME,... into drops (keys borrowed from items). 0, or replies 400. */
static int drops_or_reply(struct req *r, char **items, size_t n, struct sched_whatif_drop *drops)
{
    for (size_t i = 0; i < n; i++) {
        char *slash = strchr(items[i], '/');
        struct err err = ERR_INIT;
        if (slash)
            *slash = '\0';
        if (!slash || !slash[1] || model_kind_from_resource(items[i], &drops[i].kind) < 0) {
            if (slash)
                *slash = '/';
            err_setf(&err, ERR_INVALID, "delete",
                     "query parameter 'delete': '%s' is not KIND/NAME (node/n1, pod/ns/name, "
                     "podgroup/ns/name, queue/q, ...)",
                     items[i]);
            api__reply_error(r, &err);
            return -1;
        }
        drops[i].key = slash + 1;
    }
    return 0;
}

/* POST /api/v1/whatif: the body's manifest (may be empty), ?cordon=NODE,... and
 * ?delete=KIND/NAME,..., answered with what the next cycle would do (sched_whatif). */
void api__whatif(struct req *r)
{
    struct model_manifest m = {0};
    struct err err = ERR_INIT;
    json_t *warnings = NULL, *out = NULL;
    char **cordon = NULL, **del = NULL;
    size_t ncordon = 0, ndel = 0;
    struct sched_whatif_drop *drops = NULL;

    if (list_or_reply(r, "cordon", &cordon, &ncordon) < 0 ||
        list_or_reply(r, "delete", &del, &ndel) < 0)
        goto out;
    drops = xcalloc(ndel + 1, sizeof(*drops));
    int64_t ns[SCHED_APPLY_PHASES]; /* a what-if is not an apply: not counted */
    if (drops_or_reply(r, del, ndel, drops) < 0 ||
        manifest_or_reply(r, 0, 1, &m, &warnings, ns) < 0)
        goto out;
    if (m.n == 0 && !ncordon && !ndel) {
        api__reply_errorf(
            r, ERR_INVALID,
            "nothing to try: send manifests, ?cordon=NODE,... or ?delete=KIND/NAME,...");
        goto out;
    }
    struct sched_whatif in = {&m, (const char *const *)cordon, ncordon, drops, ndel};
    if (sched_whatif(r->api->sched, &in, clock_now_ms(), &out, &err) < 0) {
        api__reply_error(r, &err);
        goto out;
    }
    if (json_array_size(warnings))
        json_object_set(out, "warnings", warnings);
    api__reply_json(r, 200, out);
out:
    free_list(cordon, ncordon);
    free_list(del, ndel);
    free(drops);
    json_decref(warnings);
    model_manifest_free(&m);
}

void api__manifests_apply(struct req *r)
{
    apply(r, 0);
}

void api__pods_status(struct req *r)
{
    apply(r, 1);
}
