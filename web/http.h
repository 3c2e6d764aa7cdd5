/*
 * http.h - reading a request and replying to it, the same way on civetweb's worker (r->conn)
 * and on the front end's thread (r->conn NULL: the answer is written into r->out). Every
 * part above it (auth, reads, lists, handlers, routes) replies only through these.
 *
 *   headers.c   the request's headers by name; the header lines every answer carries
 *               (security headers, HSTS over HTTPS, CORS for a configured origin)
 *   reply.c     replies (JSON, errors, raw, chunked), the body and query parameters
 *   edge.c      the checks every request passes before routing (docs/security.md, "The
 *               HTTP edge"): Host, Origin, Content-Type; decoding the path
 *
 * A request gets exactly one reply. Helpers named *_or_reply send the error reply
 * themselves and return NULL (or -1), so callers read straight down:
 *
 *     char *ns = NULL;
 *     if (api__query_str_or_reply(r, "namespace", &ns) < 0)
 *         return;
 *
 * Inside, headers.c is below reply.c, which is below edge.c; below them they call only
 * utf8.h and the front end's request (front_req.h).
 */
#ifndef MUSTER_WEB_HTTP_H
#define MUSTER_WEB_HTTP_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "api_impl.h"
#include "err.h"
#include "model.h"
#include "utf8.h"

/* ---- headers.c ---- */
/* The header value or NULL (borrowed, valid during the request): the first of that name. */
const char *api__header(struct req *r, const char *name);
/* How many header lines of that name the request has. */
int api__header_count(struct req *r, const char *name);
/* 1 when the request's Accept-Encoding accepts gzip (a "gzip" token without q=0). */
int api__accepts_gzip(struct req *r);
/* 1 when the comma- or space-separated list holds s[0..n) (without case), or "*" when
 * star says so. */
int api__list_has(const char *list, const char *s, size_t n, int star);
/* The request's Origin when cors_origins lists it (borrowed), else NULL. */
const char *api__cors_origin(struct req *r);
/* The header lines every response carries ("Name: value" joined by "\r\n"), without
 * HSTS; api__headers adds it when musterd serves HTTPS. */
extern const char api__security_headers[];
const char *api__headers(const struct api *api);
/* The headers for a context serving HTTPS (tls) or HTTP; new. */
char *api__headers_make(int tls);

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
/* Makes the connection close after this reply instead of being kept alive. */
void api__force_close(struct req *r);
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

/* ---- edge.c: checks before routing ---- */
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
/* 0 when a mutation's Content-Type is JSON or YAML (a DELETE without a body needs
 * none); else replies 415 and returns -1. */
int api__content_type_ok(struct req *r);
/* 0 with *fmt for a JSON or YAML media type (parameters ignored), -1 otherwise. */
int api__content_format(const char *ctype, enum model_format *fmt);
/* Percent-decodes raw[0..n) into *out (new). -1 with *why (static text) on a '%' not
 * followed by two hex digits or an encoded NUL. */
int api__path_decode(const char *raw, size_t n, char **out, const char **why);

#endif
