/*
 * test_kube_leader.c - leader election: real musterd replicas in bind mode against the test
 * API server (tests/kubeapi/server.py), short lease settings (3 s / 2 s / 0.4 s).
 *
 * The server logs every binding and eviction call with the caller (the identity in
 * musterd's User-Agent) and the Lease's holder at that moment; check_writes asserts what
 * leader election promises: every such call came from the holder, and no pod was bound
 * twice. check_one_log asserts that each binding is in exactly one replica's audit log.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "check_run.h"
#include "http_client.h"
#include "kube_support.h"

#define MAXR 3
#define TOKEN "leader-test-token"

static struct kube_testapi api;
static struct musterd md[MAXR];
static const char *const ids[MAXR] = {"r0", "r1", "r2"};
static const char *const auth[] = {"Authorization: Bearer " TOKEN, "Content-Type: application/json",
                                   NULL};

static int start_replica(int i, const char *root)
{
    const char *args[] = {"--kubeconfig",
                          api.kubeconfig,
                          "--scheduler-name",
                          "muster",
                          "--token",
                          TOKEN,
                          "--leader-elect",
                          "--leader-elect-lease-duration",
                          "3",
                          "--leader-elect-renew-deadline",
                          "2",
                          "--leader-elect-retry-period",
                          "400ms",
                          "--leader-elect-identity",
                          ids[i],
                          NULL};
    return musterd_start(&md[i], root, args);
}

/* GET on replica i (new JSON, NULL when it does not answer 200 with JSON). */
static json_t *rget(int i, const char *path)
{
    struct http_resp r;
    json_t *j = NULL;
    if (http_request("GET", md[i].base, path, NULL, NULL, &r) == 0 && r.status == 200)
        j = json_incref(r.json);
    http_resp_free(&r);
    return j;
}

/* 1 when replica i says it leads. */
static int leads(int i)
{
    json_t *h = rget(i, "/healthz");
    int yes = h && !strcmp(json_string_value(json_object_get(h, "role")) ?: "", "leader");
    json_decref(h);
    return yes;
}

struct lead_wait {
    int alive[MAXR];
    int found;
};

static int one_leader(void *ctx)
{
    struct lead_wait *w = ctx;
    int n = 0;
    for (int i = 0; i < MAXR; i++)
        if (w->alive[i] && leads(i)) {
            w->found = i;
            n++;
        }
    json_t *lease = kube_testapi_object(&api, "leases", "default/muster");
    const char *holder =
        json_string_value(json_object_get(json_object_get(lease, "spec"), "holderIdentity"));
    int ok = n == 1 && holder && !strcmp(holder, ids[w->found]);
    json_decref(lease);
    return ok;
}

/* Waits until exactly one of the alive replicas leads, as the Lease says too. */
static int wait_leader(int a0, int a1, int a2)
{
    struct lead_wait w = {{a0, a1, a2}, -1};
    ck_assert_msg(kube_test_wait(one_leader, &w, 30000), "no single leader emerged");
    return w.found;
}

static void add_pod(const char *name)
{
    json_t *pod = kube_test_pod(name, "muster", NULL, NULL, "1");
    kube_testapi_apply(&api, "pods", pod);
    json_decref(pod);
}

static void add_nodes(int n)
{
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "k%d", i);
        json_t *node = kube_test_node(name, "16", "b0");
        kube_testapi_apply(&api, "nodes", node);
        json_decref(node);
    }
}

static int bound(void *ctx)
{
    char key[64];
    snprintf(key, sizeof(key), "default/%s", (const char *)ctx);
    json_t *o = kube_testapi_object(&api, "pods", key);
    int ok = json_string_value(json_object_get(json_object_get(o, "spec"), "nodeName")) != NULL;
    json_decref(o);
    return ok;
}

static void wait_bound(const char *pod)
{
    ck_assert_msg(kube_test_wait(bound, (void *)pod, 30000), "pod '%s' never bound", pod);
}

/* Every binding and eviction call came from the Lease's holder; no pod bound twice.
 * Returns the calls (new) for further checks. */
