/*
 * test_kube_musterd.c - musterd itself mirroring the test Kubernetes API server: the
 * --kubeconfig / --scheduler-name flags, GET /api/v1/sources, mirrored objects read back
 * through musterd's own API, a gang bound through the API server by musterd's cycles, and
 * a preemption: the victim audited as evicted, Events, the mirror's counters in /metrics.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "http_client.h"
#include "kube_support.h"
#include "check_run.h"

static struct kube_testapi api;
static struct musterd md;

static json_t *get(const char *path)
{
    struct http_resp r;
    http_request("GET", md.base, path, NULL, NULL, &r);
    ck_assert_msg(r.status == 200, "GET %s: %ld %s", path, r.status, r.body);
    json_t *j = json_incref(r.json);
    http_resp_free(&r);
    return j;
}

static int all_synced(void *ctx)
{
    json_t *doc = get("/api/v1/sources");
    size_t i, synced = 0;
    json_t *src, *sources = json_object_get(doc, "sources");
    json_array_foreach(sources, i, src)
    {
        const char *state = json_string_value(json_object_get(src, "state"));
        synced += json_is_true(json_object_get(src, "synced")) || !strcmp(state, "missing");
    }
    int ok = json_array_size(sources) == 8 && synced == 8;
    json_decref(doc);
    return ok;
}

static int node_of_bound(void *ctx)
{
    json_t *o = kube_testapi_object(&api, "pods", ctx);
    const char *node = json_string_value(json_object_get(json_object_get(o, "spec"), "nodeName"));
    int ok = node != NULL;
    json_decref(o);
    return ok;
}

static int nodes_seen(void *ctx)
{
    json_t *doc = get("/api/v1/nodes");
    int ok = json_array_size(json_object_get(doc, "items")) == (size_t)(intptr_t)ctx;
    json_decref(doc);
    return ok;
}

START_TEST(test_kube_musterd_mirror_and_bind)
{
    const char *args[] = {"--kubeconfig", api.kubeconfig, "--scheduler-name", "muster", NULL};

    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "k%d", i);
        json_t *n = kube_test_node(name, "4", "b0");
        kube_testapi_apply(&api, "nodes", n);
        json_decref(n);
    }
    ck_assert_int_eq(musterd_start(&md, NULL, args), 0);
    ck_assert_msg(kube_test_wait(all_synced, NULL, 10000), "sources never synced");

    json_t *doc = get("/api/v1/sources");
    ck_assert_str_eq(json_string_value(json_object_get(doc, "mode")), "bind");
    ck_assert_str_eq(json_string_value(json_object_get(doc, "schedulerName")), "muster");
    json_decref(doc);
    ck_assert(kube_test_wait(nodes_seen, (void *)(intptr_t)3, 5000));

    /* a live change reaches musterd's API */
    json_t *n = kube_test_node("k3", "4", "b0");
    kube_testapi_apply(&api, "nodes", n);
    json_decref(n);
    ck_assert_msg(kube_test_wait(nodes_seen, (void *)(intptr_t)4, 5000), "live node not seen");

    /* a pod for muster is scheduled by musterd's cycle and bound through the API server */
    json_t *pod = kube_test_pod("web", "muster", NULL, NULL, "1");
    kube_testapi_apply(&api, "pods", pod);
    json_decref(pod);
    ck_assert_msg(kube_test_wait(node_of_bound, "default/web", 10000),
                  "musterd never bound default/web through the API server");
    ck_assert_int_eq(musterd_stop(&md), 0);
    musterd_cleanup(&md);
}
END_TEST

static int pod_gone(void *ctx)
{
    json_t *o = kube_testapi_object(&api, "pods", ctx);
    json_decref(o);
    return o == NULL;
}

