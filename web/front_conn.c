/* front_conn.c - the front end's listener and client connections (front.h): TLS, the time
 * limits, reading whole requests before civetweb sees them, closing politely. */
#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <event2/util.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <threads.h>
#include <unistd.h>

#include "alloc.h"
#include "err.h"
#include "front_impl.h"
#include "log.h"
#include "thread.h"
#include "tls.h"

/* How long a closed connection keeps reading (and dropping) what the client still sends. */
#define FRONT_LINGER_MS 2000

static struct timeval tv_of(int ms)
{
    return (struct timeval){ms / 1000, (ms % 1000) * 1000};
}

static void arm(struct conn *c, const struct timeval *tv)
{
    evtimer_add(c->timer, tv);
}

/* c's request reader, new and charged to the front end's body budget. */
static void fr_new(struct conn *c)
{
    api__fr_init(&c->fr, &c->f->lim);
    api__fr_budget(&c->fr, &c->f->body_mem, c->f->body_mem_max);
}

/* The forwarded request is answered: its body's charge goes back. */
static void uncharge(struct conn *c)
{
    c->f->body_mem -= c->charged;
    c->charged = 0;
}

static void conn_free(struct conn *c)
{
    struct api__front *f = c->f;

    if (c->be)
        front__relay_abort(c->be);
    if (c->prev)
        c->prev->next = c->next;
    else
        f->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    event_free(c->timer);
    /* what the client sent and no one read would make the close a reset, which loses
     * what was written last (a failed handshake's alert, an answer) */
    char drop[4096];
    evutil_socket_t fd = bufferevent_getfd(c->bev);
    while (fd >= 0 && recv(fd, drop, sizeof(drop), MSG_DONTWAIT) > 0)
        ;
    bufferevent_free(c->bev);
    api__fr_release(&c->fr);
    uncharge(c);
    f->nconns--;
    free(c);
}

/* The answer is out: end the connection without losing it to a reset. */
static void linger(struct conn *c)
{
    struct timeval tv = tv_of(FRONT_LINGER_MS);

    if (c->info.tls) {
        conn_free(c); /* bufferevent_openssl sends close_notify */
        return;
    }
    c->st = C_LINGER;
    shutdown(bufferevent_getfd(c->bev), SHUT_WR);
    evtimer_del(c->timer);
    arm(c, &tv);
    bufferevent_enable(c->bev, EV_READ);
}

/* Writes text to c's client. On plain TCP with nothing queued before it, it is sent at once:
 * a bufferevent would add the socket's write interest, wait for the loop to report it
 * writable, write, and drop the interest again (two epoll changes and a wake-up more for
 * each cached answer, bench/README.md "Reads at 5,000 req/s"). What the socket does not
 * take, and anything on TLS, goes through the bufferevent, in order. */
static void put(struct conn *c, const char *text, size_t len)
{
    size_t sent = 0;

    if (!c->info.tls && evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
        ssize_t n = send(bufferevent_getfd(c->bev), text, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0)
            sent = (size_t)n;
    }
    if (sent < len)
        bufferevent_write(c->bev, text + sent, len - sent);
}

/* Ends c once its output is written. */
static void closing(struct conn *c)
{
    c->st = C_CLOSING;
    evtimer_del(c->timer);
    bufferevent_disable(c->bev, EV_READ);
    if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
        linger(c);
}

static void fail(struct conn *c, int status, const char *msg)
{
    size_t len = 0;
    char *text = api__front_error(status, msg, c->f->headers, &len);

    put(c, text, len);
    free(text);
    log_info("rejected by the front end: %d %s (from %s)", status, msg, c->info.address);
    closing(c);
}

/* The whole request is read: hand it to civetweb and read no more from this client until
 * its answer is out (pipelined requests wait in the input buffer, in order). */
static void forward(struct conn *c)
{
    struct api__front *f = c->f;
    char *header = api__front_header_value(f->secret, &c->info);
    size_t len = 0;
    char *text = api__fr_forward(&c->fr, header, &len);

    free(header);
    c->keep_alive = c->fr.keep_alive;
    c->is_head = c->fr.is_head;
    c->charged = api__fr_take_charge(&c->fr); /* civetweb holds a copy until it answers */
    api__fr_release(&c->fr);
    fr_new(c);
    c->head_seen = 0;
    c->st = C_WAITING;
    evtimer_del(c->timer);
    bufferevent_disable(c->bev, EV_READ);
    front__relay_start(c, text, len);
}

