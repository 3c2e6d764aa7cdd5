/*
 * front.h - musterd's front end (web/ internals): the public listener, ahead of civetweb.
 *
 * civetweb 1.15 gives each connection a worker thread from accept on and reads the request
 * on it, so a client that trickles bytes holds a worker. The front end (front.c, one
 * libevent thread) owns the configured listener instead: it terminates TLS, reads each
 * request's head and whole body under time and size limits (front_req.c, http-parser), and
 * only then hands the complete request to civetweb, which listens on 127.0.0.1 on an
 * ephemeral port, over a short pool of loopback connections (front_relay.c). Answers are
 * relayed as they come, one request at a time per client connection (pipelined requests
 * wait in order), with backpressure when the client reads slowly.
 *
 * Framing is decided here, once: the forwarded request carries the body de-chunked with a
 * Content-Length, and an X-Muster-Front header first that civetweb's side trusts only with
 * the per-process secret (api__front_header_parse, checked in api.c): the client's address, TLS,
 * and the verified client certificate's subject. A client that sends X-Muster-Front itself is
 * refused.
 *
 * A request the owner can answer at once (api__front_answer_fn: musterd's cached reads,
 * front_answer.c) is answered on this thread instead, with no hop to civetweb.
 *
 * Files: front.c (listener, client connections, timers), front_req.c (reading one
 * request), front_relay.c (civetweb's side), front_msg.c (error answers, X-Muster-Front).
 *
 * Calling sequence (front_req.c, no sockets; fuzz/fuzz_front.c drives it):
 *
 *     struct api__fr fr;
 *     api__fr_init(&fr, &limits);
 *     used = api__fr_feed(&fr, data, n);   repeat as bytes come, until fr.done (the
 *                                          rest is the next request's) or a refusal
 *                                          (fr.status != 0, fr.msg)
 *     text = api__fr_forward(&fr, front_header, &len);
 *     api__fr_release(&fr);
 */
#ifndef MUSTER_WEB_FRONT_H
#define MUSTER_WEB_FRONT_H

#include <http_parser.h>
#include <stddef.h>

struct err;

#define API_FRONT_HEADER "X-Muster-Front"
#define API_FRONT_SECRET_HEX 64 /* 32 random bytes */

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
};

void api__fr_init(struct api__fr *fr, const struct api__fr_limits *lim);
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

/* ---- front_msg.c ---- */
/* A whole error answer (new, *len bytes): status, the API's JSON error body with msg,
 * headers (the security header lines, api__headers) and "Connection: close". */
char *api__front_error(int status, const char *msg, const char *headers, size_t *len);

/* What the front end tells civetweb's side about a request. */
struct api__front_info {
    char address[64]; /* the client's IP address */
    int tls;
    char subject[512]; /* the verified client certificate's subject (RFC 2253), or "" */
};
/* The X-Muster-Front value for info with secret (new). */
char *api__front_header_value(const char *secret, const struct api__front_info *info);
/* 0 with *out filled when value carries secret (compared in constant time), else -1. */
int api__front_header_parse(const char *value, const char *secret, struct api__front_info *out);

/* ---- front.c: the listener and the client connections ---- */
struct ssl_ctx_st;
struct api__front;

/* The owner's answer to a whole request read (fr, info borrowed): the answer text (new,
 * *len bytes; *keep_alive: the connection lives on after it) when it can be given at once
 * on the front end's thread, without waiting for anything; NULL to hand the request to
 * civetweb. */
typedef char *(*api__front_answer_fn)(void *ctx, const struct api__fr *fr,
                                      const struct api__front_info *info, size_t *len,
                                      int *keep_alive);

struct api__front_options {
    const char *listen;     /* "ADDR:PORT", ":PORT" or "PORT"; port 0 picks one */
    struct ssl_ctx_st *ssl; /* TLS; NULL: plain HTTP. Borrowed, must outlive the front */
    int backend_port;       /* civetweb's port on 127.0.0.1 */
    int backend_workers;    /* civetweb's worker threads */
    const char *secret;     /* API_FRONT_SECRET_HEX hex digits */
    const char *headers;    /* security header lines for its own answers; borrowed */
    struct api__fr_limits lim;
    int head_timeout_ms;         /* head (and TLS handshake) from its first byte */
    int body_timeout_ms;         /* the whole body, however steadily it arrives */
    int idle_timeout_ms;         /* a kept-alive connection between requests */
    int write_timeout_ms;        /* an answer the client does not read */
    int max_connections;         /* open client connections; more are closed at once */
    api__front_answer_fn answer; /* may be NULL: every request is relayed */
    void *answer_ctx;
};

/* Listens and starts the front end's thread. Returns 0, ERR_INVALID (a listen address
 * that does not parse) or ERR_IO (cannot listen). *out new; release with api__front_stop. */
int api__front_start(const struct api__front_options *o, struct api__front **out, struct err *err);
/* The port listened on. */
int api__front_port(const struct api__front *f);
/* Stops the thread and closes every connection (answers in flight are cut). NULL-safe. */
void api__front_stop(struct api__front *f);

#endif