/* The audit records of a kind, as musterd serves them (NDJSON, new). */
static char *audit_text(const char *kind)
{
    struct http_resp r;
    char path[256];
    snprintf(path, sizeof(path), "/api/v1/audit?kind=%s", kind);
    http_request("GET", md.base, path, NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    char *out = strdup(r.body ? r.body : "");
    http_resp_free(&r);
    return out;
}

/* The Event of reason about pod name in default (events.k8s.io; new) or NULL. */
static json_t *event_of(const char *name, const char *reason)
{
    long status = 0;
    char path[256];
    snprintf(path, sizeof(path),
             "/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=regarding.name=%s,"
             "reason=%s",
             name, reason);
    json_t *doc = kube_testapi_get(&api, path, &status);
    json_t *e = json_incref(json_array_get(json_object_get(doc, "items"), 0));
    json_decref(doc);
    return e;
}

static int has_event(void *ctx)
{
    char **nr = ctx;
    json_t *e = event_of(nr[0], nr[1]);
    json_decref(e);
    return e != NULL;
}

/* A high-priority pod for muster on a full cluster: musterd preempts one low-priority pod
 * through the Eviction API, the API server deletes it, the mirror sees it go, and musterd
 * binds the preemptor on the freed node through the Binding API. */
START_TEST(test_kube_musterd_preempts_through_the_api)
{
    const char *args[] = {"--kubeconfig", api.kubeconfig, "--scheduler-name", "muster", NULL};
    const char *nodes[] = {"k0", "k1"};
    for (int i = 0; i < 2; i++) {
        char name[16];
        json_t *n = kube_test_node(nodes[i], "4", "b0");
        kube_testapi_apply(&api, "nodes", n);
        json_decref(n);
        snprintf(name, sizeof(name), "lo-%d", i);
        json_t *lo = kube_test_pod(name, NULL, nodes[i], NULL, "4");
        kube_testapi_apply(&api, "pods", lo);
        json_decref(lo);
    }
    ck_assert_int_eq(musterd_start(&md, NULL, args), 0);
    ck_assert_msg(kube_test_wait(all_synced, NULL, 10000), "sources never synced");

    json_t *hi = kube_test_pod("hi", "muster", NULL, NULL, "4");
    json_object_set_new(json_object_get(hi, "spec"), "priority", json_integer(100));
    kube_testapi_apply(&api, "pods", hi);
    json_decref(hi);
    if (!kube_test_wait(node_of_bound, "default/hi", 15000)) {
        json_t *why = get("/api/v1/jobs/default/hi/why"), *src = get("/api/v1/sources");
        json_t *pods = get("/api/v1/pods");
        char *a = json_dumps(why, JSON_COMPACT), *b = json_dumps(src, JSON_COMPACT);
        char *c = json_dumps(pods, JSON_COMPACT);
        ck_abort_msg("the preemptor was never bound through the API server: why %s; "
                     "sources %s; pods %s",
                     a, b, c);
    }

    json_t *o = kube_testapi_object(&api, "pods", "default/hi");
    const char *node = json_string_value(json_object_get(json_object_get(o, "spec"), "nodeName"));
    /* exactly the pod that was on the preemptor's node was evicted, the other one stayed */
    char victim[32], other[32];
    snprintf(victim, sizeof(victim), "default/lo-%d", strcmp(node, "k0") ? 1 : 0);
    snprintf(other, sizeof(other), "default/lo-%d", strcmp(node, "k0") ? 0 : 1);
    json_decref(o);
    ck_assert_msg(pod_gone(victim), "victim '%s' still exists", victim);
    ck_assert_msg(!pod_gone(other), "'%s' was evicted for nothing", other);
    json_t *stats = kube_testapi_stats(&api);
    ck_assert_int_eq(json_integer_value(json_object_get(stats, "evicted")), 1);
    json_decref(stats);

    json_t *ledger = get("/api/v1/preemptions");
    json_t *items = json_object_get(ledger, "items");
    ck_assert_int_eq(json_array_size(items), 1);
    json_t *victims = json_object_get(json_array_get(items, 0), "victims");
    ck_assert_int_eq(json_array_size(victims), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(victims, 0), "pod")), victim);
    json_decref(ledger);

    /* the victim, deleted by the API server, still answers: Preempted by default/hi */
    char path[128];
    snprintf(path, sizeof(path), "/api/v1/jobs/%s", victim);
    json_t *job = get(path);
    ck_assert_str_eq(json_string_value(json_object_get(job, "state")), "Preempted");
    json_t *by = json_object_get(json_object_get(job, "preemptedBy"), "preemptors");
    ck_assert_int_eq(json_array_size(by), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(by, 0), "preemptor")),
                     "default/hi");
    ck_assert_ptr_nonnull(
        json_string_value(json_object_get(json_object_get(job, "preemptedBy"), "retainedUntil")));
    json_decref(job);
    snprintf(path, sizeof(path), "/api/v1/jobs/%s/why", victim);
    json_t *why = get(path);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(why, "primary"), "code")),
                     "PreemptedBy");
    json_decref(why);

    /* the API server removed the victim: audited as evicted (observed), not as deleted */
    char *evicted = audit_text("evicted"), *deleted = audit_text("deleted");
    ck_assert_msg(strstr(evicted, "\"observed\":true") && strstr(evicted, "\"preemptor\""),
                  "evicted: %s", evicted);
    ck_assert_msg(strstr(deleted, victim) == NULL, "deleted: %s", deleted);
    free(evicted);
    free(deleted);
    /* kubectl describe pod: Preempted on the victim naming the preemptor, Scheduled on hi */
    ck_assert(kube_test_wait(has_event, (char *[]){victim + 8, "Preempted"}, 10000));
    ck_assert(kube_test_wait(has_event, (char *[]){"hi", "Scheduled"}, 10000));
    json_t *ev = event_of(victim + 8, "Preempted");
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(ev, "note")),
                                 "Preempted by default/hi (trigger pod default/hi)"));
    json_decref(ev);
    /* the mirror's counters in /metrics */
    struct http_resp r;
    http_request("GET", md.base, "/metrics", NULL, NULL, &r);
    ck_assert_int_eq(r.status, 200);
    ck_assert_msg(strstr(r.body, "\nmuster_kube_evictions_total 1\n") &&
                      strstr(r.body, "# TYPE muster_kube_ack_seq gauge\n") &&
                      strstr(r.body, "\nmuster_kube_writeback_abandoned_total 0\n") &&
                      strstr(r.body, "\nmuster_kube_events_written_total "),
                  "%s", r.body);
    http_resp_free(&r);
    ck_assert_int_eq(musterd_stop(&md), 0);
    musterd_cleanup(&md);
}
END_TEST

