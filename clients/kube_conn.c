/*
 * kube_conn.c - where the API server is and how to authenticate: a kubeconfig
 * (parsed by the model's YAML decoder into jansson, since yaml.h belongs to
 * model/) or the in-cluster service account.
 */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "err.h"
#include "kube_internal.h"
#include "model.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

void kube__conn_free(struct kube_conn *c)
{
    if (!c)
        return;
    free(c->server);
    free(c->token);
    free(c->ca_file);
    free(c->ca_data);
    free(c->cert_file);
    free(c->cert_data);
    free(c->key_file);
    free(c->key_data);
    free(c->ns);
    free(c->user_agent);
    free(c);
}

static int read_file(const char *path, char **out, size_t *len, struct err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return err_set(err, ERR_IO, "cannot read '%s': %m", path);
    size_t cap = 4096, n = 0;
    char *buf = xmalloc(cap);
    size_t r;
    while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n < 2)
            buf = xrealloc(buf, cap *= 2);
    }
    fclose(f);
    buf[n] = '\0';
    *out = buf;
    if (len)
        *len = n;
    return 0;
}

int kube__base64_decode(const char *in, char **out, size_t *out_len, struct err *err)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t n = strlen(in);
    char *buf = xmalloc(n / 4 * 3 + 4);
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = in[i];
        if (ch == '=' || ch == '\n' || ch == '\r' || ch == ' ')
            continue;
        const char *p = ch ? strchr(tbl, ch) : NULL;
        if (!p) {
            free(buf);
            return err_set(err, ERR_INVALID, "invalid base64 data");
        }
        acc = (acc << 6) | (unsigned)(p - tbl);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[o++] = (char)((acc >> bits) & 0xff);
        }
    }
    buf[o] = '\0';
    *out = buf;
    *out_len = o;
    return 0;
}

/* The entry named name in a kubeconfig list (clusters, users, contexts); borrowed. */
static json_t *named(json_t *doc, const char *list, const char *name, const char *inner)
{
    size_t i;
    json_t *e;
    json_array_foreach(json_object_get(doc, list), i, e)
    {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (n && !strcmp(n, name))
            return json_object_get(e, inner);
    }
    return NULL;
}

/* A file path from the kubeconfig, relative to its folder. New. */
static char *rel_path(const char *dir, const char *p)
{
    if (!p)
        return NULL;
    return p[0] == '/' ? xstrdup(p) : xasprintf("%s/%s", dir, p);
}

static int data_field(json_t *obj, const char *field, char **data, size_t *len, struct err *err)
{
    const char *b64 = json_string_value(json_object_get(obj, field));
    if (!b64)
        return 0;
    if (kube__base64_decode(b64, data, len, err) < 0)
        return err_prefix(err, "kubeconfig field '%s'", field);
    return 0;
}

static int fill_from_config(json_t *doc, const char *dir, const char *context, struct kube_conn *c,
                            struct err *err)
{
    const char *ctx_name =
        context ? context : json_string_value(json_object_get(doc, "current-context"));
    if (!ctx_name)
        return err_set(err, ERR_INVALID, "kubeconfig has no current-context; pass --context");
    json_t *ctx = named(doc, "contexts", ctx_name, "context");
    if (!ctx)
        return err_set(err, ERR_INVALID, "context '%s' not found in kubeconfig", ctx_name);
    const char *cl_name = json_string_value(json_object_get(ctx, "cluster"));
    const char *user_name = json_string_value(json_object_get(ctx, "user"));
    const char *ns = json_string_value(json_object_get(ctx, "namespace"));
    c->ns = ns ? xstrdup(ns) : NULL;
    json_t *cl = cl_name ? named(doc, "clusters", cl_name, "cluster") : NULL;
    if (!cl)
        return err_set(err, ERR_INVALID, "cluster '%s' of context '%s' not found in kubeconfig",
                       cl_name ? cl_name : "", ctx_name);
    const char *server = json_string_value(json_object_get(cl, "server"));
    if (!server || !*server)
        return err_set(err, ERR_INVALID, "cluster '%s' has no server", cl_name);
    c->server = xstrdup(server);
    size_t sl = strlen(c->server);
    while (sl > 0 && c->server[sl - 1] == '/')
        c->server[--sl] = '\0';
    c->insecure = json_is_true(json_object_get(cl, "insecure-skip-tls-verify"));
    c->ca_file = rel_path(dir, json_string_value(json_object_get(cl, "certificate-authority")));
    if (data_field(cl, "certificate-authority-data", &c->ca_data, &c->ca_len, err) < 0)
        return err->code;
    json_t *user = user_name ? named(doc, "users", user_name, "user") : NULL;
    if (!user)
        return 0; /* anonymous */
    const char *tok = json_string_value(json_object_get(user, "token"));
    const char *tok_file = json_string_value(json_object_get(user, "tokenFile"));
    if (tok) {
        c->token = xstrdup(tok);
    } else if (tok_file) {
        char *p = rel_path(dir, tok_file);
        int rc = read_file(p, &c->token, NULL, err);
        free(p);
        if (rc < 0)
            return rc;
        c->token[strcspn(c->token, "\r\n")] = '\0';
    }
    c->cert_file = rel_path(dir, json_string_value(json_object_get(user, "client-certificate")));
    c->key_file = rel_path(dir, json_string_value(json_object_get(user, "client-key")));
    if (data_field(user, "client-certificate-data", &c->cert_data, &c->cert_len, err) < 0 ||
        data_field(user, "client-key-data", &c->key_data, &c->key_len, err) < 0)
        return err->code;
    return 0;
}

