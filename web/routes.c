/* routes.c - every route of the API in one table, and the dispatcher. */
#include <civetweb.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "internal.h"

enum { ROUTE_OPEN = 1 }; /* never needs the token */

struct route {
    const char *method;
    const char *pattern; /* "/api/v1/pods/{ns}/{name}": {x} matches one segment */
    api__handler fn;
    const char *params; /* accepted query parameters, comma separated */
    int flags;
};

static const struct route routes[] = {
    {"GET", "/healthz", api__healthz, "", ROUTE_OPEN},
    {"GET", "/metrics", api__metrics, "", 0},
    {"POST", "/api/v1/manifests", api__manifests_apply, "", 0},
    {"GET", "/api/v1/nodes", api__nodes_list, "", 0},
    {"GET", "/api/v1/nodes/{name}", api__node_get, "", 0},
    {"DELETE", "/api/v1/nodes/{name}", api__node_delete, "", 0},
    {"GET", "/api/v1/pods", api__pods_list, "namespace,node,phase", 0},
    {"GET", "/api/v1/pods/{ns}/{name}", api__pod_get, "", 0},
    {"DELETE", "/api/v1/pods/{ns}/{name}", api__pod_delete, "", 0},
    {"GET", "/api/v1/podgroups", api__podgroups_list, "namespace", 0},
    {"GET", "/api/v1/podgroups/{ns}/{name}", api__podgroup_get, "", 0},
    {"DELETE", "/api/v1/podgroups/{ns}/{name}", api__podgroup_delete, "", 0},
    {"GET", "/api/v1/clusternetworktopologies", api__topologies_list, "", 0},
    {"GET", "/api/v1/clusternetworktopologies/{name}", api__topology_get, "", 0},
    {"DELETE", "/api/v1/clusternetworktopologies/{name}", api__topology_delete, "", 0},
    {"GET", "/api/v1/topology", api__topology_tree, "pod_cpu,pod_memory,pod_gpu,like", 0},
    {"GET", "/api/v1/audit", api__audit_export, "from,to,since,until,job,kind,limit,tail", 0},
    {"GET", "/api/v1/audit/verify", api__audit_verify, "from,to", 0},
    {"POST", "/api/v1/cycles", api__cycles_run, "", 0},
    {"GET", "/api/v1/sources", api__sources, "", 0},
    {"GET", "/api/v1/jobs", api__jobs_list, "state", 0},
    {"GET", "/api/v1/jobs/{ns}/{name}", api__job_get, "", 0},
    {"GET", "/api/v1/jobs/{ns}/{name}/why", api__job_why, "", 0},
    {"GET", "/api/v1/preemptions", api__preemptions_list, "job,victim,since", 0},
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

static void free_params(struct req *r)
{
    for (size_t i = 0; i < r->nparams; i++) {
        free(r->params[i]);
        r->params[i] = NULL;
    }
    r->nparams = 0;
}

/* 1 when path matches pattern; captures {x} segments into r->params. */
static int match(const char *pattern, const char *path, struct req *r)
{
    const char *p = pattern, *s = path;

    free_params(r);
    while (*p && *s) {
        if (*p == '{') {
            size_t n = strcspn(s, "/");
            if (!n || r->nparams == API_MAX_PARAMS)
                break;
            r->params[r->nparams++] = xstrndup(s, n);
            p = strchr(p, '}') + 1;
            s += n;
        } else if (*p == *s) {
            p++, s++;
        } else {
            break;
        }
    }
    /* a trailing slash is tolerated: "/api/v1/pods/" is "/api/v1/pods" */
    if (!*p && (!*s || (s[0] == '/' && !s[1])))
        return 1;
    free_params(r);
    return 0;
}

static int method_is(const struct route *rt, const char *method)
{
    return !strcmp(rt->method, method) || (!strcmp(method, "HEAD") && !strcmp(rt->method, "GET"));
}

static int mutating(const char *method)
{
    return strcmp(method, "GET") && strcmp(method, "HEAD") && strcmp(method, "OPTIONS");
}

/* Constant-time in the length of the presented token: no early exit on a mismatch. */
static int token_equal(const char *want, const char *got)
{
    size_t wl = strlen(want), gl = strlen(got);
    unsigned char diff = (unsigned char)(wl != gl);

    for (size_t i = 0; i < gl; i++)
        diff |= (unsigned char)(got[i] ^ want[i % (wl ? wl : 1)]);
    return diff == 0;
}

static int authorized(struct req *r)
{
    const char *h = api__header(r, "Authorization");

    if (!h || strncasecmp(h, "Bearer ", 7) != 0)
        return 0;
    h += 7;
    while (*h == ' ')
        h++;
    return token_equal(r->api->token, h);
}

static void reply_unauthorized(struct req *r)
{
    json_t *body = json_pack("{s:{s:s, s:s}}", "error", "code", err_name(ERR_UNAUTHORIZED),
                             "message", "this request needs 'Authorization: Bearer <token>'");
    char *text = json_dumps(body, JSON_COMPACT);

    api__reply_raw(r, 401, "application/json", text, strlen(text),
                   "WWW-Authenticate: Bearer realm=\"musterd\"");
    free(text);
    json_decref(body);
}

/* 1 when every query parameter is one the route accepts; otherwise replies 400. */
static int query_ok(struct req *r, const char *accepted)
{
    const char *q = r->query;

    while (q && *q) {
        size_t len = strcspn(q, "&");
        size_t nlen = strcspn(q, "=&");
        int ok = nlen == 0;
        for (const char *a = accepted; *a && !ok;) {
            size_t alen = strcspn(a, ",");
            ok = alen == nlen && !strncmp(a, q, nlen);
            a += alen + (a[alen] == ',');
        }
        if (!ok) {
            struct err err = ERR_INIT;
            char *name = xstrndup(q, nlen);
            err_setf(&err, ERR_INVALID, name, "unknown query parameter '%s'%s%s", name,
                     *accepted ? "; accepted: " : "", accepted);
            free(name);
            api__reply_error(r, &err);
            return 0;
        }
        q += len + (q[len] == '&');
    }
    return 1;
}

static void method_not_allowed(struct req *r, const char *allow)
{
    struct err err = ERR_INIT;
    char header[128];

    err_set(&err, ERR_METHOD, "method '%s' is not allowed on '%s'; allowed: %s", r->method, r->path,
            allow);
    json_t *body =
        json_pack("{s:{s:s, s:s}}", "error", "code", err_name(ERR_METHOD), "message", err.msg);
    char *text = json_dumps(body, JSON_COMPACT);
    snprintf(header, sizeof(header), "Allow: %s", allow);
    api__reply_raw(r, 405, "application/json", text, strlen(text), header);
    free(text);
    json_decref(body);
}

void api__dispatch(struct req *r)
{
    char allow[128] = "";
    const struct route *found = NULL;

    for (size_t i = 0; i < NROUTES && !found; i++) {
        if (!match(routes[i].pattern, r->path, r))
            continue;
        if (method_is(&routes[i], r->method)) {
            found = &routes[i];
            break;
        }
        if (!strstr(allow, routes[i].method)) {
            size_t n = strlen(allow);
            snprintf(allow + n, sizeof(allow) - n, "%s%s", n ? ", " : "", routes[i].method);
        }
        free_params(r);
    }
    if (!found && allow[0]) {
        method_not_allowed(r, allow);
    } else if (!found) {
        if (strncmp(r->path, "/api/", 5) != 0 &&
            (!strcmp(r->method, "GET") || !strcmp(r->method, "HEAD")))
            api__static(r);
        else
            api__reply_errorf(r, ERR_NOT_FOUND, "no route for '%s %s'", r->method, r->path);
    } else if (r->api->token && !(found->flags & ROUTE_OPEN) &&
               (mutating(r->method) || r->api->auth_reads) && !authorized(r)) {
        reply_unauthorized(r);
    } else if (query_ok(r, found->params)) {
        found->fn(r);
    }
    free_params(r);
}
