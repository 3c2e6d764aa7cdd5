/*
 * test_kube_events.c - bind mode's Events, PodGroup status and write-back that never
 * wedges, against tests/kubeapi/server.py: each Event field by field (both API groups),
 * failing Events never blocking bindings, FailedScheduling once per reason, PodGroup
 * status of both groups through a gang's life and not rewritten when unchanged, one pod
 * failing while the others bind, abandonment, and a crash between call and ack.
 */
#include <check.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "check_run.h"
#include "err.h"
#include "kube.h"
#include "kube_internal.h"
#include "kube_support.h"
#include "sched_util.h"

struct fx {
    struct kube_testapi api;
    struct sched_util u;
    struct kube *k;
};

static void mirror_start(struct fx *f, int64_t giveup_ms)
{
    struct kube_options o = KUBE_OPTIONS_INIT;
    struct err err = ERR_INIT;
    o.kubeconfig = f->api.kubeconfig;
    o.scheduler_name = "muster";
    o.backoff_min_ms = 50;
    o.backoff_max_ms = 400;
    o.missing_retry_ms = 300;
    o.watch_timeout_s = 20;
    o.writeback_giveup_ms = giveup_ms;
    ck_assert_msg(kube_open(f->u.s, f->u.st, &o, &f->k, &err) == 0, "%s", err.msg);
    ck_assert_msg(kube_start(f->k, &err) == 0, "%s", err.msg);
    ck_assert_msg(kube_wait_synced(f->k, 20000, &err) == 0, "%s", err.msg);
}

static void fx_open(struct fx *f)
{
    memset(f, 0, sizeof(*f));
    kube_testapi_start(&f->api, 0, NULL);
    struct sched_options so = {0};
    so.mirrored = 1;
    sched_util_open(&f->u, &so);
    for (int i = 1; i <= 2; i++) {
        char name[8];
        snprintf(name, sizeof(name), "n%d", i);
        json_t *n = kube_test_node(name, "4", "b0");
        kube_testapi_apply(&f->api, "nodes", n);
        json_decref(n);
    }
}

static void fx_close(struct fx *f)
{
    kube_close(f->k);
    sched_util_close(&f->u);
    kube_testapi_stop(&f->api);
}

static void put(struct fx *f, const char *res, json_t *obj)
{
    kube_testapi_apply(&f->api, res, obj);
    json_decref(obj);
}

/* A gang of n pods of cpu each, in a PodGroup of group ("podgroups" or the Volcano one). */
static void apply_gang(struct fx *f, const char *res, const char *name, int min, int n,
                       const char *cpu)
{
    put(f, res,
        json_pack("{s:{s:s,s:s},s:{s:i}}", "metadata", "name", name, "namespace", "default", "spec",
                  "minMember", min));
    for (int i = 0; i < n; i++) {
        char pn[32];
        snprintf(pn, sizeof(pn), "%s-%d", name, i);
        json_t *p = kube_test_pod(pn, "muster", NULL, strcmp(res, "podgroups") ? NULL : name, cpu);
        json_t *md = json_object_get(p, "metadata");
        if (strcmp(res, "podgroups"))
            json_object_set_new(md, "annotations",
                                json_pack("{s:s}", "scheduling.k8s.io/group-name", name));
        json_object_set_new(md, "ownerReferences",
                            json_pack("[{s:s,s:s,s:s,s:s}]", "apiVersion", "batch/v1", "kind",
                                      "Job", "name", name, "uid", "u-1"));
        put(f, "pods", p);
    }
}

static json_int_t counter(struct fx *f, const char *name)
{
    json_t *doc = kube_sources_json(f->k);
    json_int_t v = json_integer_value(json_object_get(json_object_get(doc, "counters"), name));
    json_decref(doc);
    return v;
}

static void cycle(struct fx *f, int64_t now)
{
    struct err err = ERR_INIT;
    json_decref(sched_util_cycle(&f->u, now));
    ck_assert_msg(kube_wait_writeback(f->k, 15000, &err) == 0, "%s", err.msg);
}

/* Events of one API group about object name (fieldSelector as kubectl describe uses it),
 * only those of reason when not NULL. New array. */
