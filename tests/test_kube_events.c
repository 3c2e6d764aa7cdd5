/*
 * test_kube_events.c - bind mode's Events against tests/kubeapi/server.py, each field
 * checked: Scheduled and GangScheduled, the core v1 fallback, failing Events never
 * blocking bindings, FailedScheduling / GangUnschedulable once per reason, Preempted and
 * Nominated.
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
#include "kube_fx.h"
#include "kube_writeback.h"
#include "kube_support.h"
#include "sched_util.h"
#include "store.h"

/* Events of one API group about object name (fieldSelector as kubectl describe uses it),
 * only those of reason when not NULL. New array. */
static json_t *events(struct kube_fx *f, int core, const char *name, const char *reason)
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
    struct kube_fx *f;
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
static json_t *one_event(struct kube_fx *f, int core, const char *name, const char *reason)
{
    struct evwait w = {f, core, name, reason, 1};
    ck_assert_msg(kube_test_wait(has_events, &w, 10000), "no %s event on %s", reason, name);
    json_t *l = events(f, core, name, reason);
    ck_assert_int_eq(json_array_size(l), 1);
    json_t *e = json_incref(json_array_get(l, 0));
    json_decref(l);
    return e;
}

/* regarding / involvedObject: the object as the API server has it. */
static void assert_ref(struct kube_fx *f, json_t *ref, const char *res, const char *kind,
                       const char *name, const char *api_version)
{
    char key[128];
    snprintf(key, sizeof(key), "default/%s", name);
    json_t *obj = kube_testapi_object(&f->api, res, key);
    ck_assert_ptr_nonnull(obj);
    ck_assert_str_eq(kube_fx_str(ref, "kind"), kind);
    ck_assert_str_eq(kube_fx_str(ref, "namespace"), "default");
    ck_assert_str_eq(kube_fx_str(ref, "name"), name);
    ck_assert_str_eq(kube_fx_str(ref, "apiVersion"), api_version);
    ck_assert_str_eq(kube_fx_str(ref, "uid"), kube_fx_str(json_object_get(obj, "metadata"), "uid"));
    json_decref(obj);
}

static void assert_v1_event(json_t *e, const char *reason, const char *type, const char *action)
{
    char inst[320];
    kube__event_instance(inst, sizeof(inst));
    ck_assert_str_eq(kube_fx_str(e, "apiVersion"), "events.k8s.io/v1");
    ck_assert_str_eq(kube_fx_str(e, "kind"), "Event");
    ck_assert_str_eq(kube_fx_str(e, "reason"), reason);
    ck_assert_str_eq(kube_fx_str(e, "type"), type);
    ck_assert_str_eq(kube_fx_str(e, "action"), action);
    ck_assert_str_eq(kube_fx_str(e, "reportingController"), "muster");
    ck_assert_str_eq(kube_fx_str(e, "reportingInstance"), inst);
    kube_fx_matches(inst, "^[^_]+_[0-9]+$");
    kube_fx_matches(kube_fx_str(e, "eventTime"),
                    "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{6}Z$");
    json_t *md = json_object_get(e, "metadata");
    ck_assert_str_eq(kube_fx_str(md, "namespace"), "default");
    char prefix[160];
    snprintf(prefix, sizeof(prefix), "^%s\\.[0-9a-f]+$",
             kube_fx_str(json_object_get(e, "regarding"), "name"));
    kube_fx_matches(kube_fx_str(md, "name"), prefix);
}

/* Scheduled on each pod and GangScheduled on the PodGroup, field by field. */
START_TEST(test_kube_events_scheduled_fields)
{
    struct kube_fx f;
    kube_fx_open(&f);
    kube_fx_gang(&f, "podgroups", "g", 2, 2, "3");
    kube_fx_start(&f, 0);
    kube_fx_cycle(&f, 1000);
    for (int i = 0; i < 2; i++) {
        char pod[16], key[32], node[64];
        snprintf(pod, sizeof(pod), "g-%d", i);
        snprintf(key, sizeof(key), "default/%s", pod);
        json_t *o = kube_testapi_object(&f.api, "pods", key);
        snprintf(node, sizeof(node), "%s", kube_fx_str(json_object_get(o, "spec"), "nodeName"));
        json_decref(o);
        json_t *e = one_event(&f, 0, pod, "Scheduled");
        assert_v1_event(e, "Scheduled", "Normal", "Binding");
        assert_ref(&f, json_object_get(e, "regarding"), "pods", "Pod", pod, "v1");
        char want[256];
        snprintf(want, sizeof(want),
                 "^Successfully assigned default/%s to %s \\(muster cycle [0-9]+, audit seq "
                 "[0-9]+\\)$",
                 pod, node);
        kube_fx_matches(kube_fx_str(e, "note"), want);
        json_decref(e);
    }
    json_t *e = one_event(&f, 0, "g", "GangScheduled");
    assert_v1_event(e, "GangScheduled", "Normal", "Scheduling");
    assert_ref(&f, json_object_get(e, "regarding"), "podgroups", "PodGroup", "g",
               "scheduling.sigs.k8s.io/v1alpha1");
    kube_fx_matches(kube_fx_str(e, "note"), "^2 pods of gang default/g bound \\(muster cycle");
    json_decref(e);
    ck_assert_int_ge(kube_fx_counter(&f, "eventsWritten"), 3);
    ck_assert_int_eq(kube_fx_counter(&f, "eventFailures"), 0);
    kube_fx_close(&f);
}
END_TEST

