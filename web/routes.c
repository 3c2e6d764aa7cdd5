/* routes.c - every route of the API in one table, and the dispatcher. */
#include <civetweb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "alloc.h"
#include "cached_reads.h"
#include "clock.h"
#include "handlers.h"
#include "http.h"
#include "log.h"
#include "routes.h"
#include "thread.h"

enum {
    ROUTE_DEEP = 1, /* runs on a thread with a big stack (see run_deep) */
};

/* The role each route needs (auth.c decides when it is asked for: always for a mutation
 * and for a read above viewer, for other reads only with auth_reads). */
#define OPEN API_ROLE_NONE
#define VIEW API_ROLE_VIEWER
#define OPER API_ROLE_OPERATOR
#define ADMIN API_ROLE_ADMIN

/* civetweb's worker threads have ~100 KiB stacks: a 100-level YAML document or a
 * 1,000-level JSON array overflowed them inside the (recursive) parsers. Handlers that
 * parse request bodies or run the scheduler get a thread with this much stack. */
#define DEEP_STACK ((size_t)8 << 20)

struct route {
    const char *method;
    const char *pattern; /* "/api/v1/pods/{ns}/{name}": {x} matches one segment */
    api__handler fn;
    const char *params; /* accepted query parameters, comma separated */
    enum api_role role; /* the least role that may call it */
    int flags;
    /* 1 when the front end may answer r on its own thread (front_answer.c): the answer
     * needs no waiting and little work; NULL: always relayed to civetweb */
    int (*front)(struct req *r);
};

/* Probes are answered by the front end: workers held by slow clients must not make a
 * liveness probe fail (docs/security.md "Slow clients and connections"). */
static int always(struct req *r)
{
    (void)r;
    return 1;
}