static json_t *events(struct fx *f, int core, const char *name, const char *reason)
{
    long status = 0;
    char *path = core ? xasprintf("/api/v1/namespaces/default/events?fieldSelector="
                                  "involvedObject.name%%3D%s",
                                  name)
                      : xasprintf("/apis/events.k8s.io/v1/namespaces/default/events?"
                                  "fieldSelector=regarding.name=%s",
                                  name);
    json_t *doc = kube_testapi_get(&f->api, path, &status), *out = json_array(), *e;
    free(path);
    ck_assert_int_eq(status, 200);
    size_t i;
    json_array_foreach(json_object_get(doc, "items"), i, e)
    {
        if (!reason || !strcmp(json_string_value(json_object_get(e, "reason")), reason))
            json_array_append(out, e);
    }
    json_decref(doc);
    return out;
}

struct evwait {
    struct fx *f;
    int core;
    const char *name, *reason;
    size_t n;
};

static int has_events(void *ctx)
{
    struct evwait *w = ctx;
    json_t *l = events(w->f, w->core, w->name, w->reason);
    size_t n = json_array_size(l);
    json_decref(l);
    return n >= w->n;
}

/* The one event of reason about name (waits for it; new). */
static json_t *one_event(struct fx *f, int core, const char *name, const char *reason)
{
    struct evwait w = {f, core, name, reason, 1};
    ck_assert_msg(kube_test_wait(has_events, &w, 10000), "no %s event on %s", reason, name);
    json_t *l = events(f, core, name, reason);
    ck_assert_int_eq(json_array_size(l), 1);
    json_t *e = json_incref(json_array_get(l, 0));
    json_decref(l);
    return e;
}

static const char *str(json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    ck_assert_msg(v != NULL, "no string '%s'", k);
    return v;
}

static void assert_matches(const char *s, const char *re)
{
    regex_t r;
    ck_assert_int_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0);
    int ok = regexec(&r, s, 0, NULL, 0) == 0;
    regfree(&r);
    ck_assert_msg(ok, "'%s' does not match /%s/", s, re);
}

/* regarding / involvedObject: the object as the API server has it. */
static void assert_ref(struct fx *f, json_t *ref, const char *res, const char *kind,
                       const char *name, const char *api_version)
{
    char key[128];
    snprintf(key, sizeof(key), "default/%s", name);
    json_t *obj = kube_testapi_object(&f->api, res, key);
    ck_assert_ptr_nonnull(obj);
    ck_assert_str_eq(str(ref, "kind"), kind);
    ck_assert_str_eq(str(ref, "namespace"), "default");
    ck_assert_str_eq(str(ref, "name"), name);
    ck_assert_str_eq(str(ref, "apiVersion"), api_version);
    ck_assert_str_eq(str(ref, "uid"), str(json_object_get(obj, "metadata"), "uid"));
    json_decref(obj);
}

static void assert_v1_event(json_t *e, const char *reason, const char *type, const char *action)
{
    char inst[320];
    kube__event_instance(inst, sizeof(inst));
    ck_assert_str_eq(str(e, "apiVersion"), "events.k8s.io/v1");
    ck_assert_str_eq(str(e, "kind"), "Event");
    ck_assert_str_eq(str(e, "reason"), reason);
    ck_assert_str_eq(str(e, "type"), type);
    ck_assert_str_eq(str(e, "action"), action);
    ck_assert_str_eq(str(e, "reportingController"), "muster");
    ck_assert_str_eq(str(e, "reportingInstance"), inst);
    assert_matches(inst, "^[^_]+_[0-9]+$");
    assert_matches(str(e, "eventTime"), "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{6}Z$");
    json_t *md = json_object_get(e, "metadata");
    ck_assert_str_eq(str(md, "namespace"), "default");
    char prefix[160];
    snprintf(prefix, sizeof(prefix), "^%s\\.[0-9a-f]+$",
             str(json_object_get(e, "regarding"), "name"));
    assert_matches(str(md, "name"), prefix);
}

