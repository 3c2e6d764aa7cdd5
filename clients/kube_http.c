/*
 * kube_http.c - HTTP to the API server through libcurl: one easy handle per
 * thread (connection reuse), TLS from the kubeconfig (files or in-memory PEM
 * blobs), bearer token, and an incremental line splitter for watch streams.
 */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"
#include "kube_internal.h"

struct kube_http {
    CURL *curl;
    const struct kube_conn *conn;
    volatile int *stop;
    volatile int *abort; /* NULL or a second stop flag */
    struct curl_slist *auth;
    char errbuf[CURL_ERROR_SIZE];
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int progress_cb(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    struct kube_http *h = ctx;
    return (h->stop && *h->stop) || (h->abort && *h->abort) ? 1 : 0;
}

static void set_tls(struct kube_http *h)
{
    const struct kube_conn *c = h->conn;
    CURL *e = h->curl;
    if (c->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (c->ca_data) {
        struct curl_blob b = {c->ca_data, c->ca_len, CURL_BLOB_COPY};
        curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &b);
    } else if (c->ca_file) {
        curl_easy_setopt(e, CURLOPT_CAINFO, c->ca_file);
    }
    if (c->cert_data) {
        struct curl_blob b = {c->cert_data, c->cert_len, CURL_BLOB_COPY};
        curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &b);
        curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
    } else if (c->cert_file) {
        curl_easy_setopt(e, CURLOPT_SSLCERT, c->cert_file);
    }
    if (c->key_data) {
        struct curl_blob b = {c->key_data, c->key_len, CURL_BLOB_COPY};
        curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &b);
        curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (c->key_file) {
        curl_easy_setopt(e, CURLOPT_SSLKEY, c->key_file);
    }
}

struct kube_http *kube__http_new(const struct kube_conn *c, volatile int *stop)
{
    pthread_once(&global_once, global_init);
    struct kube_http *h = xcalloc(1, sizeof(*h));
    h->conn = c;
    h->stop = stop;
    h->curl = curl_easy_init();
    if (!h->curl) {
        free(h);
        return NULL;
    }
    if (c->token) {
        char *hdr = xasprintf("Authorization: Bearer %s", c->token);
        h->auth = curl_slist_append(NULL, hdr);
        free(hdr);
    }
    return h;
}

void kube__http_abort_on(struct kube_http *h, volatile int *flag)
{
    h->abort = flag;
}

void kube__http_free(struct kube_http *h)
{
    if (!h)
        return;
    curl_easy_cleanup(h->curl);
    curl_slist_free_all(h->auth);
    free(h);
}

void kube__resp_release(struct kube_resp *r)
{
    if (!r)
        return;
    free(r->body);
    r->body = NULL;
    r->len = 0;
    r->status = 0;
}

struct sink {
    struct kube_resp *resp;
    size_t cap;
    /* streaming */
    kube_line_fn line_fn;
    void *ctx;
    int aborted;
    CURL *curl;
};

static void append(struct sink *s, const char *p, size_t n)
{
    struct kube_resp *r = s->resp;
    if (r->len + n + 1 > s->cap) {
        s->cap = (r->len + n + 1) * 2;
        r->body = xrealloc(r->body, s->cap);
    }
    memcpy(r->body + r->len, p, n);
    r->len += n;
    r->body[r->len] = '\0';
}

static size_t body_cb(char *p, size_t size, size_t nmemb, void *ctx)
{
    append(ctx, p, size * nmemb);
    return size * nmemb;
}

/* Splits the 2xx body into lines as it arrives; keeps the partial tail in resp->body. */
static size_t stream_cb(char *p, size_t size, size_t nmemb, void *ctx)
{
    struct sink *s = ctx;
    size_t n = size * nmemb;
    long code = 0;
    curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &code);
    append(s, p, n);
    if (code < 200 || code >= 300)
        return n;
    struct kube_resp *r = s->resp;
    size_t start = 0;
    for (size_t i = 0; i < r->len; i++) {
        if (r->body[i] != '\n')
            continue;
        if (i > start && s->line_fn(s->ctx, r->body + start, i - start) != 0) {
            s->aborted = 1;
            return 0;
        }
        start = i + 1;
    }
    memmove(r->body, r->body + start, r->len - start);
    r->len -= start;
    r->body[r->len] = '\0';
    return n;
}

static void prepare(struct kube_http *h, const char *path, long timeout_ms)
{
    CURL *e = h->curl;
    char *url = xasprintf("%s%s", h->conn->server, path);
    curl_easy_reset(e);
    curl_easy_setopt(e, CURLOPT_URL, url);
    free(url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, h->errbuf);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, progress_cb);
    curl_easy_setopt(e, CURLOPT_XFERINFODATA, h);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(e, CURLOPT_USERAGENT,
                     h->conn->user_agent ? h->conn->user_agent : "muster/" MUSTER_VERSION);
    set_tls(h);
    h->errbuf[0] = '\0';
}

static int perform(struct kube_http *h, const char *method, const char *path,
                   struct kube_resp *resp, struct err *err)
{
    CURLcode cc = curl_easy_perform(h->curl);
    curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &resp->status);
    if (cc == CURLE_OK)
        return 0;
    return err_set(err, ERR_NETWORK, "%s '%s%s': %s", method, h->conn->server, path,
                   h->errbuf[0] ? h->errbuf : curl_easy_strerror(cc));
}

int kube__http_request(struct kube_http *h, const char *method, const char *path, const char *ctype,
                       const char *body, long timeout_ms, struct kube_resp *resp, struct err *err)
{
    struct sink s = {resp, 0, NULL, NULL, 0, h->curl};
    struct curl_slist *hdrs = NULL;
    resp->status = 0;
    resp->len = 0;
    prepare(h, path, timeout_ms);
    for (struct curl_slist *a = h->auth; a; a = a->next)
        hdrs = curl_slist_append(hdrs, a->data);
    hdrs = curl_slist_append(hdrs, "Accept: application/json");
    if (body) {
        char *ct = xasprintf("Content-Type: %s", ctype ? ctype : "application/json");
        hdrs = curl_slist_append(hdrs, ct);
        free(ct);
        curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
    }
    curl_easy_setopt(h->curl, CURLOPT_CUSTOMREQUEST, method);
    if (!strcmp(method, "GET"))
        curl_easy_setopt(h->curl, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, body_cb);
    curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &s);
    append(&s, "", 0);
    int rc = perform(h, method, path, resp, err);
    curl_slist_free_all(hdrs);
    return rc;
}

int kube__http_stream(struct kube_http *h, const char *path, long timeout_ms, kube_line_fn line_fn,
                      void *ctx, struct kube_resp *resp, int *aborted, struct err *err)
{
    struct sink s = {resp, 0, line_fn, ctx, 0, h->curl};
    resp->status = 0;
    resp->len = 0;
    prepare(h, path, timeout_ms);
    curl_easy_setopt(h->curl, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->auth);
    curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, stream_cb);
    curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, &s);
    /* A dead peer shows as silence: bookmarks and events keep a live stream busy. */
    curl_easy_setopt(h->curl, CURLOPT_TCP_KEEPALIVE, 1L);
    append(&s, "", 0);
    int rc = perform(h, "GET", path, resp, err);
    *aborted = s.aborted;
    return rc;
}