static const struct route routes[] = {
    {"GET", "/healthz", api__healthz, "", OPEN, 0, always},
    {"GET", "/readyz", api__readyz, "", OPEN, 0, always},
    {"GET", "/metrics", api__metrics, "", VIEW, 0, NULL},
    {"POST", "/api/v1/manifests", api__manifests_apply, "fieldValidation", OPER, ROUTE_DEEP, NULL},
    {"POST", "/api/v1/whatif", api__whatif, "fieldValidation,cordon,delete", VIEW, ROUTE_DEEP,
     NULL},
    {"GET", "/api/v1/nodes", api__nodes_list, "limit,continue", VIEW, 0, NULL},
    {"GET", "/api/v1/nodes/{name}", api__node_get, "", VIEW, 0, NULL},
    {"GET", "/api/v1/nodemap", api__nodemap, "resourceVersion", VIEW, 0, api__read_cached},
    {"DELETE", "/api/v1/nodes/{name}", api__node_delete, "", OPER, 0, NULL},
    {"GET", "/api/v1/pods", api__pods_list, "namespace,node,phase,limit,continue", VIEW, 0, NULL},
    {"POST", "/api/v1/pods/status", api__pods_status, "", OPER, ROUTE_DEEP, NULL},
    {"GET", "/api/v1/pods/{ns}/{name}", api__pod_get, "", VIEW, 0, NULL},
    {"DELETE", "/api/v1/pods/{ns}/{name}", api__pod_delete, "", OPER, 0, NULL},
    {"GET", "/api/v1/podgroups", api__podgroups_list, "namespace,limit,continue", VIEW, 0, NULL},
    {"GET", "/api/v1/podgroups/{ns}/{name}", api__podgroup_get, "", VIEW, 0, NULL},
    {"DELETE", "/api/v1/podgroups/{ns}/{name}", api__podgroup_delete, "", OPER, 0, NULL},
    {"GET", "/api/v1/clusternetworktopologies", api__topologies_list, "limit,continue", VIEW, 0,
     NULL},
    {"GET", "/api/v1/clusternetworktopologies/{name}", api__topology_get, "", VIEW, 0, NULL},
    {"DELETE", "/api/v1/clusternetworktopologies/{name}", api__topology_delete, "", OPER, 0, NULL},
    {"GET", "/api/v1/priorityclasses", api__priorityclasses_list, "", VIEW, 0, NULL},
    {"GET", "/api/v1/priorityclasses/{name}", api__priorityclass_get, "", VIEW, 0, NULL},
    {"DELETE", "/api/v1/priorityclasses/{name}", api__priorityclass_delete, "", OPER, 0, NULL},
    {"GET", "/api/v1/queues", api__queues_list, "", VIEW, 0, NULL},
    {"GET", "/api/v1/queues/{name}", api__queue_get, "", VIEW, 0, NULL},
    {"DELETE", "/api/v1/queues/{name}", api__queue_delete, "", OPER, 0, NULL},
    {"GET", "/api/v1/poddisruptionbudgets", api__pdbs_list, "namespace,limit,continue", VIEW, 0,
     NULL},
    {"GET", "/api/v1/poddisruptionbudgets/{ns}/{name}", api__pdb_get, "", VIEW, 0, NULL},
    {"DELETE", "/api/v1/poddisruptionbudgets/{ns}/{name}", api__pdb_delete, "", OPER, 0, NULL},
    {"GET", "/api/v1/topology", api__topology_tree,
     "pod_cpu,pod_memory,pod_gpu,like,jobs,resourceVersion", VIEW, 0, api__read_cached},
    {"GET", "/api/v1/audit", api__audit_export, "from,to,since,until,job,kind,limit,tail", VIEW, 0,
     api__audit_small},
    {"GET", "/api/v1/audit/verify", api__audit_verify, "from,to", ADMIN, 0, NULL},
    {"GET", "/api/v1/audit/replay", api__audit_replay, "from,to,exact", VIEW, ROUTE_DEEP, NULL},
    {"POST", "/api/v1/audit/prune", api__audit_prune, "before", ADMIN, 0, NULL},
    {"GET", "/api/v1/health", api__health, "", VIEW, 0, NULL},
    {"POST", "/api/v1/cycles", api__cycles_run, "", OPER, ROUTE_DEEP, NULL},
    {"GET", "/api/v1/sources", api__sources, "", VIEW, 0, NULL},
    {"GET", "/api/v1/jobs", api__jobs_list, "state,limit,continue,resourceVersion", VIEW, 0,
     api__read_cached},
    {"GET", "/api/v1/jobs/{ns}/{name}", api__job_get, "resourceVersion", VIEW, 0, api__read_cached},
    {"GET", "/api/v1/jobs/{ns}/{name}/why", api__job_why, "resourceVersion,at,seq", VIEW, 0,
     api__read_cached},
    {"GET", "/api/v1/state", api__state_get, "at,seq", VIEW, 0, NULL},
    {"GET", "/api/v1/jobstates", api__job_states, "", VIEW, 0, NULL},
    {"GET", "/api/v1/preemptions", api__preemptions_list, "job,victim,since", VIEW, 0, NULL},
    {"GET", "/api/v1/timeseries", api__timeseries, "from,to,since,series", VIEW, 0, NULL},
    {"GET", "/api/v1/grafana", api__grafana_test, "", VIEW, 0, NULL},
    {"POST", "/api/v1/grafana/search", api__grafana_search, "", VIEW, 0, NULL},
    {"POST", "/api/v1/grafana/metrics", api__grafana_search, "", VIEW, 0, NULL},
    {"POST", "/api/v1/grafana/query", api__grafana_query, "", VIEW, 0, NULL},
    {"GET", "/api/v1/preemptions/{id}", api__preemption_get, "", VIEW, 0, NULL},
    {"GET", "/api/v1/reservations", api__reservations_list, "", VIEW, 0, NULL},
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

void api__params_free(struct req *r)
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

    api__params_free(r);
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
    api__params_free(r);
    return 0;
}

static int method_is(const struct route *rt, const char *method)
{
    return !strcmp(rt->method, method) || (!strcmp(method, "HEAD") && !strcmp(rt->method, "GET"));
}

static int reply_bad_param(struct req *r, const char *q, size_t nlen, const char *fmt,
                           const char *accepted)
{
    struct err err = ERR_INIT;
    char *name = xstrndup(q, nlen);

    err_setf(&err, ERR_INVALID, name, fmt, name, accepted);
    api__utf8_scrub(err.msg);
    api__utf8_scrub(err.field);
    free(name);
    api__reply_error(r, &err);
    return 0;
}

