/*
 * auth.c - who is calling and may they: bearer tokens to identities, roles against the
 * route table's, rate limits per identity and per address, and the refusals.
 *
 * The order for a route that needs a role (see api__auth_or_reply): an address over its
 * bad-credential budget is refused first (429), before any token is looked at, so a
 * brute force cannot go on by guessing faster; then the credential (401), the role (403)
 * and the identity's rate (429). A refusal is counted and logged; it is no decision of
 * the scheduler and is not audited.
 */
#include <civetweb.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "access.h"
#include "alloc.h"
#include "clock.h"
#include "http.h"
#include "log.h"
#include "scheduler.h"

#define CACHE_SLOTS 256
#define LIMIT_SLOTS 1024

static const struct {
    const char *label;
    int status;
} refused_info[] = {
#define REFUSED_INFO(name, label, status) {label, status},
    API_REFUSED_MAP(REFUSED_INFO)
#undef REFUSED_INFO
};

/* ---- the external authenticator's cache ---- */

struct cached {
    unsigned char sha[32];
    int64_t until_ns; /* 0: free */
    int rc;           /* 0 or ERR_UNAUTHORIZED */
    struct api_identity who;
};

struct api_authcache {
    pthread_mutex_t mu;
    struct cached c[CACHE_SLOTS];
};

static void sha256(const char *s, unsigned char out[32])
{
    unsigned int len = 0;
    EVP_Digest(s, strlen(s), out, &len, EVP_sha256(), NULL);
}

/* Asks the authenticator, or the cache when it answered for this token in the last
 * API_AUTH_CACHE_MS. Errors other than ERR_UNAUTHORIZED are not cached. */
static int external(struct api *api, const char *token, struct api_identity *who, struct err *err)
{
    struct api_authcache *ac = api->authcache;
    unsigned char sha[32];
    int64_t now = clock_mono_ns();
    size_t slot;
    int rc;

    sha256(token, sha);
    slot = ((size_t)sha[0] << 8 | sha[1]) % CACHE_SLOTS;
    pthread_mutex_lock(&ac->mu);
    struct cached c = ac->c[slot];
    pthread_mutex_unlock(&ac->mu);
    if (c.until_ns > now && !memcmp(c.sha, sha, sizeof(sha))) {
        *who = c.who;
        return c.rc;
    }
    memset(who, 0, sizeof(*who));
    rc = api->authenticate(api->authenticate_ctx, token, who, err);
    if (rc == 0 || rc == ERR_UNAUTHORIZED) {
        c = (struct cached){.until_ns = now + (int64_t)API_AUTH_CACHE_MS * 1000000, .rc = rc};
        memcpy(c.sha, sha, sizeof(sha));
        c.who = *who;
        pthread_mutex_lock(&ac->mu);
        ac->c[slot] = c;
        pthread_mutex_unlock(&ac->mu);
    }
    return rc;
}

/* ---- set-up ---- */

int api__auth_init(struct api *api, const struct api_options *opts, struct err *err)
{
    int rc = 0;

    api->token = opts->token && opts->token[0] ? xstrdup(opts->token) : NULL;
    if (opts->tokens_file && opts->tokens_file[0] &&
        (rc = api__tokens_open(opts->tokens_file, &api->tokens, err)) < 0)
        return rc;
    api->authenticate = opts->authenticate;
    api->authenticate_ctx = opts->authenticate_ctx;
    if (api->authenticate) {
        api->authcache = xcalloc(1, sizeof(*api->authcache));
        pthread_mutex_init(&api->authcache->mu, NULL);
    }
    api->auth_on = api->token || api->tokens || api->authenticate;
    api->auth_reads = opts->auth_reads;
    memcpy(api->rate, opts->rate, sizeof(api->rate));
    api->auth_failures =
        opts->auth_failures.per_second > 0 ? opts->auth_failures : API_AUTH_FAILURES_DEFAULT;
    api->per_identity = api__limits_new(LIMIT_SLOTS);
    api->per_address = api__limits_new(LIMIT_SLOTS);
    return 0;
}

