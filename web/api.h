/*
 * api.h - musterd's HTTP server: the REST API, /metrics, /healthz and the web UI files.
 *
 * The listen port belongs to a front end (front.h: libevent, its own thread) that
 * terminates TLS and reads each request whole under time and size limits before one
 * civetweb context on 127.0.0.1 serves it from one route table (routes.c); each
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
 * (a follower's 503 adds "role" and "leader" beside "error")
 * with the status of err_http_status. Unknown routes get 404, a known path with the
 * wrong method 405 with an Allow header.
 *
 * The edge (edge.c, docs/security.md): ambiguous framing (two Content-Lengths, one
 * beside Transfer-Encoding), too many headers, an unknown Host, a foreign Origin, a
 * mutation without a JSON or YAML Content-Type and a path with %00 or a %2F inside a
 * name are refused before any handler runs. Connections are kept alive.
 *
 * Identities and roles (auth.c; docs/security.md "Identities and roles"): a bearer token
 * names an identity with a role (enum api_role). Credentials come from the tokens file
 * (tokens.c: SHA-256 of each token, reloaded when the file changes), the single legacy
 * token (identity "token", role admin) and, when set, an external authenticator (the
 * Kubernetes TokenReview + SubjectAccessReview of clients/). Auth is on when any of them
 * is configured. Each route names the role it needs (routes.c); a mutation always needs
 * it, a read only with auth_reads, except a read that needs more than viewer (audit
 * verification). No or an unknown credential: 401; a role too low: 403; over the role's
 * rate or, for an address that sent too many bad credentials, over auth_failures: 429 with
 * Retry-After. Refusals are counted in /metrics (muster_http_refused_total{reason}) and
 * logged. /healthz and the UI's static files are always open.
 *
 * Field validation: objects sent to POST /api/v1/manifests are checked against the field
 * schema (model_validate_all): ?fieldValidation=Strict|Warn|Ignore, default the option
 * field_validation. Warn answers with one "Warning: 299 - \"...\"" header per dropped
 * unknown field (as kube-apiserver does) and lists them in the reply's "warnings".
 *
 * TLS: with tls_cert and tls_key set the port speaks HTTPS only (TLS 1.2 and 1.3, the
 * ciphers of web/tls.c); with tls_client_ca too, a handshake without a client certificate
 * signed by that CA is refused. The files are read at api_start (a bad file fails the
 * start) and again by api_tls_reload; each new handshake gets the files loaded last,
 * while the listening socket and established connections stay as they are.
 *
 * Threads: handlers run on civetweb's worker threads; sched and store are used
 * concurrently (both are thread-safe). on_change is called from a worker thread after
 * every successful apply or delete.
 */
#ifndef MUSTER_API_H
#define MUSTER_API_H

#include <jansson.h>
#include <stddef.h>

#include "cpus.h"
#include "model.h"

struct err;
struct sched;
struct store;
struct api;
struct store_audit_key;
struct store_ckpt;

#define API_DEFAULT_BODY_LIMIT ((size_t)16 << 20)
/* Request bodies held at once by the front end (api_options.body_memory). */
#define API_DEFAULT_BODY_MEMORY ((size_t)64 << 20)

/* Roles: X(enum suffix, name, what it may do), lowest first: a role may do what the roles
 * before it may. The one list behind the route table, the tokens file, the config keys
 * rate_limit_<role> and docs/security.md. */
#define API_ROLE_MAP(X)                                                                            \
    X(NONE, "none", "nothing but /healthz and the UI's files")                                     \
    X(VIEWER, "viewer", "every read and the UI")                                                   \
    X(OPERATOR, "operator", "apply, delete, cycles and what-if")                                   \
    X(ADMIN, "admin", "everything, including audit verification and configuration")

enum api_role {
#define API__ROLE_ENUM(name, str, what) API_ROLE_##name,
    API_ROLE_MAP(API__ROLE_ENUM)
#undef API__ROLE_ENUM
        API_ROLE_COUNT
};

/* "viewer", ...; "unknown" out of range. Static storage. */
const char *api_role_name(enum api_role role);
/* Parses a role name other than "none". Returns 0 or ERR_INVALID ("unknown role 'x' (one
 * of viewer, operator, admin)"). */
int api_role_parse(const char *name, enum api_role *out, struct err *err);

