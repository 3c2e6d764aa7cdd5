/*
 * kube_conn.h - how the mirror reaches the API server: the connection (kube_conn.c:
 * kubeconfig or in-cluster credentials) and HTTP through libcurl (kube_http.c). Nothing
 * here knows struct kube.
 *
 * Calling sequence:
 *     kube__conn_load(kubeconfig, context, &conn, &err);
 *     struct kube_http *h = kube__http_new(conn, &stop);   one per thread
 *     kube__http_request(h, "GET", path, NULL, NULL, 0, &resp, &err);
 *     kube__resp_release(&resp);                          after every request
 *     kube__http_free(h); kube__conn_free(conn);
 */
#ifndef MUSTER_KUBE_CONN_H
#define MUSTER_KUBE_CONN_H

#include <stddef.h>

struct err;

struct kube_conn {
    char *server; /* "https://host:port", no trailing slash */
    char *token;
    char *ca_file, *ca_data; /* PEM file or PEM bytes (decoded) */
    size_t ca_len;
    char *cert_file, *cert_data, *key_file, *key_data;
    size_t cert_len, key_len;
    int insecure;
    char *ns;         /* context namespace or NULL */
    char *user_agent; /* NULL: "muster/VERSION"; with leader election it names the identity */
};

/* Loads a kubeconfig (YAML) and picks context (NULL: current-context). Relative file paths
 * are resolved against the kubeconfig's folder. *out new. */
int kube__conn_from_kubeconfig(const char *path, const char *context, struct kube_conn **out,
                               struct err *err);
/* In-cluster credentials: $KUBERNETES_SERVICE_HOST/PORT and sa_dir/{token,ca.crt,namespace}
 * (sa_dir NULL: /var/run/secrets/kubernetes.io/serviceaccount). ERR_NOT_FOUND when not in a
 * pod. *out new. */
int kube__conn_in_cluster(const char *sa_dir, struct kube_conn **out, struct err *err);
/* Picks per kube_options rules (kubeconfig, in-cluster, $KUBECONFIG, ~/.kube/config). */
int kube__conn_load(const char *kubeconfig, const char *context, struct kube_conn **out,
                    struct err *err);
void kube__conn_free(struct kube_conn *c);

/* One libcurl easy handle bound to a connection, used by one thread (keeps the connection
 * alive between requests). stop, when not NULL, aborts transfers once *stop is non-zero. */
struct kube_http;
struct kube_http *kube__http_new(const struct kube_conn *c, volatile int *stop);
/* Also aborts transfers once *flag is non-zero (a watcher's relist request). */
void kube__http_abort_on(struct kube_http *h, volatile int *flag);
void kube__http_free(struct kube_http *h);

struct kube_resp {
    long status;
    char *body; /* new, NUL-terminated */
    size_t len;
};
void kube__resp_release(struct kube_resp *r);

/* One request to path (with query). body may be NULL; ctype NULL means application/json.
 * timeout_ms 0: none. Returns 0 when a response arrived (any status), ERR_NETWORK. */
int kube__http_request(struct kube_http *h, const char *method, const char *path, const char *ctype,
                       const char *body, long timeout_ms, struct kube_resp *resp, struct err *err);

/* Streams a GET: each complete newline-terminated line of a 2xx body goes to line_fn
 * (return non-zero to abort the transfer). Non-2xx bodies are kept in resp. Returns 0 when
 * the stream ended (status in resp->status), ERR_NETWORK (dropped, aborted by stop or by
 * line_fn: *aborted set to 1 in that last case). */
typedef int (*kube_line_fn)(void *ctx, const char *line, size_t len);
int kube__http_stream(struct kube_http *h, const char *path, long timeout_ms, kube_line_fn line_fn,
                      void *ctx, struct kube_resp *resp, int *aborted, struct err *err);

/* Decodes base64 (kubeconfig *-data fields). New buffer, NUL-terminated. */
int kube__base64_decode(const char *in, char **out, size_t *out_len, struct err *err);

#endif
