/*
 * front_msg.h - what the front end writes itself (front_msg.c): its whole error answers,
 * and the X-Muster-Front header by which it tells civetweb's side who the client is
 * (front.h says why that header is trusted). Pure functions of their arguments; they call
 * nothing else of web/.
 */
#ifndef MUSTER_WEB_FRONT_MSG_H
#define MUSTER_WEB_FRONT_MSG_H

#include <stddef.h>

#define API_FRONT_HEADER "X-Muster-Front"
#define API_FRONT_SECRET_HEX 64 /* 32 random bytes */

/* A whole error answer (new, *len bytes): status, the API's JSON error body with msg,
 * headers (the security header lines, api__headers) and "Connection: close". */
char *api__front_error(int status, const char *msg, const char *headers, size_t *len);

/* What the front end tells civetweb's side about a request. */
struct api__front_info {
    char address[64]; /* the client's IP address */
    int tls;
    char subject[512]; /* the verified client certificate's subject (RFC 2253), or "" */
};
/* The X-Muster-Front value for info with secret (new). */
char *api__front_header_value(const char *secret, const struct api__front_info *info);
/* 0 with *out filled when value carries secret (compared in constant time), else -1. */
int api__front_header_parse(const char *value, const char *secret, struct api__front_info *out);

#endif
