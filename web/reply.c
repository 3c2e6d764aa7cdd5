/* reply.c - sending responses, reading bodies and query parameters. */
#include <civetweb.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "alloc.h"
#include "clock.h"
#include "front_req.h"
#include "http.h"
#include "store_json.h"

/* On the front end's thread (no civetweb connection): the answer is written into r->out,
 * as civetweb writes it (the same lines in the same order, then Date and Connection). */
static void out_add(struct req *r, const char *s, size_t n)
{
    XGROW(r->out, r->out_len + n + 1, r->out_cap);
    memcpy(r->out + r->out_len, s, n);
    r->out_len += n;
    r->out[r->out_len] = '\0';
}

static void out_printf(struct req *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out_printf(struct req *r, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof(buf)) {
        char *big = xmalloc((size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        out_add(r, big, (size_t)n);
        free(big);
        return;
    }
    if (n > 0)
        out_add(r, buf, (size_t)n);
}

/* "Name: value" lines joined by "\r\n", each ended with CRLF, as mg_response_header_add_lines. */
static void out_lines(struct req *r, const char *lines)
{
    while (lines && *lines) {
        size_t n = strcspn(lines, "\r\n");
        if (n) {
            out_add(r, lines, n);
            out_add(r, "\r\n", 2);
        }
        lines += n;
        lines += strspn(lines, "\r\n");
    }
}

static void out_head_start(struct req *r, int status)
{
    /* the request's version, as civetweb answers (the front end takes 1.0 and 1.1 only) */
    out_printf(r, "HTTP/1.%u %d %s\r\n", r->fr->p.http_minor ? 1u : 0u, status,
               mg_get_response_code_text(NULL, status));
}

static void out_head_end(struct req *r)
{
    char date[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    int keep = !r->close && r->fr && r->fr->keep_alive;
    out_printf(r, "Date: %s\r\nConnection: %s\r\n\r\n", date, keep ? "keep-alive" : "close");
}

static void head_add(struct req *r, const char *name, const char *value)
{
    if (r->conn)
        mg_response_header_add(r->conn, name, value, -1);
    else
        out_printf(r, "%s: %s\r\n", name, value);
}

static void head_lines(struct req *r, const char *lines)
{
    if (r->conn)
        mg_response_header_add_lines(r->conn, lines);
    else
        out_lines(r, lines);
}

static void send_head(struct req *r, int status, const char *ctype, long long len,
                      const char *extra_header)
{
    char num[32];

    /* counted before a byte goes out: a client that reads /metrics right after its reply
     * sees the request counted */
    int cls = status / 100;
    __atomic_add_fetch(&r->api->requests, 1, __ATOMIC_RELAXED);
    if (cls >= 1 && cls <= 5)
        __atomic_add_fetch(&r->api->by_class[cls], 1, __ATOMIC_RELAXED);
    if (r->conn)
        mg_response_header_start(r->conn, status);
    else
        out_head_start(r, status);
    head_add(r, "Content-Type", ctype);
    if (len >= 0) {
        snprintf(num, sizeof(num), "%lld", len);
        head_add(r, "Content-Length", num);
    } else {
        head_add(r, "Transfer-Encoding", "chunked");
    }
    head_add(r, "Cache-Control", "no-store");
    head_lines(r, api__headers(r->api));
    const char *origin = api__cors_origin(r);
    if (origin) {
        head_add(r, "Access-Control-Allow-Origin", origin);
        head_add(r, "Vary", "Origin");
    }
    if (extra_header)
        head_lines(r, extra_header);
    if (r->conn)
        mg_response_header_send(r->conn);
    else
        out_head_end(r);
    r->status = status;
}

void api__reply_raw(struct req *r, int status, const char *ctype, const char *body, size_t len,
                    const char *extra_header)
{
    send_head(r, status, ctype, (long long)len, extra_header);
    if (!len || !strcmp(r->method, "HEAD"))
        return;
    if (!r->conn) {
        out_add(r, body, len);
        r->bytes += len;
    } else if (mg_write(r->conn, body, len) > 0) {
        r->bytes += len;
    }
}

void api__reply_json(struct req *r, int status, json_t *body)
{
    api__reply_json_extra(r, status, body, NULL);
}

void api__reply_json_extra(struct req *r, int status, json_t *body, const char *extra_header)
{
    if (!body) {
        /* a json_pack that failed: a bug, but never a crash or a hung client */
        static const char text[] =
            "{\"error\":{\"code\":\"InternalError\",\"message\":\"cannot encode the reply\"}}\n";
        api__reply_raw(r, 500, "application/json", text, sizeof(text) - 1, NULL);
        return;
    }
    /* json_dumps(JSON_COMPACT)'s bytes from the store's writer, which has no printf in it: an
     * apply's reply lists every object and was written while the cycle it woke ran */
    struct store_jw w = {0};
    store_jw_value(&w, body, 0);
    /* a trailing newline keeps `curl` output readable; JSON parsers ignore it */
    store_jw_raw(&w, "\n", 2);
    api__reply_raw(r, status, "application/json", w.buf, w.len - 1, extra_header);
    store_jw_release(&w);
    json_decref(body);
}

static json_t *error_body(const struct err *err)
{
    int code = err->code ? err->code : ERR_INTERNAL;
    struct err clean = *err;

    /* messages quote client input, which need not be UTF-8 */
    api__utf8_scrub(clean.msg);
    api__utf8_scrub(clean.field);
    json_t *e = json_pack("{s:s, s:s}", "code", err_name(code), "message",
                          clean.msg[0] ? clean.msg : err_name(code));
    if (clean.field[0])
        json_object_set_new(e, "field", json_string(clean.field));
    return json_pack("{s:o}", "error", e);
}

void api__reply_error_extra(struct req *r, const struct err *err, json_t *extra)
{
    json_t *body = error_body(err);
    int code = err->code ? err->code : ERR_INTERNAL;

    if (extra)
        json_object_update(body, extra);
    json_decref(extra);
    api__reply_json(r, err_http_status(code), body);
}

void api__reply_error(struct req *r, const struct err *err)
{
    api__reply_error_extra(r, err, NULL);
}

void api__reply_errorf(struct req *r, int code, const char *fmt, ...)
{
    struct err err = ERR_INIT;
    va_list ap;

    err.code = code;
    va_start(ap, fmt);
    vsnprintf(err.msg, sizeof(err.msg), fmt, ap);
    va_end(ap);
    api__reply_error(r, &err);
}

void api__stream_start(struct req *r, int status, const char *ctype)
{
    send_head(r, status, ctype, -1, NULL);
}

int api__stream_chunk(struct req *r, const char *buf, size_t len)
{
    if (!len || !strcmp(r->method, "HEAD"))
        return 0;
    if (!r->conn) {
        out_printf(r, "%zx\r\n", len);
        out_add(r, buf, len);
        out_add(r, "\r\n", 2);
    } else if (mg_send_chunk(r->conn, buf, (unsigned)len) < 0) {
        return -1;
    }
    r->bytes += len;
    return 0;
}

void api__stream_end(struct req *r)
{
    if (!strcmp(r->method, "HEAD"))
        return;
    if (!r->conn)
        out_add(r, "0\r\n\r\n", 5);
    else
        mg_send_chunk(r->conn, "", 0);
}

void api__force_close(struct req *r)
{
    if (!r->conn) {
        r->close = 1; /* the front end's answer says "Connection: close" and closes */
        return;
    }
    /* civetweb 1.15 offers no call to end a keep-alive connection from a handler; it
     * decides after the reply from the request's Connection header (should_keep_alive),
     * so a refused request's framing is never trusted for a next request on the same
     * connection. */
    struct mg_request_info *ri = (struct mg_request_info *)mg_get_request_info(r->conn);
    int i;

    for (i = 0; i < ri->num_headers; i++)
        if (!strcasecmp(ri->http_headers[i].name, "Connection"))
            break;
    if (i == ri->num_headers && i == MG_MAX_HEADERS)
        i--; /* the request is refused anyway: its last header can go */
    ri->http_headers[i].name = "Connection";
    ri->http_headers[i].value = "close";
    if (i == ri->num_headers)
        ri->num_headers++;
}

/* An error reply whose status has no ERR_* code (411). */
static void reply_status(struct req *r, int status, const char *code, const char *msg)
{
    json_t *body = json_pack("{s:{s:s, s:s}}", "error", "code", code, "message", msg);
    api__reply_json(r, status, body);
}

char *api__body_or_reply(struct req *r, size_t *len)
{
    const struct mg_request_info *ri = mg_get_request_info(r->conn);
    size_t limit = r->api->body_limit, n = 0, cap = 0;
    char *buf = NULL;

    const char *te = api__header(r, "Transfer-Encoding");
    if (ri->content_length < 0 && !(te && !strcasecmp(te, "chunked"))) {
        reply_status(r, 411, "LengthRequired",
                     "a request body needs a Content-Length or chunked Transfer-Encoding");
        return NULL;
    }
    if (ri->content_length > 0 && (unsigned long long)ri->content_length > limit) {
        api__reply_errorf(r, ERR_TOO_LARGE,
                          "request body of %lld bytes exceeds the limit of %zu bytes",
                          ri->content_length, limit);
        return NULL;
    }
    if (ri->content_length >= 0) { /* its length at once: a big body is not copied as it grows */
        cap = (size_t)ri->content_length + 1;
        buf = xmalloc(cap);
    }
    for (;;) {
        if (ri->content_length >= 0 && n == (size_t)ri->content_length)
            break; /* civetweb reads no further than the length */
        if (n + 1 >= cap)
            XGROW(buf, n + 65536 + 1, cap);
        size_t room = cap - n - 1;
        int got = mg_read(r->conn, buf + n, room < (1u << 30) ? room : (1u << 30));
        if (got < 0) {
            free(buf);
            api__reply_errorf(r, ERR_INVALID, "cannot read the request body");
            return NULL;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        /* a chunked body has no Content-Length: count as it arrives */
        if (n > limit) {
            free(buf);
            api__reply_errorf(r, ERR_TOO_LARGE, "request body exceeds the limit of %zu bytes",
                              limit);
            return NULL;
        }
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* 1 with the decoded value in buf, 0 when absent, -1 after replying 400. */
static int query_get(struct req *r, const char *name, char *buf, size_t n)
{
    if (!r->query)
        return 0;
    int got = mg_get_var(r->query, strlen(r->query), name, buf, n);
    if (got == -1)
        return 0;
    if (got < 0) {
        api__reply_errorf(r, ERR_INVALID, "query parameter '%s' is too long", name);
        return -1;
    }
    const char *why = NULL;
    if (strlen(buf) != (size_t)got)
        why = "holds a NUL byte";
    else if (!api__utf8_valid(buf, (size_t)got))
        why = "is not valid UTF-8";
    for (const char *p = buf; !why && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            why = "holds a control character";
    if (why) {
        struct err err = ERR_INIT;
        err_setf(&err, ERR_INVALID, name, "query parameter '%s' %s", name, why);
        api__reply_error(r, &err);
        return -1;
    }
    return 1;
}

int api__query_str_or_reply(struct req *r, const char *name, char **out)
{
    char buf[1024];
    int rc = query_get(r, name, buf, sizeof(buf));

    *out = NULL;
    if (rc <= 0)
        return rc;
    if (!buf[0]) {
        api__reply_errorf(r, ERR_INVALID, "query parameter '%s' is empty", name);
        return -1;
    }
    *out = xstrdup(buf);
    return 0;
}

int api__query_u64_or_reply(struct req *r, const char *name, uint64_t *out)
{
    char buf[64], *end = NULL;
    int rc = query_get(r, name, buf, sizeof(buf));

    if (rc <= 0)
        return rc;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (!buf[0] || *end || buf[0] == '-' || buf[0] == '+' || isspace((unsigned char)buf[0]) ||
        errno || v > INT64_MAX) {
        struct err err = ERR_INIT;
        err_setf(&err, ERR_INVALID, name,
                 "query parameter '%s': '%s' is not a non-negative integer", name, buf);
        api__reply_error(r, &err);
        return -1;
    }
    *out = v;
    return 0;
}

int api__query_time_or_reply(struct req *r, const char *name, int64_t *out)
{
    char buf[128];
    struct err err = ERR_INIT;
    int rc = query_get(r, name, buf, sizeof(buf));

    if (rc <= 0)
        return rc;
    if (clock_parse_rfc3339(buf, out, &err) < 0) {
        err_setf(&err, ERR_INVALID, name, "query parameter '%s': '%s' is not an RFC 3339 time",
                 name, buf);
        api__reply_error(r, &err);
        return -1;
    }
    return 0;
}
