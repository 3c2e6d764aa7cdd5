/*
 * kube_support.c - starts tests/kubeapi/server.py and drives it (see kube_support.h).
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "kube_internal.h"
#include "kube_support.h"

static void make_cert(const char *dir)
{
    char *cmd = xasprintf("cd '%s' && openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem "
                          "-out cert.pem -days 1 -subj /CN=localhost "
                          "-addext subjectAltName=IP:127.0.0.1,DNS:localhost >/dev/null 2>&1",
                          dir);
    int rc = system(cmd);
    free(cmd);
    ck_assert_msg(rc == 0, "openssl req failed");
}

static void write_kubeconfig(struct kube_testapi *t, int tls, const char *token)
{
    snprintf(t->kubeconfig, sizeof(t->kubeconfig), "%s/kubeconfig", t->dir);
    FILE *f = fopen(t->kubeconfig, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f,
            "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
            "clusters:\n- name: other\n  cluster:\n    server: http://127.0.0.1:1\n"
            "- name: test\n  cluster:\n    server: %s://127.0.0.1:%d\n%s"
            "contexts:\n- name: test\n  context:\n    cluster: test\n    user: u\n"
            "users:\n- name: u\n  user:\n%s%s%s",
            tls ? "https" : "http", t->port, tls ? "    certificate-authority: cert.pem\n" : "",
            token ? "    token: " : "    {}", token ? token : "", "\n");
    fclose(f);
}

void kube_testapi_start(struct kube_testapi *t, int tls, const char *token)
{
    memset(t, 0, sizeof(*t));
    const char *tmp = getenv("TMPDIR");
    snprintf(t->dir, sizeof(t->dir), "%s/kubeapi-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(t->dir));
    if (tls)
        make_cert(t->dir);
    const char *src = getenv("MUSTER_SOURCE_DIR");
    char *script = xasprintf("%s/tests/kubeapi/server.py", src ? src : MUSTER_SOURCE_DIR);
    char *port_file = xasprintf("%s/port", t->dir);
    char *cert = xasprintf("%s/cert.pem", t->dir), *key = xasprintf("%s/key.pem", t->dir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const char *argv[16] = {
            "python3", script,      "--port-file", port_file, "--bookmark-seconds",
            "0.3",     "--history", "200"};
        int n = 8;
        if (token) {
            argv[n++] = "--token";
            argv[n++] = token;
        }
        if (tls) {
            argv[n++] = "--cert";
            argv[n++] = cert;
            argv[n++] = "--key";
            argv[n++] = key;
        }
        argv[n] = NULL;
        execvp("python3", (char *const *)argv);
        _exit(127);
    }
    t->pid = pid;
    for (int i = 0; i < 500 && !t->port; i++) {
        FILE *f = fopen(port_file, "r");
        if (f) {
            if (fscanf(f, "%d", &t->port) != 1)
                t->port = 0;
            fclose(f);
        }
        if (!t->port)
            usleep(20000);
    }
    ck_assert_msg(t->port > 0, "test API server did not start");
    snprintf(t->url, sizeof(t->url), "%s://127.0.0.1:%d", tls ? "https" : "http", t->port);
    write_kubeconfig(t, tls, token);
    t->conn = xcalloc(1, sizeof(*t->conn));
    t->conn->server = xstrdup(t->url);
    t->conn->insecure = 1;
    /* the control endpoints need none; kube_testapi_get reads the API as a client */
    t->conn->token = token ? xstrdup(token) : NULL;
    t->http = kube__http_new(t->conn, NULL);
    free(script);
    free(port_file);
    free(cert);
    free(key);
}

