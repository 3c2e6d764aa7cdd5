/* backend.c - civetweb behind the front end, on 127.0.0.1: its context, started and stopped
 * promptly, each request it gets served through api__serve, and the requests it rejects
 * itself answered in the API's JSON error shape. Only the front end reaches its port; the
 * X-Muster-Front header proves it (front.h). */
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

#include "front_msg.h"
#include "http.h"
#include "log.h"
#include "routes.h"
#include "serve.h"

/* civetweb reads only what the front end wrote, whole: its limits are not the client's.
 * Its head buffer has room for the front end's header beside the client's 16 KiB. */
#define API_BACKEND_HEAD "24576"
/* well above the front end's pool idle time (front_impl.h), so musterd closes first */
#define API_KEEP_ALIVE_TIMEOUT_MS "5000"

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

int api__backend_start(struct api *api, const struct api_options *opts, struct err *err)
{
    struct mg_callbacks cb;
    char threads[16], request_timeout[16];

    snprintf(threads, sizeof(threads), "%d", opts->threads > 0 ? opts->threads : 32);
    /* civetweb gives up a write to the front end after request_timeout_ms; the front end
     * stops reading while its client does not (backpressure), so civetweb waits as long
     * as http_write_timeout lets that client stall, and a little more */
    int write_ms =
        opts->write_timeout_ms > 0 ? opts->write_timeout_ms : API_DEFAULT_WRITE_TIMEOUT_MS;
    snprintf(request_timeout, sizeof(request_timeout), "%d", write_ms + 10000);
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
    /* reference counted by civetweb, so several api instances in one process are fine;
     * held while api->ctx is set */
    mg_init_library(0);
    api->ctx = mg_start(&cb, api, mg_opts);
    if (!api->ctx) {
        mg_exit_library();
        return err_set(err, ERR_IO, "cannot start civetweb on 127.0.0.1");
    }
    struct mg_server_port ports[4];
    if (mg_get_server_ports(api->ctx, 4, ports) < 1)
        return err_set(err, ERR_IO, "cannot find the port civetweb listens on");
    api->backend_port = ports[0].port;
    return 0;
}

void api__backend_stop(struct api *api)
{
    if (!api->ctx)
        return;
    stop_promptly(api);
    api->ctx = NULL;
    mg_exit_library();
}
