/*
 * front_impl.h - what front_conn.c (client connections) and front_relay.c (civetweb's side)
 * share. Everything here runs on the front end's one event thread.
 *
 * A client connection goes HANDSHAKE (TLS) -> IDLE -> READING -> WAITING (its request is
 * with civetweb, reading from the client is off) -> IDLE again (kept alive) or CLOSING
 * (answer flushed, then a lingering close that reads and drops what the client still
 * sends, so the answer is not lost to a reset).
 */
#ifndef MUSTER_WEB_FRONT_IMPL_H
#define MUSTER_WEB_FRONT_IMPL_H

#include <event2/event.h>
#include <netinet/in.h>
#include <threads.h>

#include "front.h"
#include "front_msg.h"

/* Bytes of answer waiting for a client before civetweb's side is read no more. */
#define FRONT_RELAY_CAP (256 * 1024)
/* Answers stalled on clients that do not read hold a civetweb worker each. Up to 1 in
 * FRONT_STALL_SHARE workers may wait so (each for http_write_timeout at most); a client
 * whose answer stalls while that many already wait is closed at once, so slow readers
 * cannot take every worker, nor queue behind each other for long (front_relay.c). */
#define FRONT_STALL_SHARE 2
/* Idle loopback connections kept for the next request: at most one per FRONT_POOL_SHARE
 * civetweb workers, for FRONT_POOL_IDLE_MS. Each holds a worker while it is idle, so they
 * are short-lived and kept only while there are no more loopback connections than workers
 * (else one may wait in civetweb's queue behind it); a new connection per request costs
 * about half the throughput (bench/README.md), and busy readers keep several in flight. */
#define FRONT_POOL_SHARE 2
#define FRONT_POOL_IDLE_MS 1000

struct backend;
struct conn;

/* c's answer is relayed whole (ok) or civetweb's side failed (!ok: c is closed, with a 502
 * when nothing of the answer was sent). keep_alive: the answer lets the connection live. The
 * relay reports through it; front_conn.c gives it (front_relay.c calls nothing of front_conn.c). */
typedef void (*front__answered_fn)(struct conn *c, int ok, int keep_alive, int sent);

enum front_state { C_HANDSHAKE, C_IDLE, C_READING, C_WAITING, C_CLOSING, C_LINGER };

struct conn {
    struct api__front *f;
    struct conn *prev, *next; /* f->conns */
    struct bufferevent *bev;
    struct event *timer;
    enum front_state st;
    struct api__fr fr;
    int head_seen; /* fr's head was handled (100 Continue, body timer) */
    struct api__front_info info;
    struct backend *be; /* answering this connection's request, or NULL */
    int keep_alive;     /* the request in flight lets the connection live on */
    int is_head;
    int held;       /* reading stopped: answers given here wait for the client to read them */
    size_t charged; /* the forwarded request's body, of f->body_mem, until its answer */
};

struct api__front {
    struct event_base *base;
    struct evconnlistener *lis;
    struct event *stop_ev; /* made active by api__front_stop: the loop breaks itself */
    struct ssl_ctx_st *ssl;
    struct sockaddr_in backend;
    char secret[API_FRONT_SECRET_HEX + 1];
    const char *headers; /* borrowed from the api */
    struct api__fr_limits lim;
    struct timeval head_tv, body_tv, idle_tv, write_tv;
    int head_ms, body_ms;
    int max_conns, nconns;
    int port;
    thrd_t thread;
    struct conn *conns;
    struct backend *idle; /* pooled loopback connections */
    int nidle;
    int nbackend;     /* loopback connections open, pooled or answering */
    int workers;      /* civetweb's worker threads */
    int realtime;     /* the thread asks for SCHED_FIFO (api__front_options) */
    int realtime_on;  /* it runs a real-time policy (atomic: /metrics reads it) */
    struct cpus cpus; /* the thread's (api__front_options) */
    int nstalled;     /* relays waiting for a client to read (FRONT_STALL_SHARE) */
    api__front_answer_fn answer;
    api__front_answer_fn head_check;
    void *answer_ctx;
    size_t body_mem, body_mem_max; /* request bodies held, for all connections (front_req.h) */
    char *direct;                  /* front__direct's */
    front__answered_fn answered;   /* front_conn.c's, called by front_relay.c */
};

/* Bytes read straight from a socket at a time, past libevent's 4 KiB a turn
 * (EVBUFFER_MAX_READ in libevent 2.1): a request's body (front_conn.c) and civetweb's
 * answers (front_relay.c). */
#define FRONT_DIRECT_READ ((size_t)256 << 10)
/* ---- front_relay.c ---- */
/* f's buffer of FRONT_DIRECT_READ bytes for those reads (made at the first; freed with f). */
char *front__direct(struct api__front *f);
/* Sends text (taken) to civetweb for c, over a pooled connection or a new one; the answer
 * is relayed to c as it comes, then c->f->answered is called. */
void front__relay_start(struct conn *c, char *text, size_t len);
/* The client took some of its answer: read on from civetweb if the relay had stopped. */
void front__relay_resume(struct backend *be);
/* Drops be (the client is gone): closes the loopback connection. */
void front__relay_abort(struct backend *be);
/* Closes every pooled connection. */
void front__pool_free(struct api__front *f);

#endif