void api__auth_free(struct api *api)
{
    free(api->token);
    api__tokens_free(api->tokens);
    if (api->authcache)
        pthread_mutex_destroy(&api->authcache->mu);
    free(api->authcache);
    api__limits_free(api->per_identity);
    api__limits_free(api->per_address);
}

/* ---- one request ---- */

/* Constant-time in the length of the presented token: no early exit on a mismatch. */
static int token_equal(const char *want, const char *got)
{
    size_t wl = strlen(want), gl = strlen(got);
    unsigned char diff = (unsigned char)(wl != gl);

    for (size_t i = 0; i < gl; i++)
        diff |= (unsigned char)(got[i] ^ want[i % (wl ? wl : 1)]);
    return diff == 0;
}

/* The bearer token of r into buf, or NULL with why it has none (for the 401 message). A
 * token that does not fit buf is longer than any musterd accepts: it comes back as ""
 * (which matches no credential). */
static const char *bearer(struct req *r, char *buf, size_t n, const char **why)
{
    const char *h = api__header(r, "Authorization");

    if (!h)
        return *why = "this request needs 'Authorization: Bearer <token>'", NULL;
    if (strncasecmp(h, "Bearer ", 7) != 0)
        return *why = "the Authorization header must use the Bearer scheme: "
                      "'Authorization: Bearer <token>'",
               NULL;
    h += 7;
    while (*h == ' ' || *h == '\t')
        h++;
    /* header values exclude surrounding whitespace (RFC 9110 5.5) */
    size_t len = strlen(h);
    while (len && (h[len - 1] == ' ' || h[len - 1] == '\t'))
        len--;
    if (!len)
        return *why = "the Authorization header has no token after 'Bearer'", NULL;
    if (len >= n)
        len = 0;
    memcpy(buf, h, len);
    buf[len] = '\0';
    return buf;
}

/* Who token is: 0, ERR_UNAUTHORIZED, or another error from the authenticator; 1 when only
 * the external authenticator could say and direct is set (it may wait on the network: not
 * on the front end's thread). */
static int identify(struct api *api, const char *token, int direct, struct api_identity *who,
                    struct err *err)
{
    if (api->token && token_equal(api->token, token)) {
        *who = (struct api_identity){.name = "token", .role = API_ROLE_ADMIN, .source = "token"};
        return 0;
    }
    if (api->tokens && api__tokens_find(api->tokens, token, who) == 0)
        return 0;
    if (api->authenticate)
        return direct ? 1 : external(api, token, who, err);
    return ERR_UNAUTHORIZED;
}