/* Scheduled on each pod and GangScheduled on the PodGroup, field by field. */
START_TEST(test_kube_events_scheduled_fields)
{
    struct fx f;
    fx_open(&f);
    apply_gang(&f, "podgroups", "g", 2, 2, "3");
    mirror_start(&f, 0);
    cycle(&f, 1000);
    for (int i = 0; i < 2; i++) {
        char pod[8], key[32], node[64];
        snprintf(pod, sizeof(pod), "g-%d", i);
        snprintf(key, sizeof(key), "default/%s", pod);
        json_t *o = kube_testapi_object(&f.api, "pods", key);
        snprintf(node, sizeof(node), "%s", str(json_object_get(o, "spec"), "nodeName"));
        json_decref(o);
        json_t *e = one_event(&f, 0, pod, "Scheduled");
        assert_v1_event(e, "Scheduled", "Normal", "Binding");
        assert_ref(&f, json_object_get(e, "regarding"), "pods", "Pod", pod, "v1");
        char want[256];
        snprintf(want, sizeof(want),
                 "^Successfully assigned default/%s to %s \\(muster cycle [0-9]+, audit seq "
                 "[0-9]+\\)$",
                 pod, node);
        assert_matches(str(e, "note"), want);
        json_decref(e);
    }
    json_t *e = one_event(&f, 0, "g", "GangScheduled");
    assert_v1_event(e, "GangScheduled", "Normal", "Scheduling");
    assert_ref(&f, json_object_get(e, "regarding"), "podgroups", "PodGroup", "g",
               "scheduling.sigs.k8s.io/v1alpha1");
    assert_matches(str(e, "note"), "^2 pods of gang default/g bound \\(muster cycle");
    json_decref(e);
    ck_assert_int_ge(counter(&f, "eventsWritten"), 3);
    ck_assert_int_eq(counter(&f, "eventFailures"), 0);
    fx_close(&f);
}
END_TEST

/* A cluster without events.k8s.io gets core v1 Events. */
START_TEST(test_kube_events_core_v1_fallback)
{
    struct fx f;
    fx_open(&f);
    json_t *b = json_pack("{s:s,s:b}", "resource", "events.events.k8s.io", "installed", 0);
    json_decref(kube_testapi_control(&f.api, "crd", b));
    json_decref(b);
    put(&f, "pods", kube_test_pod("solo", "muster", NULL, NULL, "1"));
    mirror_start(&f, 0);
    cycle(&f, 1000);
    json_t *e = one_event(&f, 1, "solo", "Scheduled");
    char host[256] = "", inst[320];
    gethostname(host, sizeof(host) - 1);
    kube__event_instance(inst, sizeof(inst));
    ck_assert_str_eq(str(e, "apiVersion"), "v1");
    ck_assert_str_eq(str(e, "type"), "Normal");
    ck_assert_str_eq(str(e, "action"), "Binding");
    ck_assert_int_eq(json_integer_value(json_object_get(e, "count")), 1);
    ck_assert_str_eq(str(json_object_get(e, "source"), "component"), "muster");
    ck_assert_str_eq(str(json_object_get(e, "source"), "host"), host);
    ck_assert_str_eq(str(e, "reportingComponent"), "muster");
    ck_assert_str_eq(str(e, "reportingInstance"), inst);
    ck_assert_str_eq(str(e, "firstTimestamp"), str(e, "lastTimestamp"));
    assert_matches(str(e, "message"), "^Successfully assigned default/solo to n[12] ");
    assert_ref(&f, json_object_get(e, "involvedObject"), "pods", "Pod", "solo", "v1");
    json_decref(e);
    fx_close(&f);
}
END_TEST

/* Events failing with 500 never hold a binding back; they are counted. */
START_TEST(test_kube_events_failing_never_block)
{
    struct fx f;
    fx_open(&f);
    json_t *b = json_pack("{s:i,s:i}", "count", 1000, "code", 500);
    json_decref(kube_testapi_control(&f.api, "fail-events", b));
    json_decref(b);
    apply_gang(&f, "podgroups", "g", 2, 2, "1");
    put(&f, "pods", kube_test_pod("solo", "muster", NULL, NULL, "1"));
    mirror_start(&f, 0);
    cycle(&f, 1000);
    ck_assert_int_eq(counter(&f, "bindings"), 3);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", NULL), 3);
    ck_assert_int_ge(counter(&f, "eventFailures"), 4); /* 3 Scheduled, 1 GangScheduled */
    ck_assert_int_eq(counter(&f, "eventsWritten"), 0);
    json_t *l = events(&f, 0, "solo", NULL);
    ck_assert_int_eq(json_array_size(l), 0);
    json_decref(l);
    fx_close(&f);
}
END_TEST

/* FailedScheduling (Warning) on each pending pod of the job and GangUnschedulable on its
 * PodGroup, with the why's primary message, once while the reason stays. */
