/* api.c - the civetweb context: start, stop, and one log line per request. */
#include <arpa/inet.h>
#include <civetweb.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "internal.h"
#include "log.h"

/* civetweb's default max_request_size: the request line and all headers together */
#define API_MAX_REQUEST_HEAD 16384
#define API_REQUEST_TIMEOUT_MS "10000"
#define API_KEEP_ALIVE_TIMEOUT_MS "5000"

#ifndef MUSTER_STATIC_DIR
#define MUSTER_STATIC_DIR "web/static"
#endif

static int begin_request(struct mg_connection *conn)
{
    const struct mg_request_info *ri = mg_get_request_info(conn);
    struct req r = {.conn = conn, .api = mg_get_user_data(mg_get_context(conn))};
    int64_t start = clock_mono_ns();

    char *decoded = NULL;

    /* decode_url is off: civetweb hands over the path as sent, routes match it, and names
     * are decoded segment by segment (a %2F inside a name is not a separator) */
    r.method = ri->request_method;
    r.raw_path = ri->local_uri_raw ? ri->local_uri_raw : "/";
    r.query = ri->query_string;
    if (api__path_decode(r.raw_path, strlen(r.raw_path), &decoded, &r.path_error) < 0)
        r.path = r.raw_path;
    else
        r.path = decoded;
    r.address = ri->remote_addr;
    api__dispatch(&r);
    if (!r.status) /* a handler that forgot to reply is a bug; never leave the client hanging */
        api__reply_errorf(&r, ERR_INTERNAL, "no reply for '%s %s'", r.method, r.path);

    /* the path as sent: civetweb let no byte below 33 through, where the decoded one may
     * hold control characters that would forge log lines */
    log_info("%s %s %d %zu bytes %.1f ms", r.method, r.raw_path, r.status, r.bytes,
             (double)(clock_mono_ns() - start) / 1e6);
    free(decoded);
    return r.status;
}

/* The code string of an error body for an HTTP status civetweb rejects a request with. */
static const char *status_code_name(int status)
{
    switch (status) {
    case 400:
        return err_name(ERR_INVALID);
    case 404:
        return err_name(ERR_NOT_FOUND);
    case 405:
        return err_name(ERR_METHOD);
    case 411:
        return "LengthRequired";
    case 413:
        return err_name(ERR_TOO_LARGE);
    case 414:
        return "URITooLong";
    case 431:
        return "HeadersTooLarge";
    case 505:
        return "HTTPVersionNotSupported";
    default:
        return status >= 500 ? err_name(ERR_INTERNAL) : err_name(ERR_INVALID);
    }
}

/* Requests civetweb rejects itself (unknown methods, a request line or headers over its
 * buffer, a bad Content-Length, an unsupported Transfer-Encoding) get the API's JSON
 * error shape too, not a text/plain page. */
static int http_error(struct mg_connection *conn, int status, const char *errmsg)
{
    char msg[256];
    size_t n = 0;

    snprintf(msg, sizeof(msg), "%s", errmsg && *errmsg ? errmsg : "bad request");
    msg[0] = (char)tolower((unsigned char)msg[0]);
    /* civetweb's own texts say little; say what the client can fix */
    if (status == 400 && !strcasecmp(msg, "malformed message"))
        snprintf(msg, sizeof(msg),
                 "malformed request: a request line or header that does not parse, or a "
                 "request line and headers over %d bytes",
                 API_MAX_REQUEST_HEAD);
    else if (status == 400 && !strcasecmp(msg, "bad request"))
        snprintf(msg, sizeof(msg),
                 "bad request: an unknown method (the API uses GET, HEAD, "
                 "POST and DELETE), a request line that is not 'METHOD /path HTTP/1.1', or an "
                 "unsupported Transfer-Encoding");
    else if (status == 400 && !strcasecmp(msg, "invalid uri"))
        snprintf(msg, sizeof(msg), "the request target must be a path such as '/api/v1/nodes'");
    else if (status == 411)
        snprintf(msg, sizeof(msg),
                 "a request body needs a valid Content-Length or chunked Transfer-Encoding");
    else if (status == 505)
        snprintf(msg, sizeof(msg), "only HTTP/1.0 and HTTP/1.1 are supported");
    json_t *body =
        json_pack("{s:{s:s, s:s}}", "error", "code", status_code_name(status), "message", msg);
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    if (!text)
        return 1; /* civetweb's own page then */
    n = strlen(text);
    mg_printf(conn,
              "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
              "Cache-Control: no-store\r\n%s\r\nConnection: close\r\n\r\n%s\n",
              status, mg_get_response_code_text(conn, status), n + 1,
              api__headers(mg_get_user_data(mg_get_context(conn))), text);
    free(text);
    log_info("rejected by the HTTP layer: %d %s", status, msg);
    return 0;
}