/* Answers c's request here with the owner's fn (answer or head_check), without civetweb.
 * Returns 1 when answered (c is IDLE again, or CLOSING), 0 when fn gave nothing. */
static int here(struct conn *c, api__front_answer_fn fn)
{
    struct api__front *f = c->f;
    size_t len = 0;
    int keep = 0;
    char *text = fn ? fn(f->answer_ctx, &c->fr, &c->info, &len, &keep) : NULL;

    if (!text)
        return 0;
    put(c, text, len);
    free(text);
    keep = keep && c->fr.keep_alive && c->fr.done;
    api__fr_release(&c->fr);
    fr_new(c);
    c->head_seen = 0;
    evtimer_del(c->timer);
    if (!keep) {
        closing(c);
        return 1;
    }
    c->st = C_IDLE;
    arm(c, &f->idle_tv);
    return 1;
}

/* The whole request is read: answers it here when the owner can at once (a cached read,
 * api__front_answer_fn). */
static int answer_here(struct conn *c)
{
    return here(c, c->f->answer);
}

/* A head whose body is still to come: the owner checks what the head alone decides (the
 * credential and role above all), so that a request nobody may send has no body read and
 * holds no memory. Returns 1 when refused (c is CLOSING: the unread body ends it). */
static int refused_at_head(struct conn *c)
{
    return here(c, c->f->head_check);
}

/* At most this much body is read straight from one connection's socket per callback (the
 * connections after it in the loop get their turn). */
#define DIRECT_TURN ((size_t)4 << 20)

/* Once c's head is handled and its input buffer is empty, the rest of its body is read
 * here, from the socket, in reads of FRONT_DIRECT_READ: libevent 2.1 reads at most 4 KiB a
 * callback (EVBUFFER_MAX_READ), so an 11 MiB manifest took 2,900 wake-ups of the loop.
 * Bytes past the request (a pipelined one's) go back to the input buffer, ahead of
 * anything libevent reads later; the end of the stream and errors are left for libevent's
 * next read to find. TLS connections read through their bufferevent. Returns the bytes
 * the request reader consumed. */
static size_t body_direct(struct conn *c, struct evbuffer *in)
{
    size_t took = 0;

    if (c->info.tls || !c->head_seen || c->fr.done || c->fr.status || evbuffer_get_length(in) > 0)
        return 0;
    char *buf = front__direct(c->f);
    while (took < DIRECT_TURN && !c->fr.done && !c->fr.status) {
        ssize_t n = recv(bufferevent_getfd(c->bev), buf, FRONT_DIRECT_READ, MSG_DONTWAIT);
        if (n <= 0)
            break;
        size_t used = api__fr_feed(&c->fr, buf, (size_t)n);
        took += used;
        if (used < (size_t)n)
            evbuffer_prepend(in, buf + used, (size_t)n - used);
        if ((size_t)n < FRONT_DIRECT_READ)
            break; /* the socket is empty: one read saved */
    }
    return took;
}

