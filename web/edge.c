/* edge.c - the checks every request passes before routing: Host, Origin, Content-Type,
 * the path's encoding (the header lines every answer carries are headers.c's).
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
#include "front_req.h"
#include "http.h"
#include "log.h"
#include "model.h"

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
    if (!probe && !api__list_has(r->api->allowed_hosts, name, strlen(name), 1)) {
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
