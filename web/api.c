/* api.c - the front end and the civetweb context behind it: start, stop, and one log line
 * per request. */
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

#include <openssl/rand.h>
#include <openssl/ssl.h>

#include "alloc.h"
#include "clock.h"
#include "front.h"
#include "internal.h"
#include "log.h"

/* The request line and all headers together, as the front end takes them (431 past). */
#define API_MAX_REQUEST_HEAD 16384
/* Header lines a client may send: civetweb keeps 64 and the front end adds one. */
#define API_MAX_HEADERS 63
/* civetweb reads only what the front end wrote, whole: its limits are not the client's.
 * Its head buffer has room for the front end's header beside the client's 16 KiB. */
#define API_BACKEND_HEAD "24576"
/* well above the front end's pool idle time (front_impl.h), so musterd closes first */
#define API_KEEP_ALIVE_TIMEOUT_MS "5000"

#ifndef MUSTER_STATIC_DIR
#define MUSTER_STATIC_DIR "web/static"
#endif

void api__serve(struct req *r)
{
    int64_t start = clock_mono_ns();
    char *decoded = NULL;

    /* decode_url is off: civetweb hands over the path as sent, routes match it, and names
     * are decoded segment by segment (a %2F inside a name is not a separator) */
    if (api__path_decode(r->raw_path, strlen(r->raw_path), &decoded, &r->path_error) < 0)
        r->path = r->raw_path;
    else
        r->path = decoded;
    api__dispatch(r);
    if (r->direct && r->relay) {
        free(decoded);
        return; /* civetweb's worker serves it, and logs it */
    }
    if (!r->status) /* a handler that forgot to reply is a bug; never leave the client hanging */
        api__reply_errorf(r, ERR_INTERNAL, "no reply for '%s %s'", r->method, r->path);

    /* the path as sent: civetweb let no byte below 33 through, where the decoded one may
     * hold control characters that would forge log lines */
    log_info("%s %s %d %zu bytes %.1f ms", r->method, r->raw_path, r->status, r->bytes,
             (double)(clock_mono_ns() - start) / 1e6);
    free(decoded);
}

static int begin_request(struct mg_connection *conn)
{
    const struct mg_request_info *ri = mg_get_request_info(conn);
    struct req r = {.conn = conn, .api = mg_get_user_data(mg_get_context(conn))};
    struct api__front_info front;

    r.method = ri->request_method;
    r.raw_path = ri->local_uri_raw ? ri->local_uri_raw : "/";
    r.query = ri->query_string;
    /* only the front end reaches this port with the secret; what it says is trusted */
    if (api__front_header_parse(mg_get_header(conn, API_FRONT_HEADER), r.api->front_secret,
                                &front) < 0) {
        r.address = ri->remote_addr;
        r.path = r.raw_path;
        api__force_close(&r);
        api__reply_errorf(&r, ERR_FORBIDDEN,
                          "connect through musterd's listener: this port takes requests from "
                          "musterd's front end only");
        log_info("%s %s %d %zu bytes", r.method, r.raw_path, r.status, r.bytes);
        return r.status;
    }
    r.address = front.address;
    r.tls = front.tls;
    r.subject = front.subject[0] ? front.subject : NULL;
    api__serve(&r);
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
    struct waker w = {.addr = {.sin_family = AF_INET,
                               .sin_port = htons((uint16_t)api->backend_port),
                               .sin_addr.s_addr = htonl(INADDR_LOOPBACK)}};
    thrd_t t;
    int have = 0;

    atomic_init(&w.done, 0);
    have = thrd_create(&t, wake_main, &w) == thrd_success;
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
    /* the front end first: no new request reaches civetweb, and the connections of
     * requests still running close, so its workers finish */
    api__front_stop(api->front);
    if (api->ctx)
        stop_promptly(api);
    mg_exit_library();
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
        .answer_ctx = api,
    };
    return api__front_start(&fo, &api->front, err);
}

int api_start(const struct api_options *opts, struct sched *sched, struct store *st,
              struct api **out, struct err *err)
{
    struct api *api = xcalloc(1, sizeof(*api));
    struct mg_callbacks cb;
    char threads[16], request_timeout[16];
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
    const char *listen = opts->listen && opts->listen[0] ? opts->listen : "127.0.0.1:8080";
    snprintf(threads, sizeof(threads), "%d", opts->threads > 0 ? opts->threads : 32);
    /* civetweb gives up a write to the front end after request_timeout_ms; the front end
     * stops reading while its client does not (backpressure), so civetweb waits as long
     * as http_write_timeout lets that client stall, and a little more */
    int write_ms =
        opts->write_timeout_ms > 0 ? opts->write_timeout_ms : API_DEFAULT_WRITE_TIMEOUT_MS;
    snprintf(request_timeout, sizeof(request_timeout), "%d", write_ms + 10000);

    api->cors_origins =
        opts->cors_origins && opts->cors_origins[0] ? xstrdup(opts->cors_origins) : NULL;
    listen_host(listen, api->host, sizeof(api->host));
    api->allowed_hosts = opts->allowed_hosts && opts->allowed_hosts[0]
                             ? xstrdup(opts->allowed_hosts)
                             : api__default_hosts(api->host);

    /* civetweb serves plain HTTP on loopback, to the front end only; the front end reads
     * whole requests under its limits first, so these bound nothing a client controls */
    const char *mg_opts[] = {"listening_ports", "127.0.0.1:0", "num_threads", threads,
                             "request_timeout_ms", request_timeout, "keep_alive_timeout_ms",
                             API_KEEP_ALIVE_TIMEOUT_MS, "enable_keep_alive", "yes",
                             /* without it a kept-alive connection's small replies wait for
                              * the client's delayed ACK (Nagle): about 40 ms each */
                             "tcp_nodelay", "1", "decode_url", "no", "additional_header",
                             api->headers, "max_request_size", API_BACKEND_HEAD, NULL};
    memset(&cb, 0, sizeof(cb));
    cb.begin_request = begin_request;
    cb.log_message = log_message;
    cb.http_error = http_error;
    api->ctx = mg_start(&cb, api, mg_opts);
    if (!api->ctx) {
        rc = err_set(err, ERR_IO, "cannot start civetweb on 127.0.0.1");
        goto out;
    }
    struct mg_server_port ports[4];
    if (mg_get_server_ports(api->ctx, 4, ports) < 1) {
        rc = err_set(err, ERR_IO, "cannot find the port civetweb listens on");
        goto out;
    }
    api->backend_port = ports[0].port;
    if ((rc = start_front(api, opts, listen, err)) < 0)
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

void api__changed(struct api *api)
{
    if (api->on_change)
        api->on_change(api->on_change_ctx);
}
