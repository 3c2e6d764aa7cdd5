/*
 * test_kube.c - the Kubernetes mirror against tests/kubeapi/server.py: sync,
 * live changes, reconnect, 410 relist, restart resume, missing CRDs, bad
 * responses, bind mode (binding, refusals, evictions) and the connection.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "err.h"
#include "kube.h"
#include "kube_writeback.h"
#include "kube_fx.h"
#include "kube_support.h"
#include "sched_util.h"
#include "check_run.h"
#include "store.h"
#include "why_store.h"

static void mirror_start(struct kube_fx *f, const char *scheduler_name)
{
    struct kube_options o;
    kube_fx_options(f, &o);
    o.scheduler_name = scheduler_name;
    o.page_size = 2; /* every list is paginated */
    kube_fx_mirror(f, &o);
}

static void fx_open(struct kube_fx *f, int tls, const char *token)
{
    memset(f, 0, sizeof(*f));
    kube_testapi_start(&f->api, tls, token);
    sched_util_open(&f->u, NULL);
    json_t *objs[] = {kube_test_node("n1", "4", "b0"), kube_test_node("n2", "4", "b1"),
                      kube_test_pod("p1", NULL, "n1", NULL, "1"),
                      kube_test_pod("p2", NULL, "n2", NULL, "1"),
                      kube_test_pod("p3", NULL, NULL, NULL, "1")};
    const char *res[] = {"nodes", "nodes", "pods", "pods", "pods"};
    for (int i = 0; i < 5; i++) {
        kube_testapi_apply(&f->api, res[i], objs[i]);
        json_decref(objs[i]);
    }
}

static void fx_close(struct kube_fx *f)
{
    kube_close(f->k);
    sched_util_close(&f->u);
    kube_testapi_stop(&f->api);
}

struct has {
    struct kube_fx *f;
    const char *key;
    const char *node; /* NULL: exists; "-": absent; "": unbound; else bound to node */
};

static int has_pod(void *ctx)
{
    struct has *h = ctx;
    char *node = sched_util_node_of(&h->f->u, h->key);
    int ok;
    if (!h->node)
        ok = node != NULL;
    else if (!strcmp(h->node, "-"))
        ok = node == NULL;
    else
        ok = node && !strcmp(node, h->node);
    free(node);
    return ok;
}

static void expect_pod(struct kube_fx *f, const char *key, const char *node)
{
    struct has h = {f, key, node};
    ck_assert_msg(kube_test_wait(has_pod, &h, 10000), "pod '%s' not as expected (%s)", key,
                  node ? node : "present");
}

static json_t *source(struct kube_fx *f, const char *resource)
{
    json_t *doc = kube_sources_json(f->k), *e;
    size_t i;
    json_array_foreach(json_object_get(doc, "sources"), i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "resource")), resource)) {
            json_incref(e);
            json_decref(doc);
            return e;
        }
    }
    json_decref(doc);
    return NULL;
}

static json_int_t counter(struct kube_fx *f, const char *name)
{
    json_t *doc = kube_sources_json(f->k);
    json_int_t v = json_integer_value(json_object_get(json_object_get(doc, "counters"), name));
    json_decref(doc);
    return v;
}

/* A mirrored pod cannot be refused: one with a field muster does not support (a PVC
 * volume) is stored as sent, unknown fields and all, and its job stays Unschedulable with
 * UnsupportedField naming the field; a pod without one is placed as usual. */