int kube__conn_from_kubeconfig(const char *path, const char *context, struct kube_conn **out,
                               struct err *err)
{
    char *buf = NULL, *dcopy = NULL;
    size_t len = 0;
    struct model_manifest m = {0};
    struct kube_conn *c = xcalloc(1, sizeof(*c));
    int rc = read_file(path, &buf, &len, err);
    if (rc < 0)
        goto out;
    rc = model_manifest_parse(buf, len, MODEL_FMT_YAML, &m, err);
    if (rc < 0) {
        err_prefix(err, "kubeconfig '%s'", path);
        goto out;
    }
    if (m.n != 1 || !json_is_object(m.docs[0].obj)) {
        rc = err_set(err, ERR_INVALID, "kubeconfig '%s': expected one YAML document", path);
        goto out;
    }
    dcopy = xstrdup(path);
    rc = fill_from_config(m.docs[0].obj, dirname(dcopy), context, c, err);
    if (rc < 0)
        err_prefix(err, "kubeconfig '%s'", path);
out:
    model_manifest_free(&m);
    free(buf);
    free(dcopy);
    if (rc < 0) {
        kube__conn_free(c);
        c = NULL;
    }
    *out = c;
    return rc;
}

int kube__conn_in_cluster(const char *sa_dir, struct kube_conn **out, struct err *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    char *p = NULL;
    int rc = 0;
    *out = NULL;
    if (!host || !*host || !port || !*port)
        return err_set(err, ERR_NOT_FOUND,
                       "not running in a pod: KUBERNETES_SERVICE_HOST and "
                       "KUBERNETES_SERVICE_PORT are not set");
    if (!sa_dir)
        sa_dir = SA_DIR;
    struct kube_conn *c = xcalloc(1, sizeof(*c));
    c->server = strchr(host, ':') ? xasprintf("https://[%s]:%s", host, port)
                                  : xasprintf("https://%s:%s", host, port);
    p = xasprintf("%s/token", sa_dir);
    rc = read_file(p, &c->token, NULL, err);
    if (rc < 0)
        goto out;
    c->token[strcspn(c->token, "\r\n")] = '\0';
    free(p);
    p = xasprintf("%s/ca.crt", sa_dir);
    if (access(p, R_OK) == 0) {
        c->ca_file = p;
        p = NULL;
    }
    free(p);
    p = xasprintf("%s/namespace", sa_dir);
    if (read_file(p, &c->ns, NULL, NULL) == 0)
        c->ns[strcspn(c->ns, "\r\n")] = '\0';
out:
    free(p);
    if (rc < 0) {
        err_prefix(err, "in-cluster credentials");
        kube__conn_free(c);
        c = NULL;
    }
    *out = c;
    return rc;
}

int kube__conn_load(const char *kubeconfig, const char *context, struct kube_conn **out,
                    struct err *err)
{
    if (kubeconfig && *kubeconfig)
        return kube__conn_from_kubeconfig(kubeconfig, context, out, err);
    if (getenv("KUBERNETES_SERVICE_HOST") && !context)
        return kube__conn_in_cluster(getenv("MUSTER_KUBE_SA_DIR"), out, err);
    const char *env = getenv("KUBECONFIG");
    if (env && *env) {
        char *first = xstrndup(env, strcspn(env, ":"));
        int rc = kube__conn_from_kubeconfig(first, context, out, err);
        free(first);
        return rc;
    }
    const char *home = getenv("HOME");
    char *p = xasprintf("%s/.kube/config", home ? home : "");
    int rc;
    if (access(p, R_OK) == 0)
        rc = kube__conn_from_kubeconfig(p, context, out, err);
    else
        rc = err_set(err, ERR_NOT_FOUND,
                     "no kubeconfig: pass --kubeconfig, set KUBECONFIG or "
                     "run in a pod");
    free(p);
    return rc;
}
