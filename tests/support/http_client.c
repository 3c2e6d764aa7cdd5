/* http_client.c - libcurl requests for the API tests. */
#include <check.h>
#include <curl/curl.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "http_client.h"

struct buf {
    char *p;
    size_t len;
};

static size_t on_data(char *data, size_t size, size_t n, void *ctx)
{
    struct buf *b = ctx;
    size_t add = size * n;

    b->p = realloc(b->p, b->len + add + 1);
    memcpy(b->p + b->len, data, add);
    b->len += add;
    b->p[b->len] = '\0';
    return add;
}

int http_request_len(const char *method, const char *base, const char *path, const char *body,
                     size_t len, const char *const *headers, struct http_resp *out)
{
    struct buf data = {calloc(1, 1), 0}, head = {calloc(1, 1), 0};
    struct curl_slist *list = NULL;
    char url[2048];
    CURL *c = curl_easy_init();
    CURLcode rc;

    memset(out, 0, sizeof(*out));
    snprintf(url, sizeof(url), "%s%s", base, path);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (!strcmp(method, "HEAD"))
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    for (size_t i = 0; headers && headers[i]; i++)
        list = curl_slist_append(list, headers[i]);
    /* musterd wants a JSON or YAML type on every POST; a caller that names none gets the
     * one its body looks like (curl's default, a form type, would be refused). A caller
     * that means to send none passes "Content-Type:" (curl then sends no such header). */
    int has_ct = 0;
    for (size_t i = 0; headers && headers[i]; i++)
        has_ct |= !strncasecmp(headers[i], "Content-Type:", 13);
    if (!has_ct && (body || !strcmp(method, "POST"))) {
        int json = 1;
        if (body) {
            size_t i = 0;
            while (i < len && strchr(" \t\r\n", body[i]) && body[i])
                i++;
            json = i < len && (body[i] == '{' || body[i] == '[');
        }
        list = curl_slist_append(list, json ? "Content-Type: application/json"
                                            : "Content-Type: application/yaml");
    }
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &data);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, &head);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
    rc = curl_easy_perform(c);
    out->status = -1;
    if (rc == CURLE_OK)
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    out->body = data.p;
    out->len = data.len;
    out->headers = head.p;
    out->json = json_loadb(data.p, data.len, 0, NULL);
    curl_slist_free_all(list);
    curl_easy_cleanup(c);
    return rc == CURLE_OK ? 0 : -1;
}

int http_request(const char *method, const char *base, const char *path, const char *body,
                 const char *const *headers, struct http_resp *out)
{
    return http_request_len(method, base, path, body, body ? strlen(body) : 0, headers, out);
}

void http_resp_free(struct http_resp *r)
{
    if (!r)
        return;
    free(r->body);
    free(r->headers);
    json_decref(r->json);
    memset(r, 0, sizeof(*r));
}

char *http_resp_header(const struct http_resp *r, const char *name)
{
    size_t n = strlen(name);

    for (const char *line = r->headers; line && *line;) {
        const char *end = strstr(line, "\r\n");
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (len > n && line[n] == ':' && !strncasecmp(line, name, n)) {
            const char *v = line + n + 1;
            while (*v == ' ')
                v++;
            return strndup(v, (size_t)(line + len - v));
        }
        line += len + (end ? 2 : 0);
    }
    return NULL;
}

static void *bg_main(void *arg)
{
    struct http_bg *g = arg;
    http_request("GET", g->base, g->path, NULL, NULL, &g->r);
    atomic_store(&g->done, 1);
    return NULL;
}

void http_bg_start(struct http_bg *g, const char *base, const char *path)
{
    memset(g, 0, sizeof(*g));
    g->base = base;
    g->path = path;
    atomic_init(&g->done, 0);
    if (pthread_create(&g->t, NULL, bg_main, g) != 0)
        abort(); /* a test that cannot start a thread cannot say anything */
}

int http_bg_wait(struct http_bg *g, int timeout_ms)
{
    struct timespec nap = {0, 2000000};
    for (int waited = 0; !atomic_load(&g->done); waited += 2) {
        if (waited >= timeout_ms)
            return 0;
        nanosleep(&nap, NULL);
    }
    return 1;
}

void http_bg_join(struct http_bg *g)
{
    pthread_join(g->t, NULL);
    http_resp_free(&g->r);
}

char *http_gunzip(const char *in, size_t n, size_t *len)
{
    z_stream z = {0};
    size_t cap = 1 << 20;
    char *out = malloc(cap);
    ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    int rc;
    do {
        if (z.total_out + 1 >= cap)
            out = realloc(out, cap *= 2);
        z.next_out = (Bytef *)out + z.total_out;
        z.avail_out = (uInt)(cap - z.total_out - 1);
        rc = inflate(&z, Z_NO_FLUSH);
    } while (rc == Z_OK);
    ck_assert_int_eq(rc, Z_STREAM_END);
    ck_assert_uint_eq(z.avail_in, 0);
    *len = z.total_out;
    out[*len] = '\0';
    inflateEnd(&z);
    return out;
}
