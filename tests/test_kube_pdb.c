/*
 * test_kube_pdb.c - PodDisruptionBudgets against tests/kubeapi/server.py: mirrored with the
 * status its disruption controller computes (and follows as pods change); in bind mode a
 * preemption spares the job a budget protects, the ledger says 0 violations and the eviction
 * goes through; when every candidate violates, the fewest violations are chosen, the ledger
 * counts them and the Eviction API answers its real 429, which muster records.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "err.h"
#include "kube.h"
#include "kube_fx.h"
#include "kube_support.h"
#include "sched_util.h"
#include "check_run.h"

static void fx_open(struct kube_fx *f)
{
    memset(f, 0, sizeof(*f));
    struct sched_options o = {.mirrored = 1}; /* as musterd runs with a kubeconfig */
    kube_testapi_start(&f->api, 0, NULL);
    sched_util_open(&f->u, &o);
    json_t *objs[] = {kube_test_node("n1", "4", "b0"), kube_test_node("n2", "4", "b1")};
    for (int i = 0; i < 2; i++) {
        kube_testapi_apply(&f->api, "nodes", objs[i]);
        json_decref(objs[i]);
    }
}

static void mirror_start(struct kube_fx *f)
{
    struct kube_options o;
    kube_fx_options(f, &o);
    o.scheduler_name = "muster";
    kube_fx_mirror(f, &o);
}

static void fx_close(struct kube_fx *f)
{
    kube_close(f->k);
    sched_util_close(&f->u);
    kube_testapi_stop(&f->api);
}

/* A running pod with a priority and an app label (app NULL: none), on node. */
static void pod(struct kube_fx *f, const char *name, int prio, const char *node, const char *cpu,
                const char *app)
{
    json_t *p = kube_test_pod(name, node ? NULL : "muster", node, NULL, cpu);
    json_object_set_new(json_object_get(p, "spec"), "priority", json_integer(prio));
    if (app)
        json_object_set_new(json_object_get(json_object_get(p, "metadata"), "labels"), "app",
                            json_string(app));
    kube_testapi_apply(&f->api, "pods", p);
    json_decref(p);
}

/* A budget over app=<app> with minAvailable or maxUnavailable (field) n. */
static void budget(struct kube_fx *f, const char *name, const char *app, const char *field, int n)
{
    json_t *b =
        json_pack("{s:{s:s,s:s},s:{s:i,s:{s:{s:s}}}}", "metadata", "name", name, "namespace",
                  "default", "spec", field, n, "selector", "matchLabels", "app", app);
    kube_testapi_apply(&f->api, "poddisruptionbudgets", b);
    json_decref(b);
}

/* The stored budget's status.disruptionsAllowed, -1 when it is not stored or has none. */
static json_int_t stored_allowed(struct kube_fx *f, const char *key)
{
    MDB_txn *txn = NULL;
    json_t *obj = NULL;
    json_int_t v = -1;
    if (store_txn_begin(f->u.st, STORE_READ, &txn, NULL) == 0 &&
        store_get(txn, MODEL_PDB, key, &obj, NULL) == 0) {
        json_t *a = json_object_get(json_object_get(obj, "status"), "disruptionsAllowed");
        v = json_is_integer(a) ? json_integer_value(a) : -1;
    }
    store_txn_abort(&txn);
    json_decref(obj);
    return v;
}

struct want_allowed {
    struct kube_fx *f;
    const char *key;
    json_int_t allowed;
};

static int allowed_is(void *ctx)
{
    struct want_allowed *w = ctx;
    return stored_allowed(w->f, w->key) == w->allowed;
}

static void expect_allowed(struct kube_fx *f, const char *key, json_int_t allowed)
{
    struct want_allowed w = {f, key, allowed};
    ck_assert_msg(kube_test_wait(allowed_is, &w, 10000),
                  "budget '%s': stored disruptionsAllowed %lld, expected %lld", key,
                  (long long)stored_allowed(f, key), (long long)allowed);
}

static int pod_stored(struct kube_fx *f, const char *key)
{
    char *node = sched_util_node_of(&f->u, key);
    int ok = node != NULL;
    free(node);
    return ok;
}

struct want_pod {
    struct kube_fx *f;
    const char *key;
};

static int pod_present(void *ctx)
{
    struct want_pod *w = ctx;
    return pod_stored(w->f, w->key);
}

/* The one ledger entry (new). */
static json_t *only_entry(struct kube_fx *f)
{
    json_t *entries = sched_util_ledger(&f->u, NULL, NULL, NULL);
    ck_assert_uint_eq(json_array_size(entries), 1);
    json_t *e = json_incref(json_array_get(entries, 0));
    json_decref(entries);
    return e;
}

static const char *victim(json_t *e, size_t i)
{
    return json_string_value(
        json_object_get(json_array_get(json_object_get(e, "victims"), i), "pod"));
}

