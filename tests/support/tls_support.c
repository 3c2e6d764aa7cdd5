/* tls_support.c - certificates made at test time, and a raw OpenSSL client. */
#include "tls_support.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

const struct tls_validity TLS_VALID = {-3600, 86400, 0};
const struct tls_validity TLS_EXPIRED = {-2 * 86400, -3600, 0};
const struct tls_validity TLS_CLIENT = {-3600, 86400, 1};

static int write_pem(const char *dir, const char *name, X509 *x, EVP_PKEY *k)
{
    char path[512];
    FILE *f;
    int ok = 1;

    snprintf(path, sizeof(path), "%s/%s.pem", dir, name);
    if (!(f = fopen(path, "w")))
        return -1;
    ok &= PEM_write_X509(f, x) == 1;
    ok &= fclose(f) == 0;
    snprintf(path, sizeof(path), "%s/%s.key", dir, name);
    if (!(f = fopen(path, "w")))
        return -1;
    fchmod(fileno(f), 0600);
    ok &= PEM_write_PrivateKey(f, k, NULL, NULL, 0, NULL, NULL) == 1;
    ok &= fclose(f) == 0;
    return ok ? 0 : -1;
}

static int add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
    X509V3_CTX v3;
    X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
    X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
    if (!e)
        return -1;
    int ok = X509_add_ext(x, e, -1) == 1;
    X509_EXTENSION_free(e);
    return ok ? 0 : -1;
}

/* A new, unsigned certificate for key, issued by issuer (NULL: self-issued). */
static X509 *make_x509(const char *cn, EVP_PKEY *key, X509 *issuer, long from, long to)
{
    X509 *x = X509_new();
    unsigned char serial[16];
    BIGNUM *bn = NULL;

    RAND_bytes(serial, sizeof(serial));
    serial[0] &= 0x7f;
    bn = BN_bin2bn(serial, sizeof(serial), NULL);
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x));
    BN_free(bn);
    X509_set_version(x, 2);
    X509_gmtime_adj(X509_getm_notBefore(x), from);
    X509_gmtime_adj(X509_getm_notAfter(x), to);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
                               (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(x, X509_get_subject_name(issuer ? issuer : x));
    X509_set_pubkey(x, key);
    if (add_ext(x, issuer ? issuer : x, NID_subject_key_identifier, "hash") < 0 ||
        add_ext(x, issuer ? issuer : x, NID_authority_key_identifier, "keyid:always") < 0) {
        X509_free(x);
        return NULL;
    }
    return x;
}

static int sign(X509 *x, EVP_PKEY *ikey)
{
    return X509_sign(x, ikey, EVP_sha256()) > 0 ? 0 : -1;
}

int tls_make_ca(const char *dir, const char *name)
{
    EVP_PKEY *k = EVP_EC_gen("P-256");
    X509 *x = k ? make_x509(name, k, NULL, -86400, 30 * 86400) : NULL;
    int rc = -1;

    if (x && add_ext(x, x, NID_basic_constraints, "critical,CA:TRUE") == 0 &&
        add_ext(x, x, NID_key_usage, "critical,keyCertSign,cRLSign") == 0 && sign(x, k) == 0)
        rc = write_pem(dir, name, x, k);
    X509_free(x);
    EVP_PKEY_free(k);
    return rc;
}

static int load_ca(const char *dir, const char *ca, X509 **x, EVP_PKEY **k)
{
    char path[512];
    FILE *f;

    *x = NULL;
    *k = NULL;
    snprintf(path, sizeof(path), "%s/%s.pem", dir, ca);
    if ((f = fopen(path, "r"))) {
        *x = PEM_read_X509(f, NULL, NULL, NULL);
        fclose(f);
    }
    snprintf(path, sizeof(path), "%s/%s.key", dir, ca);
    if ((f = fopen(path, "r"))) {
        *k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
        fclose(f);
    }
    return *x && *k ? 0 : -1;
}

