/*
 * musterd.h - a real musterd for the HTTP benchmarks (bench_reads, bench_tls).
 *
 *     const char *extra[] = {"--tls-cert", cert, "--tls-key", key, NULL};
 *     pid_t pid = bench_musterd_start(dir, "a", extra, &port);   exits the bench on failure
 *     ... http://127.0.0.1:port ...
 *     kill(pid, SIGTERM); waitpid(pid, NULL, 0);
 */
#ifndef MUSTER_BENCH_MUSTERD_H
#define MUSTER_BENCH_MUSTERD_H

#include <sys/types.h>

/* Starts $MUSTER_BIN_DIR/musterd (default build/bin) on a free loopback port with the data
 * directory dir/name and the extra arguments (NULL-terminated, may be NULL), and waits
 * (10 s) for its port file. Returns its pid with *port set; prints why and exits 1 when it
 * does not start. */
pid_t bench_musterd_start(const char *dir, const char *name, const char *const *extra, int *port);

#endif
