/*
 * client.h - a small HTTP client for musterd's REST API (libcurl underneath).
 *
 * The CLI talks to musterd only through this module; curl.h is included only
 * in clients/. libcurl failures are translated here into ERR_NETWORK with a
 * message naming the server ("cannot reach musterd at 'http://127.0.0.1:8080':
 * Connection refused"); an HTTP error status is NOT an error of the transport:
 * the call returns 0 and the caller looks at resp->status (client_error turns
 * the API's {"error": {...}} body into a struct err).
 *
 * Calling sequence:
 *
 *     struct client *c;
 *     client_open("http://127.0.0.1:8080", token_or_NULL, &c, &err);
 *     struct client_response resp = CLIENT_RESPONSE_INIT;
 *     client_request(c, "GET", "/api/v1/nodes", NULL, 0, NULL, &resp, &err);
 *     if (resp.status >= 400) client_error(&resp, &err);
 *     client_response_release(&resp);
 *     client_close(c);
 *
 * Threads: a client is used by one thread at a time.
 */
#ifndef MUSTER_CLIENT_H
#define MUSTER_CLIENT_H

#include <stddef.h>
#include <stdio.h>

struct err;
struct client;

struct client_response {
    long status; /* HTTP status, 0 before a response arrived */
    char *body;  /* owned, NUL-terminated (may contain NULs before len) */
    size_t len;  /* bytes in body */
};

#define CLIENT_RESPONSE_INIT                                                                       \
    {                                                                                              \
        0, NULL, 0                                                                                 \
    }

/* Opens a client for base_url ("http://host:port", trailing slashes ignored). token may be
 * NULL or "" for none; otherwise every request carries "Authorization: Bearer <token>".
 * Returns 0 or ERR_INVALID (empty URL) / ERR_INTERNAL (libcurl init). *out new. */
int client_open(const char *base_url, const char *token, struct client **out, struct err *err);
/* HTTPS settings; every field may be NULL. ca: PEM file of the CA(s) that signed musterd's
 * certificate, trusted instead of the system's CAs (NULL: the system's). cert and key: a
 * client certificate for musterd's tls_client_ca (key NULL: in the cert file). */
struct client_tls {
    const char *ca;
    const char *cert;
    const char *key;
};

/* Applies tls to every later request of c (the strings are copied). https:// URLs are then
 * verified against tls->ca, with TLS 1.2 at least; a server that fails verification is a
 * transport error (ERR_NETWORK naming the server and what failed). Returns 0 or ERR_IO
 * naming a file that cannot be read, ERR_INVALID for a key without a certificate. */
int client_set_tls(struct client *c, const struct client_tls *tls, struct err *err);
/* Asks for compressed answers on every later request of c: "Accept-Encoding: encodings"
 * ("gzip"; NULL: none, the default). decode 1: bodies are decompressed as they arrive;
 * 0: kept as sent (a load generator measuring the server rather than its own inflating). */
void client_set_encoding(struct client *c, const char *encodings, int decode);
/* NULL-safe. */
void client_close(struct client *c);
/* How many new connections (TCP, and TLS for https://) the client's requests have opened
 * so far; fewer than requests when musterd keeps connections alive. */
long client_connects(struct client *c);
/* The base URL the client was opened with (borrowed, valid while c lives). */
const char *client_base_url(struct client *c);

/* Sends one request: path starts with "/" and already carries its query string (escape
 * values with client_escape). body may be NULL (len ignored); content_type may be NULL.
 * Fills resp (status and new body; release resp with client_response_release).
 * Returns 0 whenever an HTTP response arrived (any status), ERR_NETWORK when the server
 * cannot be reached or the transfer failed, ERR_INVALID for a malformed URL. */
int client_request(struct client *c, const char *method, const char *path, const char *body,
                   size_t len, const char *content_type, struct client_response *resp,
                   struct err *err);

/* Like client_request without a body, but a 2xx response body is written to out as it
 * arrives (not kept in memory); for other statuses the body goes into resp->body so the
 * caller can report it. Returns as client_request, ERR_IO when writing to out failed. */
int client_stream(struct client *c, const char *method, const char *path, FILE *out,
                  struct client_response *resp, struct err *err);

/* Releases resp's body and resets it. NULL-safe. */
void client_response_release(struct client_response *resp);

/* Translates an error response into err: the code from the body's error.code (falling back
 * to the HTTP status) and the message from error.message (falling back to "HTTP <status>"
 * and the start of the body). Returns the negative ERR_* set. */
int client_error(const struct client_response *resp, struct err *err);

/* URL-escapes s for use in a path segment or query value. New string. */
char *client_escape(const char *s);

#endif