static void refuse(struct req *r, enum api_refused why, int retry_after, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void refuse(struct req *r, enum api_refused why, int retry_after, const char *fmt, ...)
{
    static const int codes[] = {ERR_UNAUTHORIZED, ERR_FORBIDDEN, ERR_RATE_LIMITED,
                                ERR_RATE_LIMITED};
    char msg[512], header[128] = "";
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    api__utf8_scrub(msg);
    if (why == API_REFUSED_UNAUTHENTICATED)
        snprintf(header, sizeof(header), "WWW-Authenticate: Bearer realm=\"musterd\"");
    else if (retry_after > 0)
        snprintf(header, sizeof(header), "Retry-After: %d", retry_after);
    json_t *body =
        json_pack("{s:{s:s, s:s}}", "error", "code", err_name(codes[why]), "message", msg);
    char *text = json_dumps(body, JSON_COMPACT);
    api__reply_raw(r, refused_info[why].status, "application/json", text, strlen(text),
                   header[0] ? header : NULL);
    free(text);
    json_decref(body);
    __atomic_add_fetch(&r->api->refused[why], 1, __ATOMIC_RELAXED);
    log_warn("refused %s %s from %s (%s): %s", r->method, r->path, r->address,
             refused_info[why].label, msg);
}

int api__mutating(const char *method)
{
    return strcmp(method, "GET") && strcmp(method, "HEAD") && strcmp(method, "OPTIONS");
}

int api__auth_or_reply(struct req *r, enum api_role role)
{
    struct api *api = r->api;
    struct err err = ERR_INIT;
    char buf[1024];
    const char *why = NULL, *token = NULL;
    int wait, rc;

    r->who =
        (struct api_identity){.name = "anonymous", .role = API_ROLE_NONE, .source = "anonymous"};
    r->identified = 0;
    /* a read that needs more than viewer (audit verification) always needs its role */
    if (!api->auth_on || role == API_ROLE_NONE ||
        (!api__mutating(r->method) && !api->auth_reads && role <= API_ROLE_VIEWER))
        return 0;
    int64_t now = clock_mono_ns();
    if ((wait = api__limits_peek(api->per_address, r->address, api->auth_failures, now)) > 0) {
        refuse(r, API_REFUSED_AUTH_FAILURES, wait,
               "too many bad credentials from %s; try again in %d s", r->address, wait);
        return -1;
    }
    /* a bearer token, when sent, wins over a client certificate: it is the credential
     * chosen for this request (with tls_client_ca every client has a certificate) */
    if (!api__header(r, "Authorization") && r->subject && api->tokens &&
        api__tokens_find_subject(api->tokens, r->subject, &r->who) == 0) {
        rc = 0;
    } else if (!(token = bearer(r, buf, sizeof(buf), &why))) {
        refuse(r, API_REFUSED_UNAUTHENTICATED, 0, "%s", why);
        return -1;
    } else {
        rc = *token ? identify(api, token, r->direct, &r->who, &err) : ERR_UNAUTHORIZED;
    }
    if (rc == 1) { /* nothing counted or answered yet: civetweb's worker asks */
        r->relay = 1;
        return -1;
    }
    if (rc == ERR_UNAUTHORIZED) {
        api__limits_take(api->per_address, r->address, api->auth_failures, now);
        refuse(r, API_REFUSED_UNAUTHENTICATED, 0, "the bearer token does not match any credential");
        return -1;
    }
    if (rc < 0) {
        api__reply_errorf(r, ERR_UNAVAILABLE, "cannot check the bearer token: %s", err.msg);
        return -1;
    }
    r->identified = 1;
    if (r->who.role < role) {
        refuse(r, API_REFUSED_FORBIDDEN, 0, "'%s' (%s) may not %s %s: that needs the role %s",
               r->who.name, api_role_name(r->who.role), r->method, r->path, api_role_name(role));
        return -1;
    }
    snprintf(buf, sizeof(buf), "%s:%s", r->who.source, r->who.name);
    /* a head checked before its body (r->head_only) takes no token: the whole request will */
    if ((wait = r->head_only
                    ? api__limits_peek(api->per_identity, buf, api->rate[r->who.role], now)
                    : api__limits_take(api->per_identity, buf, api->rate[r->who.role], now)) > 0) {
        refuse(r, API_REFUSED_RATE_LIMITED, wait,
               "'%s' (%s) is over its rate limit; try again in %d s", r->who.name,
               api_role_name(r->who.role), wait);
        return -1;
    }
    return 0;
}

struct sched_caller api__caller(const struct req *r)
{
    return (struct sched_caller){
        .name = r->who.name,
        .role = r->identified ? api_role_name(r->who.role) : NULL,
        .address = r->address,
        .source = r->who.source,
    };
}

void api__auth_metrics(struct api *api, char *buf, size_t n)
{
    size_t off = 0;

    off += (size_t)snprintf(buf + off, n - off,
                            "# HELP muster_http_refused_total Requests refused by authentication, "
                            "authorization or rate limits, by reason\n"
                            "# TYPE muster_http_refused_total counter\n");
    for (int i = 0; i < API_REFUSED_COUNT && off < n; i++)
        off += (size_t)snprintf(
            buf + off, n - off, "muster_http_refused_total{reason=\"%s\"} %llu\n",
            refused_info[i].label,
            (unsigned long long)__atomic_load_n(&api->refused[i], __ATOMIC_RELAXED));
}
