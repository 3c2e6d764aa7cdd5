/*
 * front.h - musterd's front end (web/ internals): the public listener, ahead of civetweb.
 *
 * civetweb 1.15 gives each connection a worker thread from accept on and reads the request
 * on it, so a client that trickles bytes holds a worker. The front end (front_conn.c, one
 * libevent thread) owns the configured listener instead: it terminates TLS, reads each
 * request's head and whole body under time and size limits (front_req.c, http-parser), and
 * only then hands the complete request to civetweb, which listens on 127.0.0.1 on an
 * ephemeral port, over a short pool of loopback connections (front_relay.c). Answers are
 * relayed as they come, one request at a time per client connection (pipelined requests
 * wait in order), with backpressure when the client reads slowly.
 *
 * Framing is decided here, once: the forwarded request carries the body de-chunked with a
 * Content-Length, and an X-Muster-Front header first that civetweb's side trusts only with
 * the per-process secret (api__front_header_parse, checked in backend.c): the client's address,
 * TLS, and the verified client certificate's subject. A client that sends X-Muster-Front itself is
 * refused.
 *
 * A request the owner can answer at once (api__front_answer_fn: musterd's cached reads,
 * front_answer.c) is answered on this thread instead, with no hop to civetweb.
 *
 * Files: front_conn.c (listener, client connections, timers), front_req.c (reading one
 * request, front_req.h), front_relay.c (civetweb's side, front_impl.h), front_msg.c (error
 * answers, X-Muster-Front, front_msg.h), tls.c (the TLS context). The front end calls
 * nothing of the API's layers (routes, replies, handlers): what it knows of a request's
 * answer comes through the owner's api__front_answer_fn.
 */
#ifndef MUSTER_WEB_FRONT_H
#define MUSTER_WEB_FRONT_H

#include <stddef.h>

#include "cpus.h"
#include "front_req.h"

struct err;
struct api__front_info;

/* ---- front_conn.c: the listener and the client connections ---- */
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
    /* Called on a head whose body is still to come (fr's body not read): an answer (a
     * refusal: no credential, a role too low, ...) sent instead of reading the body, after
     * which the connection closes; NULL to read on. May be NULL. Same ctx. */
    api__front_answer_fn head_check;
    void *answer_ctx;
    size_t body_memory; /* request bodies held at once, all connections; 503 past it */
    int realtime;       /* the thread runs SCHED_FIFO (thread.h thread_interactive) */
    struct cpus cpus;   /* the thread's CPUs (cpus.h), unset: any */
};

/* Listens and starts the front end's thread. Returns 0, ERR_INVALID (a listen address
 * that does not parse) or ERR_IO (cannot listen). *out new; release with api__front_stop. */
int api__front_start(const struct api__front_options *o, struct api__front **out, struct err *err);
/* 0 when listen parses as api__front_start reads it, or ERR_INVALID naming it. */
int api__front_listen_check(const char *listen, struct err *err);
/* The port listened on. */
int api__front_port(const struct api__front *f);
/* 1 when the front end's thread runs a real-time policy (front_priority realtime, or an
 * operator's chrt). */
int api__front_realtime(const struct api__front *f);
/* Stops the thread and closes every connection (answers in flight are cut). NULL-safe. */
void api__front_stop(struct api__front *f);

#endif
