/* front_req.c - the front end reads one request: http-parser frames it, the limits and
 * the framing rules are checked once, here, and the request is written again for civetweb
 * (front.h). No sockets: fuzz/fuzz_front.c drives it. docs/security.md ("The HTTP edge")
 * lists what is refused where. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "err.h"
#include "front_msg.h"
#include "front_req.h"
#include "utf8.h"

static void append(char **buf, size_t *len, size_t *cap, const char *data, size_t n)
{
    XGROW(*buf, *len + n + 1, *cap);
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = '\0';
}

static void refuse(struct api__fr *fr, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void refuse(struct api__fr *fr, int status, const char *fmt, ...)
{
    va_list ap;

    if (fr->status)
        return; /* the first reason stands */
    fr->status = status;
    va_start(ap, fmt);
    vsnprintf(fr->msg, sizeof(fr->msg), fmt, ap);
    va_end(ap);
    api__utf8_scrub(fr->msg);
}

static int count(const struct api__fr *fr, const char *name)
{
    int n = 0;
    for (int i = 0; i < fr->nh; i++)
        n += !strcasecmp(fr->h[i].name, name);
    return n;
}

static const char *value_of(const struct api__fr *fr, const char *name)
{
    for (int i = 0; i < fr->nh; i++)
        if (!strcasecmp(fr->h[i].name, name))
            return fr->h[i].value;
    return NULL;
}

static int on_begin(http_parser *p)
{
    ((struct api__fr *)p->data)->started = 1;
    return 0;
}

/* http-parser lets a NUL byte through in header values: it would cut what is forwarded */
static int nul_refused(struct api__fr *fr, const char *at, size_t n, const char *what)
{
    if (!memchr(at, '\0', n))
        return 0;
    refuse(fr, 400, "the %s holds a NUL byte", what);
    return -1;
}

static int on_url(http_parser *p, const char *at, size_t n)
{
    struct api__fr *fr = p->data;

    if (nul_refused(fr, at, n, "request target") < 0)
        return -1;
    append(&fr->url, &fr->url_len, &fr->url_cap, at, n);
    return 0;
}

static void piece(char **s, const char *at, size_t n)
{
    size_t len = *s ? strlen(*s) : 0;
    *s = xrealloc(*s, len + n + 1);
    memcpy(*s + len, at, n);
    (*s)[len + n] = '\0';
}

static int on_field(http_parser *p, const char *at, size_t n)
{
    struct api__fr *fr = p->data;

    if (fr->head_done)
        return 0; /* a chunked body's trailer: dropped, never forwarded as a header */
    if (nul_refused(fr, at, n, "header name") < 0)
        return -1;
    if (fr->in_value || !fr->nh) {
        if (fr->nh >= fr->lim.headers_max) {
            refuse(fr, 431, "a request may carry at most %d headers", fr->lim.headers_max);
            return -1;
        }
        XGROW(fr->h, (size_t)fr->nh + 1, fr->h_cap);
        fr->h[fr->nh++] = (struct api__fr_header){xstrdup(""), xstrdup("")};
        fr->in_value = 0;
    }
    piece(&fr->h[fr->nh - 1].name, at, n);
    return 0;
}

static int on_value(http_parser *p, const char *at, size_t n)
{
    struct api__fr *fr = p->data;

    if (fr->head_done)
        return 0;
    if (nul_refused(fr, at, n, "header value") < 0)
        return -1;
    fr->in_value = 1;
    piece(&fr->h[fr->nh - 1].value, at, n);
    return 0;
}

/* 1 when a header line of the head in raw begins with a space or tab: an obs-fold
 * continuation, which http-parser joins to the line before and RFC 9112 5.2 lets a
 * server refuse. */
static int folded(const char *raw, size_t n)
{
    const char *p = memchr(raw, '\n', n);

    while (p && (size_t)(p + 1 - raw) < n) {
        char c = p[1];
        if (c == '\r' || c == '\n')
            return 0; /* the blank line: the end of the head */
        if (c == ' ' || c == '\t')
            return 1;
        p = memchr(p + 1, '\n', n - (size_t)(p + 1 - raw));
    }
    return 0;
}

/* 1 when the head in raw holds a CR not followed by LF: http-parser takes one as a line's
 * end or not depending on where the bytes were cut (RFC 9112 2.2 lets a server refuse it). */