START_TEST(test_kube_unsupported_field_blocks_the_job)
{
    struct kube_fx f;
    struct err err = ERR_INIT;
    fx_open(&f, 0, NULL);
    json_t *pod = kube_test_pod("pvc", NULL, NULL, NULL, "1");
    json_t *spec = json_object_get(pod, "spec");
    json_object_set_new(spec, "volumes",
                        json_pack("[{s:s, s:{s:s}}]", "name", "data", "persistentVolumeClaim",
                                  "claimName", "data"));
    json_object_set_new(spec, "futureField", json_string("from a newer API server"));
    kube_testapi_apply(&f.api, "pods", pod);
    mirror_start(&f, NULL);
    expect_pod(&f, "default/pvc", "");
    json_t *stored = sched_util_pod(&f.u, "default/pvc");
    ck_assert_ptr_nonnull(json_object_get(json_object_get(stored, "spec"), "futureField"));
    json_decref(sched_util_cycle(&f.u, 1000));
    expect_pod(&f, "default/p3", NULL);
    json_t *why = NULL;
    ck_assert_msg(sched_why(f.u.s, "default/pvc", &why, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(json_string_value(json_object_get(why, "state")), "Unschedulable");
    json_t *primary = json_object_get(why, "primary");
    ck_assert_str_eq(json_string_value(json_object_get(primary, "code")), "UnsupportedField");
    ck_assert_str_eq(json_string_value(json_object_get(primary, "message")),
                     "pod 'default/pvc': spec.volumes[0].persistentVolumeClaim: not supported by "
                     "muster (VolumeBinding, VolumeZone and NodeVolumeLimits: the nodes that can "
                     "reach the volume)");
    json_t *b = json_array_get(json_object_get(why, "blockers"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(b, "field")),
                     "spec.volumes[0].persistentVolumeClaim");
    expect_pod(&f, "default/pvc", ""); /* still pending */
    char *p3 = sched_util_node_of(&f.u, "default/p3");
    ck_assert_str_ne(p3, ""); /* the pod without one was placed */
    free(p3);
    json_decref(why);
    json_decref(stored);
    json_decref(pod);
    fx_close(&f);
}
END_TEST

/* Kubernetes refuses a fractional extended resource, so a mirrored one (the API server
 * admitted it anyway, or a newer one) is never placed: UnsupportedField naming the field. */
START_TEST(test_kube_fractional_gpu_blocks_the_job)
{
    struct kube_fx f;
    struct err err = ERR_INIT;
    fx_open(&f, 0, NULL);
    json_t *pod = kube_test_pod("half", NULL, NULL, NULL, "1");
    json_t *c = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
    json_object_set_new(json_object_get(json_object_get(c, "resources"), "requests"),
                        "nvidia.com/gpu", json_string("0.5"));
    kube_testapi_apply(&f.api, "pods", pod);
    mirror_start(&f, NULL);
    expect_pod(&f, "default/half", "");
    json_decref(sched_util_cycle(&f.u, 1000));
    expect_pod(&f, "default/p3", NULL);
    json_t *why = NULL;
    ck_assert_msg(sched_why(f.u.s, "default/half", &why, &err) == 0, "%s", err.msg);
    json_t *b = json_array_get(json_object_get(why, "blockers"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(b, "code")), "UnsupportedField");
    ck_assert_str_eq(json_string_value(json_object_get(b, "field")),
                     "spec.containers[0].resources.requests.nvidia.com/gpu");
    expect_pod(&f, "default/half", ""); /* never placed */
    json_decref(why);
    json_decref(pod);
    fx_close(&f);
}
END_TEST

START_TEST(test_kube_initial_sync)
{
    struct kube_fx f;
    fx_open(&f, 1, "s3cret"); /* TLS with a CA file from the kubeconfig, bearer token */
    mirror_start(&f, NULL);
    expect_pod(&f, "default/p1", "n1");
    expect_pod(&f, "default/p3", "");
    json_t *pod = sched_util_pod(&f.u, "default/p2");
    json_t *api = kube_testapi_object(&f.api, "pods", "default/p2");
    /* The API server's identity is kept. Its resourceVersion is not (sched_apply assigns
     * the store's own): the mirror tracks the server's per resource, checked below. */
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(pod, "metadata"), "uid")),
                     json_string_value(json_object_get(json_object_get(api, "metadata"), "uid")));
    ck_assert_ptr_null(json_object_get(json_object_get(pod, "metadata"), "managedFields"));
    json_t *s = source(&f, "nodes");
    ck_assert(json_is_true(json_object_get(s, "synced")));
    ck_assert_str_eq(json_string_value(json_object_get(s, "state")), "synced");
    json_decref(s);
    s = source(&f, "pods");
    ck_assert_int_eq(json_integer_value(json_object_get(s, "relists")), 1);
    const char *api_rv =
        json_string_value(json_object_get(json_object_get(api, "metadata"), "resourceVersion"));
    ck_assert_int_ge(atoi(json_string_value(json_object_get(s, "resourceVersion"))), atoi(api_rv));
    json_decref(s);
    json_decref(pod);
    json_decref(api);
    fx_close(&f);
}
END_TEST