static int pod_phase_is(void *ctx)
{
    const char **kp = ctx;
    json_t *o = kube_testapi_object(&api, "pods", kp[0]);
    const char *ph = json_string_value(json_object_get(json_object_get(o, "status"), "phase"));
    int ok = ph && !strcmp(ph, kp[1]);
    json_decref(o);
    return ok;
}

/* 1 when an audit record of kind ctx[0] names ctx[1]. */
static int audited(void *ctx)
{
    char **kp = ctx;
    char *text = audit_text(kp[0]);
    int ok = strstr(text, kp[1]) != NULL;
    free(text);
    return ok;
}

static int64_t rfc3339_ms(const char *ts)
{
    int64_t ms = 0;
    ck_assert_msg(ts && clock_parse_rfc3339(ts, &ms, NULL) == 0, "not a time: %s",
                  ts ? ts : "(null)");
    return ms;
}

/* activeDeadlineSeconds in bind mode: the API server's kubelet starts the pods musterd binds
 * and enforces no deadline; musterd writes the pod with a 2 s deadline Failed, reason
 * DeadlineExceeded, through the status subresource once it has run 2 s since its startTime
 * (the audit records deadline-exceeded, then deadline-acked), and Events it; the pod
 * without a deadline keeps running. */
START_TEST(test_kube_musterd_ends_pod_past_its_deadline)
{
    const char *args[] = {"--kubeconfig", api.kubeconfig, "--scheduler-name", "muster", NULL};
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), "k%d", i);
        json_t *n = kube_test_node(name, "4", "b0");
        kube_testapi_apply(&api, "nodes", n);
        json_decref(n);
    }
    json_t *kubelet = json_pack("{s:b}", "start", 1);
    json_decref(kube_testapi_control(&api, "kubelet", kubelet));
    json_decref(kubelet);
    ck_assert_int_eq(musterd_start(&md, NULL, args), 0);
    ck_assert_msg(kube_test_wait(all_synced, NULL, 10000), "sources never synced");

    json_t *dl = kube_test_pod("dl", "muster", NULL, NULL, "4");
    json_object_set_new(json_object_get(dl, "spec"), "activeDeadlineSeconds", json_integer(2));
    kube_testapi_apply(&api, "pods", dl);
    json_decref(dl);
    json_t *nodl = kube_test_pod("nodl", "muster", NULL, NULL, "4");
    kube_testapi_apply(&api, "pods", nodl);
    json_decref(nodl);
    const char *dl_running[] = {"default/dl", "Running"}, *dl_failed[] = {"default/dl", "Failed"};
    const char *nodl_running[] = {"default/nodl", "Running"};
    ck_assert_msg(kube_test_wait(pod_phase_is, dl_running, 10000), "dl never bound and started");
    ck_assert_msg(kube_test_wait(pod_phase_is, nodl_running, 10000),
                  "nodl never bound and started");
    /* a generous bound on failure only: the deadline is 2 s */
    if (!kube_test_wait(pod_phase_is, dl_failed, 20000)) {
        char *a = audit_text("deadline-exceeded");
        ck_abort_msg("dl was never ended on the API server; deadline-exceeded records: %s", a);
    }
    json_t *o = kube_testapi_object(&api, "pods", "default/dl");
    json_t *st = json_object_get(o, "status");
    ck_assert_str_eq(json_string_value(json_object_get(st, "reason")), "DeadlineExceeded");
    ck_assert_str_eq(json_string_value(json_object_get(st, "message")),
                     "Pod was active on the node longer than the specified deadline");
    ck_assert_ptr_nonnull(
        json_string_value(json_object_get(json_object_get(o, "spec"), "nodeName")));
    int64_t started = rfc3339_ms(json_string_value(json_object_get(st, "startTime")));
    json_decref(o);
    ck_assert_int_ge(kube_testapi_stat(&api, "status_patch:pods"), 1);

    /* not before its time: the record's time is at least startTime + 2 s */
    char *rec = audit_text("deadline-exceeded");
    json_t *r = json_loads(rec, JSON_DISABLE_EOF_CHECK, NULL);
    ck_assert_msg(r && strstr(rec, "default/dl") && !strstr(rec, "default/nodl"), "%s", rec);
    ck_assert_int_ge(rfc3339_ms(json_string_value(json_object_get(r, "ts"))), started + 2000);
    json_decref(r);
    free(rec);
    ck_assert(kube_test_wait(has_event, (char *[]){"dl", "DeadlineExceeded"}, 10000));
    /* the outcome is committed after the call (and its Event): waited for */
    ck_assert_msg(kube_test_wait(audited, (char *[]){"deadline-acked", "default/dl"}, 10000),
                  "no deadline-acked record for default/dl");

    /* the pod without a deadline is left running, past several more cycles */
    usleep(2500 * 1000);
    ck_assert(pod_phase_is(nodl_running));
    rec = audit_text("deadline-exceeded");
    ck_assert_msg(!strstr(rec, "default/nodl"), "%s", rec);
    free(rec);
    ck_assert_int_eq(musterd_stop(&md), 0);
    musterd_cleanup(&md);
}
END_TEST