static json_t *check_writes(void)
{
    long status = 0;
    json_t *doc = kube_testapi_get(&api, "/control/writes", &status);
    ck_assert_int_eq(status, 200);
    json_t *items = json_object_get(doc, "items"), *w, *ok = json_object();
    size_t i;
    json_array_foreach(items, i, w)
    {
        const char *client = json_string_value(json_object_get(w, "client"));
        const char *holder = json_string_value(json_object_get(w, "holder"));
        const char *pod = json_string_value(json_object_get(w, "pod"));
        ck_assert_msg(client && holder && !strcmp(client, holder),
                      "%s of '%s' by '%s' while the lease was held by '%s'",
                      json_string_value(json_object_get(w, "verb")), pod, client, holder);
        if (json_integer_value(json_object_get(w, "code")) == 201 &&
            !strcmp(json_string_value(json_object_get(w, "verb")), "binding")) {
            ck_assert_msg(!json_object_get(ok, pod), "pod '%s' bound twice", pod);
            json_object_set_new(ok, pod, json_string(client));
        }
    }
    json_decref(ok);
    return doc;
}

/* Calls by client in the write log. */
static int writes_by(const char *client)
{
    json_t *doc = check_writes(), *w;
    size_t i;
    int n = 0;
    json_array_foreach(json_object_get(doc, "items"), i, w) n +=
        !strcmp(json_string_value(json_object_get(w, "client")), client);
    json_decref(doc);
    return n;
}

/* Records of kind in replica i's audit log that name pod (pod NULL: all). */
static int audit_count(int i, const char *kind, const char *pod, json_t **last)
{
    struct http_resp r;
    char path[128];
    int n = 0;
    snprintf(path, sizeof(path), "/api/v1/audit?kind=%s", kind);
    ck_assert_int_eq(http_request("GET", md[i].base, path, NULL, NULL, &r), 0);
    ck_assert_int_eq(r.status, 200);
    for (char *line = r.body; line && *line;) {
        char *nl = strchr(line, '\n');
        json_t *rec = json_loadb(line, nl ? (size_t)(nl - line) : strlen(line), 0, NULL);
        json_t *pods = json_object_get(rec, "pods"), *p;
        size_t k;
        int has = !pod;
        json_array_foreach(pods, k, p) has |= pod && !strcmp(json_string_value(p), pod);
        if (has && last) {
            json_decref(*last);
            *last = json_incref(rec);
        }
        n += has && rec;
        json_decref(rec);
        line = nl ? nl + 1 : NULL;
    }
    http_resp_free(&r);
    return n;
}

/* wait_bound, and the pod's "bound" record committed in replica i's log (it follows the binding's
 * answer: a replica killed in between made the binding but never recorded it). */
static void wait_bound_logged(int i, const char *pod)
{
    char key[64];
    snprintf(key, sizeof(key), "default/%s", pod);
    wait_bound(pod);
    for (int t = 0; t < 1500 && audit_count(i, "bound", key, NULL) == 0; t++)
        usleep(20000);
    ck_assert_msg(audit_count(i, "bound", key, NULL) == 1, "'bound' of '%s' not in log %d", key, i);
}

/* Each pod's binding is in exactly one replica's audit log. */
static void check_one_log(const char *const *pods, int npods, int nreplicas)
{
    for (int p = 0; p < npods; p++) {
        char key[64];
        int n = 0;
        snprintf(key, sizeof(key), "default/%s", pods[p]);
        /* the "bound" record is committed after the API server answered the binding */
        for (int t = 0; t < 1500 && n == 0; t++) {
            if (t)
                usleep(20000);
            for (int i = 0; i < nreplicas; i++)
                n += audit_count(i, "bound", key, NULL);
        }
        ck_assert_msg(n == 1, "pod '%s' is bound in %d audit logs", key, n);
    }
}

