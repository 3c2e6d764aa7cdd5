/*
 * client.c - musterd HTTP client over libcurl; curl codes become ERR_* here.
 */
#include "client.h"

#include <curl/curl.h>
#include <pthread.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "err.h"

struct client {
    CURL *curl;
    char *base;
    char *auth; /* "Authorization: Bearer ..." or NULL */
    char *ca;   /* NULL: the system's CAs */
    char *cert; /* client certificate or NULL */
    char *key;
    long connects;   /* new connections so far */
    char *encodings; /* Accept-Encoding or NULL */
    int decode;      /* decompress what comes back */
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void global_init_once(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void global_init(void)
{
    pthread_once(&global_once, global_init_once);
}

int client_open(const char *base_url, const char *token, struct client **out, struct err *err)
{
    *out = NULL;
    if (!base_url || !*base_url)
        return err_set(err, ERR_INVALID, "server URL is empty");
    global_init();
    CURL *curl = curl_easy_init();
    if (!curl)
        return err_set(err, ERR_INTERNAL, "cannot initialise libcurl");
    struct client *c = xcalloc(1, sizeof(*c));
    c->curl = curl;
    size_t n = strlen(base_url);
    while (n > 0 && base_url[n - 1] == '/')
        n--;
    c->base = xstrndup(base_url, n);
    if (token && *token)
        c->auth = xasprintf("Authorization: Bearer %s", token);
    *out = c;
    return 0;
}

static int readable(const char *what, const char *path, struct err *err)
{
    if (access(path, R_OK) != 0)
        return err_set(err, ERR_IO, "%s '%s' cannot be read: %s", what, path, strerror(errno));
    return 0;
}

int client_set_tls(struct client *c, const struct client_tls *tls, struct err *err)
{
    int rc;

    if (tls->key && !tls->cert)
        return err_set(err, ERR_INVALID, "a client key needs a client certificate (--cert)");
    if ((tls->ca && (rc = readable("CA file", tls->ca, err)) < 0) ||
        (tls->cert && (rc = readable("client certificate", tls->cert, err)) < 0) ||
        (tls->key && (rc = readable("client key", tls->key, err)) < 0))
        return rc;
    free(c->ca);
    free(c->cert);
    free(c->key);
    c->ca = tls->ca ? xstrdup(tls->ca) : NULL;
    c->cert = tls->cert ? xstrdup(tls->cert) : NULL;
    c->key = tls->key ? xstrdup(tls->key) : NULL;
    return 0;
}

void client_close(struct client *c)
{
    if (!c)
        return;
    curl_easy_cleanup(c->curl);
    free(c->base);
    free(c->auth);
    free(c->ca);
    free(c->cert);
    free(c->key);
    free(c->encodings);
    free(c);
}

void client_set_encoding(struct client *c, const char *encodings, int decode)
{
    free(c->encodings);
    c->encodings = encodings ? xstrdup(encodings) : NULL;
    c->decode = decode;
}

long client_connects(struct client *c)
{
    return c->connects;
}

const char *client_base_url(struct client *c)
{
    return c->base;
}

void client_response_release(struct client_response *resp)
{
    if (!resp)
        return;
    free(resp->body);
    resp->body = NULL;
    resp->len = 0;
    resp->status = 0;
}

/* Where a transfer's body goes: into memory, or to a FILE while the status is 2xx. */
struct sink {
    CURL *curl;
    struct client_response *resp;
    size_t cap;
    FILE *out;     /* NULL: always memory */
    int out_error; /* fwrite failed */
};

static void sink_append(struct sink *s, const char *data, size_t n)
{
    struct client_response *r = s->resp;
    XGROW(r->body, r->len + n + 1, s->cap);
    memcpy(r->body + r->len, data, n);
    r->len += n;
    r->body[r->len] = '\0';
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct sink *s = ctx;
    size_t n = size * nmemb;
    if (s->out) {
        long status = 0;
        curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
        if (status >= 200 && status < 300) {
            if (fwrite(data, 1, n, s->out) != n) {
                s->out_error = 1;
                return 0;
            }
            return n;
        }
    }
    sink_append(s, data, n);
    return n;
}

/* Translates a failed transfer. The OS errno gives "Connection refused" where curl's own
 * text would bury it in a longer sentence. */
static int translate(struct client *c, CURLcode rc, const char *errbuf, struct err *err)
{
    long os_errno = 0;
    curl_easy_getinfo(c->curl, CURLINFO_OS_ERRNO, &os_errno);
    const char *why = errbuf && *errbuf ? errbuf : curl_easy_strerror(rc);
    if (rc == CURLE_COULDNT_CONNECT && os_errno != 0)
        why = strerror((int)os_errno);
    if (rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL)
        return err_set(err, ERR_INVALID, "invalid server URL '%s': %s", c->base, why);
    if (rc == CURLE_PEER_FAILED_VERIFICATION)
        return err_set(err, ERR_NETWORK,
                       "musterd at '%s' is not who it claims: its certificate does not verify "
                       "(%s); pass the CA that signed it with --ca or MUSTER_CA",
                       c->base, why);
    if (rc == CURLE_GOT_NOTHING && !strncmp(c->base, "http://", 7))
        return err_set(err, ERR_NETWORK,
                       "cannot reach musterd at '%s': %s (if musterd serves HTTPS, use "
                       "https://)",
                       c->base, why);
    /* a musterd with tls_client_ca drops a handshake without a client certificate, which
     * curl reports as whatever step failed next */
    if (!c->cert && !strncmp(c->base, "https://", 8) &&
        (rc == CURLE_SSL_CONNECT_ERROR || rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR))
        return err_set(err, ERR_NETWORK,
                       "cannot reach musterd at '%s': %s (if musterd requires client "
                       "certificates, pass one with --cert and --key)",
                       c->base, why);
    if (rc == CURLE_SSL_CERTPROBLEM)
        return err_set(err, ERR_NETWORK, "the client certificate for '%s' cannot be used: %s",
                       c->base, why);
    return err_set(err, ERR_NETWORK, "cannot reach musterd at '%s': %s", c->base, why);
}

/* curl_easy_reset clears these, so every request sets them again. */
static void set_tls(struct client *c)
{
    CURL *curl = c->curl;

    curl_easy_setopt(curl, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 2L);
    if (c->ca) {
        /* only this CA: not also the system's directory of CAs */
        curl_easy_setopt(curl, CURLOPT_CAINFO, c->ca);
        curl_easy_setopt(curl, CURLOPT_CAPATH, NULL);
    }
    if (c->cert) {
        curl_easy_setopt(curl, CURLOPT_SSLCERT, c->cert);
        curl_easy_setopt(curl, CURLOPT_SSLKEY, c->key ? c->key : c->cert);
    }
}

static int perform(struct client *c, const char *method, const char *path, const char *body,
                   size_t len, const char *content_type, struct sink *sink, struct err *err)
{
    CURL *curl = c->curl;
    struct curl_slist *headers = NULL;
    char errbuf[CURL_ERROR_SIZE] = "";
    char *url = xasprintf("%s%s", c->base, path);
    char *ctype = NULL;
    int rc = 0;

    curl_easy_reset(curl);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, sink);
    set_tls(c);
    if (c->encodings) {
        curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, c->encodings);
        curl_easy_setopt(curl, CURLOPT_HTTP_CONTENT_DECODING, (long)c->decode);
    }
    if (strcmp(method, "HEAD") == 0)
        curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
    if (body) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    } else if (strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0) {
        curl_easy_setopt(curl, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)0);
    }
    /* Large manifests: do not wait for "100 Continue". */
    headers = curl_slist_append(headers, "Expect:");
    headers = curl_slist_append(headers, "Accept: application/json");
    /* musterd refuses a POST without a JSON or YAML type (a browser's cross-site request
     * cannot send one without asking first) */
    if (!content_type && (strcmp(method, "POST") == 0 || strcmp(method, "PUT") == 0))
        content_type = "application/json";
    if (content_type) {
        ctype = xasprintf("Content-Type: %s", content_type);
        headers = curl_slist_append(headers, ctype);
    }
    if (c->auth)
        headers = curl_slist_append(headers, c->auth);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);

    CURLcode cc = curl_easy_perform(curl);
    long connects = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &sink->resp->status);
    curl_easy_getinfo(curl, CURLINFO_NUM_CONNECTS, &connects);
    c->connects += connects;
    if (cc == CURLE_WRITE_ERROR && sink->out_error) {
        rc = err_set(err, ERR_IO, "cannot write the response from '%s%s': %s", c->base, path,
                     strerror(errno));
        goto out;
    }
    if (cc != CURLE_OK) {
        rc = translate(c, cc, errbuf, err);
        goto out;
    }
    if (!sink->resp->body) {
        sink->resp->body = xstrdup("");
        sink->resp->len = 0;
    }