static int log_message(const struct mg_connection *conn, const char *message)
{
    log_warn("civetweb: %s", message);
    return 1;
}

/* civetweb wants "127.0.0.1:8080" ("127.0.0.1:8443s" for HTTPS); accept "ADDR:PORT",
 * ":PORT" and "PORT". */
static int listen_spec(const char *listen, int tls, char *buf, size_t n, struct err *err)
{
    const char *colon = strrchr(listen, ':');
    const char *port = colon ? colon + 1 : listen;
    char *end = NULL;

    long v = strtol(port, &end, 10);
    if (!*port || *end || v < 0 || v > 65535)
        return err_set(err, ERR_INVALID, "listen address '%s' needs ADDR:PORT", listen);
    if (!colon || colon == listen)
        snprintf(buf, n, "0.0.0.0:%ld%s", v, tls ? "s" : "");
    else if (!strncmp(listen, "localhost:", 10))
        snprintf(buf, n, "127.0.0.1:%ld%s", v, tls ? "s" : "");
    else
        snprintf(buf, n, "%s%s", listen, tls ? "s" : "");
    return 0;
}

struct waker {
    struct sockaddr_in addr;
    atomic_int done;
};

/* civetweb's master thread notices mg_stop only when its poll() on the listening socket
 * returns, which is after up to two seconds; knocking on the socket makes shutdown
 * prompt. */
static int wake_main(void *arg)
{
    struct waker *w = arg;
    struct timespec ts = {0, 50 * 1000 * 1000};

    while (!atomic_load(&w->done)) {
        thrd_sleep(&ts, NULL);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0)
            continue;
        connect(fd, (struct sockaddr *)&w->addr, sizeof(w->addr));
        close(fd);
    }
    return 0;
}

static void stop_promptly(struct api *api)
{
    struct waker w = {.addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)api->port)}};
    thrd_t t;
    int have = 0;

    if (api->host[0] && inet_pton(AF_INET, api->host, &w.addr.sin_addr) == 1) {
        if (w.addr.sin_addr.s_addr == htonl(INADDR_ANY))
            w.addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        atomic_init(&w.done, 0);
        have = thrd_create(&t, wake_main, &w) == thrd_success;
    }
    mg_stop(api->ctx);
    if (have) {
        atomic_store(&w.done, 1);
        thrd_join(t, NULL);
    }
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
    if (api->ctx)
        stop_promptly(api);
    mg_exit_library();
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

int api_start(const struct api_options *opts, struct sched *sched, struct store *st,
              struct api **out, struct err *err)
{
    struct api *api = xcalloc(1, sizeof(*api));
    struct mg_callbacks cb;
    char listen[256], threads[16];
    int rc = 0;

