/*
 * tls.c - HTTPS for the front end (front_conn.c): TLS 1.2 and 1.3 only, modern ciphers, and a
 * certificate, key and client CA that are replaced while musterd keeps listening.
 *
 * api__tls_ctx builds the one SSL_CTX the front end's connections share (civetweb serves
 * plain HTTP on loopback behind it and has no TLS of its own). The context never holds a
 * certificate: its
 * cert callback hands each new handshake the bundle loaded last, under a mutex. A reload
 * builds a whole new bundle first and swaps it in only when it loaded and the key matches
 * the certificate, so a bad or half-written file never replaces a working one; handshakes
 * already done keep the bundle they started with (OpenSSL holds its own references).
 *
 * Sessions are bound to the client CA in force: the session id context of every handshake
 * is a digest of the bundle's CA certificates, and OpenSSL resumes a session (a TLS 1.2
 * session id or a TLS 1.3 ticket) only under the context it was made in. So once
 * tls_client_ca is replaced, a session made under the old CA is not resumed: the client
 * must make a full handshake and present a certificate the new CA signed (revocation by
 * replacing the CA). api__tls_session_current tells the front end whether a connection's
 * session is still of the CA in force, so a kept-alive connection is closed too.
 *
 * The ciphers, and why, are in docs/security.md "## TLS".
 */
#include <errno.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <threads.h>
#include <unistd.h>

#include "alloc.h"
#include "api_impl.h"
#include "err.h"
#include "log.h"
#include "tls.h"

/* TLS 1.2: forward-secret AEAD suites only (ECDHE with AES-GCM or ChaCha20-Poly1305). */
#define TLS12_CIPHERS                                                                              \
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                                   \
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                                   \
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"
/* TLS 1.3: all three of its general-purpose suites are AEAD and forward secret. */
#define TLS13_SUITES "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
#define TLS_GROUPS "X25519:P-256:P-384"

enum { TLS_CERT, TLS_KEY, TLS_CA, TLS_NFILES };

/* What identifies a file's version: a rename gives a new inode, a rewrite a new mtime. */
struct stamp {
    int present;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
};

struct bundle {
    X509 *cert;
    STACK_OF(X509) * chain;
    EVP_PKEY *key;
    X509_STORE *ca;                            /* NULL without a client CA */
    STACK_OF(X509_NAME) * ca_names;            /* sent in CertificateRequest */
    unsigned char sid[SSL_MAX_SID_CTX_LENGTH]; /* session id context: the CA's digest */
};

struct api__tls {
    char *path[TLS_NFILES]; /* TLS_CA may be NULL */
    mtx_t mu;
    struct bundle *live;            /* under mu */
    struct stamp tried[TLS_NFILES]; /* as of the last load attempt, under mu */
};

static void bundle_free(struct bundle *b)
{
    if (!b)
        return;
    X509_free(b->cert);
    sk_X509_pop_free(b->chain, X509_free);
    EVP_PKEY_free(b->key);
    X509_STORE_free(b->ca);
    sk_X509_NAME_pop_free(b->ca_names, X509_NAME_free);
    free(b);
}

/* OpenSSL's first queued error as text ("" when none), and the queue emptied. */
static const char *ssl_reason(char *buf, size_t n)
{
    unsigned long e = ERR_peek_last_error();
    buf[0] = '\0';
    if (e)
        snprintf(buf, n, ": %s", ERR_reason_error_string(e) ? ERR_reason_error_string(e) : "?");
    ERR_clear_error();
    return buf;
}

/* A passphrase prompt would block musterd on its terminal: refuse encrypted keys. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
    return -1;
}

static int load_cert(struct bundle *b, const char *path, struct err *err)
{
    char why[256];
    BIO *bio = BIO_new_file(path, "r");
    X509 *x;
    int rc = 0;

    if (!bio)
        return err_set(err, ERR_IO, "tls_cert '%s' cannot be read: %s", path, strerror(errno));
    b->cert = PEM_read_bio_X509_AUX(bio, NULL, no_passphrase, NULL);
    if (!b->cert) {
        rc = err_set(err, ERR_INVALID, "tls_cert '%s' holds no PEM certificate%s", path,
                     ssl_reason(why, sizeof(why)));
        goto out;
    }
    /* the certificates after the first are the chain towards the CA */
    b->chain = sk_X509_new_null();
    while ((x = PEM_read_bio_X509(bio, NULL, no_passphrase, NULL)))
        sk_X509_push(b->chain, x);
    ERR_clear_error(); /* the end of the file reads as an error */
