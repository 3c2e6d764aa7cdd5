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
struct api__tls;
struct api__front;
struct api__front_info;
struct ssl_ctx_st;
struct api_tokens;
struct api_limits;
struct api_authcache;
struct api_readcache;

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
    const struct store_audit_key *audit_key;
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
    int direct; /* answer only what needs no waiting, else set relay */
    int relay;  /* nothing was replied: hand the request to civetweb */
    int close;  /* the answer ends the connection (api__force_close) */
    char *out;  /* the whole answer, head and body (new) */
    size_t out_len, out_cap;
};

typedef void (*api__handler)(struct req *r);

/* ---- edge.c: checks before routing (docs/security.md, "The HTTP edge") ---- */
/* The header lines every response carries ("Name: value" joined by "\r\n"), without
 * HSTS; api__headers adds it when musterd serves HTTPS. */
extern const char api__security_headers[];
const char *api__headers(const struct api *api);
/* The headers for a context serving HTTPS (tls) or HTTP; new. */
char *api__headers_make(int tls);
/* The default allowed_hosts for a listen address (new): the loopback names, and the
 * listen address unless it is a wildcard. */
char *api__default_hosts(const char *listen_host);
/* 0, or replies 400 / 421 and returns -1: no Host or two, a Host not in allowed_hosts;
 * and, as a second line behind the front end (front_req.c decides framing), more than
 * one Content-Length or Transfer-Encoding, both, a Content-Length that is not one number,
 * a header line civetweb could not read. The connection is closed after a refusal. */
int api__edge_ok(struct req *r);
/* 0 when the request has no Origin, its own origin or one of cors_origins; else replies
 * 403 and returns -1. */
int api__origin_ok(struct req *r);
/* The request's Origin when cors_origins lists it (borrowed), else NULL. */
const char *api__cors_origin(struct req *r);
/* 0 when a mutation's Content-Type is JSON or YAML (a DELETE without a body needs
 * none); else replies 415 and returns -1. */
int api__content_type_ok(struct req *r);
/* 0 with *fmt for a JSON or YAML media type (parameters ignored), -1 otherwise. */
int api__content_format(const char *ctype, enum model_format *fmt);
/* Percent-decodes raw[0..n) into *out (new). -1 with *why (static text) on a '%' not
 * followed by two hex digits or an encoded NUL. */
int api__path_decode(const char *raw, size_t n, char **out, const char **why);
/* Makes the connection close after this reply instead of being kept alive. */
void api__force_close(struct req *r);
/* ---- tls.c ---- */
/* Loads the TLS files of o into *out (new; NULL when o asks for plain HTTP). Returns 0,
 * ERR_INVALID (only one of cert and key, a file that is not PEM, a key that does not
 * match) or ERR_IO (a file that cannot be read). */
int api__tls_open(const struct api_options *o, struct api__tls **out, struct err *err);
/* NULL-safe. Only after the front end has stopped. */
void api__tls_close(struct api__tls *t);
/* The front end's SSL_CTX (*out new, SSL_CTX_free it after the front end stopped): TLS 1.2
 * and 1.3, the ciphers above, each handshake given the files loaded last, client
 * certificates required with tls_client_ca. Returns 0 or ERR_INTERNAL. */
struct ssl_ctx_st;
int api__tls_ctx(struct api__tls *t, struct ssl_ctx_st **out, struct err *err);

/* ---- api.c ---- */
/* Serves r, whose method, raw_path, query, address, tls, subject (and conn or fr) are
 * set: decodes the path, runs api__dispatch, replies 500 when no handler did, and logs the
 * request. With r->direct a request that would have to wait comes back with r->relay set,
 * nothing replied and nothing logged. */
void api__serve(struct req *r);

/* ---- front_answer.c ---- */
/* The front end's answer to a whole request it read (front.h's api__front_answer_fn): the
 * answer text (new) when the request is a read whose answer is in the read cache and may
 * be given without waiting, under every rule a relayed request goes through (api__serve
 * with r->direct); NULL to relay it. */
