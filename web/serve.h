/*
 * serve.h - the two threads that serve a whole request the front end has read, both
 * through routes.h's api__serve: civetweb's worker, behind the front end on 127.0.0.1
 * (backend.c), and the front end's own thread for a read that needs no waiting
 * (front_answer.c). start.c starts and stops them; they call routes.h and nothing above.
 */
#ifndef MUSTER_WEB_SERVE_H
#define MUSTER_WEB_SERVE_H

#include <stddef.h>

#include "api_impl.h"
#include "front.h"

struct err;

/* The request line and all headers together, as the front end takes them (431 past). */
#define API_MAX_REQUEST_HEAD 16384
/* Header lines a client may send: civetweb keeps 64 and the front end adds one. */
#define API_MAX_HEADERS 63

/* ---- backend.c ---- */
/* Starts civetweb on 127.0.0.1 (an ephemeral port, api->backend_port) with opts' worker
 * threads, serving every request through api__serve. Returns 0 or ERR_IO. */
int api__backend_start(struct api *api, const struct api_options *opts, struct err *err);
/* Stops civetweb promptly; waits for running requests. NULL-safe on api->ctx. */
void api__backend_stop(struct api *api);

/* ---- front_answer.c ---- */
/* The front end's answer to a whole request it read (front.h's api__front_answer_fn): the
 * answer text (new) when the request is a read whose answer is in the read cache and may
 * be given without waiting, under every rule a relayed request goes through (api__serve
 * with r->direct); NULL to relay it. */
char *api__front_answer(void *api, const struct api__fr *fr, const struct api__front_info *info,
                        size_t *len, int *keep_alive);
/* The front end's check of a head whose body is still to come (front.h's head_check): the
 * refusal (new) when the head alone decides one (Host, path, route, Origin, the credential,
 * the role, a rate already spent, the Content-Type, read-only), under the rules a whole
 * request goes through (api__serve with r->head_only); NULL to read the body. Takes no
 * token of a rate limit: the whole request does. */
char *api__front_head_check(void *api, const struct api__fr *fr, const struct api__front_info *info,
                            size_t *len, int *keep_alive);

#endif