static long post(int i, const char *path, json_t **body)
{
    struct http_resp r;
    http_request("POST", md[i].base, path, "{}", auth, &r);
    long st = r.status;
    if (body)
        *body = json_incref(r.json);
    http_resp_free(&r);
    return st;
}

START_TEST(test_kube_leader_two_replicas_one_acts)
{
    const char *pods[] = {"a", "b", "c", "d"};
    add_nodes(2);
    ck_assert_int_eq(start_replica(0, NULL), 0);
    ck_assert_int_eq(start_replica(1, NULL), 0);
    int l = wait_leader(1, 1, 0), f = 1 - l;
    for (int p = 0; p < 4; p++)
        add_pod(pods[p]);
    for (int p = 0; p < 4; p++)
        wait_bound(pods[p]);
    ck_assert_int_eq(writes_by(ids[f]), 0);
    ck_assert_int_ge(writes_by(ids[l]), 4);

    /* the follower refuses mutations naming the leader, serves reads, is ready */
    json_t *body = NULL;
    ck_assert_int_eq(post(f, "/api/v1/cycles", &body), 503);
    ck_assert_str_eq(json_string_value(json_object_get(body, "leader")), ids[l]);
    ck_assert_ptr_nonnull(strstr(
        json_string_value(json_object_get(json_object_get(body, "error"), "message")), ids[l]));
    json_decref(body);
    ck_assert_int_eq(post(l, "/api/v1/cycles", NULL), 200);
    json_t *h = rget(f, "/readyz");
    ck_assert_ptr_nonnull(h);
    ck_assert_str_eq(json_string_value(json_object_get(h, "role")), "follower");
    ck_assert_str_eq(json_string_value(json_object_get(h, "leader")), ids[l]);
    json_decref(h);
    json_t *src = rget(f, "/api/v1/sources");
    json_t *le = json_object_get(src, "leaderElection");
    ck_assert_str_eq(json_string_value(json_object_get(le, "state")), "following");
    ck_assert_str_eq(json_string_value(json_object_get(le, "identity")), ids[f]);
    json_decref(src);
    struct http_resp r;
    http_request("GET", md[l].base, "/metrics", NULL, NULL, &r);
    ck_assert_ptr_nonnull(strstr(r.body, "\nmuster_leader 1\n"));
    http_resp_free(&r);
    http_request("GET", md[f].base, "/metrics", NULL, NULL, &r);
    ck_assert_ptr_nonnull(strstr(r.body, "\nmuster_leader 0\n"));
    http_resp_free(&r);

    /* the follower mirrors the bindings it did not make (as its watch delivers them);
     * each is in one audit log */
    const char *on = NULL;
    json_t *pod = NULL;
    for (int i = 0; i < 1500 && !on; i++) {
        if (i)
            usleep(20000);
        json_decref(pod);
        pod = rget(f, "/api/v1/pods/default/a");
        on = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    }
    ck_assert_msg(on, "the follower never mirrored the binding of default/a");
    json_decref(pod);
    check_one_log(pods, 4, 2);
    json_t *rec = NULL;
    ck_assert_int_ge(audit_count(l, "leader", NULL, &rec), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(rec, "details"), "event")),
                     "started");
    json_decref(rec);
    ck_assert_int_eq(audit_count(f, "leader", NULL, NULL), 0);
    json_decref(check_writes());
}
END_TEST

static int gone(void *ctx)
{
    json_t *o = kube_testapi_object(&api, "pods", ctx);
    json_decref(o);
    return o == NULL;
}