/* A cluster without events.k8s.io gets core v1 Events. */
START_TEST(test_kube_events_core_v1_fallback)
{
    struct kube_fx f;
    kube_fx_open(&f);
    json_t *b = json_pack("{s:s,s:b}", "resource", "events.events.k8s.io", "installed", 0);
    json_decref(kube_testapi_control(&f.api, "crd", b));
    json_decref(b);
    kube_fx_put(&f, "pods", kube_test_pod("solo", "muster", NULL, NULL, "1"));
    kube_fx_start(&f, 0);
    kube_fx_cycle(&f, 1000);
    json_t *e = one_event(&f, 1, "solo", "Scheduled");
    char host[256] = "", inst[320];
    gethostname(host, sizeof(host) - 1);
    kube__event_instance(inst, sizeof(inst));
    ck_assert_str_eq(kube_fx_str(e, "apiVersion"), "v1");
    ck_assert_str_eq(kube_fx_str(e, "type"), "Normal");
    ck_assert_str_eq(kube_fx_str(e, "action"), "Binding");
    ck_assert_int_eq(json_integer_value(json_object_get(e, "count")), 1);
    ck_assert_str_eq(kube_fx_str(json_object_get(e, "source"), "component"), "muster");
    ck_assert_str_eq(kube_fx_str(json_object_get(e, "source"), "host"), host);
    ck_assert_str_eq(kube_fx_str(e, "reportingComponent"), "muster");
    ck_assert_str_eq(kube_fx_str(e, "reportingInstance"), inst);
    ck_assert_str_eq(kube_fx_str(e, "firstTimestamp"), kube_fx_str(e, "lastTimestamp"));
    kube_fx_matches(kube_fx_str(e, "message"), "^Successfully assigned default/solo to n[12] ");
    assert_ref(&f, json_object_get(e, "involvedObject"), "pods", "Pod", "solo", "v1");
    json_decref(e);
    kube_fx_close(&f);
}
END_TEST

/* Events failing with 500 never hold a binding back; they are counted. */
START_TEST(test_kube_events_failing_never_block)
{
    struct kube_fx f;
    kube_fx_open(&f);
    json_t *b = json_pack("{s:i,s:i}", "count", 1000, "code", 500);
    json_decref(kube_testapi_control(&f.api, "fail-events", b));
    json_decref(b);
    kube_fx_gang(&f, "podgroups", "g", 2, 2, "1");
    kube_fx_put(&f, "pods", kube_test_pod("solo", "muster", NULL, NULL, "1"));
    kube_fx_start(&f, 0);
    kube_fx_cycle(&f, 1000);
    ck_assert_int_eq(kube_fx_counter(&f, "bindings"), 3);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", NULL), 3);
    ck_assert_int_ge(kube_fx_counter(&f, "eventFailures"), 4); /* 3 Scheduled, 1 GangScheduled */
    ck_assert_int_eq(kube_fx_counter(&f, "eventsWritten"), 0);
    json_t *l = events(&f, 0, "solo", NULL);
    ck_assert_int_eq(json_array_size(l), 0);
    json_decref(l);
    kube_fx_close(&f);
}
END_TEST

/* FailedScheduling (Warning) on each pending pod of the job and GangUnschedulable on its
 * PodGroup, with the why's primary message, once while the reason stays. */
START_TEST(test_kube_events_failed_scheduling_once)
{
    struct kube_fx f;
    kube_fx_open(&f);
    kube_fx_gang(&f, "podgroups", "big", 2, 2, "6"); /* 6 cpu pods on 4 cpu nodes */
    kube_fx_start(&f, 0);
    kube_fx_cycle(&f, 1000);
    json_t *why = sched_util_why(&f.u, "default/big");
    const char *msg = kube_fx_str(json_object_get(why, "primary"), "message");
    const char *code = kube_fx_str(json_object_get(why, "primary"), "code");
    for (int i = 0; i < 2; i++) {
        char pod[16];
        snprintf(pod, sizeof(pod), "big-%d", i);
        json_t *e = one_event(&f, 0, pod, "FailedScheduling");
        assert_v1_event(e, "FailedScheduling", "Warning", "Scheduling");
        assert_ref(&f, json_object_get(e, "regarding"), "pods", "Pod", pod, "v1");
        ck_assert_ptr_eq(strstr(kube_fx_str(e, "note"), msg),
                         kube_fx_str(e, "note")); /* begins with it */
        ck_assert_ptr_nonnull(strstr(kube_fx_str(e, "note"), code));
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
    kube_fx_cycle(&f, 2000);
    kube_fx_cycle(&f, 3000);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "unschedulable", "default/big"), 1);
    json_t *l = events(&f, 0, "big-0", "FailedScheduling");
    ck_assert_int_eq(json_array_size(l), 1);
    json_decref(l);
    json_decref(why);
    kube_fx_close(&f);
}
END_TEST