START_TEST(test_kube_live_changes)
{
    struct kube_fx f;
    fx_open(&f, 0, NULL);
    mirror_start(&f, NULL);
    json_t *p4 = kube_test_pod("p4", NULL, "n2", NULL, "2");
    kube_testapi_apply(&f.api, "pods", p4);
    kube_testapi_delete(&f.api, "pods", "default/p1");
    expect_pod(&f, "default/p4", "n2");
    expect_pod(&f, "default/p1", "-");
    json_t *s = source(&f, "pods");
    ck_assert_int_ge(json_integer_value(json_object_get(s, "events")), 2);
    ck_assert_ptr_nonnull(json_string_value(json_object_get(s, "lastEvent")));
    json_decref(s);
    json_decref(p4);
    fx_close(&f);
}
END_TEST

START_TEST(test_kube_reconnect_resume)
{
    struct kube_fx f;
    fx_open(&f, 0, NULL);
    mirror_start(&f, NULL);
    json_t *st0 = kube_testapi_stats(&f.api);
    json_decref(kube_testapi_control(&f.api, "drop", NULL));
    json_t *p5 = kube_test_pod("p5", NULL, "n1", NULL, "1");
    kube_testapi_apply(&f.api, "pods", p5);
    expect_pod(&f, "default/p5", "n1");
    json_t *st1 = kube_testapi_stats(&f.api);
    /* resumed from the last resourceVersion: watched again, never listed again */
    ck_assert_int_eq(json_integer_value(json_object_get(st1, "list")),
                     json_integer_value(json_object_get(st0, "list")));
    ck_assert_int_gt(json_integer_value(json_object_get(st1, "watch")),
                     json_integer_value(json_object_get(st0, "watch")));
    ck_assert_int_eq(counter(&f, "relists"), 0);
    json_decref(st0);
    json_decref(st1);
    json_decref(p5);
    fx_close(&f);
}
END_TEST

static int relisted(void *ctx)
{
    return counter(ctx, "relists") >= 1;
}

START_TEST(test_kube_relist_after_410)
{
    struct kube_fx f;
    fx_open(&f, 0, NULL);
    mirror_start(&f, NULL);
    json_decref(kube_testapi_control(&f.api, "compact", NULL));
    ck_assert(kube_test_wait(relisted, &f, 10000));
    json_t *p6 = kube_test_pod("p6", NULL, "n1", NULL, "1");
    kube_testapi_apply(&f.api, "pods", p6);
    expect_pod(&f, "default/p6", "n1");
    expect_pod(&f, "default/p1", "n1");
    json_decref(p6);
    fx_close(&f);
}
END_TEST

START_TEST(test_kube_restart_resume)
{
    struct kube_fx f;
    fx_open(&f, 0, NULL);
    mirror_start(&f, NULL);
    kube_close(f.k);
    f.k = NULL;
    /* changes while the mirror is down, still within the server's history */
    kube_testapi_delete(&f.api, "pods", "default/p2");
    json_t *p7 = kube_test_pod("p7", NULL, "n2", NULL, "1");
    kube_testapi_apply(&f.api, "pods", p7);
    json_t *st0 = kube_testapi_stats(&f.api);
    sched_util_reopen(&f.u);
    mirror_start(&f, NULL);
    expect_pod(&f, "default/p7", "n2");
    expect_pod(&f, "default/p2", "-");
    json_t *st1 = kube_testapi_stats(&f.api);
    ck_assert_int_eq(json_integer_value(json_object_get(st1, "list")),
                     json_integer_value(json_object_get(st0, "list")));
    json_decref(st0);
    json_decref(st1);
    json_decref(p7);
    fx_close(&f);
}
END_TEST