static int bare_cr(const char *raw, size_t n)
{
    for (size_t i = 0; i + 1 < n; i++) {
        if (raw[i] == '\n' &&
            (raw[i + 1] == '\n' || (raw[i + 1] == '\r' && i + 2 < n && raw[i + 2] == '\n')))
            return 0; /* the blank line: the end of the head */
        if (raw[i] == '\r' && raw[i + 1] != '\n')
            return 1;
    }
    return 0;
}

/* What is wrong with a header name (static text) or NULL. http-parser lets a space
 * before the colon into the name. */
static const char *name_problem(const char *name)
{
    static const char tchar[] = "!#$%&'*+-.^_`|~";
    size_t n = strlen(name);

    if (!n)
        return "is empty";
    if (name[n - 1] == ' ' || name[n - 1] == '\t')
        return "has a space before its colon";
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr(tchar, *p))
            return "is not a token";
    /* http-parser takes "Transfer-EncodingX" for Transfer-Encoding, civetweb does not */
    if ((n > 14 && !strncasecmp(name, "Content-Length", 14)) ||
        (n > 17 && !strncasecmp(name, "Transfer-Encoding", 17)))
        return "begins like a framing header (Content-Length, Transfer-Encoding)";
    return NULL;
}

static int method_ok(enum http_method m)
{
    return m == HTTP_GET || m == HTTP_HEAD || m == HTTP_POST || m == HTTP_PUT || m == HTTP_DELETE ||
           m == HTTP_OPTIONS || m == HTTP_PATCH;
}

#define REQUEST_LINE "a request line that is not 'METHOD /path HTTP/1.1'"
#define UNKNOWN_METHOD "an unknown method (the API uses GET, HEAD, POST and DELETE)"

/* The request line's checks. 0 or -1 after refuse. */
static int line_ok(struct api__fr *fr)
{
    http_parser *p = &fr->p;

    if (!method_ok((enum http_method)p->method))
        return refuse(fr, 400, "bad request: %s", UNKNOWN_METHOD), -1;
    if (p->http_major == 0)
        return refuse(fr, 400, "bad request: %s (it has no HTTP version)", REQUEST_LINE), -1;
    if (p->http_major != 1 || p->http_minor > 1)
        return refuse(fr, 505, "only HTTP/1.0 and HTTP/1.1 are supported"), -1;
    if (!fr->url || fr->url[0] != '/')
        return refuse(fr, 400,
                      "request target '%.200s' is not a path: musterd is not a proxy; send the "
                      "path ('GET /api/v1/nodes HTTP/1.1' with a Host header)",
                      fr->url ? fr->url : ""),
               -1;
    return 0;
}

/* The header block's checks: names, folding, the front end's own header, framing. */
static int headers_ok(struct api__fr *fr)
{
    if (bare_cr(fr->raw, fr->raw_len))
        return refuse(fr, 400, "the request head holds a CR that does not end a line"), -1;
    for (int i = 0; i < fr->nh; i++) {
        const char *why = name_problem(fr->h[i].name);
        if (why)
            return refuse(fr, 400, "header '%.100s' %s", fr->h[i].name, why), -1;
        if (!strcasecmp(fr->h[i].name, API_FRONT_HEADER))
            return refuse(fr, 400, "header '%s' is set only by musterd's front end",
                          API_FRONT_HEADER),
                   -1;
    }
    if (folded(fr->raw, fr->raw_len))
        return refuse(fr, 400,
                      "a header is followed by a line that is not a header (a folded "
                      "continuation line)"),
               -1;
    int cl = count(fr, "Content-Length"), te = count(fr, "Transfer-Encoding");
    if (cl > 1)
        return refuse(fr, 400,
                      "ambiguous body length: the request has more than one "
                      "Content-Length"),
               -1;
    if (cl && te)
        return refuse(fr, 400,
                      "ambiguous body length: the request has both Content-Length and "
                      "Transfer-Encoding"),
               -1;
    if (te > 1)
        return refuse(fr, 400,
                      "ambiguous body length: the request has more than one "
                      "Transfer-Encoding"),
               -1;
    const char *tev = value_of(fr, "Transfer-Encoding");
    if (tev && strcasecmp(tev, "chunked"))
        return refuse(fr, 400, "unsupported Transfer-Encoding '%.60s': only chunked is accepted",
                      tev),
               -1;
    return 0;
}

/* Charges fr's body buffer grown to cap bytes. 0, or -1 after a 503. */
static int charge(struct api__fr *fr, size_t cap)
{
    if (!fr->mem_used || cap <= fr->charged)
        return 0;
    if (*fr->mem_used - fr->charged + cap > fr->mem_max) {
        refuse(fr, 503,
               "musterd holds %zu bytes of request bodies in flight and this one would pass the "
               "limit of %zu (config http_body_memory): try again shortly",
               *fr->mem_used, fr->mem_max);
        return -1;
    }
    *fr->mem_used += cap - fr->charged;
    fr->charged = cap;
    return 0;
}