out:
    BIO_free(bio);
    return rc;
}

static int load_key(struct bundle *b, const char *path, struct err *err)
{
    char why[256];
    BIO *bio = BIO_new_file(path, "r");

    if (!bio)
        return err_set(err, ERR_IO, "tls_key '%s' cannot be read: %s", path, strerror(errno));
    b->key = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
    BIO_free(bio);
    if (!b->key)
        return err_set(err, ERR_INVALID,
                       "tls_key '%s' holds no unencrypted PEM private key%s (an encrypted key "
                       "needs its passphrase removed: musterd cannot prompt)",
                       path, ssl_reason(why, sizeof(why)));
    if (X509_check_private_key(b->cert, b->key) != 1) {
        ERR_clear_error();
        return err_set(err, ERR_INVALID, "tls_key '%s' does not match the certificate in tls_cert",
                       path);
    }
    return 0;
}

static int load_ca(struct bundle *b, const char *path, struct err *err)
{
    char why[256];
    FILE *f = fopen(path, "r");

    if (!f)
        return err_set(err, ERR_IO, "tls_client_ca '%s' cannot be read: %s", path, strerror(errno));
    fclose(f);
    b->ca = X509_STORE_new();
    b->ca_names = SSL_load_client_CA_file(path);
    if (!b->ca_names || sk_X509_NAME_num(b->ca_names) == 0 ||
        X509_STORE_load_file(b->ca, path) != 1)
        return err_set(err, ERR_INVALID, "tls_client_ca '%s' holds no PEM CA certificate%s", path,
                       ssl_reason(why, sizeof(why)));
    return 0;
}

/* The session id context: SHA-256 over a label and the DER digests of the CA's
 * certificates, so that any change of the client CA changes it. */
static void bundle_sid(struct bundle *b)
{
    static const char label[] = "musterd-session/1";
    STACK_OF(X509_OBJECT) *objs = b->ca ? X509_STORE_get0_objects(b->ca) : NULL;
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned char d[EVP_MAX_MD_SIZE];
    unsigned int n = 0;

    if (!md)
        abort(); /* out of memory, as xmalloc */
    EVP_DigestInit_ex(md, EVP_sha256(), NULL);
    EVP_DigestUpdate(md, label, sizeof(label) - 1);
    for (int i = 0; objs && i < sk_X509_OBJECT_num(objs); i++) {
        X509 *x = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objs, i));
        if (x && X509_digest(x, EVP_sha256(), d, &n) == 1)
            EVP_DigestUpdate(md, d, n);
    }
    EVP_DigestFinal_ex(md, d, &n);
    EVP_MD_CTX_free(md);
    memcpy(b->sid, d, sizeof(b->sid));
}

/* Loads the three files into a new bundle; *out new, NULL on failure. */
static int bundle_load(struct api__tls *t, struct bundle **out, struct err *err)
{
    struct bundle *b = xcalloc(1, sizeof(*b));
    int rc;

    *out = NULL;
    if ((rc = load_cert(b, t->path[TLS_CERT], err)) < 0 ||
        (rc = load_key(b, t->path[TLS_KEY], err)) < 0 ||
        (t->path[TLS_CA] && (rc = load_ca(b, t->path[TLS_CA], err)) < 0)) {
        bundle_free(b);
        return rc;
    }
    bundle_sid(b);
    *out = b;
    return 0;
}

/* A bundle put in service says when its certificate has expired. */
static void warn_expired(const struct api__tls *t, const struct bundle *b)
{
    if (X509_cmp_current_time(X509_get0_notAfter(b->cert)) < 0)
        log_warn("tls_cert '%s' has expired: clients will refuse it", t->path[TLS_CERT]);
}

