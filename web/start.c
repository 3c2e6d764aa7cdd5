/* start.c - api_start and api_stop: the api handle built from its options, the parts it
 * owns (credentials, the read cache, TLS), civetweb behind the front end, and the front end
 * on the configured listener; and taken down again in the opposite order. */
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "alloc.h"
#include "cached_reads.h"
#include "front_msg.h"
#include "http.h"
#include "log.h"
#include "serve.h"
#include "thread.h"
#include "tls.h"

#ifndef MUSTER_STATIC_DIR
#define MUSTER_STATIC_DIR "web/static"
#endif

/* The host part of a listen address as configured ("0.0.0.0" for ":PORT" and "PORT"). */
static void listen_host(const char *listen, char *buf, size_t n)
{
    const char *colon = strrchr(listen, ':');

    if (!colon || colon == listen)
        snprintf(buf, n, "0.0.0.0");
    else if (!strncmp(listen, "localhost:", 10))
        snprintf(buf, n, "127.0.0.1");
    else
        snprintf(buf, n, "%.*s", (int)(colon - listen), listen);
}

void api_set_read_only(struct api *api, const char *reason)
{
    char *copy = reason ? xstrdup(reason) : NULL;

    pthread_mutex_lock(&api->ro_mu);
    free(api->read_only);
    api->read_only = copy;
    pthread_mutex_unlock(&api->ro_mu);
}

void api_stop(struct api *api)
{
    if (!api)
        return;
    /* the front end first: no new request reaches civetweb, and the connections of
     * requests still running close, so its workers finish */
    api__front_stop(api->front);
    api__backend_stop(api);
    SSL_CTX_free(api->ssl_ctx);
    api__tls_close(api->tls);
    api__auth_free(api);
    free(api->ui_dir);
    free(api->allowed_hosts);
    free(api->cors_origins);
    free(api->headers);
    free(api->read_only);
    pthread_mutex_destroy(&api->ro_mu);
    api__readcache_free(api->readcache);
    free(api);
}

/* A fresh random secret for the X-Muster-Front header, and the front end on listen. */
static int start_front(struct api *api, const struct api_options *opts, const char *listen,
                       struct err *err)
{
    unsigned char raw[API_FRONT_SECRET_HEX / 2];
    int rc;

    if (RAND_bytes(raw, sizeof(raw)) != 1)
        return err_set(err, ERR_INTERNAL, "cannot draw the front end's secret");
    for (size_t i = 0; i < sizeof(raw); i++)
        snprintf(api->front_secret + 2 * i, 3, "%02x", raw[i]);
    if (api->tls && (rc = api__tls_ctx(api->tls, &api->ssl_ctx, err)) < 0)
        return rc;
    struct api__front_options fo = {
        .listen = listen,
        .ssl = api->ssl_ctx,
        .backend_port = api->backend_port,
        .backend_workers = opts->threads > 0 ? opts->threads : 32,
        .secret = api->front_secret,
        .headers = api->headers,
        .lim = {API_MAX_REQUEST_HEAD, API_MAX_HEADERS, api->body_limit},
        .head_timeout_ms =
            opts->head_timeout_ms > 0 ? opts->head_timeout_ms : API_DEFAULT_HEAD_TIMEOUT_MS,
        .body_timeout_ms =
            opts->body_timeout_ms > 0 ? opts->body_timeout_ms : API_DEFAULT_BODY_TIMEOUT_MS,
        .idle_timeout_ms =
            opts->idle_timeout_ms > 0 ? opts->idle_timeout_ms : API_DEFAULT_IDLE_TIMEOUT_MS,
        .write_timeout_ms =
            opts->write_timeout_ms > 0 ? opts->write_timeout_ms : API_DEFAULT_WRITE_TIMEOUT_MS,
        .max_connections =
            opts->max_connections > 0 ? opts->max_connections : API_DEFAULT_MAX_CONNECTIONS,
        .answer = api__front_answer,
        .head_check = api__front_head_check,
        .answer_ctx = api,
        .body_memory = opts->body_memory ? opts->body_memory : API_DEFAULT_BODY_MEMORY,
        .realtime = opts->front_realtime,
        .cpus = opts->front_cpus,
    };
    return api__front_start(&fo, &api->front, err);
}