START_TEST(test_kube_restart_after_compaction_relists)
{
    struct kube_fx f;
    fx_open(&f, 0, NULL);
    mirror_start(&f, NULL);
    kube_close(f.k);
    f.k = NULL;
    kube_testapi_delete(&f.api, "pods", "default/p1");
    json_decref(kube_testapi_control(&f.api, "compact", NULL));
    sched_util_reopen(&f.u);
    mirror_start(&f, NULL);
    /* the DELETED event is gone from history: the relist finds p1 missing */
    expect_pod(&f, "default/p1", "-");
    ck_assert_int_ge(counter(&f, "relists"), 1);
    fx_close(&f);
}
END_TEST

struct whys {
    struct kube_fx *f;
    const char *ids[2];
    int want; /* 1: both stored; 0: both gone */
};

static int whys_are(void *ctx)
{
    struct whys *w = ctx;
    MDB_txn *txn = NULL;
    int n = 0;
    if (store_txn_begin(w->f->u.st, STORE_READ, &txn, NULL) < 0)
        return 0;
    for (int i = 0; i < 2; i++) {
        json_t *doc = NULL;
        n += store_doc_get(txn, STORE_DB_WHY, w->ids[i], &doc, NULL) == 0;
        json_decref(doc);
    }
    store_txn_abort(&txn);
    return n == (w->want ? 2 : 0);
}

/* Jobs the API server deletes (a gang: its pods, then its PodGroup; a lone pod) take their
 * why documents with them in the mirror's store. */
START_TEST(test_kube_deleted_jobs_drop_their_why)
{
    struct kube_fx f;
    fx_open(&f, 0, NULL);
    kube_fx_gang(&f, "podgroups", "g", 2, 2, "64");
    json_t *big = kube_test_pod("big", NULL, NULL, NULL, "64");
    kube_testapi_apply(&f.api, "pods", big);
    json_decref(big);
    mirror_start(&f, NULL);
    expect_pod(&f, "default/g-1", "");
    expect_pod(&f, "default/big", "");
    struct whys w = {&f, {"default/g", "default/big"}, 1};
    for (int i = 0; i < 100 && !whys_are(&w); i++) /* the PodGroup may come after its pods */
        json_decref(sched_util_cycle(&f.u, 1000 + i * 61000LL));
    ck_assert_msg(whys_are(&w), "no why documents of the failing jobs");
    kube_testapi_delete(&f.api, "pods", "default/g-0");
    kube_testapi_delete(&f.api, "pods", "default/g-1");
    kube_testapi_delete(&f.api, "podgroups", "default/g");
    kube_testapi_delete(&f.api, "pods", "default/big");
    w.want = 0;
    ck_assert_msg(kube_test_wait(whys_are, &w, 30000), "why documents of deleted jobs left");
    char why[512];
    ck_assert_msg(why_store_check(f.u.s, f.u.st, why, sizeof(why)) == 0, "%s", why);
    fx_close(&f);
}
END_TEST

START_TEST(test_kube_missing_crd_skipped)
{
    struct kube_fx f;
    fx_open(&f, 0, NULL);
    json_t *b = json_pack("{s:s,s:b}", "resource", "podgroups", "installed", 0);
    json_decref(kube_testapi_control(&f.api, "crd", b));
    mirror_start(&f, NULL);
    json_t *s = source(&f, "podgroups");
    ck_assert_str_eq(json_string_value(json_object_get(s, "state")), "missing");
    ck_assert(json_is_false(json_object_get(s, "synced")));
    json_decref(s);
    expect_pod(&f, "default/p1", "n1");
    json_decref(b);
    fx_close(&f);
}
END_TEST

struct class_want {
    struct kube_fx *f;
    const char *name;
    json_int_t value; /* -1: absent */
};

static int has_class(void *ctx)
{
    struct class_want *w = ctx;
    struct err err = ERR_INIT;
    MDB_txn *txn = NULL;
    json_t *pc = NULL;
    if (store_txn_begin(w->f->u.st, STORE_READ, &txn, &err) == 0)
        store_get(txn, MODEL_PRIORITYCLASS, w->name, &pc, &err);
    store_txn_abort(&txn);
    int ok = w->value < 0 ? pc == NULL
                          : pc && json_integer_value(json_object_get(pc, "value")) == w->value;
    json_decref(pc);
    return ok;
}