START_TEST(test_kube_musterd_standalone_has_no_sources)
{
    ck_assert_int_eq(musterd_start(&md, NULL, NULL), 0);
    json_t *doc = get("/api/v1/sources");
    ck_assert_str_eq(json_string_value(json_object_get(doc, "mode")), "standalone");
    ck_assert_int_eq(json_array_size(json_object_get(doc, "sources")), 0);
    json_decref(doc);
    ck_assert_int_eq(musterd_stop(&md), 0);
    musterd_cleanup(&md);
}
END_TEST

START_TEST(test_kube_musterd_bad_kubeconfig_refused)
{
    char *msg = NULL;
    const char *args[] = {"--kubeconfig",
                          "/nonexistent/kubeconfig",
                          "--data-dir",
                          "/tmp/muster-kube-bad",
                          "--listen",
                          "127.0.0.1:0",
                          NULL};
    int status = musterd_run(args, &msg);
    ck_assert_int_ne(status, 0);
    ck_assert_msg(msg && strstr(msg, "kubernetes mirror") && strstr(msg, "/nonexistent/kubeconfig"),
                  "message: %s", msg ? msg : "(none)");
    free(msg);
    int rc = system("rm -rf /tmp/muster-kube-bad");
    (void)rc;
}
END_TEST

static void setup(void)
{
    kube_testapi_start(&api, 1, "s3cret");
}

static void teardown(void)
{
    kube_testapi_stop(&api);
}

int main(void)
{
    Suite *s = suite_create("kube_musterd");
    TCase *tc = tcase_create("musterd");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_kube_musterd_mirror_and_bind);
    tcase_add_test(tc, test_kube_musterd_preempts_through_the_api);
    tcase_add_test(tc, test_kube_musterd_ends_pod_past_its_deadline);
    tcase_add_test(tc, test_kube_musterd_standalone_has_no_sources);
    tcase_add_test(tc, test_kube_musterd_bad_kubeconfig_refused);
    suite_add_tcase(s, tc);
    return check_run(s);
}