static int on_headers_complete(http_parser *p)
{
    struct api__fr *fr = p->data;

    if (line_ok(fr) < 0 || headers_ok(fr) < 0)
        return -1;
    fr->chunked = (p->flags & F_CHUNKED) != 0;
    fr->has_length = fr->chunked || count(fr, "Content-Length") > 0;
    if (!fr->chunked && fr->has_length && p->content_length > fr->lim.body_max) {
        refuse(fr, 413, "request body of %llu bytes exceeds the limit of %zu bytes",
               (unsigned long long)p->content_length, fr->lim.body_max);
        return -1;
    }
    if (!fr->chunked && fr->has_length) {
        fr->length = (size_t)p->content_length;
        if (fr->length && charge(fr, fr->length + 1) < 0)
            return -1; /* refused before a byte of the body is read */
    }
    const char *expect = value_of(fr, "Expect");
    fr->expect_continue = expect && !strcasecmp(expect, "100-continue") && p->http_minor == 1 &&
                          (fr->chunked || (fr->has_length && p->content_length > 0));
    fr->is_head = p->method == HTTP_HEAD;
    fr->head_done = 1;
    return 0;
}

static int on_body(http_parser *p, const char *at, size_t n)
{
    struct api__fr *fr = p->data;

    if (fr->body_len + n > fr->lim.body_max) {
        refuse(fr, 413, "request body exceeds the limit of %zu bytes", fr->lim.body_max);
        return -1;
    }
    if (fr->body_len + n + 1 > fr->body_cap) {
        /* a known length is allocated once (it was charged at the head); a chunked body
         * grows by doubling, each step charged before it is made */
        size_t cap = fr->chunked ? 2 * (fr->body_len + n + 1) : fr->length + 1;
        if (cap < fr->body_len + n + 1)
            cap = fr->body_len + n + 1;
        if (cap > fr->lim.body_max + 1)
            cap = fr->lim.body_max + 1;
        if (charge(fr, cap) < 0)
            return -1;
        fr->body = xrealloc(fr->body, cap);
        fr->body_cap = cap;
    }
    append(&fr->body, &fr->body_len, &fr->body_cap, at, n);
    return 0;
}

static int on_message_complete(http_parser *p)
{
    struct api__fr *fr = p->data;

    fr->done = 1;
    fr->keep_alive = http_should_keep_alive(p);
    http_parser_pause(p, 1);
    return 0;
}

static const http_parser_settings settings = {
    .on_message_begin = on_begin,
    .on_url = on_url,
    .on_header_field = on_field,
    .on_header_value = on_value,
    .on_headers_complete = on_headers_complete,
    .on_body = on_body,
    .on_message_complete = on_message_complete,
};

/* The value of the last Content-Length line in the raw head, for a message. */
static void raw_length(const struct api__fr *fr, char *out, size_t n)
{
    const char *p = fr->raw, *end = fr->raw + fr->raw_len, *found = NULL;

    for (; p && p < end; p = memchr(p, '\n', (size_t)(end - p)), p = p ? p + 1 : NULL)
        if ((size_t)(end - p) > 15 && !strncasecmp(p, "Content-Length:", 15))
            found = p + 15;
    out[0] = '\0';
    if (!found)
        return;
    found += strspn(found, " \t");
    size_t len = strcspn(found, "\r\n");
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), found);
}

