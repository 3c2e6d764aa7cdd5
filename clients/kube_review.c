/*
 * kube_review.c - asking the API server who a bearer token is (TokenReview) and what
 * that user may do (SubjectAccessReview), for musterd's own API.
 *
 * Each call uses its own connection: callers are HTTP worker threads, concurrently, and
 * musterd caches the answers (web/auth.c), so calls are rare.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kube.h"
#include "kube_internal.h"
#include "log.h"

#define REVIEW_TIMEOUT_MS 10000

/* POSTs review (borrowed) to path; 0 with *status (new) = the answer's "status". */
static int post_review(struct kube *k, const char *path, json_t *review, json_t **status,
                       struct err *err)
{
    struct kube_http *h = kube__http_new(k->conn, &k->stop);
    struct kube_resp r = {0};
    char *text = json_dumps(review, JSON_COMPACT);
    json_t *doc = NULL;
    int rc;

    *status = NULL;
    if (!h) {
        rc = err_set(err, ERR_INTERNAL, "cannot make an HTTP client");
        goto out;
    }
    rc = kube__http_request(h, "POST", path, NULL, text, REVIEW_TIMEOUT_MS, &r, err);
    if (rc < 0)
        goto out;
    doc = r.body ? json_loads(r.body, 0, NULL) : NULL;
    if (r.status != 200 && r.status != 201) {
        const char *m = json_string_value(json_object_get(doc, "message"));
        rc = err_set(err, ERR_UNAVAILABLE, "POST '%s': HTTP %ld%s%s", path, r.status, m ? ": " : "",
                     m ? m : "");
        goto out;
    }
    if (!json_is_object(json_object_get(doc, "status"))) {
        rc = err_set(err, ERR_UNAVAILABLE, "POST '%s': the answer has no status", path);
        goto out;
    }
    *status = json_incref(json_object_get(doc, "status"));
out:
    json_decref(doc);
    kube__resp_release(&r);
    kube__http_free(h);
    free(text);
    return rc;
}

int kube_token_review(struct kube *k, const char *token, json_t **user, struct err *err)
{
    json_t *review = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "authentication.k8s.io/v1",
                               "kind", "TokenReview", "spec", "token", token);
    json_t *status = NULL;
    int rc = post_review(k, "/apis/authentication.k8s.io/v1/tokenreviews", review, &status, err);

    *user = NULL;
    json_decref(review);
    if (rc < 0)
        return rc;
    json_t *u = json_object_get(status, "user");
    if (!json_is_true(json_object_get(status, "authenticated")) ||
        !json_string_value(json_object_get(u, "username"))) {
        const char *e = json_string_value(json_object_get(status, "error"));
        rc = err_set(err, ERR_UNAUTHORIZED, "the API server does not know the token%s%s",
                     e ? ": " : "", e ? e : "");
    } else {
        *user = json_incref(u);
    }
    json_decref(status);
    return rc;
}

int kube_access_review(struct kube *k, json_t *user, const char *group, const char *resource,
                       const char *verb, int *allowed, struct err *err)
{
    json_t *groups = json_object_get(user, "groups");
    const char *uid = json_string_value(json_object_get(user, "uid"));
    json_t *review =
        json_pack("{s:s, s:s, s:{s:s, s:s, s:o, s:{s:s, s:s, s:s}}}", "apiVersion",
                  "authorization.k8s.io/v1", "kind", "SubjectAccessReview", "spec", "user",
                  json_string_value(json_object_get(user, "username")), "uid", uid ? uid : "",
                  "groups", json_is_array(groups) ? json_deep_copy(groups) : json_array(),
                  "resourceAttributes", "group", group, "resource", resource, "verb", verb);
    json_t *status = NULL;
    int rc =
        post_review(k, "/apis/authorization.k8s.io/v1/subjectaccessreviews", review, &status, err);

    json_decref(review);
    *allowed = rc == 0 && json_is_true(json_object_get(status, "allowed"));
    json_decref(status);
    return rc;
}