/* Feeds what the client sent to the request reader. */
static void process(struct conn *c)
{
    struct evbuffer *in = bufferevent_get_input(c->bev);

    while ((c->st == C_IDLE || c->st == C_READING) && evbuffer_get_length(in) > 0) {
        struct evbuffer_iovec v;
        /* pipelined requests answered here: no more than FRONT_RELAY_CAP waits for a
         * client that does not read (on_write reads on) */
        if (evbuffer_get_length(bufferevent_get_output(c->bev)) >= FRONT_RELAY_CAP) {
            c->held = 1;
            bufferevent_disable(c->bev, EV_READ);
            return;
        }
        if (c->st == C_IDLE && c->info.tls &&
            !api__tls_session_current(bufferevent_openssl_get_ssl(c->bev))) {
            /* tls_client_ca was replaced since this connection's handshake: what it
             * verified no longer holds (docs/security.md "TLS") */
            log_info("front end: %s: the client CA changed since its handshake: closed",
                     c->info.address);
            conn_free(c);
            return;
        }
        if (c->st == C_IDLE) {
            c->st = C_READING;
            evtimer_del(c->timer);
            arm(c, &c->f->head_tv);
        }
        evbuffer_peek(in, -1, NULL, &v, 1);
        size_t used = api__fr_feed(&c->fr, v.iov_base, v.iov_len);
        evbuffer_drain(in, used);
        if (c->fr.status) {
            fail(c, c->fr.status, c->fr.msg);
            return;
        }
        if (c->fr.head_done && !c->head_seen) {
            c->head_seen = 1;
            if (!c->fr.done && refused_at_head(c))
                return;
            if (c->fr.expect_continue && !c->fr.done)
                put(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
            evtimer_del(c->timer);
            arm(c, &c->f->body_tv);
        }
        used += body_direct(c, in);
        if (c->fr.status) {
            fail(c, c->fr.status, c->fr.msg);
            return;
        }
        if (c->fr.done) {
            if (answer_here(c))
                continue;
            forward(c);
            return;
        }
        if (!used)
            break;
    }
}

/* The relay's report (front_impl.h's front__answered_fn). */
static void answered(struct conn *c, int ok, int keep_alive, int sent)
{
    c->be = NULL;
    uncharge(c);
    if (!ok) {
        if (!sent) {
            fail(c, 502, "musterd's HTTP workers did not answer the request");
            return;
        }
        conn_free(c);
        return;
    }
    if (!keep_alive || !c->keep_alive) {
        closing(c);
        return;
    }
    c->st = C_IDLE;
    arm(c, &c->f->idle_tv);
    bufferevent_enable(c->bev, EV_READ);
    process(c);
}

static void on_read(struct bufferevent *bev, void *arg)
{
    struct conn *c = arg;

    if (c->st == C_CLOSING || c->st == C_LINGER) {
        struct evbuffer *in = bufferevent_get_input(bev);
        evbuffer_drain(in, evbuffer_get_length(in));
        return;
    }
    process(c);
}

static void on_write(struct bufferevent *bev, void *arg)
{
    struct conn *c = arg;
    size_t out = evbuffer_get_length(bufferevent_get_output(bev));

    if (c->be && out < FRONT_RELAY_CAP) {
        front__relay_resume(c->be);
    } else if (c->st == C_CLOSING && out == 0) {
        linger(c);
    } else if (c->held && out < FRONT_RELAY_CAP) {
        c->held = 0;
        bufferevent_enable(c->bev, EV_READ);
        process(c);
    }
}

/* The verified client certificate's subject, RFC 2253 ("CN=alice,O=team"). */
static void peer_subject(struct conn *c)
{
    SSL *ssl = bufferevent_openssl_get_ssl(c->bev);
    X509 *cert = ssl ? SSL_get0_peer_certificate(ssl) : NULL;

    if (!cert || SSL_get_verify_result(ssl) != X509_V_OK)
        return;
    BIO *bio = BIO_new(BIO_s_mem());
    if (!bio)
        return;
    if (X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253) >= 0) {
        int n = BIO_read(bio, c->info.subject, (int)sizeof(c->info.subject) - 1);
        c->info.subject[n > 0 ? n : 0] = '\0';
    }
    BIO_free(bio);
}

static void on_event(struct bufferevent *bev, short what, void *arg)
{
    struct conn *c = arg;

    if (what & BEV_EVENT_CONNECTED) {
        peer_subject(c);
        c->st = C_IDLE;
        evtimer_del(c->timer);
        arm(c, &c->f->head_tv); /* the first request's head: from the handshake's end */
        return;
    }
    if ((what & BEV_EVENT_TIMEOUT) && (what & BEV_EVENT_WRITING))
        log_info("front end: %s does not read its answer: closed after %ld s", c->info.address,
                 (long)c->f->write_tv.tv_sec);
    conn_free(c);
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    struct conn *c = arg;
    char msg[256];

    if (c->st == C_READING && c->fr.started) {
        int body = c->fr.head_done;
        snprintf(msg, sizeof(msg), "the request %s was not complete within %.1f s (config %s)",
                 body ? "body" : "head", (body ? c->f->body_ms : c->f->head_ms) / 1000.0,
                 body ? "http_body_timeout" : "http_head_timeout");
        fail(c, 408, msg);
        return;
    }
    if (c->st == C_WAITING)
        return;
    conn_free(c); /* a handshake or an idle connection: nothing to answer */
}