START_TEST(test_kube_events_failed_scheduling_once)
{
    struct fx f;
    fx_open(&f);
    apply_gang(&f, "podgroups", "big", 2, 2, "6"); /* 6 cpu pods on 4 cpu nodes */
    mirror_start(&f, 0);
    cycle(&f, 1000);
    json_t *why = sched_util_why(&f.u, "default/big");
    const char *msg = str(json_object_get(why, "primary"), "message");
    const char *code = str(json_object_get(why, "primary"), "code");
    for (int i = 0; i < 2; i++) {
        char pod[16];
        snprintf(pod, sizeof(pod), "big-%d", i);
        json_t *e = one_event(&f, 0, pod, "FailedScheduling");
        assert_v1_event(e, "FailedScheduling", "Warning", "Scheduling");
        assert_ref(&f, json_object_get(e, "regarding"), "pods", "Pod", pod, "v1");
        ck_assert_ptr_eq(strstr(str(e, "note"), msg), str(e, "note")); /* begins with it */
        ck_assert_ptr_nonnull(strstr(str(e, "note"), code));
        json_decref(e);
    }
    json_t *e = one_event(&f, 0, "big", "GangUnschedulable");
    assert_v1_event(e, "GangUnschedulable", "Warning", "Scheduling");
    assert_ref(&f, json_object_get(e, "regarding"), "podgroups", "PodGroup", "big",
               "scheduling.sigs.k8s.io/v1alpha1");
    json_decref(e);
    /* more cycles, same reason: no new "unschedulable" record, no new Event */
    int recs = sched_util_audit_count(&f.u, "unschedulable", "default/big");
    ck_assert_int_eq(recs, 1);
    cycle(&f, 2000);
    cycle(&f, 3000);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "unschedulable", "default/big"), 1);
    json_t *l = events(&f, 0, "big-0", "FailedScheduling");
    ck_assert_int_eq(json_array_size(l), 1);
    json_decref(l);
    json_decref(why);
    fx_close(&f);
}
END_TEST

/* Preempted on a victim naming the preemptor, Nominated on a nominated pod. */
START_TEST(test_kube_events_preempted_and_nominated)
{
    struct fx f;
    struct err err = ERR_INIT;
    fx_open(&f);
    put(&f, "pods", kube_test_pod("victim", "other", "n1", NULL, "1"));
    put(&f, "pods", kube_test_pod("hi-0", "muster", NULL, NULL, "1"));
    mirror_start(&f, 0);
    struct kube_http *h = kube__http_new(f.k->conn, NULL);
    json_t *rec =
        json_pack("{s:s,s:s,s:s,s:s,s:I,s:[s],s:[s]}", "kind", "preempted", "job", "default/victim",
                  "preemptor", "default/hi-0", "triggerPod", "default/hi-0", "cycle", (json_int_t)7,
                  "pods", "default/victim", "nodes", "n1");
    ck_assert_msg(kube__bind_record(f.k, h, 1000, rec, &err) == 0, "%s", err.msg);
    json_decref(rec);
    json_t *e = one_event(&f, 0, "victim", "Preempted");
    assert_v1_event(e, "Preempted", "Normal", "Preempting");
    ck_assert_str_eq(str(json_object_get(e, "regarding"), "name"), "victim");
    ck_assert_str_eq(str(e, "note"), "Preempted by default/hi-0 (trigger pod default/hi-0) "
                                     "(muster cycle 7, audit seq 1000)");
    json_decref(e);
    rec = json_pack("{s:s,s:s,s:I,s:[s],s:[s]}", "kind", "nominated", "job", "default/hi-0",
                    "cycle", (json_int_t)8, "pods", "default/hi-0", "nodes", "n1");
    ck_assert_msg(kube__bind_record(f.k, h, 1001, rec, &err) == 0, "%s", err.msg);
    json_decref(rec);
    e = one_event(&f, 0, "hi-0", "Nominated");
    assert_v1_event(e, "Nominated", "Normal", "Scheduling");
    assert_ref(&f, json_object_get(e, "regarding"), "pods", "Pod", "hi-0", "v1");
    assert_matches(str(e, "note"),
                   "^Nominated to node n1: .*\\(muster cycle 8, audit seq 1001\\)$");
    json_decref(e);
    kube__http_free(h);
    fx_close(&f);
}
END_TEST

static void set_phase(struct fx *f, const char *key, const char *phase)
{
    json_t *o = kube_testapi_object(&f->api, "pods", key);
    ck_assert_ptr_nonnull(o);
    json_object_set_new(json_object_get(o, "status"), "phase", json_string(phase));
    json_object_del(json_object_get(o, "metadata"), "managedFields");
    put(f, "pods", o);
}