/* Preempted on a victim naming the preemptor, Nominated on a nominated pod. */
START_TEST(test_kube_events_preempted_and_nominated)
{
    struct kube_fx f;
    struct err err = ERR_INIT;
    kube_fx_open(&f);
    kube_fx_put(&f, "pods", kube_test_pod("victim", "other", "n1", NULL, "1"));
    kube_fx_put(&f, "pods", kube_test_pod("hi-0", "muster", NULL, NULL, "1"));
    kube_fx_start(&f, 0);
    struct kube_http *h = kube__http_new(f.k->conn, NULL);
    json_t *rec =
        json_pack("{s:s,s:s,s:s,s:s,s:I,s:[s],s:[s]}", "kind", "preempted", "job", "default/victim",
                  "preemptor", "default/hi-0", "triggerPod", "default/hi-0", "cycle", (json_int_t)7,
                  "pods", "default/victim", "nodes", "n1");
    ck_assert_msg(kube__bind_record(f.k, h, 1000, rec, &err) == 0, "%s", err.msg);
    json_decref(rec);
    json_t *e = one_event(&f, 0, "victim", "Preempted");
    assert_v1_event(e, "Preempted", "Normal", "Preempting");
    ck_assert_str_eq(kube_fx_str(json_object_get(e, "regarding"), "name"), "victim");
    ck_assert_str_eq(kube_fx_str(e, "note"), "Preempted by default/hi-0 (trigger pod default/hi-0) "
                                             "(muster cycle 7, audit seq 1000)");
    json_decref(e);
    rec = json_pack("{s:s,s:s,s:I,s:[s],s:[s]}", "kind", "nominated", "job", "default/hi-0",
                    "cycle", (json_int_t)8, "pods", "default/hi-0", "nodes", "n1");
    ck_assert_msg(kube__bind_record(f.k, h, 1001, rec, &err) == 0, "%s", err.msg);
    json_decref(rec);
    e = one_event(&f, 0, "hi-0", "Nominated");
    assert_v1_event(e, "Nominated", "Normal", "Scheduling");
    assert_ref(&f, json_object_get(e, "regarding"), "pods", "Pod", "hi-0", "v1");
    kube_fx_matches(kube_fx_str(e, "note"),
                    "^Nominated to node n1: .*\\(muster cycle 8, audit seq 1001\\)$");
    json_decref(e);
    kube__http_free(h);
    kube_fx_close(&f);
}
END_TEST

/* A nomination the scheduler voids (a preemptor's room taken, its node deleted) is removed on
 * the API server too: a "nominated" record's "cleared" pods get nominatedNodeName removed,
 * and a pod already gone counts as done. */
START_TEST(test_kube_nomination_cleared_on_the_server)
{
    struct kube_fx f;
    struct err err = ERR_INIT;
    kube_fx_open(&f);
    json_t *p = kube_test_pod("lo-0", "muster", NULL, NULL, "1");
    json_object_set_new(json_object_get(p, "status"), "nominatedNodeName", json_string("n1"));
    kube_fx_put(&f, "pods", p);
    kube_fx_start(&f, 0);
    struct kube_http *h = kube__http_new(f.k->conn, NULL);
    json_t *rec = json_pack("{s:s,s:s,s:I,s:[],s:[],s:[s,s]}", "kind", "nominated", "job",
                            "default/lo-0", "cycle", (json_int_t)9, "pods", "nodes", "cleared",
                            "default/lo-0", "default/gone");
    ck_assert_msg(kube__bind_record(f.k, h, 1002, rec, &err) == 0, "%s", err.msg);
    json_decref(rec);
    json_t *o = kube_testapi_object(&f.api, "pods", "default/lo-0");
    ck_assert_ptr_nonnull(o);
    ck_assert_ptr_null(json_object_get(json_object_get(o, "status"), "nominatedNodeName"));
    json_decref(o);
    /* default/gone is no pod of muster's (nor anyone's): nothing to call */
    ck_assert_int_eq(sched_util_audit_count(&f.u, "nominate-acked", NULL), 1);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "nominate-refused", NULL), 0);
    kube__http_free(h);
    kube_fx_close(&f);
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
    tcase_add_test(tc, test_kube_nomination_cleared_on_the_server);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