static void on_accept(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                      int salen, void *arg)
{
    struct api__front *f = arg;
    int one = 1;

    if (f->nconns >= f->max_conns) {
        log_warn("front end: %d connections open (config http_max_connections): one refused",
                 f->nconns);
        evutil_closesocket(fd);
        return;
    }
    struct conn *c = xcalloc(1, sizeof(*c));
    c->f = f;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((struct sockaddr_in *)sa)->sin_addr, c->info.address,
                  sizeof(c->info.address));
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((struct sockaddr_in6 *)sa)->sin6_addr, c->info.address,
                  sizeof(c->info.address));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (f->ssl) {
        SSL *ssl = SSL_new(f->ssl);
        c->info.tls = 1;
        c->st = C_HANDSHAKE;
        c->bev = ssl ? bufferevent_openssl_socket_new(f->base, fd, ssl, BUFFEREVENT_SSL_ACCEPTING,
                                                      BEV_OPT_CLOSE_ON_FREE)
                     : NULL;
        if (c->bev)
            bufferevent_openssl_set_allow_dirty_shutdown(c->bev, 1);
    } else {
        c->st = C_IDLE;
        c->bev = bufferevent_socket_new(f->base, fd, BEV_OPT_CLOSE_ON_FREE);
    }
    if (!c->bev) {
        evutil_closesocket(fd);
        free(c);
        return;
    }
    fr_new(c);
    c->timer = evtimer_new(f->base, on_timer, c);
    c->next = f->conns;
    if (f->conns)
        f->conns->prev = c;
    f->conns = c;
    f->nconns++;
    bufferevent_setcb(c->bev, on_read, on_write, on_event, c);
    bufferevent_setwatermark(c->bev, EV_READ, 0, 64 * 1024);
    bufferevent_setwatermark(c->bev, EV_WRITE, FRONT_RELAY_CAP / 2, 0);
    /* an answer goes out in writes of what is waiting, not libevent's 16 KiB a turn */
    bufferevent_set_max_single_write(c->bev, FRONT_RELAY_CAP);
    bufferevent_set_timeouts(c->bev, NULL, &f->write_tv);
    bufferevent_enable(c->bev, EV_READ | EV_WRITE);
    arm(c, &f->head_tv);
}

/* On the loop's thread. A loopbreak from another thread before the loop has started is
 * lost (event_base_loop clears the flag when it starts), so stopping activates this event,
 * which waits for the loop if need be. */
static void on_stop(evutil_socket_t fd, short what, void *arg)
{
    struct api__front *f = arg;
    (void)fd;
    (void)what;
    event_base_loopbreak(f->base);
}

static int loop_main(void *arg)
{
    struct api__front *f = arg;
    /* woken by a request, it runs ahead of the CPU-bound cycle and apply threads
     * instead of after their slices, or with front_priority realtime at once (thread.h;
     * bench/README.md "Reads under load") */
    int refused = thread_interactive("musterd-front", f->realtime);
    int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
    int rt = policy == SCHED_FIFO || policy == SCHED_RR; /* ours, or an operator's (chrt) */
    if (refused) /* api_check found it allowed: a limit changed since */
        log_warn("front end: SCHED_FIFO refused (%s): it runs with a short time slice",
                 strerror(refused));
    else if (f->realtime)
        log_info("front end: %s (front_priority realtime)",
                 rt ? "a real-time thread" : "the policy the process was started with, kept");
    __atomic_store_n(&f->realtime_on, rt, __ATOMIC_RELAXED);
    thread_pin("front end", "front_cpus", &f->cpus);
    event_base_dispatch(f->base);
    return 0;
}

static void use_threads(void)
{
    evthread_use_pthreads();
}

