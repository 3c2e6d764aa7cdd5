/* headers.c - the request's headers, read the same way on civetweb's worker (conn) and on
 * the front end's thread (fr), and the header lines every answer carries: the security
 * headers and, for a configured origin, CORS. */
#include <civetweb.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "front_req.h"
#include "http.h"

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
int api__list_has(const char *list, const char *s, size_t n, int star)
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

const char *api__header(struct req *r, const char *name)
{
    if (r->conn)
        return mg_get_header(r->conn, name);
    for (int i = 0; r->fr && i < r->fr->nh; i++)
        if (!strcasecmp(r->fr->h[i].name, name))
            return r->fr->h[i].value;
    return NULL;
}

int api__header_count(struct req *r, const char *name)
{
    int n = 0;
    if (r->conn) {
        const struct mg_request_info *ri = mg_get_request_info(r->conn);
        for (int i = 0; i < ri->num_headers; i++)
            n += !strcasecmp(ri->http_headers[i].name, name);
    } else {
        for (int i = 0; r->fr && i < r->fr->nh; i++)
            n += !strcasecmp(r->fr->h[i].name, name);
    }
    return n;
}

const char *api__cors_origin(struct req *r)
{
    const char *origin = api__header(r, "Origin");

    if (!origin || !r->api->cors_origins)
        return NULL;
    return api__list_has(r->api->cors_origins, origin, strlen(origin), 0) ? origin : NULL;
}

int api__accepts_gzip(struct req *r)
{
    const char *h = api__header(r, "Accept-Encoding");
    while (h && *h) {
        h += strspn(h, " \t,");
        size_t n = strcspn(h, ",");
        size_t name = strcspn(h, " \t;,");
        if (name == 4 && !strncasecmp(h, "gzip", 4)) {
            const char *qv = memchr(h, ';', n);
            if (!qv)
                return 1;
            qv += 1 + strspn(qv + 1, " \t");
            /* q=0, q=0.0, q=0.000: refused; any other weight accepts */
            if (strncasecmp(qv, "q=", 2) != 0)
                return 1;
            for (qv += 2; qv < h + n && (*qv == '0' || *qv == '.'); qv++)
                ;
            return qv < h + n && *qv >= '1' && *qv <= '9';
        }
        h += n;
    }
    return 0;
}