struct pgwait {
    struct fx *f;
    const char *res, *key, *phase;
};

static json_t *pg_status(struct fx *f, const char *res, const char *key)
{
    json_t *o = kube_testapi_object(&f->api, res, key);
    json_t *st = json_incref(json_object_get(o, "status"));
    json_decref(o);
    return st;
}

static int pg_phase_is(void *ctx)
{
    struct pgwait *w = ctx;
    json_t *st = pg_status(w->f, w->res, w->key);
    const char *p = json_string_value(json_object_get(st, "phase"));
    int ok = p && !strcmp(p, w->phase);
    json_decref(st);
    return ok;
}

/* Waits for the phase; returns the status (new). */
static json_t *expect_phase(struct fx *f, const char *res, const char *key, const char *phase)
{
    struct pgwait w = {f, res, key, phase};
    if (!kube_test_wait(pg_phase_is, &w, 10000)) {
        json_t *st = pg_status(f, res, key);
        char *s = json_dumps(st, JSON_COMPACT);
        ck_abort_msg("podgroup %s: want phase %s, have %s", key, phase, s);
    }
    return pg_status(f, res, key);
}

static void assert_counts(json_t *st, int scheduled, int running, int succeeded, int failed)
{
    if (scheduled >= 0)
        ck_assert_int_eq(json_integer_value(json_object_get(st, "scheduled")), scheduled);
    ck_assert_int_eq(json_integer_value(json_object_get(st, "running")), running);
    ck_assert_int_eq(json_integer_value(json_object_get(st, "succeeded")), succeeded);
    ck_assert_int_eq(json_integer_value(json_object_get(st, "failed")), failed);
}

/* scheduler-plugins' PodGroup: Pending, Scheduled (bound), Running, Failed (a pod failed),
 * each field checked; an unchanged status is not patched again. */
START_TEST(test_kube_pgstatus_sigs_lifecycle)
{
    struct fx f;
    fx_open(&f);
    apply_gang(&f, "podgroups", "g", 2, 2, "1");
    mirror_start(&f, 0);
    /* a PodGroup muster reads after it started becomes Pending */
    json_t *g = kube_testapi_object(&f.api, "podgroups", "default/g");
    json_object_set_new(json_object_get(g, "metadata"), "labels", json_pack("{s:s}", "x", "1"));
    json_object_del(json_object_get(g, "metadata"), "managedFields");
    put(&f, "podgroups", g); /* a change muster reads after it started */
    json_t *st = expect_phase(&f, "podgroups", "default/g", "Pending");
    assert_counts(st, 0, 0, 0, 0);
    ck_assert_str_eq(str(st, "occupiedBy"), "default/g");
    assert_matches(str(st, "scheduleStartTime"), "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$");
    char *start = xstrdup(str(st, "scheduleStartTime"));
    json_decref(st);
    cycle(&f, 1000);
    st = expect_phase(&f, "podgroups", "default/g", "Scheduled");
    assert_counts(st, 2, 0, 0, 0);
    ck_assert_str_eq(str(st, "scheduleStartTime"), start); /* set once */
    json_decref(st);
    set_phase(&f, "default/g-0", "Running");
    set_phase(&f, "default/g-1", "Running");
    st = expect_phase(&f, "podgroups", "default/g", "Running");
    assert_counts(st, 2, 2, 0, 0);
    ck_assert_str_eq(str(st, "occupiedBy"), "default/g");
    json_decref(st);
    /* a change that leaves the status as it is: no patch */
    struct err err = ERR_INIT;
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    long long patches = kube_testapi_stat(&f.api, "status_patch:podgroups");
    json_t *p = kube_testapi_object(&f.api, "pods", "default/g-0");
    json_object_set_new(json_object_get(json_object_get(p, "metadata"), "labels"), "touched",
                        json_string("yes"));
    json_object_del(json_object_get(p, "metadata"), "managedFields");
    put(&f, "pods", p);
    cycle(&f, 2000);
    ck_assert_int_eq(kube_testapi_stat(&f.api, "status_patch:podgroups"), patches);
    set_phase(&f, "default/g-1", "Failed");
    st = expect_phase(&f, "podgroups", "default/g", "Failed");
    assert_counts(st, 2, 1, 0, 1);
    json_decref(st);
    ck_assert_int_eq(counter(&f, "podGroupStatusFailures"), 0);
    free(start);
    fx_close(&f);
}
END_TEST

