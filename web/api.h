/*
 * api.h - musterd's HTTP server: the REST API, /metrics, /healthz and the web UI files.
 *
 * One civetweb context serves every route from one table (routes.c); each
 * resource has its own file. Handlers read stored objects in short store read
 * transactions (copy out, end the transaction, then reply) and change state
 * only through the scheduler (sched_apply, sched_delete, sched_cycle).
 *
 * Calling sequence:
 *
 *     struct api_options o = {.listen = "127.0.0.1:0", .body_limit = 16 << 20};
 *     struct api *api;
 *     api_start(&o, sched, store, &api, &err);     listening when it returns
 *     printf("%d\n", api_port(api));
 *     ...
 *     api_stop(api);                                 waits for in-flight requests
 *
 * Errors are JSON: {"error": {"code": "NotFound", "message": "...", "field": "..."?}}
 * with the status of err_http_status. Unknown routes get 404, a known path with the
 * wrong method 405 with an Allow header.
 *
 * Auth: when token is set, mutating requests (POST, PUT, PATCH, DELETE) need
 * "Authorization: Bearer <token>" (401 otherwise); reads too when auth_reads is set.
 * /healthz and the UI's static files are always open.
 *
 * Field validation: objects sent to POST /api/v1/manifests are checked against the field
 * schema (model_validate_all): ?fieldValidation=Strict|Warn|Ignore, default the option
 * field_validation. Warn answers with one "Warning: 299 - \"...\"" header per dropped
 * unknown field (as kube-apiserver does) and lists them in the reply's "warnings".
 *
 * Threads: handlers run on civetweb's worker threads; sched and store are used
 * concurrently (both are thread-safe). on_change is called from a worker thread after
 * every successful apply or delete.
 */
#ifndef MUSTER_API_H
#define MUSTER_API_H

#include <jansson.h>
#include <stddef.h>

#include "model.h"

struct err;
struct sched;
struct store;
struct api;
struct store_audit_key;

#define API_DEFAULT_BODY_LIMIT ((size_t)16 << 20)

struct api_options {
    const char *listen; /* "ADDR:PORT"; port 0 picks a free port. Default "127.0.0.1:8080" */
    const char *token;  /* NULL or "": no auth */
    int auth_reads;     /* reads need the token too */
    size_t body_limit;  /* request bodies larger than this get 413; 0: API_DEFAULT_BODY_LIMIT */
    /* How unknown fields of applied objects are treated when the request does not say
     * (?fieldValidation=); default MODEL_FIELDS_STRICT. */
    enum model_fields field_validation;
    const char *ui_dir; /* static files; NULL: MUSTER_STATIC_DIR */
    int threads;        /* worker threads; 0: 8 */
    /* Called after every successful apply or delete (the cycle thread's wake-up). */
    void (*on_change)(void *ctx);
    void *on_change_ctx;
    /* GET /api/v1/sources: the state of external sources (the Kubernetes mirror), new
     * JSON; NULL when musterd mirrors nothing ({"sources": []}). */
    json_t *(*sources)(void *ctx);
    void *sources_ctx;
    /* The audit guard (server/): with read_only set (the reason, copied), every mutating
     * request (POST /api/v1/cycles too) answers 503 Unavailable with it, reads still work;
     * api_set_read_only changes it at run time. audit_health makes the "audit" member of
     * GET /api/v1/health (new JSON; NULL: {"checkpoints": false}). audit_key (borrowed,
     * must outlive the api; NULL: none) lets /api/v1/audit/verify check signatures and
     * POST /api/v1/audit/prune check the checkpoint it prunes behind. */
    const char *read_only;
    json_t *(*audit_health)(void *ctx);
    void *audit_health_ctx;
    const struct store_audit_key *audit_key;
};

/* Starts the server. sched and st are borrowed and must outlive the api. The options'
 * strings are copied. Returns 0, ERR_INVALID (bad listen address) or ERR_IO (cannot
 * listen: "cannot listen on '127.0.0.1:80': ..."). *out new; release with api_stop. */
int api_start(const struct api_options *opts, struct sched *sched, struct store *st,
              struct api **out, struct err *err);
/* The port actually listened on (useful after port 0). */
int api_port(const struct api *api);
/* Makes the API read-only with reason (copied), or writable again with NULL. Thread-safe. */
void api_set_read_only(struct api *api, const char *reason);
/* Stops accepting, waits for running requests to finish and frees the api. NULL-safe. */
void api_stop(struct api *api);

#endif