/* A parser error as the client's fault, in the edge's words. */
static void parser_error(struct api__fr *fr)
{
    enum http_errno e = HTTP_PARSER_ERRNO(&fr->p);
    char v[48];

    switch (e) {
    case HPE_UNEXPECTED_CONTENT_LENGTH:
        refuse(fr, 400, "ambiguous body length: the request has %s",
               count(fr, "Content-Length") > 1 ? "more than one Content-Length"
                                               : "both Content-Length and Transfer-Encoding");
        break;
    case HPE_INVALID_CONTENT_LENGTH:
        if (fr->head_done && fr->chunked) {
            /* http-parser reports a chunk size past 2^64 this way */
            refuse(fr, 400, "malformed chunked body: a chunk size too large to be a length");
            break;
        }
        raw_length(fr, v, sizeof(v));
        refuse(fr, 400, "Content-Length '%s' is not a single decimal number", v);
        break;
    case HPE_INVALID_METHOD:
        refuse(fr, 400, "bad request: %s", UNKNOWN_METHOD);
        break;
    case HPE_INVALID_URL:
    case HPE_INVALID_VERSION:
    case HPE_INVALID_CONSTANT:
        refuse(fr, 400, "bad request: %s", REQUEST_LINE);
        break;
    case HPE_LF_EXPECTED:
        refuse(fr, 400, "the request head holds a CR that does not end a line");
        break;
    case HPE_INVALID_TRANSFER_ENCODING:
        refuse(fr, 400, "unsupported Transfer-Encoding: only chunked is accepted");
        break;
    case HPE_HEADER_OVERFLOW:
        refuse(fr, 431, "the request line and headers are over %zu bytes", fr->lim.head_max);
        break;
    case HPE_INVALID_CHUNK_SIZE:
    case HPE_CLOSED_CONNECTION:
        refuse(fr, 400, "malformed chunked body: %s", http_errno_description(e));
        break;
    default:
        refuse(fr, 400, "malformed request: %s (a request line or header that does not parse)",
               http_errno_description(e));
    }
}

void api__fr_init(struct api__fr *fr, const struct api__fr_limits *lim)
{
    memset(fr, 0, sizeof(*fr));
    fr->lim = *lim;
    http_parser_init(&fr->p, HTTP_REQUEST);
    fr->p.data = fr;
}

void api__fr_budget(struct api__fr *fr, size_t *used, size_t max)
{
    fr->mem_used = used;
    fr->mem_max = max;
}

size_t api__fr_take_charge(struct api__fr *fr)
{
    size_t n = fr->charged;
    fr->charged = 0;
    return n;
}

void api__fr_release(struct api__fr *fr)
{
    if (fr->mem_used)
        *fr->mem_used -= fr->charged;
    free(fr->raw);
    free(fr->url);
    for (int i = 0; i < fr->nh; i++) {
        free(fr->h[i].name);
        free(fr->h[i].value);
    }
    free(fr->h);
    free(fr->body);
    memset(fr, 0, sizeof(*fr));
}

size_t api__fr_feed(struct api__fr *fr, const char *data, size_t n)
{
    if (fr->status || fr->done || !n)
        return 0;
    if (!fr->head_done) {
        /* the parser is given no more than the head may still take: a head not done
         * within head_max bytes is refused however it arrives */
        if (n > fr->lim.head_max - fr->raw_len)
            n = fr->lim.head_max - fr->raw_len;
        if (!n) {
            refuse(fr, 431, "the request line and headers are over %zu bytes", fr->lim.head_max);
            return 0;
        }
        append(&fr->raw, &fr->raw_len, &fr->raw_cap, data, n);
    }
    size_t used = http_parser_execute(&fr->p, &settings, data, n);
    enum http_errno e = HTTP_PARSER_ERRNO(&fr->p);
    if (e != HPE_OK && e != HPE_PAUSED)
        parser_error(fr);
    else if (!fr->head_done && fr->raw_len >= fr->lim.head_max)
        refuse(fr, 431, "the request line and headers are over %zu bytes", fr->lim.head_max);
    return used;
}

char *api__fr_forward(const struct api__fr *fr, const char *front_header, size_t *len)
{
    char *head = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&head, &n);

    fprintf(f, "%s %s HTTP/%u.%u\r\n%s\r\n", http_method_str((enum http_method)fr->p.method),
            fr->url, fr->p.http_major, fr->p.http_minor, front_header);
    for (int i = 0; i < fr->nh; i++) {
        const char *name = fr->h[i].name;
        /* Upgrade: musterd speaks no other protocol (a WebSocket upgrade made civetweb answer
         * something the relay could not parse, and the client got an empty reply) */
        if (!strcasecmp(name, "Content-Length") || !strcasecmp(name, "Transfer-Encoding") ||
            !strcasecmp(name, "Expect") || !strcasecmp(name, "Upgrade"))
            continue;
        fprintf(f, "%s: %s\r\n", name, fr->h[i].value);
    }
    if (fr->has_length)
        fprintf(f, "Content-Length: %zu\r\n", fr->body_len);
    fputs("\r\n", f);
    fclose(f);
    /* the body copied once into a text of its size (through the stream, a big body was
     * copied again at every doubling of its buffer) */
    char *out = xrealloc(head, n + fr->body_len + 1);
    if (fr->body_len)
        memcpy(out + n, fr->body, fr->body_len);
    out[n + fr->body_len] = '\0';
    *len = n + fr->body_len;
    return out;
}