static int min_member_2(void *ctx)
{
    struct fx *f = ctx;
    json_t *stored = NULL;
    MDB_txn *txn = NULL;
    int ok = 0;
    if (store_txn_begin(f->u.st, STORE_READ, &txn, NULL) == 0 &&
        store_get(txn, MODEL_PODGROUP, "default/v", &stored, NULL) == 0)
        ok = json_integer_value(json_object_get(json_object_get(stored, "spec"), "minMember")) == 2;
    store_txn_abort(&txn);
    json_decref(stored);
    return ok;
}

static int one_failed_one_running(void *ctx)
{
    json_t *st = pg_status(ctx, "podgroups.scheduling.volcano.sh", "default/v");
    int ok = json_integer_value(json_object_get(st, "failed")) == 1 &&
             json_integer_value(json_object_get(st, "running")) == 1;
    json_decref(st);
    return ok;
}

/* Volcano's PodGroup: Inqueue with the Unschedulable condition while the gang is short of
 * members, Running once bound (Scheduled condition), a failed pod counted, Completed when
 * every pod finished. */
START_TEST(test_kube_pgstatus_volcano_lifecycle)
{
    struct fx f;
    const char *res = "podgroups.scheduling.volcano.sh";
    fx_open(&f);
    apply_gang(&f, res, "v", 3, 2, "1"); /* minMember 3, two pods */
    mirror_start(&f, 0);
    cycle(&f, 1000);
    json_t *st = expect_phase(&f, res, "default/v", "Inqueue");
    assert_counts(st, -1, 0, 0, 0);
    ck_assert_ptr_null(json_object_get(st, "scheduled"));
    json_t *conds = json_object_get(st, "conditions");
    ck_assert_int_eq(json_array_size(conds), 1);
    json_t *c = json_array_get(conds, 0);
    ck_assert_str_eq(str(c, "type"), "Unschedulable");
    ck_assert_str_eq(str(c, "status"), "True");
    ck_assert_str_eq(str(c, "reason"), "NotEnoughResources");
    json_t *why = sched_util_why(&f.u, "default/v");
    char want[512];
    snprintf(want, sizeof(want), "3/2 tasks in gang unschedulable: %s",
             str(json_object_get(why, "primary"), "message"));
    ck_assert_str_eq(str(c, "message"), want);
    assert_matches(str(c, "lastTransitionTime"), "^[0-9]{4}-[0-9]{2}-[0-9]{2}T");
    json_decref(why);
    json_decref(st);
    /* the gang becomes satisfiable: minMember 2 */
    json_t *pg = kube_testapi_object(&f.api, res, "default/v");
    json_object_set_new(json_object_get(pg, "spec"), "minMember", json_integer(2));
    json_object_del(json_object_get(pg, "metadata"), "managedFields");
    put(&f, res, pg);
    struct err err = ERR_INIT;
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    /* the mirror applies the change before the cycle reads it */
    ck_assert(kube_test_wait(min_member_2, &f, 10000));
    cycle(&f, 2000);
    st = expect_phase(&f, res, "default/v", "Running");
    assert_counts(st, -1, 0, 0, 0);
    conds = json_object_get(st, "conditions");
    ck_assert_int_eq(json_array_size(conds), 2); /* by type, as Volcano keeps them */
    c = json_array_get(conds, 1);
    ck_assert_str_eq(str(c, "type"), "Scheduled");
    ck_assert_str_eq(str(c, "status"), "True");
    ck_assert_str_eq(str(c, "reason"), "tasks in gang are ready to be scheduled");
    json_decref(st);
    set_phase(&f, "default/v-0", "Running");
    set_phase(&f, "default/v-1", "Failed");
    ck_assert(kube_test_wait(one_failed_one_running, &f, 10000));
    st = expect_phase(&f, res, "default/v", "Running");
    assert_counts(st, -1, 1, 0, 1);
    json_decref(st);
    set_phase(&f, "default/v-0", "Succeeded");
    st = expect_phase(&f, res, "default/v", "Completed");
    assert_counts(st, -1, 0, 1, 1);
    json_decref(st);
    fx_close(&f);
}
END_TEST

static json_t *fail_pod(const char *pod, double seconds)
{
    return json_pack("{s:s,s:f,s:i}", "pod", pod, "seconds", seconds, "code", 500);
}

struct bound {
    struct fx *f;
    const char *key;
};

