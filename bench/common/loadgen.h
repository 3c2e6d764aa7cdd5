/*
 * loadgen.h - an open-loop HTTP/1.1 load generator on a few threads (epoll, kept-alive
 * connections; answers framed by http_parser).
 *
 * Request k is due at start + k / rate, whatever happened before; it is sent when due on
 * any kept-alive connection that is free (at most conns are opened), or as soon as one is,
 * and its latency runs from the time it was due: a server that stalls, or a generator that
 * falls behind, shows as latency, never as a lower rate (no coordinated omission). Thread t
 * of threads sends the requests k = t (mod threads) on its share of the connections, each
 * from an event loop, so the generator itself costs little of the cores it shares with the
 * server it measures (loadgen.c says why it does not use libcurl), and one thread waiting
 * for a core does not hold up every request.
 */
#ifndef MUSTER_BENCH_LOADGEN_H
#define MUSTER_BENCH_LOADGEN_H

#include <stddef.h>
#include <stdint.h>

/* The path of request k, written into buf (n bytes) or returned as a constant. */
typedef const char *(*loadgen_path_fn)(void *ctx, long k, char *buf, size_t n);

struct loadgen_options {
    const char *url;      /* "http://IPv4:port"; the paths are asked of it */
    double rate;          /* requests per second, > 0 */
    int conns;            /* connections at most, threads..1024 */
    int threads;          /* 1..64 */
    const char *encoding; /* sent as Accept-Encoding and kept as it comes, NULL: none */
    loadgen_path_fn path;
    void *ctx;
    int nice; /* the threads' nice value (setpriority), 0: the process's */
    int fifo; /* the threads run SCHED_FIFO at priority 1 instead (CAP_SYS_NICE): a waking
                 generator thread takes a core at once, as a client on another machine would */
    const struct cpus *cpus; /* the threads' CPUs (base/cpus.h), NULL: any */
};

struct loadgen_result {
    double *lat_ms;  /* latencies of the answered (200) requests, in the order they ended */
    long *k;         /* the request number of each */
    double *sent_ms; /* of each: how long after it was due it was sent (the generator's lag) */
    double *wire_ms; /* from sent to the answer's last bytes in the client's socket (the kernel's
                        receive timestamp): the server's part, loopback included */
    size_t n;
    long bad;         /* non-200 answers and transport failures */
    long late;        /* requests that waited for a free connection past their due time */
    double cpu_s;     /* the generator thread's CPU time */
    int nice_refused; /* the nice value or SCHED_FIFO asked for was refused (CAP_SYS_NICE) */
    int pin_refused;  /* the CPUs asked for were refused */
    double seconds;   /* from start to stop */
};

struct loadgen;

/* Starts the generator's threads; request 0 is due at once. Exits the process on failure. */
struct loadgen *loadgen_start(const struct loadgen_options *o);
/* Stops sending, waits for the thread, and fills r (its arrays to free with
 * loadgen_result_release). Requests still in flight are not counted. */
void loadgen_stop(struct loadgen *g, struct loadgen_result *r);
void loadgen_result_release(struct loadgen_result *r);

#endif