char *api__front_answer(void *api, const struct api__fr *fr, const struct api__front_info *info,
                        size_t *len, int *keep_alive);

/* ---- routes.c ---- */
void api__dispatch(struct req *r);
/* The pure part of routing (fuzz/fuzz_router.c drives it without a connection). */
/* Why a path cannot name a route or file (static text), or NULL: raw as sent, decoded its
 * api__path_decode. */
const char *api__path_problem(const char *raw, const char *decoded);
/* The index of the route for r->method on r->raw_path, its {x} segments captured raw
 * into r->params; -1 when none, with the methods the path has in allow ("GET, DELETE";
 * empty when the path matches no route). */
int api__route_lookup(struct req *r, char *allow, size_t allow_size);
/* The pattern of route i ("/api/v1/pods/{ns}/{name}"), NULL past the table. */
const char *api__route_pattern(int i);
/* Frees r's captured path parameters. */
void api__params_free(struct req *r);
/* 1 when the front end may answer r, a request for route i, on its own thread: the route's
 * check (api__read_cached, api__audit_small) says it needs no waiting and little work. */
int api__route_front(int i, struct req *r);

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
 * 413 from Content-Length before reading, or while counting a chunked body. Answers
 * (the front end answered "Expect: 100-continue" and has read the whole body already). */
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
/* The header value or NULL (borrowed, valid during the request): the first of that name. */
const char *api__header(struct req *r, const char *name);
/* How many header lines of that name the request has. */
int api__header_count(struct req *r, const char *name);

/* ---- reads.c: the answers of the scheduler's read routes, by resourceVersion ---- */
enum api_read_kind { API_READ_JOBS, API_READ_JOB, API_READ_WHY, API_READ_TOPOLOGY };
/* One read of the scheduler's view, as parsed from its request: enough to make its answer
 * again without the request (the background remaker keeps a copy). */
struct api_read {
    enum api_read_kind kind;
    char *id;                     /* JOB, WHY: "ns/name" */
    char *state;                  /* JOBS: a state name or NULL */
    char *after;                  /* JOBS: the page starts after this id, or NULL */
    size_t limit;                 /* JOBS: 0: no limit */
    int paged;                    /* JOBS: limit or continue given: metadata.continue */
    char *like;                   /* TOPOLOGY: topo.like points here */
    struct sched_topo_query topo; /* TOPOLOGY */
};
/* Makes q's answer from the scheduler's view (takes its lock): 0 with *out new, or the
 * scheduler's ERR_* with err. */
int api__read_make(struct api *api, const struct api_read *q, json_t **out, struct err *err);
/* The answers of n reads (out[i] new, or NULL where api__read_make fails), the why
 * documents among them in one sched_whys. */
void api__read_make_many(struct api *api, size_t n, const struct api_read *const *q, json_t **out);
/* A deep copy of q (new) / frees one (NULL-safe). */
struct api_read *api__read_copy(const struct api_read *q);
void api__read_free(struct api_read *q);
/* Replies q's answer (q borrowed) as its ?resourceVersion= asks (reads.c's opening
 * comment), or 400 (a malformed resourceVersion), 504 (one beyond the store's last commit)
 * or the scheduler's error. */
void api__read_reply(struct req *r, const struct api_read *q);
/* 1 when r (a GET or HEAD on a cached read route) would be answered from the read cache
 * now, without waiting: its answer is stored, new enough for its resourceVersion, and
 * gzipped already when r accepts gzip. Changes nothing, replies nothing. */
int api__read_cached(struct req *r);

/* ---- readcache.c: the answers of reads.c kept, shared and remade ---- */
/* An encoded answer, shared by reference count. */
struct api_text;
void api__text_put(struct api_text *t); /* drops a reference; NULL-safe */
/* The text (borrowed, valid while the reference is held), its length and the store's
 * transaction id it was made at (txn may be NULL). */
