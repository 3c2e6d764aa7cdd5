/* front_relay.c - the front end's side towards civetweb: loopback connections, a small
 * pool of idle ones, and answers relayed to the client as they come (http-parser finds
 * where each answer ends: Content-Length, chunked, or the close).
 *
 * Pooling: civetweb holds a worker for every connection it has, idle in keep-alive too,
 * so the pool is bounded (half the workers, FRONT_POOL_SHARE), short-lived (FRONT_POOL_IDLE_MS,
 * well under civetweb's keep_alive_timeout_ms, so musterd closes an idle one before civetweb does),
 * and a connection is pooled only while there are no more loopback connections than
 * workers: past that a new one may wait in civetweb's queue for the worker an idle one
 * holds, so the finished one is closed to free it.
 * A pooled connection that closes before a byte of the answer came back is tried again
 * once on a new one: civetweb closed it without reading the request. */
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <string.h>

#include "alloc.h"
#include "front_impl.h"
#include "log.h"

struct backend {
    struct api__front *f;
    struct bufferevent *bev;
    struct backend *next; /* f->idle */
    struct conn *c;       /* the client answered, NULL while pooled */
    http_parser rp;
    int done;       /* the answer is complete */
    int keep_alive; /* civetweb keeps the connection after it */
    int is_head;
    size_t sent; /* answer bytes relayed */
    int reused;  /* came from the pool */
    int stalled; /* reading stopped: the client does not take its answer */
    char *req;   /* the request, kept until the answer starts (for the one retry) */
    size_t req_len;
};

/* The client takes its answer again: its worker waits no more. */
static void unstall(struct backend *be)
{
    if (be->stalled)
        be->f->nstalled--;
    be->stalled = 0;
}

static void be_free(struct backend *be)
{
    if (!be)
        return;
    unstall(be);
    be->f->nbackend--;
    bufferevent_free(be->bev);
    free(be->req);
    free(be);
}

/* The client does not take its answer, so its worker waits (FRONT_STALL_SHARE). Returns
 * 0, or -1 when half the workers wait so already: the client is closed (be is freed). */
static int stall(struct backend *be)
{
    struct api__front *f = be->f;
    struct conn *c = be->c;

    if (be->stalled)
        return 0;
    if (f->nstalled < (f->workers + 1) / FRONT_STALL_SHARE) {
        be->stalled = 1;
        f->nstalled++;
        return 0;
    }
    log_warn("front end: %s does not read its answer while %d others wait the same way "
             "(half the workers): closed",
             c->info.address, f->nstalled);
    c->be = NULL;
    be_free(be);
    f->answered(c, 0, 0, 1);
    return -1;
}

static void pool_remove(struct backend *be)
{
    struct api__front *f = be->f;

    for (struct backend **p = &f->idle; *p; p = &(*p)->next) {
        if (*p == be) {
            *p = be->next;
            f->nidle--;
            return;
        }
    }
}

static int on_headers(http_parser *p)
{
    struct backend *be = p->data;
    return be->is_head ? 1 : 0; /* a HEAD answer has no body, whatever its length says */
}

static int on_complete(http_parser *p)
{
    struct backend *be = p->data;
    be->done = 1;
    be->keep_alive = http_should_keep_alive(p);
    http_parser_pause(p, 1);
    return 0;
}

static const http_parser_settings resp_settings = {
    .on_headers_complete = on_headers,
    .on_message_complete = on_complete,
};

static void be_read(struct bufferevent *bev, void *arg);
static void be_event(struct bufferevent *bev, short what, void *arg);

/* The answer is whole: pool or close the connection, then tell the client's side. */
static void finish(struct backend *be)
{
    struct api__front *f = be->f;
    struct conn *c = be->c;
    int keep = be->keep_alive;
    size_t sent = be->sent;

    be->c = NULL;
    if (keep && f->nidle < f->workers / FRONT_POOL_SHARE && f->nbackend <= f->workers &&
        evbuffer_get_length(bufferevent_get_input(be->bev)) == 0) {
        struct timeval idle = {FRONT_POOL_IDLE_MS / 1000, (FRONT_POOL_IDLE_MS % 1000) * 1000};
        free(be->req);
        be->req = NULL;
        be->next = f->idle;
        f->idle = be;
        f->nidle++;
        bufferevent_set_timeouts(be->bev, &idle, NULL);
        bufferevent_enable(be->bev, EV_READ);
    } else {
        be_free(be);
    }
    f->answered(c, 1, keep, (int)sent);
}

char *front__direct(struct api__front *f)
{
    if (!f->direct)
        f->direct = xmalloc(FRONT_DIRECT_READ);
    return f->direct;
}

/* Parses n bytes of civetweb's answer at data for its end. Returns the bytes that belong
 * to the answer, or -1 when it does not parse (be is freed, the client's side told). */
static ssize_t relay_parse(struct backend *be, const char *data, size_t n)
{
    size_t used = http_parser_execute(&be->rp, &resp_settings, data, n);
    enum http_errno e = HTTP_PARSER_ERRNO(&be->rp);
    if (e != HPE_OK && e != HPE_PAUSED) {
        struct conn *c = be->c;
        log_error("front end: civetweb's answer does not parse: %s", http_errno_name(e));
        c->be = NULL;
        be_free(be);
        c->f->answered(c, 0, 0, 1);
        return -1;
    }
    if (used) {
        free(be->req); /* the answer has started: no retry any more */
        be->req = NULL;
    }
    return (ssize_t)used;
}

/* The client's output is full: reading stops until it takes some (front__relay_resume),
 * unless stall freed be. */
