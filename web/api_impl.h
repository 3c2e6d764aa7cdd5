/*
 * api_impl.h - web/ internals: the api handle (struct api) and one request (struct req),
 * which every part above the front end shares. Its parts, from the bottom up; each calls
 * only the parts below it, and each has its header:
 *
 *   utf8.c (utf8.h), tls.c (tls.h)     text; the TLS files (tls.c reads only api->tls)
 *   front*.c (front.h, front_req.h,     the public listener: reads whole requests, relays
 *     front_msg.h, front_impl.h)          them to civetweb; knows no route, reply or handler
 *   roles.c, limits.c, tokens.c         role names, rate buckets, the tokens file (access.h;
 *                                         roles in api.h)
 *   headers.c, reply.c, edge.c (http.h) reading a request and replying; checks before routing
 *   auth.c (access.h)                   who is calling and may they; refusals
 *   read_make.c, readcache.c, reads.c   the scheduler's read routes: made, cached, replied
 *     (cached_reads.h)
 *   page.c, list.c, objects.c (lists.h) lists and pagination, generic reads and deletes
 *   one file per resource (handlers.h)  the handlers the route table names
 *   routes.c (routes.h)                 the one route table and the way through it
 *   backend.c, front_answer.c (serve.h) the two threads that serve a request: civetweb's
 *                                         worker, or the front end's own for cached reads
 *   start.c                             api_start / api_stop (api.h): builds and wires it all
 *
 * Ownership: struct api is made by api_start and freed by api_stop; sched and st are
 * borrowed. A struct req lives on the stack of the thread serving the request (civetweb's
 * worker, or the front end's thread with conn NULL) and is borrowed by every call made for
 * it; its strings are borrowed from that thread's request unless marked owned. Counters
 * marked atomic are read and written with __atomic builtins; everything else in struct api
 * is set before the server starts and only read after, but read_only (under ro_mu).
 */
#ifndef MUSTER_WEB_API_IMPL_H
#define MUSTER_WEB_API_IMPL_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "model.h"

struct mg_connection;
struct mg_context;
struct api__tls;
struct api__front;
struct ssl_ctx_st;
struct api_tokens;
struct api_limits;
struct api_authcache;
struct api_readcache;
struct sched;
struct store;

/* Why a request was refused: X(enum suffix, metric label, HTTP status). */
#define API_REFUSED_MAP(X)                                                                         \
    X(UNAUTHENTICATED, "unauthenticated", 401)                                                     \
    X(FORBIDDEN, "forbidden", 403)                                                                 \
    X(RATE_LIMITED, "rate_limited", 429)                                                           \
    X(AUTH_FAILURES, "auth_failures", 429)

enum api_refused {
#define API__REFUSED_ENUM(name, label, status) API_REFUSED_##name,
    API_REFUSED_MAP(API__REFUSED_ENUM)
#undef API__REFUSED_ENUM
        API_REFUSED_COUNT
};