const char *api__text_data(const struct api_text *t, size_t *len, uint64_t *txn);
/* The text gzipped (borrowed likewise), compressed by the first caller only. */
const char *api__text_gzip(struct api_text *t, size_t *len);
/* The gzipped text if it is made already, else NULL; never waits, never compresses. */
const char *api__text_gzip_ready(struct api_text *t, size_t *len);
struct api_readcache *api__readcache_new(void);
void api__readcache_free(struct api_readcache *c); /* NULL-safe; stops the remaker */
/* The store's last committed transaction id (0 when it cannot be read: nothing cached).
 * Read it before making the answer that is to be cached with it. */
uint64_t api__readcache_txn(struct api *api);
/* The answer stored for key made at min_txn or later (a new reference); one older than
 * now_txn is queued to be remade. NULL when there is none: r then holds key's slot (other
 * requests for it wait) until api__readcache_put or api__readcache_release (api__dispatch
 * calls it after every handler). */
struct api_text *api__readcache_get(struct req *r, const char *key, uint64_t min_txn,
                                    uint64_t now_txn);
/* 1 when api__readcache_get(key, min_txn) would return an answer now (with its gzip form
 * made, when gz), without waiting; changes nothing. With r->direct api__readcache_get
 * never waits or claims: NULL then means "not stored" (r->cache_slot stays 0). */
int api__readcache_ready(struct api *api, const char *key, uint64_t min_txn, int gz);
/* body (stolen) encoded with metadata.resourceVersion = txn: stored for key with q
 * (copied, to remake it) unless a newer answer is stored, and returned (a new reference;
 * NULL when body cannot be encoded). Releases r's slot. */
struct api_text *api__readcache_put(struct req *r, const char *key, uint64_t txn,
                                    const struct api_read *q, json_t *body);
/* Gives up r's slot, if it holds one, waking the requests waiting for it. */
void api__readcache_release(struct req *r);
/* The cache's counters in the Prometheus text format into buf. */
void api__readcache_metrics(struct api *api, char *buf, size_t n);

/* ---- list.c: a list answer encoded item by item, sent chunked when big ---- */
struct api_list {
    struct req *r;
    char *buf;
    size_t len, cap;
    size_t n; /* items written */
};
/* Calling sequence: begin, any number of items (inside a read transaction if need be:
 * nothing is sent before end), then end (after the transaction) or fail. */
void api__list_begin(struct api_list *l, struct req *r, const char *api_version, const char *kind);
/* Encodes item (borrowed) into the list. Returns 0. */
int api__list_item(struct api_list *l, json_t *item);
/* Closes the list, with "metadata" (stolen, may be NULL), and sends it: with a
 * Content-Length up to 64 KiB, chunked above. */
void api__list_end(struct api_list *l, json_t *metadata);
/* Replies err instead of the list. */
void api__list_fail(struct api_list *l, const struct err *err);

/* ---- page.c: ?limit= and ?continue= on lists (Kubernetes pagination) ---- */
#define API_PAGE_MAX 10000 /* the largest limit */
struct api_page {
    const char *list; /* the list the tokens belong to ("pods"), borrowed */
    size_t limit;     /* 0: no limit */
    char *after;      /* the page starts after this key (new), NULL: at the first */
    int on;           /* limit or continue was given: the answer carries "metadata" */
    size_t n;         /* items taken */
    char *last;       /* the key of the last item taken (new) */
    int more;         /* an item was offered past the limit */
};
/* Reads limit and continue into *p: 0, or replies 400 naming the parameter (a limit that
 * is not 1..API_PAGE_MAX, a token that does not decode or is another list's) and returns
 * -1. Release *p with api__page_release either way. */
int api__page_or_reply(struct req *r, const char *list, struct api_page *p);
/* Offers the next item (keys strictly ascending, all after p->after): 1 to put it on the
 * page, 0 when the page is full (p->more is then set; offer nothing more). */
int api__page_take(struct api_page *p, const char *key);
/* {"continue": token} when p->more, else {} (new). */
json_t *api__page_meta(const struct api_page *p);
/* The continue token for the page of list that ends at last_key (new). */
char *api__page_token(const char *list, const char *last_key);
void api__page_release(struct api_page *p);