    *out = NULL;
    /* reference counted by civetweb, so several api instances in one process are fine */
    mg_init_library(0);
    api->sched = sched;
    api->st = st;
    if ((rc = api__auth_init(api, opts, err)) < 0)
        goto out;
    api->body_limit = opts->body_limit ? opts->body_limit : API_DEFAULT_BODY_LIMIT;
    api->field_validation = opts->field_validation;
    api->ui_dir = xstrdup(opts->ui_dir && opts->ui_dir[0] ? opts->ui_dir : MUSTER_STATIC_DIR);
    api->on_change = opts->on_change;
    api->on_change_ctx = opts->on_change_ctx;
    api->sources = opts->sources;
    api->sources_ctx = opts->sources_ctx;
    api->leader = opts->leader;
    api->leader_ctx = opts->leader_ctx;
    pthread_mutex_init(&api->ro_mu, NULL);
    api->readcache = api__readcache_new();
    api->read_only = opts->read_only ? xstrdup(opts->read_only) : NULL;
    api->audit_health = opts->audit_health;
    api->audit_health_ctx = opts->audit_health_ctx;
    api->audit_key = opts->audit_key;
    if ((rc = api__tls_open(opts, &api->tls, err)) < 0)
        goto out;
    api->headers = api__headers_make(api->tls != NULL);
    if (api->tls && !(mg_check_feature(MG_FEATURES_SSL) & MG_FEATURES_SSL)) {
        rc = err_set(err, ERR_INTERNAL, "this civetweb was built without TLS support");
        goto out;
    }
    rc = listen_spec(opts->listen && opts->listen[0] ? opts->listen : "127.0.0.1:8080",
                     api->tls != NULL, listen, sizeof(listen), err);
    if (rc < 0)
        goto out;
    snprintf(threads, sizeof(threads), "%d", opts->threads > 0 ? opts->threads : 32);

    api->cors_origins =
        opts->cors_origins && opts->cors_origins[0] ? xstrdup(opts->cors_origins) : NULL;
    snprintf(api->host, sizeof(api->host), "%.*s", (int)(strrchr(listen, ':') - listen), listen);
    api->allowed_hosts = opts->allowed_hosts && opts->allowed_hosts[0]
                             ? xstrdup(opts->allowed_hosts)
                             : api__default_hosts(api->host);

    /* request_timeout_ms bounds the whole request head (a slowloris client sending a byte
     * every few seconds is cut off after it) and each wait for body bytes; an idle
     * keep-alive connection holds its worker for at most keep_alive_timeout_ms. The
     * numbers are measured in tests/test_edge.c and docs/security.md. */
    const char *mg_opts[] = {"listening_ports", listen, "num_threads", threads,
                             "request_timeout_ms", API_REQUEST_TIMEOUT_MS, "keep_alive_timeout_ms",
                             API_KEEP_ALIVE_TIMEOUT_MS, "enable_keep_alive", "yes",
                             /* without it a kept-alive connection's small replies wait for
                              * the client's delayed ACK (Nagle): about 40 ms each */
                             "tcp_nodelay", "1", "decode_url", "no", "additional_header",
                             api->headers, "max_request_size", "16384", NULL};
    memset(&cb, 0, sizeof(cb));
    cb.begin_request = begin_request;
    cb.log_message = log_message;
    cb.http_error = http_error;
    cb.init_connection = api__connection_opened;
    cb.connection_close = api__connection_closing;
    if (api->tls)
        cb.init_ssl = api__tls_init_ctx;
    api->ctx = mg_start(&cb, api, mg_opts);
    if (!api->ctx) {
        rc = err_set(err, ERR_IO, "cannot listen on '%s'%s", listen,
                     api->tls ? " with TLS (civetweb loads libssl.so at run time: is "
                                "libssl-dev installed?)"
                              : "");
        goto out;
    }
    struct mg_server_port ports[4];
    if (mg_get_server_ports(api->ctx, 4, ports) < 1) {
        rc = err_set(err, ERR_IO, "cannot find the port listened on for '%s'", listen);
        goto out;
    }
    api->port = ports[0].port;
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

void api__changed(struct api *api)
{
    if (api->on_change)
        api->on_change(api->on_change_ctx);
}