static void stamp_files(const struct api__tls *t, struct stamp *s)
{
    struct stat st;

    for (int i = 0; i < TLS_NFILES; i++) {
        memset(&s[i], 0, sizeof(s[i]));
        if (!t->path[i] || stat(t->path[i], &st) != 0)
            continue;
        s[i] = (struct stamp){1, st.st_dev, st.st_ino, st.st_size, st.st_mtim, st.st_ctim};
    }
}

static int stamps_equal(const struct stamp *a, const struct stamp *b)
{
    for (int i = 0; i < TLS_NFILES; i++)
        if (a[i].present != b[i].present || a[i].dev != b[i].dev || a[i].ino != b[i].ino ||
            a[i].size != b[i].size || a[i].mtime.tv_sec != b[i].mtime.tv_sec ||
            a[i].mtime.tv_nsec != b[i].mtime.tv_nsec || a[i].ctime.tv_sec != b[i].ctime.tv_sec ||
            a[i].ctime.tv_nsec != b[i].ctime.tv_nsec)
            return 0;
    return 1;
}

/* Runs first in each handshake, on the ClientHello, before OpenSSL looks for a session to
 * resume: the session id context set here decides which sessions may be resumed, and the
 * certificate, chain, key and client CA come from the same bundle under one lock. */
static int hello_cb(SSL *ssl, int *alert, void *arg)
{
    struct api__tls *t = arg;
    int ok = 1;

    mtx_lock(&t->mu);
    struct bundle *b = t->live;
    if (SSL_set_session_id_context(ssl, b->sid, sizeof(b->sid)) != 1 ||
        SSL_use_cert_and_key(ssl, b->cert, b->key, b->chain, 1) != 1)
        ok = 0;
    if (ok && b->ca) {
        STACK_OF(X509_NAME) *names = SSL_dup_CA_list(b->ca_names);
        ok = SSL_set1_verify_cert_store(ssl, b->ca) == 1 && names;
        if (names)
            SSL_set_client_CA_list(ssl, names); /* takes names */
    }
    mtx_unlock(&t->mu);
    if (!ok)
        *alert = SSL_AD_INTERNAL_ERROR;
    return ok ? SSL_CLIENT_HELLO_SUCCESS : SSL_CLIENT_HELLO_ERROR;
}

int api__tls_session_current(struct ssl_st *ssl)
{
    SSL_CTX *ctx = ssl ? SSL_get_SSL_CTX(ssl) : NULL;
    struct api__tls *t = ctx ? SSL_CTX_get_app_data(ctx) : NULL;
    SSL_SESSION *sess = ssl ? SSL_get_session(ssl) : NULL;
    unsigned int n = 0;
    const unsigned char *sid = sess ? SSL_SESSION_get0_id_context(sess, &n) : NULL;

    if (!t)
        return 1;
    mtx_lock(&t->mu);
    int same = sid && n == sizeof(t->live->sid) && !memcmp(sid, t->live->sid, n);
    mtx_unlock(&t->mu);
    return same;
}

/* "certificate '/CN=x' valid until ..." for the log. */
static int describe(struct api__tls *t, char *buf, size_t n)
{
    char subject[256] = "", expiry[64] = "";

    mtx_lock(&t->mu);
    X509_NAME_oneline(X509_get_subject_name(t->live->cert), subject, sizeof(subject));
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio && ASN1_TIME_print(bio, X509_get0_notAfter(t->live->cert)) == 1)
        BIO_read(bio, expiry, sizeof(expiry) - 1);
    BIO_free(bio);
    mtx_unlock(&t->mu);
    return snprintf(buf, n, "certificate '%s' valid until %s%s", subject, expiry,
                    t->path[TLS_CA] ? ", client certificates required" : "");
}