/* ---- auth.c: identities, roles and rate limits ---- */
/* 1 when the method changes state (anything but GET, HEAD, OPTIONS). */
int api__mutating(const char *method);
/* Decides whether r may run a route that needs role (its method says whether it mutates):
 * 0 with r->who set, or replies 401 / 403 / 429 / 503, counts and logs the refusal and
 * returns -1. */
int api__auth_or_reply(struct req *r, enum api_role role);
/* The caller of r for the audit log's "by" (borrows r's strings). */
struct sched_caller api__caller(const struct req *r);
void api__auth_free(struct api *api);
/* muster_http_refused_total{reason} in the Prometheus text format into buf. */
void api__auth_metrics(struct api *api, char *buf, size_t n);
/* Sets up the api's credential sources and limits from opts. 0, ERR_INVALID or ERR_IO. */
int api__auth_init(struct api *api, const struct api_options *opts, struct err *err);

/* ---- tokens.c: the tokens file ---- */
/* Loads path: YAML or JSON, {"tokens": [{"name", "role", "sha256" | "subject"}]}. Returns 0 or
 * ERR_IO / ERR_INVALID ("tokens file 'f': line 4: 'role' must be one of viewer, operator,
 * admin, not 'root'"). *out new. */
int api__tokens_open(const char *path, struct api_tokens **out, struct err *err);
void api__tokens_free(struct api_tokens *t);
/* Finds the entry whose sha256 is the SHA-256 of token: 0 with *out set, or
 * ERR_UNAUTHORIZED. First reloads the file when it changed (looked at no more than once a
 * second); a file that does not load is logged and the entries before it stay. */
int api__tokens_find(struct api_tokens *t, const char *token, struct api_identity *out);
/* Finds the entry whose subject is subject (a verified client certificate's, RFC 2253): 0
 * with *out set (source "client-cert"), or ERR_UNAUTHORIZED. Reloads as api__tokens_find. */
int api__tokens_find_subject(struct api_tokens *t, const char *subject, struct api_identity *out);

/* ---- limits.c: token buckets by key ---- */
/* A fixed number of buckets; when full, the one touched least recently is reused. */
struct api_limits *api__limits_new(size_t slots);
void api__limits_free(struct api_limits *l);
/* Takes one token from key's bucket. Returns 0, or the whole seconds (>= 1) until one is
 * there (nothing taken). rate.per_second 0: always 0. */
int api__limits_take(struct api_limits *l, const char *key, struct api_rate rate, int64_t now_ns);
/* Like api__limits_take without taking. */
int api__limits_peek(struct api_limits *l, const char *key, struct api_rate rate, int64_t now_ns);

/* ---- objects.c: generic reads and deletes ---- */
/* The stored object (new), or replies 404 and returns NULL. */
json_t *api__object_or_reply(struct req *r, enum model_kind kind, const char *key);
/* Lists objects of kind with keys starting with prefix (NULL: all) into {"kind": "<Kind>List",
 * "items": [...]}, a page of them with ?limit= / ?continue= (page.c), written item by item
 * (list.c); keep (may be NULL) filters items: 1 keeps. Replies. */
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
void api__readyz(struct req *r);
/* The election's state (new): api->leader's document, or {"role": "standalone",
 * "leader": null} without election. */
json_t *api__leader_state(struct api *api);
void api__metrics(struct req *r);
void api__sources(struct req *r);
void api__manifests_apply(struct req *r);
/* POST /api/v1/pods/status: many pods' status subresource at once (sched_apply_status_by). */
void api__pods_status(struct req *r);
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
void api__pdbs_list(struct req *r);
void api__pdb_get(struct req *r);
void api__pdb_delete(struct req *r);
void api__audit_export(struct req *r);
/* 1 when r asks only for a short tail of the audit log (tail=N, N <= 100, nothing else):
 * one short read transaction, which the front end may run on its own thread. */
int api__audit_small(struct req *r);
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
