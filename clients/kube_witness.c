/*
 * kube_witness.c - a ConfigMap in the mirrored cluster as a second witness of the audit
 * log's checkpoints: data.checkpoint holds the newest checkpoint line. It lives outside
 * musterd's host, so whoever can rewrite the data directory (and the witness file next to
 * it) still cannot roll it back without credentials for the API server.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"
#include "kube.h"
#include "kube_internal.h"

#define WITNESS_TIMEOUT_MS 10000

struct kube_witness {
    struct kube_conn *conn;
    struct kube_http *http;
    char *ns, *name;
};

int kube_witness_open(const struct kube_options *opts, const char *name, struct kube_witness **out,
                      struct err *err)
{
    struct kube_conn *c = NULL;
    const char *slash = strchr(name, '/');
    int rc;

    *out = NULL;
    if ((rc = kube__conn_load(opts->kubeconfig, opts->context, &c, err)) < 0)
        return err_prefix(err, "audit witness ConfigMap");
    *out = xcalloc(1, sizeof(**out));
    (*out)->conn = c;
    (*out)->http = kube__http_new(c, NULL);
    (*out)->ns = slash ? xstrndup(name, (size_t)(slash - name))
                       : xstrdup(c->ns && *c->ns ? c->ns : "default");
    (*out)->name = xstrdup(slash ? slash + 1 : name);
    return 0;
}

void kube_witness_close(struct kube_witness *w)
{
    if (!w)
        return;
    kube__http_free(w->http);
    kube__conn_free(w->conn);
    free(w->ns);
    free(w->name);
    free(w);
}

const char *kube_witness_name(const struct kube_witness *w, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", w->ns, w->name);
    return buf;
}

static int answer_error(struct kube_witness *w, const char *what, struct kube_resp *r,
                        struct err *err)
{
    json_t *doc = json_loads(r->body ? r->body : "", 0, NULL);
    const char *msg = json_string_value(json_object_get(doc, "message"));
    int rc = err_set(err, r->status >= 500 ? ERR_NETWORK : ERR_INVALID,
                     "cannot %s the audit witness ConfigMap '%s/%s': %ld %s", what, w->ns, w->name,
                     r->status, msg ? msg : "");
    json_decref(doc);
    return rc;
}

int kube_witness_get(struct kube_witness *w, char **line, struct err *err)
{
    struct kube_resp r = {0};
    char *path = xasprintf("/api/v1/namespaces/%s/configmaps/%s", w->ns, w->name);
    int rc = kube__http_request(w->http, "GET", path, NULL, NULL, WITNESS_TIMEOUT_MS, &r, err);

    *line = NULL;
    if (rc == 0 && r.status == 200) {
        json_t *cm = json_loads(r.body, 0, NULL);
        const char *s =
            json_string_value(json_object_get(json_object_get(cm, "data"), "checkpoint"));
        *line = s ? xstrdup(s) : NULL;
        json_decref(cm);
    } else if (rc == 0 && r.status != 404) {
        rc = answer_error(w, "read", &r, err);
    }
    kube__resp_release(&r);
    free(path);
    return rc;
}

int kube_witness_put(struct kube_witness *w, const char *line, struct err *err)
{
    struct kube_resp r = {0};
    char *path = xasprintf("/api/v1/namespaces/%s/configmaps/%s", w->ns, w->name);
    json_t *patch = json_pack("{s:{s:s}}", "data", "checkpoint", line);
    char *body = json_dumps(patch, JSON_COMPACT);
    int rc = kube__http_request(w->http, "PATCH", path, "application/merge-patch+json", body,
                                WITNESS_TIMEOUT_MS, &r, err);

    if (rc == 0 && r.status == 404) { /* the first checkpoint: create it */
        json_t *cm =
            json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:s}}", "apiVersion", "v1", "kind",
                      "ConfigMap", "metadata", "name", w->name, "namespace", w->ns, "labels",
                      "app.kubernetes.io/managed-by", "muster", "data", "checkpoint", line);
        free(body);
        free(path);
        body = json_dumps(cm, JSON_COMPACT);
        path = xasprintf("/api/v1/namespaces/%s/configmaps", w->ns);
        json_decref(cm);
        kube__resp_release(&r);
        rc = kube__http_request(w->http, "POST", path, NULL, body, WITNESS_TIMEOUT_MS, &r, err);
    }
    if (rc == 0 && (r.status < 200 || r.status > 299))
        rc = answer_error(w, "write", &r, err);
    kube__resp_release(&r);
    json_decref(patch);
    free(body);
    free(path);
    return rc;
}