static int api_bound(void *ctx)
{
    struct bound *b = ctx;
    json_t *o = kube_testapi_object(&b->f->api, "pods", b->key);
    const char *n = json_string_value(json_object_get(json_object_get(o, "spec"), "nodeName"));
    int ok = n && *n;
    json_decref(o);
    return ok;
}

static int api_is_bound(struct fx *f, const char *key)
{
    struct bound b = {f, key};
    return api_bound(&b);
}

static int a_retried(void *ctx)
{
    struct fx *f = ctx;
    return kube_testapi_stat(&f->api, "binding_failed:default/a") >= 3;
}

static int two_bound(void *ctx)
{
    struct fx *f = ctx;
    return sched_util_audit_count(&f->u, "bound", NULL) >= 2;
}

/* One pod's binding answered 500: the other pods bind meanwhile (one of them after two
 * dropped connections); once the server takes it, the pod binds too (retried with
 * backoff, nothing given up). */
START_TEST(test_kube_writeback_one_pod_failing_others_flow)
{
    struct fx f;
    fx_open(&f);
    const char *names[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++)
        put(&f, "pods", kube_test_pod(names[i], "muster", NULL, NULL, "1"));
    json_t *b = fail_pod("default/a", 3600);
    json_decref(kube_testapi_control(&f.api, "fail-binding", b));
    json_decref(b);
    /* c's first two bindings lose the connection instead: retried as well */
    b = json_pack("{s:s,s:i,s:b}", "pod", "default/c", "count", 2, "drop", 1);
    json_decref(kube_testapi_control(&f.api, "fail-binding", b));
    json_decref(b);
    mirror_start(&f, 600000);
    json_decref(sched_util_cycle(&f.u, 1000));
    struct bound wb = {&f, "default/b"}, wc = {&f, "default/c"};
    ck_assert(kube_test_wait(api_bound, &wb, 10000));
    ck_assert(kube_test_wait(api_bound, &wc, 10000));
    ck_assert(!api_is_bound(&f, "default/a"));
    struct bound wa = {&f, "default/a"};
    /* a's binding keeps being retried */
    ck_assert(kube_test_wait(a_retried, &f, 10000));
    ck_assert_int_ge(counter(&f, "writebackFailures"), 3);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", NULL), 2);
    b = fail_pod("default/a", 0);
    json_decref(kube_testapi_control(&f.api, "fail-binding", b));
    json_decref(b);
    ck_assert(kube_test_wait(api_bound, &wa, 10000));
    struct err err = ERR_INIT;
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", NULL), 3);
    ck_assert_int_eq(counter(&f, "writebackAbandoned"), 0);
    ck_assert_int_eq(kube_testapi_stat(&f.api, "bound"), 3);
    ck_assert_int_eq(kube_testapi_stat(&f.api, "binding_failed:default/c"), 2);
    fx_close(&f);
}
END_TEST

static int abandoned(void *ctx)
{
    return counter(ctx, "writebackAbandoned") >= 1;
}

/* A binding failing past writeback_giveup is given up: a "writeback-abandoned" record, a
 * WritebackAbandoned entry in the job's why history, the counter, and the pod pending
 * again in the store; the other pod is bound. */
START_TEST(test_kube_writeback_abandoned)
{
    struct fx f;
    fx_open(&f);
    put(&f, "pods", kube_test_pod("a", "muster", NULL, NULL, "1"));
    put(&f, "pods", kube_test_pod("b", "muster", NULL, NULL, "1"));
    json_t *b = fail_pod("default/a", 3600);
    json_decref(kube_testapi_control(&f.api, "fail-binding", b));
    json_decref(b);
    mirror_start(&f, 800);
    json_decref(sched_util_cycle(&f.u, 1000));
    ck_assert(kube_test_wait(abandoned, &f, 15000));
    struct err err = ERR_INIT;
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    ck_assert(api_is_bound(&f, "default/b"));
    ck_assert(!api_is_bound(&f, "default/a"));
    ck_assert_int_eq(counter(&f, "writebackAbandoned"), 1);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "writeback-abandoned", NULL), 1);
    json_t *audit = sched_util_audit(&f.u), *rec, *found = NULL;
    size_t i;
    json_array_foreach(audit, i, rec)
    {
        if (!strcmp(str(rec, "kind"), "writeback-abandoned"))
            found = rec;
    }
    ck_assert_ptr_nonnull(found);
    ck_assert_str_eq(str(found, "job"), "default/a");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(found, "pods"), 0)),
                     "default/a");
    ck_assert_str_eq(str(json_object_get(found, "details"), "of"), "placed");
    assert_matches(str(found, "reason"),
                   "^write-back of 'placed' given up after [0-9]+s of failures: POST "
                   "'/api/v1/namespaces/default/pods/a/binding': HTTP 500");
    json_decref(audit);
    char *node = sched_util_node_of(&f.u, "default/a");
    ck_assert_str_eq(node, ""); /* pending again: the next cycle places it anew */
    free(node);
    json_t *why = sched_util_why(&f.u, "default/a"), *h, *entry = NULL;
    json_array_foreach(json_object_get(why, "history"), i, h)
    {
        if (!strcmp(str(h, "code"), "WritebackAbandoned"))
            entry = h;
    }
    ck_assert_ptr_nonnull(entry);
    ck_assert_str_eq(str(entry, "pod"), "default/a");
    assert_matches(str(entry, "message"), "given up after");
    json_decref(why);
    fx_close(&f);
}
END_TEST