/* A token bucket: per_second refill, burst capacity. per_second 0: unlimited. */
struct api_rate {
    double per_second;
    double burst; /* 0: max(1, per_second) */
};
/* "RATE" or "RATE/BURST" ("20", "20/40"; 0 is unlimited). Returns 0 or ERR_INVALID. */
int api_rate_parse(const char *s, struct api_rate *out, struct err *err);

/* Who a credential is. */
struct api_identity {
    char name[256];
    enum api_role role; /* API_ROLE_NONE: known, but may do nothing */
    char source[32];    /* "tokens-file", "client-cert", "token", "kubernetes", "anonymous" */
};

/* An external authenticator: 0 with *out filled (role NONE when it may do nothing),
 * ERR_UNAUTHORIZED when the token is not valid, another error when it cannot tell (the
 * request then gets 503). Called from worker threads, concurrently; results are cached
 * by the api for API_AUTH_CACHE_MS. */
typedef int (*api_authenticate_fn)(void *ctx, const char *token, struct api_identity *out,
                                   struct err *err);
#define API_AUTH_CACHE_MS 10000

struct api_options {
    const char *listen;      /* "ADDR:PORT"; port 0 picks a free port. Default "127.0.0.1:8080" */
    const char *token;       /* NULL or "": no legacy token; else identity "token", admin */
    const char *tokens_file; /* NULL or "": none; YAML or JSON (see tokens.c) */
    int auth_reads;          /* reads need a credential (viewer) too */
    struct api_rate rate[API_ROLE_COUNT]; /* requests per identity, by its role */
    struct api_rate auth_failures;        /* bad credentials per client address;
                                             per_second 0: API_AUTH_FAILURES_DEFAULT */
    api_authenticate_fn authenticate;     /* NULL: none */
    void *authenticate_ctx;
    size_t body_limit; /* request bodies larger than this get 413; 0: API_DEFAULT_BODY_LIMIT */
    /* Request bodies held at once, all connections (read and waiting for their answer);
     * past it 503. 0: API_DEFAULT_BODY_MEMORY; never less than body_limit. */
    size_t body_memory;
    /* How unknown fields of applied objects are treated when the request does not say
     * (?fieldValidation=); default MODEL_FIELDS_STRICT. */
    enum model_fields field_validation;
    const char *ui_dir; /* static files; NULL: MUSTER_STATIC_DIR */
    /* Host header names answered (comma separated, "*": any); others get 421. NULL:
     * localhost, 127.0.0.1, ::1 and the listen address unless it is a wildcard. */
    const char *allowed_hosts;
    /* Origins allowed to call cross-origin (CORS), comma separated; NULL: none. A request
     * whose Origin is neither its own nor listed gets 403. */
    const char *cors_origins;
    int threads; /* civetweb's worker threads; 0: 32. One runs each request once the
                  * front end has read it whole (docs/security.md "Slow clients") */
    /* The front end's limits; 0: the API_DEFAULT_* below. head: the request line and
     * headers (and a TLS handshake), from the request's first byte; body: the whole body,
     * however steadily it arrives; both answer 408. idle: a kept-alive connection between
     * requests. write: an answer the client does not read. max_connections: open client
     * connections; more are closed at accept. */
    int head_timeout_ms;
    int body_timeout_ms;
    int idle_timeout_ms;
    int write_timeout_ms;
    int max_connections;
    /* The front end's thread runs SCHED_FIFO (base/thread.h thread_interactive): refused by
     * api_check when the kernel would refuse it. */
    int front_realtime;
    /* The CPUs of the front end's thread and the read cache's remaker (front_cpus, cpus.h);
     * unset: any. api_check refuses CPUs the process may not run on. */
    struct cpus front_cpus;
    /* Seconds between time series samples (GET /api/v1/timeseries says it); 0: none. */
    double timeseries_interval;
    /* Called after every successful apply or delete (the cycle thread's wake-up). */
    void (*on_change)(void *ctx);
    void *on_change_ctx;
    /* GET /api/v1/sources: the state of external sources (the Kubernetes mirror), new
     * JSON; NULL when musterd mirrors nothing ({"sources": []}). */
    json_t *(*sources)(void *ctx);
    void *sources_ctx;
    /* Leader election (clients/kube.h kube_leader_json): the election's state, new JSON
     * {"role": "leader"|"follower", "state": "leading"|"syncing"|"following", "leader":
     * name|null, "leaseTransitions", "acquisitions", "losses", "renewFailures", ...}; NULL
     * callback: musterd runs alone (role "standalone"). While the state is not "leading",
     * every mutating request (POST /api/v1/cycles too) answers 503 naming the leader;
     * reads, /healthz, /readyz and the UI work as on the leader. */
    json_t *(*leader)(void *ctx);
    void *leader_ctx;
    /* HTTPS: PEM files (the certificate file may carry the chain after the leaf; the key
     * must be unencrypted). All NULL: plain HTTP. tls_client_ca: PEM CA certificates whose
     * signature a client certificate must carry (mTLS); NULL: none asked for. */
    const char *tls_cert;
    const char *tls_key;
    const char *tls_client_ca;
    /* The audit guard (server/): with read_only set (the reason, copied), every mutating
     * request (POST /api/v1/cycles too) answers 503 Unavailable with it, reads still work;
     * api_set_read_only changes it at run time. audit_health makes the "audit" member of
     * GET /api/v1/health (new JSON; NULL: {"checkpoints": false}). audit_key (borrowed,
     * must outlive the api; NULL: none) lets /api/v1/audit/verify check signatures and
     * POST /api/v1/audit/prune check the checkpoint it prunes behind. audit_witness (ctx:
     * audit_health_ctx; NULL: no witness) gives the newest witness checkpoint: 1 found, 0
     * none, or ERR_*; /api/v1/audit/verify holds the log to it as the start-up check does. */
    const char *read_only;
    json_t *(*audit_health)(void *ctx);
    void *audit_health_ctx;
    const struct store_audit_key *audit_key;
    int (*audit_witness)(void *ctx, struct store_ckpt *out, struct err *err);
    /* Accounting (server/, ship.h): the shipper's state as new JSON, served as the
     * "accounting" member of /healthz and /api/v1/health and as muster_accounting_* in
     * /metrics. NULL: accounting is off. */
    json_t *(*accounting)(void *ctx);
    void *accounting_ctx;
};