static void expect_class(struct kube_fx *f, const char *name, json_int_t value)
{
    struct class_want w = {f, name, value};
    ck_assert_msg(kube_test_wait(has_class, &w, 10000), "priorityclass '%s' not as expected", name);
}

/* PriorityClasses are listed and watched like the other kinds, and a mirrored PodGroup
 * takes its class's value as its job's priority. */
START_TEST(test_kube_priorityclasses_mirrored)
{
    struct kube_fx f;
    fx_open(&f, 0, NULL);
    json_t *pc = json_pack("{s:{s:s},s:i}", "metadata", "name", "batch", "value", 100);
    kube_testapi_apply(&f.api, "priorityclasses", pc);
    json_decref(pc);
    mirror_start(&f, NULL);
    expect_class(&f, "batch", 100);
    json_t *s = source(&f, "priorityclasses");
    ck_assert(json_is_true(json_object_get(s, "synced")));
    json_decref(s);

    pc = json_pack("{s:{s:s},s:i,s:s}", "metadata", "name", "later", "value", 7, "preemptionPolicy",
                   "Never");
    kube_testapi_apply(&f.api, "priorityclasses", pc);
    json_decref(pc);
    json_t *pg = json_pack("{s:{s:s,s:s},s:{s:i,s:s}}", "metadata", "name", "g", "namespace",
                           "default", "spec", "minMember", 1, "priorityClassName", "later");
    kube_testapi_apply(&f.api, "podgroups", pg);
    json_decref(pg);
    kube_testapi_delete(&f.api, "priorityclasses", "batch");
    expect_class(&f, "later", 7);
    expect_class(&f, "batch", -1);
    struct err err = ERR_INIT;
    json_t *job = NULL;
    for (int i = 0; i < 200 && sched_job(f.u.s, "default/g", &job, &err) < 0; i++)
        usleep(50000);
    ck_assert_msg(job, "%s", err.msg);
    ck_assert_int_eq(json_integer_value(json_object_get(job, "priority")), 7);
    json_decref(job);
    fx_close(&f);
}
END_TEST

START_TEST(test_kube_malformed_and_slow_survived)
{
    struct kube_fx f;
    fx_open(&f, 0, NULL);
    json_t *b = json_pack("{s:i}", "ms", 300);
    json_decref(kube_testapi_control(&f.api, "slow", b)); /* every request is slow */
    mirror_start(&f, NULL);
    json_decref(b);
    b = json_pack("{s:i}", "ms", 0);
    json_decref(kube_testapi_control(&f.api, "slow", b));
    json_decref(b);
    b = json_pack("{s:i}", "count", 1);
    json_decref(kube_testapi_control(&f.api, "malformed", b));
    json_t *p8 = kube_test_pod("p8", NULL, "n1", NULL, "1");
    kube_testapi_apply(&f.api, "pods", p8);
    expect_pod(&f, "default/p8", "n1");
    json_t *s = source(&f, "pods");
    ck_assert_int_ge(json_integer_value(json_object_get(s, "errors")), 1);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(s, "lastError")), "malformed"));
    json_decref(s);
    json_decref(b);
    json_decref(p8);
    fx_close(&f);
}
END_TEST

static void apply_gang(struct kube_fx *f)
{
    json_t *pg = json_pack("{s:{s:s,s:s},s:{s:i}}", "metadata", "name", "g", "namespace", "default",
                           "spec", "minMember", 2);
    kube_testapi_apply(&f->api, "podgroups", pg);
    json_decref(pg);
    for (int i = 0; i < 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), "g-%d", i);
        json_t *p = kube_test_pod(name, "muster", NULL, "g", "3");
        kube_testapi_apply(&f->api, "pods", p);
        json_decref(p);
    }
}

static const char *api_node(struct kube_fx *f, const char *key, char *buf, size_t n)
{
    json_t *o = kube_testapi_object(&f->api, "pods", key);
    const char *node = json_string_value(json_object_get(json_object_get(o, "spec"), "nodeName"));
    snprintf(buf, n, "%s", node ? node : "");
    json_decref(o);
    return buf;
}

