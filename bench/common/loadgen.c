/*
 * loadgen.c - the open-loop load generator (loadgen.h).
 *
 * Each thread waits in epoll_pwait2 until its next request is due (a timeout in
 * nanoseconds), for answers on its connections, or for the stop eventfd. A connection is
 * registered for reading once, when it is opened; a request is one send(2) of a GET
 * written here, and an answer is read with recvmsg(2) (with the kernel's receive
 * timestamp of its last bytes, SO_TIMESTAMPNS) and framed by http_parser
 * (Content-Length, chunked or the close), the parser musterd's front end reads requests
 * with. So a request costs the generator three system calls (send, recv, a share of
 * epoll_pwait2) and one or two wake-ups.
 *
 * It was written on libcurl's multi-socket interface first (as libcurl's own multi-event
 * example drives it): that took 76 ms of CPU per 1,000 requests at 5,000 req/s on this
 * machine, more than musterd spent answering them, in three timerfd changes, two polls
 * that check a kept connection is alive and two epoll changes per request. A generator that
 * shares two cores with the server it measures must cost less than what it measures.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <http_parser.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "cpus.h"
#include "loadgen.h"
#include "thread.h"

#define LATE_NS 1000000 /* a request sent later than this after it was due counts as late */

struct conn {
    struct gen *g;
    int fd;
    int at;   /* its index in g->all */
    int busy; /* a request is out */
    int done; /* its answer ended (http_parser's on_message_complete) */
    long k;
    int64_t due;
    int64_t sent;       /* when it was sent */
    int64_t sent_rt;    /* the same on CLOCK_REALTIME, the clock of the kernel's timestamps */
    int64_t arrived_rt; /* when the answer's last bytes reached the socket (SO_TIMESTAMPNS) */
    http_parser p;
};

/* One generator thread: the requests k = its first, first + stride, first + 2 stride ... */
struct gen {
    struct loadgen_options o; /* conns: its own share */
    struct sockaddr_in addr;
    char host[64]; /* host:port, for the Host header */
    int ep, stop_fd;
    thrd_t thread;
    long stride;        /* the generator's threads */
    struct conn **all;  /* the open connections */
    struct conn **idle; /* those with no request out */
    int nidle, nopen;
    long next; /* the next request to send (its k) */
    int64_t start_ns;
    struct loadgen_result r;
    size_t cap, kcap, scap, wcap;
};

static http_parser_settings settings;

static void die(const char *what)
{
    fprintf(stderr, "loadgen: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int64_t due_of(const struct gen *g, long k)
{
    return g->start_ns + (int64_t)((double)k * 1e9 / g->o.rate);
}

static int on_complete(http_parser *p)
{
    struct conn *c = p->data;
    c->done = 1;
    return 0;
}

static struct conn *conn_open(struct gen *g)
{
    struct conn *c = xcalloc(1, sizeof(*c));
    int one = 1;
    c->g = g;
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&g->addr, sizeof(g->addr)) < 0)
        die("connect");
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (setsockopt(c->fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof(one)) < 0)
        die("SO_TIMESTAMPNS");
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(g->ep, EPOLL_CTL_ADD, c->fd, &ev) < 0)
        die("epoll_ctl");
    c->at = g->nopen;
    g->all[g->nopen++] = c;
    return c;
}

static void conn_close(struct conn *c)
{
    struct gen *g = c->g;
    close(c->fd); /* leaves the epoll set */
    g->all[c->at] = g->all[--g->nopen];
    g->all[c->at]->at = c->at;
    free(c);
}

/* The request ended: counted as answered (200) or bad, and c is free again or closed. */
static void finish(struct conn *c, int ok)
{
    struct gen *g = c->g;
    int64_t now = clock_mono_ns();

    if (ok && c->p.status_code == 200) {
        XGROW(g->r.lat_ms, g->r.n + 1, g->cap);
        XGROW(g->r.k, g->r.n + 1, g->kcap);
        XGROW(g->r.sent_ms, g->r.n + 1, g->scap);
        XGROW(g->r.wire_ms, g->r.n + 1, g->wcap);
        g->r.lat_ms[g->r.n] = (double)(now - c->due) / 1e6;
        g->r.sent_ms[g->r.n] = (double)(c->sent - c->due) / 1e6;
        g->r.wire_ms[g->r.n] = (double)(c->arrived_rt - c->sent_rt) / 1e6;
        g->r.k[g->r.n++] = c->k;
    } else {
        g->r.bad++;
    }
    c->busy = 0;
    if (ok && http_should_keep_alive(&c->p))
        g->idle[g->nidle++] = c;
    else
        conn_close(c);
}