out:
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, NULL);
    curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, NULL);
    curl_slist_free_all(headers);
    free(ctype);
    free(url);
    return rc;
}

int client_request(struct client *c, const char *method, const char *path, const char *body,
                   size_t len, const char *content_type, struct client_response *resp,
                   struct err *err)
{
    struct sink sink = {.curl = c->curl, .resp = resp};
    resp->body = NULL;
    resp->len = 0;
    resp->status = 0;
    int rc = perform(c, method, path, body, len, content_type, &sink, err);
    if (rc < 0)
        client_response_release(resp);
    return rc;
}

int client_stream(struct client *c, const char *method, const char *path, FILE *out,
                  struct client_response *resp, struct err *err)
{
    struct sink sink = {.curl = c->curl, .resp = resp, .out = out};
    resp->body = NULL;
    resp->len = 0;
    resp->status = 0;
    int rc = perform(c, method, path, NULL, 0, NULL, &sink, err);
    if (rc == 0 && fflush(out) != 0)
        rc = err_set(err, ERR_IO, "cannot write the response: %s", strerror(errno));
    if (rc < 0)
        client_response_release(resp);
    return rc;
}

static int code_from_name(const char *name)
{
#define CLIENT__NAME(n, val, http, str)                                                            \
    if (strcmp(name, str) == 0)                                                                    \
        return val;
    ERR_MAP(CLIENT__NAME)
#undef CLIENT__NAME
    return 0;
}