START_TEST(test_kube_pdb_mirrored_with_controller_status)
{
    struct kube_fx f;
    fx_open(&f);
    pod(&f, "db-0", 10, "n1", "1", "db");
    pod(&f, "db-1", 10, "n1", "1", "db");
    budget(&f, "db", "db", "minAvailable", 1);
    mirror_start(&f);
    expect_allowed(&f, "default/db", 1); /* 2 healthy, 1 desired */
    json_t *src = NULL, *doc = kube_sources_json(f.k), *e;
    size_t i;
    json_array_foreach(json_object_get(doc, "sources"), i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "resource")), "poddisruptionbudgets"))
            src = e;
    }
    ck_assert_ptr_nonnull(src);
    ck_assert_str_eq(json_string_value(json_object_get(src, "kind")), "PodDisruptionBudget");
    ck_assert_str_eq(json_string_value(json_object_get(src, "apiVersion")), "policy/v1");
    ck_assert(json_is_true(json_object_get(src, "synced")));
    json_decref(doc);
    /* a pod goes: the controller recomputes, the watch brings it */
    kube_testapi_delete(&f.api, "pods", "default/db-1");
    expect_allowed(&f, "default/db", 0);
    /* the budget goes */
    kube_testapi_delete(&f.api, "poddisruptionbudgets", "default/db");
    expect_allowed(&f, "default/db", -1);
    fx_close(&f);
}
END_TEST

/* db-0 (priority 10) is protected (minAvailable 1 of 1: 0 disruptions allowed), web-0 (20) is
 * not: hi takes web-0, the ledger says 0 violations, the API server evicts it. */
START_TEST(test_kube_pdb_preemption_spares_the_protected_job)
{
    struct kube_fx f;
    struct err err = ERR_INIT;
    fx_open(&f);
    pod(&f, "db-0", 10, "n1", "4", "db");
    pod(&f, "web-0", 20, "n2", "4", "web");
    budget(&f, "db", "db", "minAvailable", 1);
    pod(&f, "hi", 100, NULL, "4", NULL);
    mirror_start(&f);
    expect_allowed(&f, "default/db", 0);
    json_decref(sched_util_cycle(&f.u, 1000));
    json_t *e = only_entry(&f);
    ck_assert_uint_eq(json_array_size(json_object_get(e, "victims")), 1);
    ck_assert_str_eq(victim(e, 0), "default/web-0");
    ck_assert_int_eq(json_integer_value(json_object_get(e, "pdbViolations")), 0);
    ck_assert_uint_eq(json_array_size(json_object_get(e, "pdbsViolated")), 0);
    json_decref(e);
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "evict-acked", NULL), 1);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "evict-refused", NULL), 0);
    json_t *o = kube_testapi_object(&f.api, "pods", "default/web-0");
    ck_assert_ptr_null(o);
    o = kube_testapi_object(&f.api, "pods", "default/db-0");
    ck_assert_ptr_nonnull(o);
    json_decref(o);
    fx_close(&f);
}
END_TEST

/* Every candidate violates: n1 frees room by evicting db-0 and db-1 (2 violations of db), n2
 * by evicting web-0 (1 of web). muster picks web-0 and the ledger counts 1; the Eviction API
 * refuses it with its 429 (the budget allows none), muster records the refusal and keeps the
 * pod as the API server has it. */
START_TEST(test_kube_pdb_fewest_violations_and_the_real_429)
{
    struct kube_fx f;
    struct err err = ERR_INIT;
    fx_open(&f);
    pod(&f, "db-0", 10, "n1", "2", "db");
    pod(&f, "db-1", 10, "n1", "2", "db");
    pod(&f, "web-0", 20, "n2", "4", "web");
    budget(&f, "db", "db", "maxUnavailable", 0);
    budget(&f, "web", "web", "minAvailable", 1);
    pod(&f, "hi", 100, NULL, "4", NULL);
    mirror_start(&f);
    expect_allowed(&f, "default/db", 0);
    expect_allowed(&f, "default/web", 0);
    json_decref(sched_util_cycle(&f.u, 1000));
    json_t *e = only_entry(&f);
    ck_assert_uint_eq(json_array_size(json_object_get(e, "victims")), 1);
    ck_assert_str_eq(victim(e, 0), "default/web-0");
    ck_assert_int_eq(json_integer_value(json_object_get(e, "pdbViolations")), 1);
    json_t *names = json_object_get(e, "pdbsViolated");
    ck_assert_uint_eq(json_array_size(names), 1);
    ck_assert_str_eq(json_string_value(json_array_get(names, 0)), "default/web");
    json_decref(e);
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "evict-refused", NULL), 1);
    json_t *audit = sched_util_audit(&f.u), *rec, *refused = NULL;
    size_t i;
    json_array_foreach(audit, i, rec)
    {
        const char *kind = json_string_value(json_object_get(rec, "kind"));
        if (kind && !strcmp(kind, "evict-refused"))
            refused = rec;
    }
    ck_assert_ptr_nonnull(refused);
    char *text = json_dumps(refused, JSON_COMPACT);
    ck_assert_msg(strstr(text, "429") && strstr(text, "violate the pod's disruption budget"), "%s",
                  text);
    free(text);
    json_decref(audit);
    json_t *o = kube_testapi_object(&f.api, "pods", "default/web-0");
    ck_assert_ptr_nonnull(o); /* the budget held */
    json_decref(o);
    struct want_pod w = {&f, "default/web-0"};
    ck_assert(kube_test_wait(pod_present, &w, 10000));
    fx_close(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube_pdb");
    TCase *tc = tcase_create("pdb");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_kube_pdb_mirrored_with_controller_status);
    tcase_add_test(tc, test_kube_pdb_preemption_spares_the_protected_job);
    tcase_add_test(tc, test_kube_pdb_fewest_violations_and_the_real_429);
    suite_add_tcase(s, tc);
    return check_run(s);
}
