/*
 * access.h - who may call (docs/security.md "Identities and roles"): the tokens file
 * (tokens.c), token buckets by key (limits.c) and, above both, the decision for one request
 * (auth.c). Role names and the rate syntax are public (api.h, roles.c). tokens.c and
 * limits.c call nothing of web/ but roles.c; auth.c replies through http.h.
 *
 * Threads: every function here may be called from any worker thread at once; the tokens
 * file and the buckets lock inside.
 */
#ifndef MUSTER_WEB_ACCESS_H
#define MUSTER_WEB_ACCESS_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"
#include "api_impl.h"
#include "scheduler.h"

struct err;

/* ---- limits.c: token buckets by key ---- */
/* A fixed number of buckets; when full, the one touched least recently is reused. */
struct api_limits *api__limits_new(size_t slots);
void api__limits_free(struct api_limits *l);
/* Takes one token from key's bucket. Returns 0, or the whole seconds (>= 1) until one is
 * there (nothing taken). rate.per_second 0: always 0. */
int api__limits_take(struct api_limits *l, const char *key, struct api_rate rate, int64_t now_ns);
/* Like api__limits_take without taking. */
int api__limits_peek(struct api_limits *l, const char *key, struct api_rate rate, int64_t now_ns);

/* ---- tokens.c: the tokens file ---- */
/* Loads path: YAML or JSON, {"tokens": [{"name", "role", "sha256" | "subject"}]}. Returns 0 or
 * ERR_IO / ERR_INVALID ("tokens file 'f': line 4: 'role' must be one of viewer, operator,
 * admin, not 'root'"). *out new. */
int api__tokens_open(const char *path, struct api_tokens **out, struct err *err);
void api__tokens_free(struct api_tokens *t);
/* 0 when api__tokens_open would load path, or its error; keeps and says nothing. */
int api__tokens_check(const char *path, struct err *err);
/* Finds the entry whose sha256 is the SHA-256 of token: 0 with *out set, or
 * ERR_UNAUTHORIZED. First reloads the file when it changed (looked at no more than once a
 * second); a file that does not load is logged and the entries before it stay. */
int api__tokens_find(struct api_tokens *t, const char *token, struct api_identity *out);
/* Finds the entry whose subject is subject (a verified client certificate's, RFC 2253): 0
 * with *out set (source "client-cert"), or ERR_UNAUTHORIZED. Reloads as api__tokens_find. */
int api__tokens_find_subject(struct api_tokens *t, const char *subject, struct api_identity *out);

/* ---- auth.c: identities, roles and rate limits ---- */
/* 1 when the method changes state (anything but GET, HEAD, OPTIONS). */
int api__mutating(const char *method);
/* Decides whether r may run a route that needs role (its method says whether it mutates):
 * 0 with r->who set, or replies 401 / 403 / 429 / 503, counts and logs the refusal and
 * returns -1. */
int api__auth_or_reply(struct req *r, enum api_role role);
/* The caller of r for the audit log's "by" (borrows r's strings). */
struct sched_caller api__caller(const struct req *r);
void api__auth_free(struct api *api);
/* muster_http_refused_total{reason} in the Prometheus text format into buf. */
void api__auth_metrics(struct api *api, char *buf, size_t n);
/* Sets up the api's credential sources and limits from opts. 0, ERR_INVALID or ERR_IO. */
int api__auth_init(struct api *api, const struct api_options *opts, struct err *err);

#endif