static int code_from_status(long status)
{
    switch (status) {
    case 400:
        return ERR_INVALID;
    case 401:
    case 403:
        return ERR_UNAUTHORIZED;
    case 404:
        return ERR_NOT_FOUND;
    case 405:
        return ERR_METHOD;
    case 409:
        return ERR_CONFLICT;
    case 410:
        return ERR_GONE;
    case 413:
        return ERR_TOO_LARGE;
    case 415:
        return ERR_UNSUPPORTED;
    case 503:
        return ERR_UNAVAILABLE;
    default:
        return status >= 500 ? ERR_INTERNAL : ERR_INVALID;
    }
}

int client_error(const struct client_response *resp, struct err *err)
{
    json_t *doc = resp->body ? json_loadb(resp->body, resp->len, 0, NULL) : NULL;
    json_t *e = json_object_get(doc, "error");
    const char *name = json_string_value(json_object_get(e, "code"));
    const char *msg = json_string_value(json_object_get(e, "message"));
    const char *field = json_string_value(json_object_get(e, "field"));
    int code = name ? code_from_name(name) : 0;
    if (code == 0)
        code = code_from_status(resp->status);
    if (msg)
        err_set(err, code, "%s", msg);
    else if (resp->len > 0)
        err_set(err, code, "HTTP %ld: %.200s", resp->status, resp->body);
    else
        err_set(err, code, "HTTP %ld", resp->status);
    if (err && field)
        snprintf(err->field, sizeof(err->field), "%s", field);
    json_decref(doc);
    return code;
}

char *client_escape(const char *s)
{
    global_init();
    char *e = curl_easy_escape(NULL, s, 0);
    if (!e)
        abort();
    char *copy = xstrdup(e);
    curl_free(e);
    return copy;
}
