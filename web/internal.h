/*
 * internal.h - web/ internals: the api handle, one request, reply helpers and the
 * handlers named in the route table (routes.c).
 *
 * A handler gets a struct req whose path parameters ({ns}, {name}) are already
 * captured and whose query parameters are already checked against the route's list.
 * It must send exactly one reply. Helpers named *_or_reply send the error reply
 * themselves and return NULL (or -1), so handlers read straight down:
 *
 *     json_t *pod = api__object_or_reply(r, MODEL_POD, key);
 *     if (!pod)
 *         return;
 *     api__reply_json(r, 200, pod);
 */
#ifndef MUSTER_WEB_INTERNAL_H
#define MUSTER_WEB_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "err.h"
#include "model.h"
#include "scheduler.h"
#include "store.h"

struct mg_connection;
struct mg_context;

struct api {
    struct mg_context *ctx;
    struct sched *sched;
    struct store *st;
    char *token; /* NULL when auth is off */
    int auth_reads;
    size_t body_limit;
    enum model_fields field_validation; /* the default of ?fieldValidation= */
    char *ui_dir;
    void (*on_change)(void *ctx);
    void *on_change_ctx;
    json_t *(*sources)(void *ctx);
    void *sources_ctx;
    pthread_mutex_t ro_mu; /* guards read_only */
    char *read_only;       /* NULL: writable; else why not (api_set_read_only) */
    json_t *(*audit_health)(void *ctx);
    void *audit_health_ctx;
    const struct store_audit_key *audit_key;
    int port;
    char host[64];        /* address listened on, as configured ("0.0.0.0", "127.0.0.1") */
    uint64_t by_class[6]; /* requests by status class (index status / 100), atomic */
    uint64_t requests;    /* atomic */
};

#define API_MAX_PARAMS 4

struct req {
    struct mg_connection *conn;
    struct api *api;
    const char *method;
    const char *path;             /* URL-decoded, without the query, dot segments removed */
    const char *raw_path;         /* URL-decoded as sent (civetweb's local_uri_raw) or NULL */
    const char *query;            /* raw query string or NULL */
    char *params[API_MAX_PARAMS]; /* captured path segments, owned */
    size_t nparams;
    int status;   /* status sent, 0 until a reply started */
    size_t bytes; /* body bytes sent */
};

typedef void (*api__handler)(struct req *r);

/* ---- routes.c ---- */
void api__dispatch(struct req *r);

/* ---- reply.c ---- */
/* Sends body (stolen) as JSON with status. */
void api__reply_json(struct req *r, int status, json_t *body);
/* Like api__reply_json with extra header lines ("Name: value", separated by "\r\n"; may
 * be NULL). */
void api__reply_json_extra(struct req *r, int status, json_t *body, const char *extra_header);
/* Sends {"error": {"code", "message", "field"?}} with err's HTTP status. */
void api__reply_error(struct req *r, const struct err *err);
/* Like api__reply_error for an ERR_* code and a message. */
void api__reply_errorf(struct req *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Sends an error with extra top-level members merged in (extra stolen, may be NULL). */
void api__reply_error_extra(struct req *r, const struct err *err, json_t *extra);
/* Sends a raw body; extra_header ("Name: value") may be NULL. */
void api__reply_raw(struct req *r, int status, const char *ctype, const char *body, size_t len,
                    const char *extra_header);
/* Chunked streaming: start, any number of chunks (0 or -1 when the client went away),
 * end. */
void api__stream_start(struct req *r, int status, const char *ctype);
int api__stream_chunk(struct req *r, const char *buf, size_t len);
void api__stream_end(struct req *r);
/* Reads the whole request body (new, NUL-terminated), enforcing the body limit:
 * 413 from Content-Length before reading, or while counting a chunked body. */
char *api__body_or_reply(struct req *r, size_t *len);
/* Query parameters. Each returns 0 with *out set (or left at its default when the
 * parameter is absent), or replies 400 naming the parameter and returns -1.
 * api__query_str: *out new or NULL when absent. */
int api__query_str_or_reply(struct req *r, const char *name, char **out);
int api__query_u64_or_reply(struct req *r, const char *name, uint64_t *out);
int api__query_time_or_reply(struct req *r, const char *name, int64_t *out);
/* 1 when s[0..n) is well-formed UTF-8 (no overlongs, no surrogates). */
int api__utf8_valid(const char *s, size_t n);
/* Replaces each byte of s that is not part of well-formed UTF-8 with '?', in place, so
 * that a message quoting client input can always be sent as JSON. */
void api__utf8_scrub(char *s);
/* The header value or NULL (borrowed, valid during the request). */
const char *api__header(struct req *r, const char *name);

/* ---- objects.c: generic reads and deletes ---- */
/* The stored object (new), or replies 404 and returns NULL. */
json_t *api__object_or_reply(struct req *r, enum model_kind kind, const char *key);
/* Lists objects of kind with keys starting with prefix (NULL: all) into {"kind": "<Kind>List",
 * "items": [...]}; keep (may be NULL) filters items: 1 keeps. Replies. */
typedef int (*api__keep_fn)(json_t *obj, void *ctx);
void api__object_list(struct req *r, enum model_kind kind, const char *prefix, api__keep_fn keep,
                      void *ctx);
/* Deletes through the scheduler and replies {"kind", "name", "action": "deleted"}. */
void api__object_delete(struct req *r, enum model_kind kind, const char *key);
/* "ns/name" from the first two path parameters (new). */
char *api__ns_key(struct req *r);
/* Calls the api's on_change callback, if any. */
void api__changed(struct api *api);

/* ---- handlers ---- */
void api__healthz(struct req *r);
void api__metrics(struct req *r);
void api__sources(struct req *r);
void api__manifests_apply(struct req *r);
void api__nodes_list(struct req *r);
void api__node_get(struct req *r);
void api__node_delete(struct req *r);
void api__pods_list(struct req *r);
void api__pod_get(struct req *r);
void api__pod_delete(struct req *r);
void api__podgroups_list(struct req *r);
void api__podgroup_get(struct req *r);
void api__podgroup_delete(struct req *r);
void api__topologies_list(struct req *r);
void api__topology_get(struct req *r);
void api__topology_delete(struct req *r);
void api__topology_tree(struct req *r);
void api__priorityclasses_list(struct req *r);
void api__priorityclass_get(struct req *r);
void api__priorityclass_delete(struct req *r);
void api__queues_list(struct req *r);
void api__queue_get(struct req *r);
void api__queue_delete(struct req *r);
void api__audit_export(struct req *r);
void api__audit_verify(struct req *r);
void api__audit_prune(struct req *r);
void api__health(struct req *r);
void api__jobs_list(struct req *r);
void api__job_get(struct req *r);
void api__job_why(struct req *r);
void api__preemptions_list(struct req *r);
void api__preemption_get(struct req *r);
void api__cycles_run(struct req *r);
/* Serves GET requests outside /api/ from the UI directory; 404 JSON when absent. */
void api__static(struct req *r);

#endif
