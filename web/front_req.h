/*
 * front_req.h - reading one HTTP request from a client, whole, under limits (front_req.c,
 * http-parser), and writing it again as civetweb gets it. No sockets and no threads: the
 * front end (front_conn.c) feeds it the bytes it reads; fuzz/fuzz_front.c drives it alone. It
 * calls nothing of web/ but the UTF-8 scrub (utf8.h), and refuses a client's own
 * X-Muster-Front header (front_msg.h names it).
 *
 * Calling sequence:
 *
 *     struct api__fr fr;
 *     api__fr_init(&fr, &limits);
 *     used = api__fr_feed(&fr, data, n);   repeat as bytes come, until fr.done (the
 *                                          rest is the next request's) or a refusal
 *                                          (fr.status != 0, fr.msg)
 *     text = api__fr_forward(&fr, front_header, &len);
 *     api__fr_release(&fr);
 *
 * Memory: with api__fr_budget, every request's body is charged to one counter shared by
 * all requests being read (the front end's one thread: no lock): the whole Content-Length
 * at the head, or a chunked body's buffer as it grows; a request that would take the
 * counter past its limit is refused with 503 (before any of its body is read, when the
 * length is known). The charge goes back at api__fr_release, or passes to the caller with
 * api__fr_take_charge.
 */
#ifndef MUSTER_WEB_FRONT_REQ_H
#define MUSTER_WEB_FRONT_REQ_H

#include <http_parser.h>
#include <stddef.h>

struct api__fr_limits {
    size_t head_max; /* request line and headers, bytes: 431 past it */
    int headers_max; /* header lines: 431 past it */
    size_t body_max; /* body bytes: 413 past it */
};

struct api__fr_header {
    char *name, *value; /* new */
};

/* One request being read. Everything is owned by it. */
struct api__fr {
    http_parser p;
    struct api__fr_limits lim;
    char *raw; /* the bytes fed until the head was complete (may run into the body) */
    size_t raw_len, raw_cap;
    char *url;
    size_t url_len, url_cap;
    struct api__fr_header *h;
    int nh, h_cap;
    int in_value; /* the last header callback was a value */
    char *body;
    size_t body_len, body_cap;
    int started;    /* a byte of this request arrived */
    int head_done;  /* the head is read and accepted */
    int done;       /* the whole request is read */
    int status;     /* a refusal's HTTP status, 0 while the request is fine */
    char msg[512];  /* the refusal's message */
    int has_length; /* the client sent Content-Length or chunked: forward a length */
    int chunked;
    int expect_continue; /* HTTP/1.1 "Expect: 100-continue" with a body to come */
    int keep_alive;      /* the client keeps the connection after this request (at done) */
    int is_head;         /* HEAD: the answer has no body whatever it says */
    size_t length;       /* the Content-Length announced (not chunked) */
    size_t *mem_used;    /* the shared charge (api__fr_budget), or NULL */
    size_t mem_max;
    size_t charged; /* this request's part of *mem_used */
};

void api__fr_init(struct api__fr *fr, const struct api__fr_limits *lim);
/* Charges fr's body to *used (borrowed, outlives fr), refusing past max (after init). */
void api__fr_budget(struct api__fr *fr, size_t *used, size_t max);
/* fr's charge, now the caller's to give back (fr's release no longer does). */
size_t api__fr_take_charge(struct api__fr *fr);
void api__fr_release(struct api__fr *fr);
/* Reads data[0..n). Returns the bytes consumed: all of them, or fewer when the request
 * is complete (fr->done: the bytes after it belong to the next request) or refused
 * (fr->status 400, 413, 431 or 505 with fr->msg). fr->head_done once the head is read
 * and accepted (the caller answers 100 Continue then and changes its timer). */
size_t api__fr_feed(struct api__fr *fr, const char *data, size_t n);
/* The request as civetweb gets it (new, *len bytes): the request line, front_header
 * ("X-Muster-Front: ..." without CRLF), the client's headers but Content-Length,
 * Transfer-Encoding and Expect, a Content-Length when there is a body, and the body. */
char *api__fr_forward(const struct api__fr *fr, const char *front_header, size_t *len);

#endif