/* The options kept in the api handle (strings copied). */
static void keep_options(struct api *api, const struct api_options *opts)
{
    api->body_limit = opts->body_limit ? opts->body_limit : API_DEFAULT_BODY_LIMIT;
    api->field_validation = opts->field_validation;
    api->timeseries_interval = opts->timeseries_interval;
    api->front_cpus = opts->front_cpus;
    api->ui_dir = xstrdup(opts->ui_dir && opts->ui_dir[0] ? opts->ui_dir : MUSTER_STATIC_DIR);
    api->on_change = opts->on_change;
    api->on_change_ctx = opts->on_change_ctx;
    api->sources = opts->sources;
    api->sources_ctx = opts->sources_ctx;
    api->leader = opts->leader;
    api->leader_ctx = opts->leader_ctx;
    api->read_only = opts->read_only ? xstrdup(opts->read_only) : NULL;
    api->audit_health = opts->audit_health;
    api->audit_health_ctx = opts->audit_health_ctx;
    api->accounting = opts->accounting;
    api->accounting_ctx = opts->accounting_ctx;
    api->audit_key = opts->audit_key;
    api->audit_witness = opts->audit_witness;
    api->audit_witness_ctx = opts->audit_health_ctx;
}

/* Which Host and Origin headers are answered (edge.c), from the options and the listen
 * address. */
static void keep_edge(struct api *api, const struct api_options *opts, const char *listen)
{
    api->cors_origins =
        opts->cors_origins && opts->cors_origins[0] ? xstrdup(opts->cors_origins) : NULL;
    listen_host(listen, api->host, sizeof(api->host));
    api->allowed_hosts = opts->allowed_hosts && opts->allowed_hosts[0]
                             ? xstrdup(opts->allowed_hosts)
                             : api__default_hosts(api->host);
}

/* The address to listen on: the options', or the default. */
static const char *listen_of(const struct api_options *opts)
{
    return opts->listen && opts->listen[0] ? opts->listen : "127.0.0.1:8080";
}

int api_check(const struct api_options *opts, struct err *err)
{
    int rc = api__front_listen_check(listen_of(opts), err);
    if (rc == 0 && opts->tokens_file && opts->tokens_file[0])
        rc = api__tokens_check(opts->tokens_file, err);
    if (rc == 0)
        rc = api__tls_check(opts, err);
    if (rc == 0 && cpus_allowed(&opts->front_cpus, err) < 0)
        rc = err_prefix(err, "front_cpus");
    int refused = rc == 0 && opts->front_realtime ? thread_realtime_allowed() : 0;
    if (refused)
        rc = err_setf(err, ERR_INVALID, "front_priority",
                      "front_priority realtime: the kernel refuses SCHED_FIFO to this process "
                      "(%s): give musterd CAP_SYS_NICE or an RLIMIT_RTPRIO of 1 or more, or set "
                      "front_priority normal",
                      strerror(refused));
    return rc;
}

int api_start(const struct api_options *opts, struct sched *sched, struct store *st,
              struct api **out, struct err *err)
{
    struct api *api = xcalloc(1, sizeof(*api));
    const char *listen = listen_of(opts);
    int rc = 0;

    *out = NULL;
    api->sched = sched;
    api->st = st;
    if ((rc = api__auth_init(api, opts, err)) < 0)
        goto out;
    keep_options(api, opts);
    pthread_mutex_init(&api->ro_mu, NULL);
    api->readcache = api__readcache_new();
    if ((rc = api__tls_open(opts, &api->tls, err)) < 0)
        goto out;
    api->headers = api__headers_make(api->tls != NULL);
    keep_edge(api, opts, listen);
    if ((rc = api__backend_start(api, opts, err)) < 0 ||
        (rc = start_front(api, opts, listen, err)) < 0)
        goto out;
    api->port = api__front_port(api->front);
    log_info("front end on port %d; civetweb behind it on 127.0.0.1:%d", api->port,
             api->backend_port);
out:
    if (rc < 0) {
        api_stop(api);
        return rc;
    }
    *out = api;
    return 0;
}

int api_port(const struct api *api)
{
    return api->port;
}

const char *api_scheme(const struct api *api)
{
    return api->tls ? "https" : "http";
}