/* Preemption through the Eviction API: only the leader evicts, as it alone binds. */
START_TEST(test_kube_leader_only_the_leader_evicts)
{
    json_t *node = kube_test_node("k0", "4", "b0");
    kube_testapi_apply(&api, "nodes", node);
    json_decref(node);
    json_t *lo = kube_test_pod("lo", NULL, "k0", NULL, "4");
    kube_testapi_apply(&api, "pods", lo);
    json_decref(lo);
    ck_assert_int_eq(start_replica(0, NULL), 0);
    ck_assert_int_eq(start_replica(1, NULL), 0);
    int l = wait_leader(1, 1, 0), f = 1 - l;
    json_t *hi = kube_test_pod("hi", "muster", NULL, NULL, "4");
    json_object_set_new(json_object_get(hi, "spec"), "priority", json_integer(100));
    kube_testapi_apply(&api, "pods", hi);
    json_decref(hi);
    wait_bound("hi");
    ck_assert(kube_test_wait(gone, "default/lo", 10000));
    json_t *doc = check_writes(), *w;
    size_t i;
    int evictions = 0;
    json_array_foreach(json_object_get(doc, "items"), i, w) evictions +=
        !strcmp(json_string_value(json_object_get(w, "verb")), "eviction");
    json_decref(doc);
    ck_assert_int_ge(evictions, 1);
    ck_assert_int_eq(writes_by(ids[f]), 0);
    ck_assert_int_eq(audit_count(f, "evict-acked", NULL, NULL), 0);
    ck_assert_int_eq(audit_count(l, "evict-acked", "default/lo", NULL), 1);
}
END_TEST

START_TEST(test_kube_leader_sigkill_and_sigterm_take_over)
{
    const char *pods[] = {"a", "b", "c"};
    add_nodes(2);
    for (int i = 0; i < MAXR; i++)
        ck_assert_int_eq(start_replica(i, NULL), 0);
    int l = wait_leader(1, 1, 1);
    add_pod("a");
    wait_bound_logged(l, "a");

    kill(md[l].pid, SIGKILL);
    waitpid(md[l].pid, NULL, 0);
    md[l].pid = 0;
    add_pod("b");
    int alive[MAXR] = {1, 1, 1};
    alive[l] = 0;
    int l2 = wait_leader(alive[0], alive[1], alive[2]);
    ck_assert_int_ne(l2, l);
    wait_bound_logged(l2, "b");
    json_t *rec = NULL;
    ck_assert_int_ge(audit_count(l2, "leader", NULL, &rec), 1);
    json_t *d = json_object_get(rec, "details");
    ck_assert_str_eq(json_string_value(json_object_get(d, "previousHolder")), ids[l]);
    ck_assert_int_ge(json_integer_value(json_object_get(d, "leaseTransitions")), 1);
    json_decref(rec);

    /* SIGTERM releases the Lease (holderIdentity cleared): the third takes over */
    ck_assert_int_eq(musterd_stop(&md[l2]), 0);
    alive[l2] = 0;
    int l3 = wait_leader(alive[0], alive[1], alive[2]);
    ck_assert_int_ne(l3, l2);
    add_pod("c");
    wait_bound_logged(l3, "c");
    json_decref(check_writes());

    /* the stopped replicas come back as followers; each binding is in one log */
    ck_assert_int_eq(start_replica(l, md[l].root), 0);
    ck_assert_int_eq(start_replica(l2, md[l2].root), 0);
    ck_assert_int_eq(wait_leader(1, 1, 1), l3);
    check_one_log(pods, 3, MAXR);
}
END_TEST

static int says_follower(void *ctx)
{
    int i = (int)(intptr_t)ctx;
    json_t *src = rget(i, "/api/v1/sources");
    json_t *le = json_object_get(src, "leaderElection");
    int ok = le && json_integer_value(json_object_get(le, "losses")) >= 1 && !leads(i);
    json_decref(src);
    return ok;
}

static int lost_once(void *ctx)
{
    json_t *src = rget((int)(intptr_t)ctx, "/api/v1/sources");
    int ok =
        json_integer_value(json_object_get(json_object_get(src, "leaderElection"), "losses")) >= 1;
    json_decref(src);
    return ok;
}

static int failed_binding_of(void *ctx)
{
    return writes_by(ctx) >= 1;
}

/* A leader paused past its lease (its binding of 'p' failing and retried) must not bind
 * or evict after it resumes: its first check fails before any write. */