/* Reads what c's server sent. */
static void conn_read(struct conn *c)
{
    char buf[65536];
    union {
        char space[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {buf, sizeof(buf)};
    struct msghdr msg = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &ctl, .msg_controllen = sizeof(ctl)};
    ssize_t n = recvmsg(c->fd, &msg, MSG_DONTWAIT);
    for (struct cmsghdr *m = CMSG_FIRSTHDR(&msg); n > 0 && m; m = CMSG_NXTHDR(&msg, m))
        if (m->cmsg_level == SOL_SOCKET && m->cmsg_type == SCM_TIMESTAMPNS) {
            struct timespec ts;
            memcpy(&ts, CMSG_DATA(m), sizeof(ts));
            c->arrived_rt = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
        }

    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (!c->busy) { /* the server closed a kept connection (or sent what was not asked) */
        for (int i = 0; i < c->g->nidle; i++)
            if (c->g->idle[i] == c)
                c->g->idle[i] = c->g->idle[--c->g->nidle];
        conn_close(c);
        return;
    }
    /* n == 0 tells the parser of the close, which ends an answer framed by it */
    size_t len = n > 0 ? (size_t)n : 0;
    size_t used = http_parser_execute(&c->p, &settings, buf, len);
    if (c->done)
        finish(c, used == len);
    else if (n <= 0 || used != len || HTTP_PARSER_ERRNO(&c->p) != HPE_OK)
        finish(c, 0);
}

/* Sends every request that is due while a connection is free (or may be opened). Returns
 * how long until the next one is due, in ns (0: it is due now), or -1 when it must wait
 * for a connection to be free: an answer ending wakes the loop then. */
static int64_t send_due(struct gen *g)
{
    int64_t now = clock_mono_ns();
    char buf[256], req[512];

    while (due_of(g, g->next) <= now && (g->nidle > 0 || g->nopen < g->o.conns)) {
        struct conn *c = g->nidle > 0 ? g->idle[--g->nidle] : conn_open(g);
        c->k = g->next;
        g->next += g->stride;
        c->due = due_of(g, c->k);
        c->sent = now;
        struct timespec rt;
        clock_gettime(CLOCK_REALTIME, &rt);
        c->sent_rt = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
        c->arrived_rt = c->sent_rt;
        if (now - c->due > LATE_NS)
            g->r.late++;
        int len = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n%s%s%s\r\n",
                           g->o.path(g->o.ctx, c->k, buf, sizeof(buf)), g->host,
                           g->o.encoding ? "Accept-Encoding: " : "",
                           g->o.encoding ? g->o.encoding : "", g->o.encoding ? "\r\n" : "");
        http_parser_init(&c->p, HTTP_RESPONSE);
        c->p.data = c;
        c->done = 0;
        c->busy = 1;
        /* an idle kept connection's send buffer is empty: a short request fits whole */
        if (len >= (int)sizeof(req) || send(c->fd, req, (size_t)len, MSG_NOSIGNAL) != len)
            finish(c, 0);
    }
    if (g->nidle == 0 && g->nopen >= g->o.conns)
        return -1;
    int64_t wait = due_of(g, g->next) - clock_mono_ns();
    return wait > 0 ? wait : 0;
}

static int run(void *arg)
{
    struct gen *g = arg;
    struct epoll_event ev[64];

    /* a short slice: it sends on time instead of after the slice of whatever else runs on
     * the two cores (base/thread.h); it stands for clients on other machines */
    thread_short("loadgen");
    if (g->o.fifo) {
        struct sched_param sp = {.sched_priority = 1};
        g->r.nice_refused = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) != 0;
    } else if (g->o.nice && setpriority(PRIO_PROCESS, 0, g->o.nice) != 0) { /* this thread */
        g->r.nice_refused = 1;
    }
    if (g->o.cpus && cpus_pin(g->o.cpus) != 0)
        g->r.pin_refused = 1;

    for (;;) {
        int64_t wait = send_due(g);
        struct timespec ts = {(time_t)(wait / 1000000000), (long)(wait % 1000000000)};
        int n = epoll_pwait2(g->ep, ev, 64, wait < 0 ? NULL : &ts, NULL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            die("epoll_wait");
        for (int i = 0; i < n; i++) {
            if (ev[i].data.ptr == &g->stop_fd)
                goto out;
            conn_read(ev[i].data.ptr);
        }
    }
out:;
    struct timespec cpu;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
    g->r.cpu_s = (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9;
    g->r.seconds = (double)(clock_mono_ns() - g->start_ns) / 1e9;
    return 0;
}

static void watch(struct gen *g, int *fd)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = fd};
    if (*fd < 0 || epoll_ctl(g->ep, EPOLL_CTL_ADD, *fd, &ev) < 0)
        die("epoll_ctl");
}