int tls_make_cert(const char *dir, const char *name, const char *ca, const struct tls_validity *v)
{
    X509 *cax = NULL, *x = NULL;
    EVP_PKEY *cak = NULL, *k = NULL;
    int rc = -1;

    if (load_ca(dir, ca, &cax, &cak) < 0 || !(k = EVP_EC_gen("P-256")))
        goto out;
    x = make_x509(name, k, cax, v->from_s, v->to_s);
    if (!x || add_ext(x, cax, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
        add_ext(x, cax, NID_key_usage, "critical,digitalSignature") < 0 ||
        add_ext(x, cax, NID_ext_key_usage, v->client ? "clientAuth" : "serverAuth") < 0 ||
        (!v->client && add_ext(x, cax, NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost") < 0) ||
        sign(x, cak) < 0)
        goto out;
    rc = write_pem(dir, name, x, k);
out:
    X509_free(cax);
    X509_free(x);
    EVP_PKEY_free(cak);
    EVP_PKEY_free(k);
    return rc;
}

int tls_replace_file(const char *src, const char *dst)
{
    char tmp[600], buf[8192];
    FILE *in = fopen(src, "rb"), *out;
    size_t n;
    int ok = 1;

    snprintf(tmp, sizeof(tmp), "%s.new", dst);
    if (!in || !(out = fopen(tmp, "wb"))) {
        if (in)
            fclose(in);
        return -1;
    }
    fchmod(fileno(out), 0600);
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        ok &= fwrite(buf, 1, n, out) == n;
    fclose(in);
    ok &= fclose(out) == 0;
    return ok && rename(tmp, dst) == 0 ? 0 : -1;
}

static int tcp_connect(int port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct timeval tv = {10, 0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static void set_error(struct tls_conn *c, const char *what)
{
    unsigned long e = ERR_get_error();
    char buf[200] = "";
    if (e)
        ERR_error_string_n(e, buf, sizeof(buf));
    snprintf(c->error, sizeof(c->error), "%s: %s", what, e ? buf : strerror(errno));
    ERR_clear_error();
}

int tls_connect(int port, const struct tls_client *o, struct tls_conn *c)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    int ok = 1;

    memset(c, 0, sizeof(*c));
    c->fd = -1;
    c->ctx = ctx;
    SSL_CTX_set_security_level(ctx, 0);
    ok &= SSL_CTX_set_cipher_list(ctx, o->ciphers ? o->ciphers : "ALL:@SECLEVEL=0") == 1;
    if (o->min_version)
        ok &= SSL_CTX_set_min_proto_version(ctx, o->min_version) == 1;
    if (o->max_version)
        ok &= SSL_CTX_set_max_proto_version(ctx, o->max_version) == 1;
    if (o->ca) {
        ok &= SSL_CTX_load_verify_locations(ctx, o->ca, NULL) == 1;
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    }
    if (o->cert)
        ok &= SSL_CTX_use_certificate_file(ctx, o->cert, SSL_FILETYPE_PEM) == 1 &&
              SSL_CTX_use_PrivateKey_file(ctx, o->key, SSL_FILETYPE_PEM) == 1;
    if (!ok) {
        set_error(c, "client setup");
        tls_close(c);
        return -1;
    }
    if ((c->fd = tcp_connect(port)) < 0) {
        set_error(c, "connect");
        tls_close(c);
        return -1;
    }
    c->ssl = SSL_new(ctx);
    SSL_set_fd(c->ssl, c->fd);
    if (o->session)
        SSL_set_session(c->ssl, o->session);
    if (SSL_connect(c->ssl) != 1) {
        set_error(c, "handshake");
        tls_close(c);
        return -1;
    }
    return 0;
}

const char *tls_peer_cn(struct tls_conn *c)
{
    static char cn[256];
    X509 *x = c->ssl ? SSL_get1_peer_certificate(c->ssl) : NULL;

    cn[0] = '\0';
    if (x)
        X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, sizeof(cn));
    X509_free(x);
    return cn;
}

const char *tls_version(struct tls_conn *c)
{
    return c->ssl ? SSL_get_version(c->ssl) : "";
}

int tls_get(struct tls_conn *c, const char *path)
{
    char req[512], buf[4096];
    int n, got = 0, status = -1;

    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
    if (SSL_write(c->ssl, req, (int)strlen(req)) <= 0) {
        set_error(c, "write");
        return -1;
    }
    /* the status line is all the tests need */
    while (got < 12 && (n = SSL_read(c->ssl, buf + got, (int)sizeof(buf) - 1 - got)) > 0)
        got += n;
    buf[got] = '\0';
    if (got < 12 || sscanf(buf, "HTTP/1.%*d %d", &status) != 1) {
        set_error(c, "read");
        return -1;
    }
    return status;
}

int tls_get_head(struct tls_conn *c, const char *path, char *head, size_t n)
{
    char req[512];
    int r;
    size_t got = 0;

    snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
    if (SSL_write(c->ssl, req, (int)strlen(req)) <= 0) {
        set_error(c, "write");
        return -1;
    }
    head[0] = '\0';
    while (got + 1 < n && !strstr(head, "\r\n\r\n") &&
           (r = SSL_read(c->ssl, head + got, (int)(n - 1 - got))) > 0) {
        got += (size_t)r;
        head[got] = '\0';
    }
    char *end = strstr(head, "\r\n\r\n");
    if (!end) {
        set_error(c, "read");
        return -1;
    }
    end[2] = '\0';
    return (int)(end + 2 - head);
}

int tls_exchange(struct tls_conn *c, const char *req, char *out, size_t n)
{
    size_t got = 0;
    int k, status = -1;

    if (SSL_write(c->ssl, req, (int)strlen(req)) <= 0) {
        set_error(c, "write");
        return -1;
    }
    while (got + 1 < n && (k = SSL_read(c->ssl, out + got, (int)(n - 1 - got))) > 0)
        got += (size_t)k;
    out[got] = '\0';
    if (sscanf(out, "HTTP/1.%*d %d", &status) != 1) {
        set_error(c, "read");
        return -1;
    }
    return status;
}

void tls_close(struct tls_conn *c)
{
    if (c->ssl)
        SSL_free(c->ssl);
    if (c->ctx)
        SSL_CTX_free(c->ctx);
    if (c->fd >= 0)
        close(c->fd);
    c->ssl = c->ctx = NULL;
    c->fd = -1;
}

void *tls_session(struct tls_conn *c)
{
    /* a copy, as `openssl s_client -sess_out` writes it: freeing a connection that was not
     * shut down marks its own session not resumable */
    SSL_SESSION *s = c->ssl ? SSL_get0_session(c->ssl) : NULL;
    return s ? SSL_SESSION_dup(s) : NULL;
}

void tls_session_free(void *session)
{
    SSL_SESSION_free(session);
}

int tls_resumed(struct tls_conn *c)
{
    return c->ssl && SSL_session_reused(c->ssl);
}

int tls_raw_hello(int port, int version)
{
    unsigned char m[128];
    size_t n = 0;
    int fd = tcp_connect(port);

    if (fd < 0)
        return -1;
    /* record header, then a ClientHello without extensions */
    m[n++] = 22, m[n++] = (unsigned char)(version >> 8), m[n++] = (unsigned char)version;
    size_t rec_len = n;
    n += 2;
    m[n++] = 1; /* client_hello */
    size_t hs_len = n;
    n += 3;
    m[n++] = (unsigned char)(version >> 8), m[n++] = (unsigned char)version;
    RAND_bytes(m + n, 32);
    n += 32;
    m[n++] = 0; /* no session id */
    /* AES128-SHA, AES256-SHA, DES-CBC3-SHA, and the renegotiation SCSV */
    static const unsigned char suites[] = {0x00, 0x2f, 0x00, 0x35, 0x00, 0x0a, 0x00, 0xff};
    m[n++] = 0, m[n++] = sizeof(suites);
    memcpy(m + n, suites, sizeof(suites));
    n += sizeof(suites);
    m[n++] = 1, m[n++] = 0; /* null compression */
    size_t body = n - hs_len - 3;
    m[hs_len] = 0, m[hs_len + 1] = (unsigned char)(body >> 8), m[hs_len + 2] = (unsigned char)body;
    m[rec_len] = (unsigned char)((n - 5) >> 8), m[rec_len + 1] = (unsigned char)(n - 5);

    unsigned char type = 0;
    ssize_t r = -1;
    if (write(fd, m, n) == (ssize_t)n)
        r = read(fd, &type, 1);
    close(fd);
    return r < 0 ? -1 : r == 0 ? 0 : type;
}
