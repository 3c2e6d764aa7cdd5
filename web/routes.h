/*
 * routes.h - the one route table (routes.c) and a request's way through it: the path
 * decoded, the edge checks, the route found, the caller's role, the handler, the log line.
 * It calls the parts below it (http.h, access.h, cached_reads.h, handlers.h); the threads
 * that serve requests (serve.h) call it.
 */
#ifndef MUSTER_WEB_ROUTES_H
#define MUSTER_WEB_ROUTES_H

#include <stddef.h>

#include "api_impl.h"

/* Serves r, whose method, raw_path, query, address, tls, subject (and conn or fr) are
 * set: decodes the path, runs api__dispatch, replies 500 when no handler did, and logs the
 * request. With r->direct a request that would have to wait comes back with r->relay set,
 * nothing replied and nothing logged. */
void api__serve(struct req *r);

void api__dispatch(struct req *r);
/* The pure part of routing (fuzz/fuzz_router.c drives it without a connection). */
/* Why a path cannot name a route or file (static text), or NULL: raw as sent, decoded its
 * api__path_decode. */
const char *api__path_problem(const char *raw, const char *decoded);
/* The index of the route for r->method on r->raw_path, its {x} segments captured raw
 * into r->params; -1 when none, with the methods the path has in allow ("GET, DELETE";
 * empty when the path matches no route). */
int api__route_lookup(struct req *r, char *allow, size_t allow_size);
/* The pattern of route i ("/api/v1/pods/{ns}/{name}"), NULL past the table. */
const char *api__route_pattern(int i);
/* The method of route i ("GET"), NULL past the table (tests check docs/api.md with it). */
const char *api__route_method(int i);
/* Frees r's captured path parameters. */
void api__params_free(struct req *r);
/* 1 when the front end may answer r, a request for route i, on its own thread: the route's
 * check (api__read_cached, api__audit_small) says it needs no waiting and little work. */
int api__route_front(int i, struct req *r);

#endif
