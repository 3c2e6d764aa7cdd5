/*
 * kube_auth.c - musterd's roles from Kubernetes: the api's external authenticator in
 * mirror mode.
 *
 * A bearer token that is not in the tokens file is sent to the API server as a
 * TokenReview; the user it names gets the highest role whose SubjectAccessReview is
 * allowed, asked from the top (the mapping below, documented in docs/security.md and
 * granted by the ClusterRoles of examples/rbac-roles.yaml). A user allowed none of them
 * is known but may do nothing (403). The api caches each answer for API_AUTH_CACHE_MS.
 */
#include <stdio.h>

#include "api.h"
#include "err.h"
#include "kube.h"
#include "server.h"

#define MUSTER_API_GROUP "muster.scheduling"

/* X(role, resource, verb): the SubjectAccessReview that grants each role. */
static const struct {
    enum api_role role;
    const char *resource;
    const char *verb;
} grants[] = {
    {API_ROLE_ADMIN, "configuration", "update"},
    {API_ROLE_OPERATOR, "objects", "create"},
    {API_ROLE_VIEWER, "objects", "get"},
};

int server__kube_authenticate(void *ctx, const char *token, struct api_identity *out,
                              struct err *err)
{
    struct kube *k = ctx;
    json_t *user = NULL;
    int rc = kube_token_review(k, token, &user, err);

    if (rc < 0)
        return rc;
    snprintf(out->name, sizeof(out->name), "%s",
             json_string_value(json_object_get(user, "username")));
    snprintf(out->source, sizeof(out->source), "kubernetes");
    out->role = API_ROLE_NONE;
    for (size_t i = 0; i < sizeof(grants) / sizeof(grants[0]); i++) {
        int allowed = 0;
        if ((rc = kube_access_review(k, user, MUSTER_API_GROUP, grants[i].resource, grants[i].verb,
                                     &allowed, err)) < 0)
            break;
        if (allowed) {
            out->role = grants[i].role;
            break;
        }
    }
    json_decref(user);
    return rc;
}