START_TEST(test_kube_leader_sigstop_past_lease)
{
    add_nodes(1);
    ck_assert_int_eq(start_replica(0, NULL), 0);
    ck_assert_int_eq(start_replica(1, NULL), 0);
    int l = wait_leader(1, 1, 0), f = 1 - l;
    json_t *fb = json_pack("{s:i,s:i,s:s}", "count", 100000, "code", 500, "client", ids[l]);
    json_decref(kube_testapi_control(&api, "fail-binding", fb));
    json_decref(fb);
    add_pod("p");
    ck_assert(kube_test_wait(failed_binding_of, (void *)ids[l], 20000));

    kill(md[l].pid, SIGSTOP);
    ck_assert_int_eq(wait_leader(f == 0, f == 1, 0), f);
    wait_bound("p");
    int before = writes_by(ids[l]);
    kill(md[l].pid, SIGCONT);
    ck_assert_msg(kube_test_wait(says_follower, (void *)(intptr_t)l, 20000),
                  "the resumed replica never noticed it lost the lease");
    ck_assert_int_eq(writes_by(ids[l]), before);
    json_t *rec = NULL;
    ck_assert_int_ge(audit_count(l, "leader", NULL, &rec), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(rec, "details"), "event")),
                     "stopped");
    json_decref(rec);
    json_decref(check_writes());
}
END_TEST

/* The next Lease calls of client get these faults, one each: "409", "429", "500" or
 * "drop" (the connection closed without an answer), repeated times times. */
static void lease_faults(const char *client, const char *const *faults, int n, int times)
{
    json_t *list = json_array();
    for (int t = 0; t < times; t++)
        for (int i = 0; i < n; i++)
            json_array_append_new(list, strcmp(faults[i], "drop") ? json_integer(atoi(faults[i]))
                                                                  : json_string("drop"));
    json_t *b = json_pack("{s:s,s:o}", "client", client, "faults", list);
    json_decref(kube_testapi_control(&api, "lease-fault", b));
    json_decref(b);
}

/* Faults between the leader and the Lease (409, 429, 5xx, dropped connections): a few
 * failed renewals keep the term, many end it and another replica takes over. Pods keep
 * being bound exactly once, by the Lease's holder. */
START_TEST(test_kube_leader_lease_faults)
{
    static const char *const faults[] = {"500", "409", "drop", "429"};
    const char *pods[] = {"f0", "f1", "f2"};
    add_nodes(2);
    ck_assert_int_eq(start_replica(0, NULL), 0);
    ck_assert_int_eq(start_replica(1, NULL), 0);
    int l = wait_leader(1, 1, 0);
    lease_faults(ids[l], faults, 2, 1); /* 0.8 s of failures: within the renew deadline */
    add_pod(pods[0]);
    wait_bound(pods[0]);
    lease_faults(ids[l], faults, 4, 3); /* ~5 s: past the renew deadline */
    add_pod(pods[1]);
    wait_bound(pods[1]);
    json_t *src = NULL;
    ck_assert(kube_test_wait(lost_once, (void *)(intptr_t)l, 20000));
    int l2 = wait_leader(1, 1, 0);
    lease_faults(ids[l2], faults, 4, 3);
    add_pod(pods[2]);
    wait_bound(pods[2]);
    ck_assert(kube_test_wait(lost_once, (void *)(intptr_t)l2, 20000));
    wait_leader(1, 1, 0);
    src = rget(l2, "/api/v1/sources");
    ck_assert_int_ge(json_integer_value(
                         json_object_get(json_object_get(src, "leaderElection"), "renewFailures")),
                     5);
    json_decref(src);
    check_one_log(pods, 3, 2);
    json_decref(check_writes());
}
END_TEST

/* A replica that loses the lease with a binding not yet written, and wins it back:
 * the record is abandoned (audited), the relist resets the pod the store thinks is
 * bound, and a new cycle places and binds it. */