START_TEST(test_kube_bind_gang_end_to_end)
{
    struct kube_fx f;
    struct err err = ERR_INIT;
    fx_open(&f, 0, NULL);
    apply_gang(&f);
    json_t *other = kube_test_pod("other", "default-scheduler", NULL, NULL, "1");
    kube_testapi_apply(&f.api, "pods", other);
    mirror_start(&f, "muster");
    expect_pod(&f, "default/other", "-"); /* another scheduler's pending pod is not ours */
    expect_pod(&f, "default/g-0", NULL);
    json_decref(sched_util_cycle(&f.u, 1000));
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    char b0[64], b1[64];
    ck_assert_str_ne(api_node(&f, "default/g-0", b0, sizeof(b0)), "");
    ck_assert_str_ne(api_node(&f, "default/g-1", b1, sizeof(b1)), "");
    ck_assert_str_ne(b0, b1); /* 3 cpu each on 4-cpu nodes */
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", "default/g"), 2);
    ck_assert_int_eq(counter(&f, "bindings"), 2);
    expect_pod(&f, "default/g-0", b0); /* the watch confirms */
    json_decref(other);
    fx_close(&f);
}
END_TEST

/* Placement rules hold in bind mode as in simulate: pods whose required anti-affinity
 * keeps them apart are bound to different nodes though binpack would stack them, and a
 * required node affinity is bound where it points, through the API server's binding. */
START_TEST(test_kube_bind_rules_end_to_end)
{
    struct kube_fx f;
    struct err err = ERR_INIT;
    fx_open(&f, 0, NULL);
    const char *names[] = {"w-0", "w-1", "pinned"};
    for (int i = 0; i < 3; i++) {
        json_t *pod = kube_test_pod(names[i], "muster", NULL, NULL, "1");
        json_t *spec = json_object_get(pod, "spec");
        if (i < 2) {
            json_object_set_new(json_object_get(pod, "metadata"), "labels",
                                json_pack("{s:s}", "app", "w"));
            json_object_set_new(spec, "affinity",
                                json_pack("{s:{s:[{s:{s:{s:s}}, s:s}]}}", "podAntiAffinity",
                                          "requiredDuringSchedulingIgnoredDuringExecution",
                                          "labelSelector", "matchLabels", "app", "w", "topologyKey",
                                          "kubernetes.io/hostname"));
        } else {
            json_object_set_new(spec, "affinity",
                                json_pack("{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}", "nodeAffinity",
                                          "requiredDuringSchedulingIgnoredDuringExecution",
                                          "nodeSelectorTerms", "matchFields", "key",
                                          "metadata.name", "operator", "In", "values", "n2"));
        }
        kube_testapi_apply(&f.api, "pods", pod);
        json_decref(pod);
    }
    mirror_start(&f, "muster");
    expect_pod(&f, "default/pinned", NULL);
    json_decref(sched_util_cycle(&f.u, 1000));
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    char b0[64], b1[64], bp[64];
    ck_assert_str_ne(api_node(&f, "default/w-0", b0, sizeof(b0)), "");
    ck_assert_str_ne(api_node(&f, "default/w-1", b1, sizeof(b1)), "");
    ck_assert_str_ne(b0, b1);
    ck_assert_str_eq(api_node(&f, "default/pinned", bp, sizeof(bp)), "n2"); /* binpack: n1 */
    fx_close(&f);
}
END_TEST

START_TEST(test_kube_bind_refused_reverts)
{
    struct kube_fx f;
    struct err err = ERR_INIT;
    fx_open(&f, 0, NULL);
    json_t *p = kube_test_pod("solo", "muster", NULL, NULL, "1");
    kube_testapi_apply(&f.api, "pods", p);
    mirror_start(&f, "muster");
    expect_pod(&f, "default/solo", "");
    json_t *b = json_pack("{s:i,s:i}", "count", 1, "code", 403);
    json_decref(kube_testapi_control(&f.api, "fail-binding", b));
    json_decref(sched_util_cycle(&f.u, 1000));
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    char buf[64];
    ck_assert_str_eq(api_node(&f, "default/solo", buf, sizeof(buf)), "");
    char *node = sched_util_node_of(&f.u, "default/solo");
    ck_assert_str_eq(node, ""); /* back to pending, as the API server has it */
    free(node);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bind-refused", NULL), 1);
    ck_assert_int_eq(counter(&f, "bindRefused"), 1);
    /* a 5xx is retried until it is accepted */
    json_decref(b);
    b = json_pack("{s:i,s:i}", "count", 2, "code", 500);
    json_decref(kube_testapi_control(&f.api, "fail-binding", b));
    json_decref(sched_util_cycle(&f.u, 2000));
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    ck_assert_str_ne(api_node(&f, "default/solo", buf, sizeof(buf)), "");
    ck_assert_int_ge(counter(&f, "writebackFailures"), 2);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", NULL), 1);
    json_decref(b);
    json_decref(p);
    fx_close(&f);
}
END_TEST