/* The files of o loaded into a new *out (NULL when o asks for no TLS), saying nothing. */
static int tls_load(const struct api_options *o, struct api__tls **out, struct err *err)
{
    struct api__tls *t = NULL;
    int rc = 0;

    *out = NULL;
    if (!o->tls_cert && !o->tls_key && !o->tls_client_ca)
        return 0;
    if (!o->tls_cert || !o->tls_key)
        return err_set(err, ERR_INVALID, "TLS needs both tls_cert and tls_key");
    t = xcalloc(1, sizeof(*t));
    t->path[TLS_CERT] = xstrdup(o->tls_cert);
    t->path[TLS_KEY] = xstrdup(o->tls_key);
    t->path[TLS_CA] = o->tls_client_ca ? xstrdup(o->tls_client_ca) : NULL;
    mtx_init(&t->mu, mtx_plain);
    stamp_files(t, t->tried);
    if ((rc = bundle_load(t, &t->live, err)) < 0) {
        api__tls_close(t);
        return rc;
    }
    *out = t;
    return 0;
}

int api__tls_check(const struct api_options *o, struct err *err)
{
    struct api__tls *t = NULL;
    int rc = tls_load(o, &t, err);
    api__tls_close(t);
    return rc;
}

int api__tls_open(const struct api_options *o, struct api__tls **out, struct err *err)
{
    struct api__tls *t = NULL;
    int rc = tls_load(o, &t, err);
    *out = NULL;
    if (rc < 0 || !t)
        return rc;
    warn_expired(t, t->live);
    struct stat st;
    if (stat(o->tls_key, &st) == 0 && (st.st_mode & 077))
        log_warn("tls_key '%s' is readable by other users (mode %03o); chmod 600 it", o->tls_key,
                 (unsigned)(st.st_mode & 0777));
    char what[512];
    describe(t, what, sizeof(what));
    log_info("TLS on: %s", what);
    *out = t;
    return 0;
}

void api__tls_close(struct api__tls *t)
{
    if (!t)
        return;
    bundle_free(t->live);
    for (int i = 0; i < TLS_NFILES; i++)
        free(t->path[i]);
    mtx_destroy(&t->mu);
    free(t);
}

int api__tls_ctx(struct api__tls *t, SSL_CTX **out, struct err *err)
{
    static const unsigned char sid_ctx[] = "musterd"; /* replaced by hello_cb's */
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    char why[256];

    *out = NULL;
    if (!ctx || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
        SSL_CTX_set_max_proto_version(ctx, 0) != 1 ||
        SSL_CTX_set_cipher_list(ctx, TLS12_CIPHERS) != 1 ||
        SSL_CTX_set_ciphersuites(ctx, TLS13_SUITES) != 1 ||
        SSL_CTX_set1_groups_list(ctx, TLS_GROUPS) != 1 ||
        SSL_CTX_set_session_id_context(ctx, sid_ctx, sizeof(sid_ctx) - 1) != 1) {
        SSL_CTX_free(ctx);
        return err_set(err, ERR_INTERNAL, "cannot configure TLS%s", ssl_reason(why, sizeof(why)));
    }
    /* all offered suites are strong; let the client pick (ChaCha20 where AES is slow) */
    SSL_CTX_clear_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    if (t->path[TLS_CA])
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    SSL_CTX_set_client_hello_cb(ctx, hello_cb, t);
    SSL_CTX_set_app_data(ctx, t);
    *out = ctx;
    return 0;
}

int api_tls_reload(struct api *api, int force, struct err *err)
{
    struct api__tls *t = api ? api->tls : NULL;
    struct stamp now[TLS_NFILES];
    struct bundle *b = NULL, *old;
    int rc;

    if (!t)
        return 0;
    /* stamped before reading: a change while we read is seen again next time */
    stamp_files(t, now);
    mtx_lock(&t->mu);
    int same = stamps_equal(now, t->tried);
    memcpy(t->tried, now, sizeof(now));
    mtx_unlock(&t->mu);
    if (same && !force)
        return 0;
    if ((rc = bundle_load(t, &b, err)) < 0)
        return err_prefix(err, "TLS reload failed, still serving the previous certificate");
    warn_expired(t, b);
    mtx_lock(&t->mu);
    old = t->live;
    t->live = b;
    mtx_unlock(&t->mu);
    bundle_free(old);
    char what[512];
    describe(t, what, sizeof(what));
    log_info("TLS reloaded: new connections get %s", what);
    return 1;
}
