/*
 * http_client.h - test helpers: a small libcurl HTTP client and a real musterd process.
 *
 *     struct musterd m;
 *     musterd_start(&m, NULL, NULL);            fresh temp dir, port 0, waits for the port
 *     struct http_resp r;
 *     http_request("GET", m.base, "/healthz", NULL, NULL, &r);
 *     ck_assert_int_eq(r.status, 200);
 *     http_resp_free(&r);
 *     musterd_stop(&m);                          SIGTERM; returns the exit status
 *     musterd_cleanup(&m);                       removes the temp dir
 *
 * The musterd child gets SIGTERM when the test process dies (PR_SET_PDEATHSIG), so a
 * failed assertion never leaks a server.
 */
#ifndef MUSTER_TEST_HTTP_CLIENT_H
#define MUSTER_TEST_HTTP_CLIENT_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/types.h>

struct http_resp {
    long status; /* HTTP status, or -1 when the request failed */
    char *body;  /* NUL-terminated */
    size_t len;
    char *headers; /* raw response headers */
    json_t *json;  /* parsed body when it is JSON, else NULL */
};

/* Sends method base+path with body (may be NULL) and extra headers ("Name: value", NULL
 * terminated; may be NULL). Returns 0 or -1 (transport failure, status -1). */
int http_request(const char *method, const char *base, const char *path, const char *body,
                 const char *const *headers, struct http_resp *out);
/* Same with an explicit body length (for large bodies). */
int http_request_len(const char *method, const char *base, const char *path, const char *body,
                     size_t len, const char *const *headers, struct http_resp *out);
void http_resp_free(struct http_resp *r);
/* The value of a response header (case-insensitive), new string or NULL. */
char *http_resp_header(const struct http_resp *r, const char *name);
/* n bytes of gzip inflated (new, NUL-terminated, *len bytes); a test failure when they are
 * not one whole gzip stream. */
char *http_gunzip(const char *in, size_t n, size_t *len);

/* A GET on a thread of its own, for a test that holds a lock while a read runs:
 *
 *     struct http_bg g;
 *     http_bg_start(&g, base, "/api/v1/jobs");   zeroes g, starts the thread
 *     http_bg_wait(&g, 30000)                     1 once answered (g.r), 0 at the deadline
 *     http_bg_join(&g);                           joins and frees g.r
 *
 * A test may also run a thread function of its own on one (path as its argument, done set
 * when it ends). */
struct http_bg {
    const char *base, *path;
    pthread_t t;
    atomic_int done;
    struct http_resp r;
};
void http_bg_start(struct http_bg *g, const char *base, const char *path);
int http_bg_wait(struct http_bg *g, int timeout_ms);
void http_bg_join(struct http_bg *g);

struct musterd {
    pid_t pid;
    int port;
    char root[256]; /* temp dir: data/, port, musterd.log */
    char data_dir[300];
    char port_file[300];
    char log_file[300];
    char base[64]; /* "http://127.0.0.1:PORT" */
};

/* Starts MUSTER_BIN_DIR/musterd with --data-dir, --listen 127.0.0.1:0 and --port-file,
 * plus extra args (NULL terminated; may be NULL). root: reuse this temp dir (restart)
 * or NULL for a fresh one. Waits up to 30 s for the port file. Returns 0 or -1 (the
 * process exited: its status is in *exit_status when not NULL). */
int musterd_start(struct musterd *m, const char *root, const char *const *args);
int musterd_start_status(struct musterd *m, const char *root, const char *const *args,
                         int *exit_status);
/* SIGTERM and wait (10 s, then SIGKILL). Returns the exit status, or -1 when killed. */
int musterd_stop(struct musterd *m);
/* Removes the temp dir. */
void musterd_cleanup(struct musterd *m);
/* Runs musterd with args to completion (5 s limit); returns its exit status and its
 * stderr (new) in *err_out when not NULL. */
int musterd_run(const char *const *args, char **err_out);
/* CLOCK_MONOTONIC in milliseconds; a sleep of ms milliseconds. */
long test_now_ms(void);
void test_nap_ms(long ms);
/* How many times needle occurs in the file at path (0 when it cannot be read). */
int test_count_in_file(const char *path, const char *needle);
/* Reads a whole file (new) or NULL. */
char *test_read_file(const char *path, size_t *len);
/* Writes a file; 0 or -1. */
int test_write_file(const char *path, const char *text);

#endif