static void full(struct backend *be)
{
    if (stall(be) == 0)
        bufferevent_disable(be->bev, EV_READ);
}

static void be_read(struct bufferevent *bev, void *arg)
{
    struct backend *be = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    if (!be->c) { /* pooled: civetweb says nothing unasked */
        pool_remove(be);
        be_free(be);
        return;
    }
    struct evbuffer *out = bufferevent_get_output(be->c->bev);
    while (!be->done && evbuffer_get_length(in) > 0) {
        if (evbuffer_get_length(out) >= FRONT_RELAY_CAP) {
            full(be);
            return;
        }
        struct evbuffer_iovec v;
        evbuffer_peek(in, -1, NULL, &v, 1);
        ssize_t used = relay_parse(be, v.iov_base, v.iov_len);
        if (used < 0)
            return;
        evbuffer_remove_buffer(in, out, (size_t)used);
        be->sent += (size_t)used;
        if (!used && !be->done)
            break;
    }
    /* The rest straight from the socket, as much as the client's output has room for, in
     * reads of up to FRONT_DIRECT_READ: libevent's 4 KiB a turn relayed a 26 MB list in
     * 6,400 turns. Bytes past the answer (there should be none) go back to the input. */
    while (!be->done && evbuffer_get_length(in) == 0) {
        size_t have = evbuffer_get_length(out);
        if (have >= FRONT_RELAY_CAP) {
            full(be);
            return;
        }
        size_t room = FRONT_RELAY_CAP - have;
        room = room < FRONT_DIRECT_READ ? room : FRONT_DIRECT_READ;
        char *buf = front__direct(be->f);
        ssize_t n = recv(bufferevent_getfd(bev), buf, room, MSG_DONTWAIT);
        if (n <= 0)
            break; /* nothing yet; the end and errors are for libevent's next read */
        ssize_t used = relay_parse(be, buf, (size_t)n);
        if (used < 0)
            return;
        evbuffer_add(out, buf, (size_t)used);
        be->sent += (size_t)used;
        if (used < n)
            evbuffer_prepend(in, buf + used, (size_t)(n - used));
        if ((size_t)n < room)
            break;
    }
    if (be->done)
        finish(be);
}

static void start_on(struct backend *be, struct conn *c)
{
    be->c = c;
    c->be = be;
    http_parser_init(&be->rp, HTTP_RESPONSE);
    be->rp.data = be;
    be->done = be->keep_alive = 0;
    be->sent = 0;
    be->is_head = c->is_head;
    bufferevent_set_timeouts(be->bev, NULL, NULL);
    bufferevent_write(be->bev, be->req, be->req_len);
    bufferevent_enable(be->bev, EV_READ | EV_WRITE);
}

static struct backend *be_new(struct api__front *f)
{
    struct backend *be = xcalloc(1, sizeof(*be));

    be->f = f;
    f->nbackend++;
    be->bev = bufferevent_socket_new(f->base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!be->bev || bufferevent_socket_connect(be->bev, (struct sockaddr *)&f->backend,
                                               sizeof(f->backend)) < 0) {
        be_free(be);
        return NULL;
    }
    /* requests go out in one write, answers come back in several: neither side may wait
     * for the other's delayed ACK */
    int one = 1;
    setsockopt(bufferevent_getfd(be->bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* a big request in writes of 1 MiB, not libevent's 16 KiB a turn (700 for a manifest
     * of 11 MiB) */
    bufferevent_set_max_single_write(be->bev, (size_t)1 << 20);
    bufferevent_setcb(be->bev, be_read, NULL, be_event, be);
    return be;
}

static void be_event(struct bufferevent *bev, short what, void *arg)
{
    struct backend *be = arg;
    struct conn *c = be->c;

    if (what & BEV_EVENT_CONNECTED)
        return;
    if (!c) { /* pooled: idle too long, or civetweb closed it */
        pool_remove(be);
        be_free(be);
        return;
    }
    if ((what & BEV_EVENT_EOF) && !be->done) {
        /* an answer that ends with the close */
        http_parser_execute(&be->rp, &resp_settings, NULL, 0);
        if (be->done) {
            be->keep_alive = 0;
            finish(be);
            return;
        }
    }
    if (be->reused && be->req && !be->sent) {
        /* civetweb closed the pooled connection as the request went out: once more */
        struct backend *fresh = be_new(be->f);
        if (fresh) {
            fresh->req = be->req;
            fresh->req_len = be->req_len;
            be->req = NULL;
            be_free(be);
            start_on(fresh, c);
            return;
        }
    }
    c->be = NULL;
    size_t sent = be->sent;
    be_free(be);
    c->f->answered(c, 0, 0, sent > 0);
}

void front__relay_start(struct conn *c, char *text, size_t len)
{
    struct api__front *f = c->f;
    struct backend *be = f->idle;

    if (be) {
        f->idle = be->next;
        f->nidle--;
        be->reused = 1;
    } else if (!(be = be_new(f))) {
        free(text);
        f->answered(c, 0, 0, 0);
        return;
    }
    be->req = text;
    be->req_len = len;
    start_on(be, c);
}

void front__relay_resume(struct backend *be)
{
    unstall(be);
    if (!(bufferevent_get_enabled(be->bev) & EV_READ)) {
        bufferevent_enable(be->bev, EV_READ);
        be_read(be->bev, be);
    }
}

void front__relay_abort(struct backend *be)
{
    be->c = NULL;
    be_free(be);
}

void front__pool_free(struct api__front *f)
{
    while (f->idle) {
        struct backend *be = f->idle;
        f->idle = be->next;
        be_free(be);
    }
    f->nidle = 0;
}