struct api {
    struct mg_context *ctx;
    struct sched *sched;
    struct store *st;
    char *token;               /* the legacy single token, NULL when not set */
    struct api_tokens *tokens; /* the tokens file, NULL when not set */
    api_authenticate_fn authenticate;
    void *authenticate_ctx;
    struct api_authcache *authcache; /* results of authenticate */
    struct api_readcache *readcache; /* answers of the scheduler's read routes */
    double timeseries_interval;      /* api_options.timeseries_interval */
    int auth_on;                     /* any credential source is configured */
    int auth_reads;
    struct api_rate rate[API_ROLE_COUNT];
    struct api_rate auth_failures;
    struct api_limits *per_identity;     /* buckets by identity name */
    struct api_limits *per_address;      /* bad-credential buckets by client address */
    uint64_t refused[API_REFUSED_COUNT]; /* atomic */
    size_t body_limit;
    enum model_fields field_validation; /* the default of ?fieldValidation= */
    char *ui_dir;
    struct cpus front_cpus; /* the remaker's CPUs (api_options) */
    void (*on_change)(void *ctx);
    void *on_change_ctx;
    json_t *(*sources)(void *ctx);
    void *sources_ctx;
    json_t *(*leader)(void *ctx); /* NULL: standalone */
    void *leader_ctx;
    char *allowed_hosts;   /* Host names answered, comma separated; "*": any */
    char *cors_origins;    /* origins allowed to call cross-origin, comma separated; NULL: none */
    struct api__tls *tls;  /* NULL: plain HTTP */
    char *headers;         /* api__security_headers, with HSTS over HTTPS */
    pthread_mutex_t ro_mu; /* guards read_only */
    char *read_only;       /* NULL: writable; else why not (api_set_read_only) */
    json_t *(*audit_health)(void *ctx);
    void *audit_health_ctx;
    json_t *(*accounting)(void *ctx); /* api_options.accounting */
    void *accounting_ctx;
    const struct store_audit_key *audit_key;
    int (*audit_witness)(void *ctx, struct store_ckpt *out, struct err *err);
    void *audit_witness_ctx;
    struct api__front *front;   /* the public listener (front.h) */
    struct ssl_ctx_st *ssl_ctx; /* the front end's TLS, NULL: plain HTTP */
    char front_secret[65];      /* X-Muster-Front's proof, hex, fresh each start */
    int backend_port;           /* civetweb's, on 127.0.0.1 */
    int port;                   /* the front end's */
    char host[64];              /* address listened on, as configured ("0.0.0.0", "127.0.0.1") */
    uint64_t by_class[6];       /* requests by status class (index status / 100), atomic */
    uint64_t requests;          /* atomic */
    uint64_t front_answers; /* requests the front end answered itself (front_answer.c), atomic */
    int front_answers_off;  /* api_front_answers(api, 0): relay every request, atomic */
};

#define API_MAX_PARAMS 4

struct api__fr;

/* One request, as civetweb's worker sees it (conn set) or as the front end's thread sees
 * it (conn NULL: front_answer.c). Every rule reads the request through this view
 * (api__header, api__header_count, the fields below), never through conn, so the two
 * paths share one copy of each rule. */
struct req {
    struct mg_connection *conn; /* NULL on the front end's thread */
    const struct api__fr *fr;   /* the front end's: the request read (headers) */
    struct api *api;
    const char *method;
    const char *path;             /* percent-decoded, without the query; the raw path when
                                     path_error is set */
    const char *raw_path;         /* as sent, without the query (routes match this) */
    const char *path_error;       /* why the raw path does not decode, or NULL */
    const char *query;            /* raw query string or NULL */
    char *params[API_MAX_PARAMS]; /* captured path segments, owned */
    size_t nparams;
    int status;              /* status sent, 0 until a reply started */
    size_t bytes;            /* body bytes sent */
    const char *address;     /* the client's IP address (from the front end) */
    int tls;                 /* the client came over TLS */
    const char *subject;     /* its verified client certificate's subject, or NULL */
    struct api_identity who; /* set by api__auth_or_reply; "anonymous" when auth is off */
    int identified;          /* who names a checked credential */
    size_t cache_slot;       /* 1 + the read-cache slot this request makes, 0: none */
    /* the front end's thread (conn NULL) */
    int direct;    /* answer only what needs no waiting, else set relay */
    int relay;     /* nothing was replied: hand the request to civetweb */
    int close;     /* the answer ends the connection (api__force_close) */
    int head_only; /* only the head is read: refuse what it decides, else set relay */
    char *out;     /* the whole answer, head and body (new) */
    size_t out_len, out_cap;
};

typedef void (*api__handler)(struct req *r);

/* Calls the api's on_change callback, if any: after every successful apply or delete. */
static inline void api__changed(struct api *api)
{
    if (api->on_change)
        api->on_change(api->on_change_ctx);
}

#endif