START_TEST(test_kube_evict_through_api)
{
    struct kube_fx f;
    struct err err = ERR_INIT;
    fx_open(&f, 0, NULL);
    json_t *v = kube_test_pod("victim", "muster", "n1", NULL, "1");
    kube_testapi_apply(&f.api, "pods", v);
    mirror_start(&f, "muster");
    expect_pod(&f, "default/victim", "n1");
    struct kube_http *h = kube__http_new(f.k->conn, NULL);
    json_t *rec = json_pack("{s:s,s:s,s:s,s:s,s:[s],s:[s]}", "kind", "preempted", "job",
                            "default/victim", "preemptor", "default/hi", "triggerPod",
                            "default/hi-0", "pods", "default/victim", "nodes", "n1");
    json_t *b = json_pack("{s:i}", "count", 1);
    json_decref(kube_testapi_control(&f.api, "evict-429", b));
    ck_assert_msg(kube__bind_record(f.k, h, 1000, rec, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "evict-refused", NULL), 1);
    json_t *o = kube_testapi_object(&f.api, "pods", "default/victim");
    ck_assert_ptr_nonnull(o); /* the PodDisruptionBudget's answer is respected */
    json_t *c = json_array_get(json_object_get(json_object_get(o, "status"), "conditions"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(c, "type")), "DisruptionTarget");
    ck_assert_str_eq(json_string_value(json_object_get(c, "reason")), "PreemptionByScheduler");
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(c, "message")),
                                 "preemptor: default/hi, triggerpod: default/hi-0"));
    json_decref(o);
    ck_assert_msg(kube__bind_record(f.k, h, 1001, rec, &err) == 0, "%s", err.msg);
    ck_assert_ptr_null(kube_testapi_object(&f.api, "pods", "default/victim"));
    ck_assert_int_eq(sched_util_audit_count(&f.u, "evict-acked", NULL), 1);
    expect_pod(&f, "default/victim", "-");
    ck_assert_int_eq(counter(&f, "evictRefused"), 1);
    kube__http_free(h);
    json_decref(rec);
    json_decref(b);
    json_decref(v);
    fx_close(&f);
}
END_TEST

