/*
 * tls.h - HTTPS for the front end (tls.c): the certificate, key and client CA files, loaded
 * at start and again by api_tls_reload (api.h), and the one SSL_CTX the front end's
 * connections share. Calls nothing of web/.
 */
#ifndef MUSTER_WEB_TLS_H
#define MUSTER_WEB_TLS_H

#include "api.h"

struct err;
struct api__tls;
/* Loads the TLS files of o into *out (new; NULL when o asks for plain HTTP). Returns 0,
 * ERR_INVALID (only one of cert and key, a file that is not PEM, a key that does not
 * match) or ERR_IO (a file that cannot be read). */
int api__tls_open(const struct api_options *o, struct api__tls **out, struct err *err);
/* 0 when api__tls_open would load o's files, or its error; keeps and says nothing. */
int api__tls_check(const struct api_options *o, struct err *err);
/* NULL-safe. Only after the front end has stopped. */
void api__tls_close(struct api__tls *t);
/* The front end's SSL_CTX (*out new, SSL_CTX_free it after the front end stopped): TLS 1.2
 * and 1.3, the ciphers above, each handshake given the files loaded last, client
 * certificates required with tls_client_ca. Returns 0 or ERR_INTERNAL. */
struct ssl_ctx_st;
int api__tls_ctx(struct api__tls *t, struct ssl_ctx_st **out, struct err *err);
/* 1 when ssl's session was made under the client CA in force (always 1 for a context
 * that api__tls_ctx did not make), 0 when tls_client_ca was replaced since: the front end
 * then closes the connection, and its session cannot be resumed. */
struct ssl_st;
int api__tls_session_current(struct ssl_st *ssl);

#endif
