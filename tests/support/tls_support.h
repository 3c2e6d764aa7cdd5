/*
 * tls_support.h - test helpers for HTTPS: certificates made at test time with libcrypto,
 * and a raw OpenSSL client whose protocol versions, ciphers and certificate the test picks.
 *
 * Calling sequence:
 *
 *     tls_make_ca(dir, "ca");                         dir/ca.pem, dir/ca.key
 *     tls_make_cert(dir, "srv", "ca", &TLS_VALID);    dir/srv.pem, dir/srv.key (127.0.0.1)
 *     struct tls_client o = {.ca = "dir/ca.pem"};
 *     struct tls_conn c;
 *     if (tls_connect(port, &o, &c) == 0) ... tls_peer_cn(&c) ... tls_get(&c, "/healthz")
 *     tls_close(&c);
 *
 * Every function returns 0 or -1; a failed handshake leaves OpenSSL's reason in c.error.
 */
#ifndef MUSTER_TEST_TLS_SUPPORT_H
#define MUSTER_TEST_TLS_SUPPORT_H

#include <stddef.h>

/* Validity relative to now, in seconds; purpose: 0 server (SAN 127.0.0.1 and localhost,
 * serverAuth), 1 client (clientAuth). */
struct tls_validity {
    long from_s;
    long to_s;
    int client;
};

extern const struct tls_validity TLS_VALID;   /* -1 h .. +1 day, server */
extern const struct tls_validity TLS_EXPIRED; /* -2 days .. -1 h, server */
extern const struct tls_validity TLS_CLIENT;  /* -1 h .. +1 day, client */

/* A self-signed CA "CN=<name>": dir/<name>.pem and dir/<name>.key (P-256). */
int tls_make_ca(const char *dir, const char *name);
/* A certificate "CN=<name>" signed by the CA dir/<ca>.{pem,key}: dir/<name>.pem and
 * dir/<name>.key (mode 600). */
int tls_make_cert(const char *dir, const char *name, const char *ca, const struct tls_validity *v);
/* Copies src over dst by a rename, so a reader sees the old or the new file, never half. */
int tls_replace_file(const char *src, const char *dst);

struct tls_client {
    const char *ca;   /* verify the server against it; NULL: do not verify */
    const char *cert; /* client certificate and key, or NULL */
    const char *key;
    int min_version; /* TLS1_VERSION ...; 0: OpenSSL's default */
    int max_version;
    const char *ciphers; /* TLS 1.2 and below; NULL: OpenSSL's default */
    void *session;       /* an SSL_SESSION (tls_session) to offer for resumption, or NULL */
};

struct tls_conn {
    int fd;
    void *ctx; /* SSL_CTX */
    void *ssl; /* SSL */
    char error[256];
};

/* TCP to 127.0.0.1:port, then a handshake as o says. The client runs at security level 0
 * so that it really offers old versions and weak ciphers when asked: refusing them is the
 * server's job. On failure c is closed and c->error says why. */
int tls_connect(int port, const struct tls_client *o, struct tls_conn *c);
/* The CN of the server's certificate (static buffer) or "". */
const char *tls_peer_cn(struct tls_conn *c);
/* "TLSv1.3" and the like (static string). */
const char *tls_version(struct tls_conn *c);
/* Sends "GET path HTTP/1.1" and returns the response's status, or -1 (c->error says why). */
int tls_get(struct tls_conn *c, const char *path);
/* Sends req (a whole request, best with "Connection: close") and reads the answer until the
 * server closes or n - 1 bytes, into out (NUL-terminated). Returns the status or -1. */
int tls_exchange(struct tls_conn *c, const char *req, char *out, size_t n);
/* Sends "GET path HTTP/1.1" and reads the response head (status line and headers) into
 * head; returns its length or -1 (c->error says why). */
int tls_get_head(struct tls_conn *c, const char *path, char *head, size_t n);
void tls_close(struct tls_conn *c);
/* The session of c to resume later (new: tls_session_free), or NULL. With TLS 1.3 the
 * server's ticket comes after the handshake: read an answer first. */
void *tls_session(struct tls_conn *c);
void tls_session_free(void *session);
/* 1 when c's handshake resumed the session offered. */
int tls_resumed(struct tls_conn *c);

/* Sends a raw ClientHello of record and hello version `version` (0x0300 SSLv3, 0x0301
 * TLS 1.0, ...) with only pre-TLS-1.2 ciphers, and returns the content type of the first
 * record the server answers with: 22 (handshake: a ServerHello), 21 (alert), 0 when it
 * closed the connection, -1 on a socket error. */
int tls_raw_hello(int port, int version);

#endif
