/* edge.c - the checks every request passes before routing: Host, Origin, Content-Type,
 * the path's encoding; the security headers.
 *
 * The front end (front_req.c) decides framing, the request line, the header names and
 * count before civetweb sees a request, and writes the head again cleanly: those rules
 * live there alone. docs/security.md ("The HTTP edge") lists which layer rejects what. */
#include <civetweb.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "front.h"
#include "internal.h"
#include "log.h"

/* Sent on every response: API replies (send_head), civetweb's own pages and files
 * (additional_header), and errors civetweb answers (http_error). The UI loads only its
 * own scripts and styles (no inline script or style), connects only to musterd, and may
 * not be framed. */
const char api__security_headers[] =
    "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "X-Frame-Options: DENY\r\n"
    "Referrer-Policy: no-referrer";

/* HSTS over HTTPS only (a browser ignores it over HTTP, RFC 6797 8.1): a year, the usual
 * value; no includeSubDomains, since musterd cannot speak for the names beside its own. */
#define HSTS "Strict-Transport-Security: max-age=31536000"

const char *api__headers(const struct api *api)
{
    return api->headers ? api->headers : api__security_headers;
}

char *api__headers_make(int tls)
{
    return tls ? xasprintf("%s\r\n%s", api__security_headers, HSTS)
               : xstrdup(api__security_headers);
}

/* 1 when the comma- or space-separated list holds s[0..n) (without case), or "*" when
 * star says so. */
static int list_has(const char *list, const char *s, size_t n, int star)
{
    for (const char *p = list; p && *p;) {
        p += strspn(p, ", \t");
        size_t len = strcspn(p, ", \t");
        if (len && ((star && len == 1 && *p == '*') || (len == n && !strncasecmp(p, s, n))))
            return 1;
        p += len;
    }
    return 0;
}

char *api__default_hosts(const char *listen_host)
{
    int wildcard = !listen_host[0] || !strcmp(listen_host, "0.0.0.0") ||
                   !strcmp(listen_host, "::") || !strcmp(listen_host, "[::]");

    return xasprintf("localhost,127.0.0.1,::1%s%s", wildcard ? "" : ",",
                     wildcard ? "" : listen_host);
}

/* The host name of a Host header value (no port, no IPv6 brackets) into out; -1 when
 * it does not parse. */
static int host_name(const char *host, char *out, size_t n)
{
    const char *end;

    if (host[0] == '[') {
        end = strchr(host, ']');
        if (!end || (end[1] && end[1] != ':'))
            return -1;
        host++;
    } else {
        end = host + strcspn(host, ":");
    }
    size_t len = (size_t)(end - host);
    if (!len || len >= n)
        return -1;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)host[i]) && !strchr("-._:", host[i]))
            return -1;
    memcpy(out, host, len);
    out[len] = '\0';
    return 0;
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

static int refuse(struct req *r, int code, const char *fmt, const char *arg)
{
    api__force_close(r);
    api__reply_errorf(r, code, fmt, arg);
    return -1;
}

/* DNS rebinding: a page of evil.example that resolves to 127.0.0.1 reaches musterd with
 * "Host: evil.example"; only names musterd serves are answered. */
static int host_ok(struct req *r)
{
    const char *host = api__header(r, "Host");
    char name[256];

    if (api__header_count(r, "Host") > 1)
        return refuse(r, ERR_INVALID, "%s: the request has more than one Host header",
                      "ambiguous target");
    if (!host || !*host)
        return refuse(r, ERR_INVALID, "the request has no Host header%s", "");
    if (host_name(host, name, sizeof(name)) < 0)
        return refuse(r, ERR_INVALID, "Host '%.100s' is not a host name or address", host);
    /* a liveness probe (kubelet's names the pod's IP) learns only that musterd is up */
    int probe = !strcmp(r->raw_path, "/healthz") &&
                (!strcmp(r->method, "GET") || !strcmp(r->method, "HEAD"));
    if (!probe && !list_has(r->api->allowed_hosts, name, strlen(name), 1)) {
        char *shown = xstrdup(host);
        api__utf8_scrub(shown);
        refuse(r, ERR_MISDIRECTED,
               "Host '%.100s' is not served here (config allowed_hosts lists the names "
               "musterd answers to)",
               shown);
        free(shown);
        return -1;
    }
    return 0;
}

