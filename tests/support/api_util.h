/*
 * api_util.h - what the API suites share: a musterd started from a config text, calls that
 * assert their status, the error document's fields, files under tests/data/api, and waiting
 * for the cycle an apply woke. Each fails the running Check test on error.
 */
#ifndef MUSTER_TESTS_API_UTIL_H
#define MUSTER_TESTS_API_UTIL_H

#include <jansson.h>

#include "http_client.h"

/* Content-Type lists for http_request. */
extern const char *const api_util_yaml[];
extern const char *const api_util_json[];

/* Starts *m with config (YAML text) written to a temporary file, removed once started. */
void api_util_start(struct musterd *m, const char *config);
/* method path with body and headers (may be NULL), asserting the status; the parsed JSON
 * body (new) or NULL. */
json_t *api_util_call(const struct musterd *m, const char *method, const char *path,
                      const char *body, const char *const *headers, long want);
/* error.code and error.message of an error document (borrowed) or NULL. */
const char *api_util_err_code(json_t *j);
const char *api_util_err_msg(json_t *j);
/* The text of tests/data/api/<rel> (new). */
char *api_util_case_file(const char *rel);
/* POSTs tests/data/api/<rel> as a YAML manifest, asserting 201. */
void api_util_apply_case(const struct musterd *m, const char *rel);
/* The audit log's last sequence (GET /api/v1/audit/verify with headers, may be NULL). */
json_int_t api_util_audit_last(const struct musterd *m, const char *const *headers);
/* Waits until the cycle an apply woke is done: the audit log stops growing. Returns its
 * last sequence. */
json_int_t api_util_settle(const struct musterd *m, const char *const *headers);

#endif