/* 1 when every query parameter is one the route accepts, given once, with a value;
 * otherwise replies 400. */
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
        if (!ok)
            return reply_bad_param(r, q, nlen,
                                   *accepted ? "unknown query parameter '%s'; accepted: %s"
                                             : "unknown query parameter '%s'%s",
                                   accepted);
        if (nlen && q[nlen] != '=')
            return reply_bad_param(r, q, nlen, "query parameter '%s' needs a value%s", "");
        /* a second value would be silently ignored: say so instead */
        for (const char *p = r->query; nlen && p < q;) {
            size_t plen = strcspn(p, "&"), pn = strcspn(p, "=&");
            if (pn == nlen && !strncmp(p, q, nlen))
                return reply_bad_param(r, q, nlen, "query parameter '%s' is given more than once%s",
                                       "");
            p += plen + (p[plen] == '&');
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

const char *api__path_problem(const char *raw, const char *decoded)
{
    /* every object name is one segment: "pods/team%2Fx" must not become "pods/team/x" */
    if (strstr(raw, "%2F") || strstr(raw, "%2f"))
        return "holds an encoded '/' (%2F): a name cannot contain '/'";
    if (!api__utf8_valid(decoded, strlen(decoded)))
        return "is not valid UTF-8";
    for (const char *p = decoded; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return "holds a control character";
    for (const char *p = decoded; (p = strchr(p, '/')) != NULL; p++) {
        size_t n = strcspn(p + 1, "/");
        if ((n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.'))
            return "has a '.' or '..' segment";
    }
    return NULL;
}

/* 0 when the path is one a route or a file could have; otherwise replies 400. */
static int path_ok(struct req *r)
{
    const char *why = r->path_error ? r->path_error : api__path_problem(r->raw_path, r->path);

    if (!why)
        return 0;
    char *shown = xstrdup(r->raw_path);
    api__utf8_scrub(shown);
    api__reply_errorf(r, ERR_INVALID, "path '%.200s' %s", shown, why);
    free(shown);
    return -1;
}

/* Routes match the raw path; each captured name is decoded on its own (path_ok refused
 * %2F, so a decoded name never holds '/'). */
static void params_decode(struct req *r)
{
    for (size_t i = 0; i < r->nparams; i++) {
        char *name = NULL;
        const char *why = NULL;
        if (api__path_decode(r->params[i], strlen(r->params[i]), &name, &why) < 0)
            continue; /* cannot happen: path_ok decoded the whole path */
        free(r->params[i]);
        r->params[i] = name;
    }
}

/* A CORS preflight from a configured origin; 0 when the request is not one. */
static int preflight(struct req *r, const char *allow)
{
    const char *origin = api__cors_origin(r);
    char extra[512];

    if (strcmp(r->method, "OPTIONS") || !origin || !api__header(r, "Access-Control-Request-Method"))
        return 0;
    snprintf(extra, sizeof(extra),
             "Access-Control-Allow-Methods: %s\r\nAccess-Control-Allow-Headers: Authorization, "
             "Content-Type\r\nAccess-Control-Max-Age: 600",
             allow);
    api__reply_raw(r, 204, "application/json", "", 0, extra);
    return 1;
}

/* 0 on a leader (or without election); otherwise replies 503 naming the leader: a
 * follower changes nothing (no apply, delete or cycle; the API has no dry-run route, and a
 * mutating request is refused whatever its parameters). */
static int leader_or_reply(struct req *r)
{
    if (!r->api->leader)
        return 0;
    json_t *st = api__leader_state(r->api);
    const char *state = json_string_value(json_object_get(st, "state"));
    const char *leader = json_string_value(json_object_get(st, "leader"));
    if (state && !strcmp(state, "leading")) {
        json_decref(st);
        return 0;
    }
    struct err err = ERR_INIT;
    if (state && !strcmp(state, "syncing"))
        err_set(&err, ERR_UNAVAILABLE,
                "this musterd has just won the lease and is syncing with the API server; "
                "retry in a moment");
    else
        err_set(&err, ERR_UNAVAILABLE,
                "this musterd is a follower and changes nothing; the leader is '%s'",
                leader ? leader : "(none yet)");
    api__reply_error_extra(r, &err, json_pack("{s:s,s:s?}", "role", "follower", "leader", leader));
    json_decref(st);
    return -1;
}

/* 0 when the API is writable or the request only reads; otherwise replies 503 with the
 * reason the audit guard gave (a broken chain: docs/security.md) or naming the leader. */
static int writable_or_reply(struct req *r)
{
    char *why = NULL;

    if (!api__mutating(r->method))
        return 0;
    pthread_mutex_lock(&r->api->ro_mu);
    if (r->api->read_only)
        why = xstrdup(r->api->read_only);
    pthread_mutex_unlock(&r->api->ro_mu);
    if (!why)
        return leader_or_reply(r);
    api__reply_errorf(r, ERR_UNAVAILABLE, "musterd is read-only: %s", why);
    free(why);
    return -1;
}

struct deep_call {
    api__handler fn;
    struct req *r;
};

static void *deep_main(void *arg)
{
    struct deep_call *c = arg;
    /* every deep route is bulk work (an apply, a what-if, a replay): the cycle and whatever
     * answers requests run ahead of it on the cores (thread.h) */
    thread_background("musterd-bulk");
    c->fn(c->r);
    return NULL;
}

/* Runs fn(r) on a thread with DEEP_STACK of stack and waits for it; on the worker
 * itself when no thread can be made (the handler then still runs, as before). */
static void run_deep(api__handler fn, struct req *r)
{
    struct deep_call c = {fn, r};
    pthread_attr_t attr;
    pthread_t t;
    int made = 0;

    if (pthread_attr_init(&attr) == 0) {
        made = pthread_attr_setstacksize(&attr, DEEP_STACK) == 0 &&
               pthread_create(&t, &attr, deep_main, &c) == 0;
        pthread_attr_destroy(&attr);
    }
    if (made)
        pthread_join(t, NULL);
    else
        fn(r);
}

int api__route_lookup(struct req *r, char *allow, size_t allow_size)
{
    allow[0] = '\0';
    for (size_t i = 0; i < NROUTES; i++) {
        if (!match(routes[i].pattern, r->raw_path, r))
            continue;
        if (method_is(&routes[i], r->method))
            return (int)i;
        if (!strstr(allow, routes[i].method)) {
            size_t n = strlen(allow);
            snprintf(allow + n, allow_size - n, "%s%s", n ? ", " : "", routes[i].method);
        }
        api__params_free(r);
    }
    return -1;
}

int api__route_front(int i, struct req *r)
{
    return i >= 0 && (size_t)i < NROUTES && routes[i].front && routes[i].front(r);
}

const char *api__route_pattern(int i)
{
    return i >= 0 && (size_t)i < NROUTES ? routes[i].pattern : NULL;
}

const char *api__route_method(int i)
{
    return i >= 0 && (size_t)i < NROUTES ? routes[i].method : NULL;
}

void api__serve(struct req *r)
{
    int64_t start = clock_mono_ns();
    char *decoded = NULL;

    /* decode_url is off: civetweb hands over the path as sent, routes match it, and names
     * are decoded segment by segment (a %2F inside a name is not a separator) */
    if (api__path_decode(r->raw_path, strlen(r->raw_path), &decoded, &r->path_error) < 0)
        r->path = r->raw_path;
    else
        r->path = decoded;
    api__dispatch(r);
    if (r->direct && r->relay) {
        free(decoded);
        return; /* civetweb's worker serves it, and logs it */
    }
    if (!r->status) /* a handler that forgot to reply is a bug; never leave the client hanging */
        api__reply_errorf(r, ERR_INTERNAL, "no reply for '%s %s'", r->method, r->path);

    /* the path as sent: civetweb let no byte below 33 through, where the decoded one may
     * hold control characters that would forge log lines */
    log_info("%s %s %d %zu bytes %.1f ms", r->method, r->raw_path, r->status, r->bytes,
             (double)(clock_mono_ns() - start) / 1e6);
    free(decoded);
}

void api__dispatch(struct req *r)
{
    char allow[128] = "";
    const struct route *found = NULL;

    if (api__edge_ok(r) < 0 || path_ok(r) < 0)
        return;
    int i = api__route_lookup(r, allow, sizeof(allow));
    if (i >= 0)
        found = &routes[i];
    if (api__origin_ok(r) < 0) {
        /* nothing more: a foreign origin learns nothing about routes */
    } else if (!found && allow[0]) {
        if (!preflight(r, allow))
            method_not_allowed(r, allow);
    } else if (!found) {
        if (strncmp(r->path, "/api/", 5) != 0 &&
            (!strcmp(r->method, "GET") || !strcmp(r->method, "HEAD")))
            api__static(r);
        else
            api__reply_errorf(r, ERR_NOT_FOUND, "no route for '%s %s'", r->method, r->path);
    } else if (api__auth_or_reply(r, found->role) == 0 &&
               (!api__mutating(r->method) || api__content_type_ok(r) == 0) &&
               writable_or_reply(r) == 0 && r->head_only) {
        r->relay = 1; /* the head passes: the body is read, then the whole request served */
    } else if (r->status || r->relay) {
        /* refused above, or the external authenticator must be asked */
    } else if (query_ok(r, found->params)) {
        params_decode(r);
        if (found->flags & ROUTE_DEEP)
            run_deep(found->fn, r);
        else
            found->fn(r);
        api__readcache_release(r); /* a handler that replied an error made no answer */
    }
    api__params_free(r);
}