int api__edge_ok(struct req *r)
{
    return host_ok(r);
}

const char *api__cors_origin(struct req *r)
{
    const char *origin = api__header(r, "Origin");

    if (!origin || !r->api->cors_origins)
        return NULL;
    return list_has(r->api->cors_origins, origin, strlen(origin), 0) ? origin : NULL;
}

/* 1 when origin is "http://" or "https://" followed by the request's own Host. */
static int same_origin(struct req *r, const char *origin)
{
    const char *host = api__header(r, "Host");
    const char *rest = !strncasecmp(origin, "http://", 7)    ? origin + 7
                       : !strncasecmp(origin, "https://", 8) ? origin + 8
                                                             : NULL;
    return host && rest && !strcasecmp(rest, host);
}

int api__origin_ok(struct req *r)
{
    const char *origin = api__header(r, "Origin");

    if (!origin || same_origin(r, origin) || api__cors_origin(r))
        return 0;
    char *shown = xstrdup(origin);
    api__utf8_scrub(shown);
    api__reply_errorf(r, ERR_FORBIDDEN,
                      "cross-origin request from '%.200s' refused (config cors_origins lists "
                      "the origins allowed to call musterd)",
                      shown);
    free(shown);
    return -1;
}

int api__content_format(const char *ctype, enum model_format *fmt)
{
    static const struct {
        const char *type;
        enum model_format fmt;
    } types[] = {
        {"application/json", MODEL_FMT_JSON},     {"application/yaml", MODEL_FMT_YAML},
        {"application/x-yaml", MODEL_FMT_YAML},   {"text/yaml", MODEL_FMT_YAML},
        {"text/x-yaml", MODEL_FMT_YAML},          {"application/x-ndjson", MODEL_FMT_NDJSON},
        {"application/ndjson", MODEL_FMT_NDJSON},
    };
    size_t n = ctype ? strcspn(ctype, "; \t") : 0;

    for (size_t i = 0; n && i < sizeof(types) / sizeof(types[0]); i++) {
        if (strlen(types[i].type) == n && !strncasecmp(ctype, types[i].type, n)) {
            *fmt = types[i].fmt;
            return 0;
        }
    }
    return -1;
}

int api__content_type_ok(struct req *r)
{
    const char *ct = api__header(r, "Content-Type");
    enum model_format fmt;
    int body = r->conn ? mg_get_request_info(r->conn)->content_length > 0 ||
                             api__header(r, "Transfer-Encoding")
                       : r->fr->body_len > 0;

    /* a browser can send a cross-site POST with a "simple" type (text/plain, a form) or
     * none without asking first; JSON and YAML need a CORS preflight, which fails */
    if (!strcmp(r->method, "DELETE") && !body)
        return 0;
    if (api__content_format(ct, &fmt) == 0)
        return 0;
    if (!ct || !*ct)
        api__reply_errorf(r, ERR_UNSUPPORTED,
                          "'%s' needs Content-Type application/json or application/yaml",
                          r->method);
    else
        api__reply_errorf(r, ERR_UNSUPPORTED,
                          "content type '%.*s' is not supported; use application/json, "
                          "application/yaml or application/x-ndjson",
                          (int)strcspn(ct, "; \t"), ct);
    return -1;
}

/* RFC 3986 2.1; -1 on a bad escape. */
static int hexval(int c)
{
    return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1;
}

int api__path_decode(const char *raw, size_t n, char **out, const char **why)
{
    char *s = xmalloc(n + 1);
    size_t k = 0;

    *why = NULL;
    for (size_t i = 0; i < n; i++) {
        if (raw[i] != '%') {
            s[k++] = raw[i];
            continue;
        }
        int hi = i + 1 < n ? hexval((unsigned char)raw[i + 1]) : -1;
        int lo = i + 2 < n ? hexval((unsigned char)raw[i + 2]) : -1;
        if (hi < 0 || lo < 0) {
            *why = "has a '%' that is not followed by two hex digits";
            break;
        }
        s[k] = (char)(hi << 4 | lo);
        if (!s[k]) {
            *why = "holds an encoded NUL byte (%00)";
            break;
        }
        k++;
        i += 2;
    }
    s[k] = '\0';
    if (*why) {
        free(s);
        *out = NULL;
        return -1;
    }
    *out = s;
    return 0;
}