#define API_DEFAULT_HEAD_TIMEOUT_MS 10000
#define API_DEFAULT_BODY_TIMEOUT_MS 60000
#define API_DEFAULT_IDLE_TIMEOUT_MS 5000
#define API_DEFAULT_WRITE_TIMEOUT_MS 30000
#define API_DEFAULT_MAX_CONNECTIONS 1000

/* 1 bad credential a second, 10 at once: the 11th wrong token in a row gets 429 */
#define API_AUTH_FAILURES_DEFAULT ((struct api_rate){1.0, 10.0})

/* Starts the server. sched and st are borrowed and must outlive the api. The options'
 * strings are copied. Returns 0, ERR_INVALID (bad listen address; a tokens file that does
 * not parse: "tokens file 'f': line 3: ...") or ERR_IO (cannot listen: "cannot listen on
 * '127.0.0.1:80': ...", cannot read the tokens file). *out new; release with api_stop. */
int api_start(const struct api_options *opts, struct sched *sched, struct store *st,
              struct api **out, struct err *err);
/* (api_start also returns ERR_IO / ERR_INVALID naming the TLS file that does not load.) */
/* What api_start would refuse in opts before it listens (the listen address, the tokens
 * file, the TLS files), refused the same way, with nothing started or kept: musterd asks
 * before it opens the store, so that bad input leaves the data directory as it was. */
int api_check(const struct api_options *opts, struct err *err);
/* The port actually listened on (useful after port 0). */
int api_port(const struct api *api);
/* "https" when the api serves TLS, else "http" (static string). */
const char *api_scheme(const struct api *api);
/* Reads the TLS files again: always when force, otherwise only when one of them changed
 * (inode, size, mtime or ctime) since the last attempt, so it is cheap to call every
 * second. Returns 1 when new handshakes now get the new files, 0 when there was nothing
 * to do (or the api serves plain HTTP), or ERR_IO / ERR_INVALID when the files do not
 * load or the key does not match: the previous certificate then stays in service. Any
 * thread. */
int api_tls_reload(struct api *api, int force, struct err *err);
/* Makes the API read-only with reason (copied), or writable again with NULL. Thread-safe. */
void api_set_read_only(struct api *api, const char *reason);
/* on (the default): the front end answers cached reads itself (docs/api.md "Answers from
 * the front end"); 0: it hands every request to civetweb's workers (tests compare both). */
void api_front_answers(struct api *api, int on);
/* Stops accepting, waits for running requests to finish and frees the api. NULL-safe. */
void api_stop(struct api *api);

#endif
