/*
 * kube_support.h - the test Kubernetes API server (tests/kubeapi/server.py) for
 * mirror tests: start it in a fresh temporary directory (optionally with TLS
 * from a certificate made by `openssl req` and a bearer token), write a
 * kubeconfig pointing at it, drive its control endpoints.
 *
 *     struct kube_testapi t;
 *     kube_testapi_start(&t, 1, "s3cret");     TLS + token; fails the test otherwise
 *     kube_testapi_apply(&t, "pods", pod);     create or replace (pod borrowed)
 *     ... t.kubeconfig ...
 *     json_t *o = kube_testapi_object(&t, "pods", "default/p");   new or NULL
 *     kube_testapi_stop(&t);                   kills it, removes the directory
 */
#ifndef MUSTER_TESTS_KUBE_SUPPORT_H
#define MUSTER_TESTS_KUBE_SUPPORT_H

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

struct kube_conn;
struct kube_http;

struct kube_testapi {
    pid_t pid;
    char dir[256];
    int port;
    char url[96];
    char kubeconfig[320];
    struct kube_conn *conn; /* control connection (no auth needed) */
    struct kube_http *http;
};

void kube_testapi_start(struct kube_testapi *t, int tls, const char *token);
void kube_testapi_stop(struct kube_testapi *t);
/* POSTs body (borrowed, may be NULL) to /control/<what>; returns the answer (new). Fails
 * the test on a non-200 answer. */
json_t *kube_testapi_control(struct kube_testapi *t, const char *what, json_t *body);
/* Creates or replaces an object of a resource ("pods", "nodes", ...). obj borrowed. */
void kube_testapi_apply(struct kube_testapi *t, const char *resource, json_t *obj);
void kube_testapi_delete(struct kube_testapi *t, const char *resource, const char *key);
/* The server's object (new) or NULL. */
json_t *kube_testapi_object(struct kube_testapi *t, const char *resource, const char *key);
/* Server counters (/control/stats, new). */
json_t *kube_testapi_stats(struct kube_testapi *t);
/* One counter of /control/stats ("binding", "status_patch:podgroups", ...); 0 when absent. */
long long kube_testapi_stat(struct kube_testapi *t, const char *name);
/* GET of an API path (with query) as a client sees it; *status the HTTP status. New or
 * NULL. */
json_t *kube_testapi_get(struct kube_testapi *t, const char *path, long *status);

/* A pod for the test server: schedulerName and node may be NULL, group NULL for none. New. */
json_t *kube_test_pod(const char *name, const char *scheduler, const char *node, const char *group,
                      const char *cpu);
/* A node with cpu/memory/pods allocatable and a block label. New. */
json_t *kube_test_node(const char *name, const char *cpu, const char *block);

/* Polls cond(ctx) every 20 ms until it returns non-zero or timeout_ms passes; returns
 * the last value. */
int kube_test_wait(int (*cond)(void *ctx), void *ctx, int64_t timeout_ms);
/* (timeout_ms is tripled in a sanitizer build: a bound on failure, not on success) */

#endif