struct loadgen {
    int n;
    struct gen **g;
};

/* Starts thread t of n: the requests k = t (mod n), on its share of the connections. */
static struct gen *gen_start(const struct loadgen_options *o, int t, int n, int64_t start_ns)
{
    struct gen *g = xcalloc(1, sizeof(*g));
    char ip[32];
    int port = 0;

    g->o = *o;
    g->o.conns = o->conns / n + (t < o->conns % n);
    if (sscanf(o->url, "http://%31[0-9.]:%d", ip, &port) != 2 || port <= 0 || port > 65535)
        die("the url must be http://IPv4:port");
    g->addr.sin_family = AF_INET;
    g->addr.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, ip, &g->addr.sin_addr) != 1)
        die("the url must be http://IPv4:port");
    snprintf(g->host, sizeof(g->host), "%s:%d", ip, port);
    if ((g->ep = epoll_create1(EPOLL_CLOEXEC)) < 0)
        die("epoll_create1");
    g->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    watch(g, &g->stop_fd);
    g->all = xcalloc((size_t)g->o.conns, sizeof(*g->all));
    g->idle = xcalloc((size_t)g->o.conns, sizeof(*g->idle));
    g->stride = n;
    g->next = t;
    g->start_ns = start_ns;
    if (thrd_create(&g->thread, run, g) != thrd_success)
        die("thrd_create");
    return g;
}

/* Stops g and adds what it measured to r. */
static void gen_stop(struct gen *g, struct loadgen_result *r, size_t *cap, size_t *kcap,
                     size_t *scap, size_t *wcap)
{
    uint64_t one = 1;
    if (write(g->stop_fd, &one, sizeof(one)) != sizeof(one))
        die("write eventfd");
    thrd_join(g->thread, NULL);
    XGROW(r->lat_ms, r->n + g->r.n + 1, *cap);
    XGROW(r->k, r->n + g->r.n + 1, *kcap);
    XGROW(r->sent_ms, r->n + g->r.n + 1, *scap);
    XGROW(r->wire_ms, r->n + g->r.n + 1, *wcap);
    memcpy(r->lat_ms + r->n, g->r.lat_ms, g->r.n * sizeof(double));
    memcpy(r->sent_ms + r->n, g->r.sent_ms, g->r.n * sizeof(double));
    memcpy(r->wire_ms + r->n, g->r.wire_ms, g->r.n * sizeof(double));
    memcpy(r->k + r->n, g->r.k, g->r.n * sizeof(long));
    r->n += g->r.n;
    r->bad += g->r.bad;
    r->late += g->r.late;
    r->cpu_s += g->r.cpu_s;
    r->nice_refused |= g->r.nice_refused;
    r->pin_refused |= g->r.pin_refused;
    if (g->r.seconds > r->seconds)
        r->seconds = g->r.seconds;
    loadgen_result_release(&g->r);
    while (g->nopen > 0) /* requests in flight are dropped uncounted */
        conn_close(g->all[0]);
    close(g->stop_fd);
    close(g->ep);
    free(g->all);
    free(g->idle);
    free(g);
}

struct loadgen *loadgen_start(const struct loadgen_options *o)
{
    struct loadgen *l = xcalloc(1, sizeof(*l));
    l->n = o->threads;
    if (o->rate <= 0 || l->n < 1 || l->n > 64 || o->conns < l->n || o->conns > 1024)
        die("rate must be above 0, threads 1..64 and conns threads..1024");
    settings.on_message_complete = on_complete;
    l->g = xcalloc((size_t)l->n, sizeof(*l->g));
    int64_t start_ns = clock_mono_ns();
    for (int t = 0; t < l->n; t++)
        l->g[t] = gen_start(o, t, l->n, start_ns);
    return l;
}

void loadgen_stop(struct loadgen *l, struct loadgen_result *r)
{
    size_t cap = 0, kcap = 0, scap = 0, wcap = 0;
    memset(r, 0, sizeof(*r));
    for (int t = 0; t < l->n; t++)
        gen_stop(l->g[t], r, &cap, &kcap, &scap, &wcap);
    free(l->g);
    free(l);
}

void loadgen_result_release(struct loadgen_result *r)
{
    free(r->lat_ms);
    free(r->k);
    free(r->sent_ms);
    free(r->wire_ms);
    memset(r, 0, sizeof(*r));
}