START_TEST(test_kube_leader_regain_abandons_and_resets)
{
    add_nodes(1);
    ck_assert_int_eq(start_replica(0, NULL), 0);
    wait_leader(1, 0, 0);
    json_t *fb = json_pack("{s:i,s:i,s:s}", "count", 100000, "code", 500, "client", "r0");
    json_decref(kube_testapi_control(&api, "fail-binding", fb));
    json_decref(fb);
    add_pod("p");
    ck_assert(kube_test_wait(failed_binding_of, "r0", 20000));
    static const char *const fail[] = {"500"};
    lease_faults("r0", fail, 1, 8);
    ck_assert(kube_test_wait(lost_once, (void *)(intptr_t)0, 20000));
    fb = json_pack("{s:i}", "count", 0);
    json_decref(kube_testapi_control(&api, "fail-binding", fb));
    json_decref(fb);
    wait_bound_logged(0, "p");
    json_t *rec = NULL;
    ck_assert_int_ge(audit_count(0, "leader", NULL, &rec), 3);
    json_t *d = json_object_get(rec, "details");
    ck_assert_str_eq(json_string_value(json_object_get(d, "event")), "started");
    ck_assert_int_ge(json_integer_value(json_object_get(d, "abandoned")), 1);
    json_decref(rec);
    json_decref(check_writes());
}
END_TEST

START_TEST(test_kube_leader_bad_settings_refused)
{
    static const struct {
        const char *flag, *value, *want;
    } cases[] = {
        {"--leader-elect-renew-deadline", "20", "'leader_elect_renew_deadline' (20000 ms)"},
        {"--leader-elect-retry-period", "12s", "'leader_elect_retry_period' (12000 ms)"},
        {"--leader-elect-lease-duration", "soon", "'leader_elect_lease_duration' must be"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *args[] = {"--kubeconfig",   api.kubeconfig, "--scheduler-name", "muster",
                              "--leader-elect", cases[i].flag,  cases[i].value,     NULL};
        char *msg = NULL;
        ck_assert_int_ne(musterd_run(args, &msg), 0);
        ck_assert_msg(msg && strstr(msg, cases[i].want), "%s: %s", cases[i].flag, msg);
        free(msg);
    }
    const char *mirror_only[] = {"--kubeconfig", api.kubeconfig, "--leader-elect", NULL};
    char *msg = NULL;
    ck_assert_int_ne(musterd_run(mirror_only, &msg), 0);
    ck_assert_msg(msg && strstr(msg, "'leader_elect' needs bind mode"), "%s", msg);
    free(msg);
    /* the config file's keys, with the line */
    char path[300];
    snprintf(path, sizeof(path), "%s/musterd.yaml", api.dir);
    ck_assert_int_eq(test_write_file(path, "scheduler_name: muster\nleader_elect: maybe\n"), 0);
    const char *file[] = {"--config", path, NULL};
    ck_assert_int_ne(musterd_run(file, &msg), 0);
    ck_assert_msg(msg && strstr(msg, "line 2: 'leader_elect' must be true or false, not 'maybe'"),
                  "%s", msg);
    free(msg);
}
END_TEST

static void setup(void)
{
    memset(md, 0, sizeof(md));
    kube_testapi_start(&api, 0, NULL);
}

static void teardown(void)
{
    for (int i = 0; i < MAXR; i++) {
        if (md[i].pid > 0)
            kill(md[i].pid, SIGCONT);
        if (md[i].root[0])
            musterd_cleanup(&md[i]);
    }
    kube_testapi_stop(&api);
}

int main(void)
{
    Suite *s = suite_create("kube_leader");
    TCase *tc = tcase_create("leader");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_kube_leader_two_replicas_one_acts);
    tcase_add_test(tc, test_kube_leader_only_the_leader_evicts);
    tcase_add_test(tc, test_kube_leader_sigkill_and_sigterm_take_over);
    tcase_add_test(tc, test_kube_leader_sigstop_past_lease);
    tcase_add_test(tc, test_kube_leader_lease_faults);
    tcase_add_test(tc, test_kube_leader_regain_abandons_and_resets);
    tcase_add_test(tc, test_kube_leader_bad_settings_refused);
    suite_add_tcase(s, tc);
    return check_run(s);
}
