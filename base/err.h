/*
 * err.h - error codes and caller-owned error messages.
 *
 * Every fallible function returns int: 0 on success or a negative ERR_* code
 * from the table below. The human message goes into a caller-owned
 * `struct err *err`, always the last parameter; it may be NULL when the
 * caller does not care. Messages are lowercase, have no final period and put
 * the subject in quotes: "job 'default/train' not found".
 *
 * LMDB, libcurl and errno codes are translated into ERR_* at the boundary of
 * the module that calls them; nothing above store/ or clients/ sees them.
 *
 * Calling sequence:
 *
 *     struct err err = ERR_INIT;
 *     if (store_get_node(txn, "n1", &node, &err) < 0)
 *         log_warn("%s", err.msg);
 */
#ifndef MUSTER_ERR_H
#define MUSTER_ERR_H

#include <stddef.h>

/* X(name, value, http status, short code string used in API error bodies) */
#define ERR_MAP(X)                                                                                 \
    X(INVALID, -1, 400, "Invalid")                                                                 \
    X(NOT_FOUND, -2, 404, "NotFound")                                                              \
    X(CONFLICT, -3, 409, "Conflict")                                                               \
    X(UNAUTHORIZED, -4, 401, "Unauthorized")                                                       \
    X(TOO_LARGE, -5, 413, "TooLarge")                                                              \
    X(UNSUPPORTED, -6, 415, "UnsupportedMediaType")                                                \
    X(METHOD, -7, 405, "MethodNotAllowed")                                                         \
    X(BUSY, -8, 409, "Busy")                                                                       \
    X(MAP_FULL, -9, 507, "StoreFull")                                                              \
    X(STORE, -10, 500, "StoreError")                                                               \
    X(IO, -11, 500, "IOError")                                                                     \
    X(NETWORK, -12, 502, "NetworkError")                                                           \
    X(UNAVAILABLE, -13, 503, "Unavailable")                                                        \
    X(GONE, -14, 410, "Gone")                                                                      \
    X(INTERNAL, -15, 500, "InternalError")                                                         \
    X(FORBIDDEN, -16, 403, "Forbidden")                                                            \
    X(RATE_LIMITED, -17, 429, "TooManyRequests")                                                   \
    X(MISDIRECTED, -18, 421, "MisdirectedRequest")                                                 \
    X(HEADERS_TOO_LARGE, -19, 431, "HeadersTooLarge")                                              \
    X(TIMEOUT, -20, 504, "Timeout")                                                                \
    X(REQUEST_TIMEOUT, -21, 408, "RequestTimeout")                                                 \
    X(VERSION, -22, 505, "HTTPVersionNotSupported")

enum err_code {
    ERR_OK = 0,
#define ERR__ENUM(name, val, http, str) ERR_##name = (val),
    ERR_MAP(ERR__ENUM)
#undef ERR__ENUM
};

#define ERR_MSG_MAX 1024
#define ERR_FIELD_MAX 256

struct err {
    int code;                  /* last ERR_* set, 0 when clear */
    char msg[ERR_MSG_MAX];     /* human message, "" when clear */
    char field[ERR_FIELD_MAX]; /* offending field path or "", e.g. "spec.minMember" */
};

#define ERR_INIT                                                                                   \
    {                                                                                              \
        0, "", ""                                                                                  \
    }

/* Sets err (if not NULL) to code and the printf-style message; returns code. */
int err_set(struct err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Like err_set, and records the offending field path. Returns code. */
int err_setf(struct err *err, int code, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prepends "prefix: " to err->msg (for adding context on the way up). Returns err->code. */
int err_prefix(struct err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears err. */
void err_clear(struct err *err);

/* The short code string for an ERR_* ("NotFound"); "Unknown" for others. Static storage. */
const char *err_name(int code);

/* The HTTP status for an ERR_* (404 for ERR_NOT_FOUND); 500 for unknown codes. */
int err_http_status(int code);

#endif