void kube_testapi_stop(struct kube_testapi *t)
{
    if (t->pid > 0) {
        kill(t->pid, SIGKILL);
        waitpid(t->pid, NULL, 0);
        t->pid = 0;
    }
    kube__http_free(t->http);
    kube__conn_free(t->conn);
    t->http = NULL;
    t->conn = NULL;
    char *cmd = xasprintf("rm -rf '%s'", t->dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", t->dir);
    free(cmd);
}

static json_t *request(struct kube_testapi *t, const char *method, const char *path, json_t *body,
                       long *status)
{
    struct kube_resp r = {0};
    struct err err = ERR_INIT;
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    int rc = kube__http_request(t->http, method, path, NULL, text, 60000, &r, &err);
    free(text);
    ck_assert_msg(rc == 0, "%s", err.msg);
    *status = r.status;
    json_t *doc = json_loadb(r.body, r.len, 0, NULL);
    kube__resp_release(&r);
    return doc;
}

json_t *kube_testapi_control(struct kube_testapi *t, const char *what, json_t *body)
{
    long status = 0;
    char *path = xasprintf("/control/%s", what);
    json_t *empty = json_object();
    json_t *doc = request(t, "POST", path, body ? body : empty, &status);
    json_decref(empty);
    ck_assert_msg(status == 200, "control %s: HTTP %ld", what, status);
    free(path);
    return doc;
}

void kube_testapi_apply(struct kube_testapi *t, const char *resource, json_t *obj)
{
    json_t *b = json_pack("{s:[{s:s,s:O}]}", "objects", "resource", resource, "object", obj);
    json_decref(kube_testapi_control(t, "apply", b));
    json_decref(b);
}

void kube_testapi_delete(struct kube_testapi *t, const char *resource, const char *key)
{
    json_t *b = json_pack("{s:s,s:s}", "resource", resource, "key", key);
    json_decref(kube_testapi_control(t, "delete", b));
    json_decref(b);
}

json_t *kube_testapi_object(struct kube_testapi *t, const char *resource, const char *key)
{
    long status = 0;
    char *path = xasprintf("/control/object?resource=%s&key=%s", resource, key);
    json_t *doc = request(t, "GET", path, NULL, &status);
    free(path);
    if (status != 200) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

json_t *kube_testapi_stats(struct kube_testapi *t)
{
    long status = 0;
    return request(t, "GET", "/control/stats", NULL, &status);
}

long long kube_testapi_stat(struct kube_testapi *t, const char *name)
{
    json_t *doc = kube_testapi_stats(t);
    long long v = (long long)json_integer_value(json_object_get(doc, name));
    json_decref(doc);
    return v;
}

json_t *kube_testapi_get(struct kube_testapi *t, const char *path, long *status)
{
    return request(t, "GET", path, NULL, status);
}

json_t *kube_test_pod(const char *name, const char *scheduler, const char *node, const char *group,
                      const char *cpu)
{
    json_t *pod = json_pack("{s:{s:s,s:s,s:{}},s:{s:[{s:s,s:s,s:{s:{s:s}}}]},s:{s:s}}", "metadata",
                            "name", name, "namespace", "default", "labels", "spec", "containers",
                            "name", "c", "image", "busybox", "resources", "requests", "cpu",
                            cpu ? cpu : "1", "status", "phase", node ? "Running" : "Pending");
    json_t *spec = json_object_get(pod, "spec");
    if (scheduler)
        json_object_set_new(spec, "schedulerName", json_string(scheduler));
    if (node)
        json_object_set_new(spec, "nodeName", json_string(node));
    if (group)
        json_object_set_new(json_object_get(json_object_get(pod, "metadata"), "labels"),
                            "pod-group.scheduling.sigs.k8s.io", json_string(group));
    return pod;
}

json_t *kube_test_node(const char *name, const char *cpu, const char *block)
{
    return json_pack("{s:{s:s,s:{s:s}},s:{s:{s:s,s:s,s:s}}}", "metadata", "name", name, "labels",
                     "network.topology.nvidia.com/block", block ? block : "b0", "status",
                     "allocatable", "cpu", cpu ? cpu : "8", "memory", "32Gi", "pods", "110");
}

int kube_test_wait(int (*cond)(void *ctx), void *ctx, int64_t timeout_ms)
{
#ifdef __SANITIZE_ADDRESS__
    /* a sanitizer build runs several times slower, and make test runs it with -j on a
     * shared machine: the wait is a bound on failure, never on success */
    timeout_ms *= 3;
#endif
    int64_t end = clock_mono_ms() + timeout_ms;
    int v;
    while (!(v = cond(ctx)) && clock_mono_ms() < end)
        usleep(20000);
    return v;
}