START_TEST(test_kube_connection_config)
{
    char dir[] = "/tmp/kubecfg-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char *path = xasprintf("%s/config", dir);
    FILE *fp = fopen(path, "w");
    /* "aGVsbG8=" is "hello" */
    fputs("apiVersion: v1\nkind: Config\ncurrent-context: a\nclusters:\n"
          "- name: ca\n  cluster:\n    server: https://10.0.0.1:6443/\n"
          "    certificate-authority-data: aGVsbG8=\n"
          "- name: cb\n  cluster:\n    server: https://b.example:443\n"
          "    insecure-skip-tls-verify: true\n"
          "contexts:\n- name: a\n  context: {cluster: ca, user: ua, namespace: team}\n"
          "- name: b\n  context: {cluster: cb, user: ub}\n"
          "users:\n- name: ua\n  user:\n    client-certificate-data: aGVsbG8=\n"
          "    client-key: keys/k.pem\n- name: ub\n  user:\n    token: tok\n",
          fp);
    fclose(fp);
    struct kube_conn *c = NULL;
    struct err err = ERR_INIT;
    ck_assert_msg(kube__conn_from_kubeconfig(path, NULL, &c, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(c->server, "https://10.0.0.1:6443");
    ck_assert_int_eq((int)c->ca_len, 5);
    ck_assert_str_eq(c->ca_data, "hello");
    ck_assert_str_eq(c->cert_data, "hello");
    char *key = xasprintf("%s/keys/k.pem", dir);
    ck_assert_str_eq(c->key_file, key);
    ck_assert_str_eq(c->ns, "team");
    kube__conn_free(c);
    ck_assert_msg(kube__conn_from_kubeconfig(path, "b", &c, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(c->insecure, 1);
    ck_assert_str_eq(c->token, "tok");
    kube__conn_free(c);
    ck_assert_int_eq(kube__conn_from_kubeconfig(path, "nope", &c, &err), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "'nope'"));
    /* in-cluster: service account files and the service environment */
    char *tok = xasprintf("%s/token", dir);
    fp = fopen(tok, "w");
    free(tok);
    fputs("satoken\n", fp);
    fclose(fp);
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    ck_assert_msg(kube__conn_in_cluster(dir, &c, &err) == 0, "%s", err.msg);
    ck_assert_str_eq(c->server, "https://10.96.0.1:443");
    ck_assert_str_eq(c->token, "satoken");
    kube__conn_free(c);
    unsetenv("KUBERNETES_SERVICE_HOST");
    ck_assert_int_eq(kube__conn_in_cluster(dir, &c, &err), ERR_NOT_FOUND);
    free(key);
    free(path);
}
END_TEST

START_TEST(test_kube_bad_token_reported)
{
    struct kube_fx f;
    fx_open(&f, 0, "right");
    FILE *fp = fopen(f.api.kubeconfig, "r+");
    /* rewrite the token in place: same length, wrong value */
    char buf[4096];
    size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
    buf[n] = '\0';
    char *t = strstr(buf, "token: right");
    memcpy(t + 7, "wrong", 5);
    rewind(fp);
    fwrite(buf, 1, n, fp);
    fclose(fp);
    struct kube_options o = KUBE_OPTIONS_INIT;
    struct err err = ERR_INIT;
    o.kubeconfig = f.api.kubeconfig;
    o.backoff_min_ms = 50;
    ck_assert_int_eq(kube_open(f.u.s, f.u.st, &o, &f.k, &err), 0);
    ck_assert_int_eq(kube_start(f.k, &err), 0);
    ck_assert_int_eq(kube_wait_synced(f.k, 1000, &err), ERR_UNAVAILABLE);
    /* each source lists on its own; under load the nodes list may fail after the wait ends */
    const char *last = NULL;
    json_t *s = NULL;
    for (int i = 0; i < 200 && !last; i++) {
        json_decref(s);
        s = source(&f, "nodes");
        last = json_string_value(json_object_get(s, "lastError"));
        if (!last)
            usleep(50000);
    }
    ck_assert_msg(last, "the nodes source reported no error");
    ck_assert_ptr_nonnull(strstr(last, "401"));
    json_decref(s);
    fx_close(&f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kube");
    TCase *tc = tcase_create("kube");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_kube_connection_config);
    tcase_add_test(tc, test_kube_initial_sync);
    tcase_add_test(tc, test_kube_unsupported_field_blocks_the_job);
    tcase_add_test(tc, test_kube_fractional_gpu_blocks_the_job);
    tcase_add_test(tc, test_kube_live_changes);
    tcase_add_test(tc, test_kube_deleted_jobs_drop_their_why);
    tcase_add_test(tc, test_kube_priorityclasses_mirrored);
    tcase_add_test(tc, test_kube_reconnect_resume);
    tcase_add_test(tc, test_kube_relist_after_410);
    tcase_add_test(tc, test_kube_restart_resume);
    tcase_add_test(tc, test_kube_restart_after_compaction_relists);
    tcase_add_test(tc, test_kube_missing_crd_skipped);
    tcase_add_test(tc, test_kube_malformed_and_slow_survived);
    tcase_add_test(tc, test_kube_bad_token_reported);
    tcase_add_test(tc, test_kube_bind_gang_end_to_end);
    tcase_add_test(tc, test_kube_bind_rules_end_to_end);
    tcase_add_test(tc, test_kube_bind_refused_reverts);
    tcase_add_test(tc, test_kube_evict_through_api);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