/* Crash between the API call and the ack: the binding was made but not acknowledged;
 * after a restart it is redone once (409, same node: bound), and a record finished out
 * of order before the crash (b, behind a failing a) is not redone. */
START_TEST(test_kube_writeback_crash_between_call_and_ack)
{
    struct fx f;
    struct err err = ERR_INIT;
    fx_open(&f);
    put(&f, "pods", kube_test_pod("a", "muster", NULL, NULL, "1"));
    put(&f, "pods", kube_test_pod("b", "muster", NULL, NULL, "1"));
    put(&f, "pods", kube_test_pod("c", "muster", NULL, NULL, "1"));
    json_t *b = fail_pod("default/a", 3600);
    json_decref(kube_testapi_control(&f.api, "fail-binding", b));
    json_decref(b);
    mirror_start(&f, 600000);
    /* a and b in one cycle (a before b), then the write-back stops ("crash") with a
     * unfinished and b done out of order */
    json_decref(sched_util_cycle(&f.u, 1000));
    struct bound wb = {&f, "default/b"};
    ck_assert(kube_test_wait(api_bound, &wb, 10000));
    ck_assert(kube_test_wait(api_bound, &(struct bound){&f, "default/c"}, 10000));
    ck_assert(kube_test_wait(two_bound, &f, 10000));
    kube_close(f.k);
    f.k = NULL;
    long long b_calls = kube_testapi_stat(&f.api, "binding");
    /* the call for a "was made" before the crash: the server has it bound */
    char *node = sched_util_node_of(&f.u, "default/a");
    json_t *pa = kube_testapi_object(&f.api, "pods", "default/a");
    json_object_set_new(json_object_get(pa, "spec"), "nodeName", json_string(node));
    json_object_del(json_object_get(pa, "metadata"), "managedFields");
    put(&f, "pods", pa);
    b = fail_pod("default/a", 0);
    json_decref(kube_testapi_control(&f.api, "fail-binding", b));
    json_decref(b);
    mirror_start(&f, 600000);
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    /* a: redone once, answered 409 on the same node: bound; b and c: not redone */
    ck_assert_int_eq(kube_testapi_stat(&f.api, "binding"), b_calls + 1);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", "default/a"), 1);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", NULL), 3);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bind-refused", NULL), 0);
    /* and a second restart redoes nothing */
    kube_close(f.k);
    f.k = NULL;
    mirror_start(&f, 600000);
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(kube_testapi_stat(&f.api, "binding"), b_calls + 1);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", NULL), 3);
    free(node);
    fx_close(&f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kube_events");
    TCase *tc = tcase_create("kube_events");
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_kube_events_scheduled_fields);
    tcase_add_test(tc, test_kube_events_core_v1_fallback);
    tcase_add_test(tc, test_kube_events_failing_never_block);
    tcase_add_test(tc, test_kube_events_failed_scheduling_once);
    tcase_add_test(tc, test_kube_events_preempted_and_nominated);
    tcase_add_test(tc, test_kube_pgstatus_sigs_lifecycle);
    tcase_add_test(tc, test_kube_pgstatus_volcano_lifecycle);
    tcase_add_test(tc, test_kube_writeback_one_pod_failing_others_flow);
    tcase_add_test(tc, test_kube_writeback_abandoned);
    tcase_add_test(tc, test_kube_writeback_crash_between_call_and_ack);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