/* "ADDR:PORT", ":PORT", "PORT", "localhost:PORT", "[::1]:PORT" into ss. */
static int parse_listen(const char *listen, struct sockaddr_storage *ss, int *len, struct err *err)
{
    const char *colon = strrchr(listen, ':');
    const char *port = colon ? colon + 1 : listen;
    char *end = NULL, spec[300];

    long v = strtol(port, &end, 10);
    if (!*port || *end || v < 0 || v > 65535)
        return err_set(err, ERR_INVALID, "listen address '%s' needs ADDR:PORT", listen);
    /* libevent's parser refuses port 0: parse with port 1, then set the port */
    if (!colon || colon == listen)
        snprintf(spec, sizeof(spec), "0.0.0.0:1");
    else if (!strncmp(listen, "localhost:", 10))
        snprintf(spec, sizeof(spec), "127.0.0.1:1");
    else
        snprintf(spec, sizeof(spec), "%.*s:1", (int)(colon - listen), listen);
    *len = (int)sizeof(*ss);
    if (evutil_parse_sockaddr_port(spec, (struct sockaddr *)ss, len) < 0)
        return err_set(err, ERR_INVALID, "listen address '%s' needs ADDR:PORT (an IP address)",
                       listen);
    if (ss->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)v);
    else
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)v);
    return 0;
}

int api__front_listen_check(const char *listen, struct err *err)
{
    struct sockaddr_storage ss;
    int len;
    return parse_listen(listen, &ss, &len, err);
}

int api__front_start(const struct api__front_options *o, struct api__front **out, struct err *err)
{
    static once_flag threads_once = ONCE_FLAG_INIT;
    struct sockaddr_storage ss;
    int sslen = 0, rc = 0;

    *out = NULL;
    if ((rc = parse_listen(o->listen, &ss, &sslen, err)) < 0)
        return rc;
    call_once(&threads_once, use_threads);
    struct api__front *f = xcalloc(1, sizeof(*f));
    f->ssl = o->ssl;
    f->lim = o->lim;
    snprintf(f->secret, sizeof(f->secret), "%s", o->secret);
    f->head_ms = o->head_timeout_ms;
    f->body_ms = o->body_timeout_ms;
    f->head_tv = tv_of(o->head_timeout_ms);
    f->body_tv = tv_of(o->body_timeout_ms);
    f->idle_tv = tv_of(o->idle_timeout_ms);
    f->write_tv = tv_of(o->write_timeout_ms);
    f->max_conns = o->max_connections;
    f->workers = o->backend_workers;
    f->realtime = o->realtime;
    f->cpus = o->cpus;
    f->headers = o->headers;
    f->answer = o->answer;
    f->head_check = o->head_check;
    f->answer_ctx = o->answer_ctx;
    f->body_mem_max = o->body_memory > o->lim.body_max ? o->body_memory : o->lim.body_max;
    f->answered = answered;
    f->backend = (struct sockaddr_in){.sin_family = AF_INET,
                                      .sin_port = htons((uint16_t)o->backend_port),
                                      .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    f->base = event_base_new();
    if (f->base)
        f->lis = evconnlistener_new_bind(f->base, on_accept, f,
                                         LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, 1024,
                                         (struct sockaddr *)&ss, sslen);
    if (!f->lis) {
        rc = err_set(err, ERR_IO, "cannot listen on '%s': %s", o->listen, strerror(errno));
        goto out;
    }
    if (!(f->stop_ev = event_new(f->base, -1, 0, on_stop, f))) {
        rc = err_set(err, ERR_IO, "cannot make the front end's stop event");
        goto out;
    }
    ss = (struct sockaddr_storage){0};
    socklen_t got = sizeof(ss);
    getsockname(evconnlistener_get_fd(f->lis), (struct sockaddr *)&ss, &got);
    f->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                             : ((struct sockaddr_in *)&ss)->sin_port);
    if (thrd_create(&f->thread, loop_main, f) != thrd_success) {
        rc = err_set(err, ERR_IO, "cannot start the front end's thread");
        goto out;
    }
out:
    if (rc < 0) {
        if (f->stop_ev)
            event_free(f->stop_ev);
        if (f->lis)
            evconnlistener_free(f->lis);
        if (f->base)
            event_base_free(f->base);
        free(f);
        return rc;
    }
    *out = f;
    return 0;
}

int api__front_realtime(const struct api__front *f)
{
    return __atomic_load_n(&f->realtime_on, __ATOMIC_RELAXED);
}

int api__front_port(const struct api__front *f)
{
    return f->port;
}

void api__front_stop(struct api__front *f)
{
    if (!f)
        return;
    event_active(f->stop_ev, 0, 0);
    thrd_join(f->thread, NULL);
    event_free(f->stop_ev);
    evconnlistener_free(f->lis);
    while (f->conns)
        conn_free(f->conns);
    front__pool_free(f);
    event_base_free(f->base);
    free(f->direct);
    free(f);
}
