/*
 * test_kube_queue.c - the mirror and Volcano's objects, against tests/kubeapi/server.py:
 * Queues listed, watched and deleted; Volcano PodGroups (a second source of kind PodGroup)
 * mirrored as jobs in their queue, their pods joined by the group-name annotation; a relist
 * of one PodGroup source leaves the other source's PodGroups alone.
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

#define VOLCANO_PODGROUPS "podgroups.scheduling.volcano.sh"

static void fx_open(struct kube_fx *f)
{
    memset(f, 0, sizeof(*f));
    struct sched_options o = {.mirrored = 1}; /* as musterd runs with a kubeconfig */
    kube_testapi_start(&f->api, 0, NULL);
    sched_util_open(&f->u, &o);
    json_t *n1 = kube_test_node("n1", "8", "b0");
    kube_testapi_apply(&f->api, "nodes", n1);
    json_decref(n1);
}

static void mirror_start(struct kube_fx *f)
{
    struct kube_options o;
    kube_fx_options(f, &o);
    o.page_size = 2; /* every list is paginated */
    kube_fx_mirror(f, &o);
}

static void fx_close(struct kube_fx *f)
{
    kube_close(f->k);
    sched_util_close(&f->u);
    kube_testapi_stop(&f->api);
}

/* A stored object (new) or NULL. */
static json_t *stored(struct kube_fx *f, enum model_kind kind, const char *key)
{
    MDB_txn *txn = NULL;
    json_t *obj = NULL;
    if (store_txn_begin(f->u.st, STORE_READ, &txn, NULL) == 0)
        store_get(txn, kind, key, &obj, NULL);
    store_txn_abort(&txn);
    return obj;
}

struct want {
    struct kube_fx *f;
    enum model_kind kind;
    const char *key;
    int present;
};

static int as_wanted(void *ctx)
{
    struct want *w = ctx;
    json_t *obj = stored(w->f, w->kind, w->key);
    int ok = (obj != NULL) == w->present;
    json_decref(obj);
    return ok;
}

static void expect(struct kube_fx *f, enum model_kind kind, const char *key, int present)
{
    struct want w = {f, kind, key, present};
    ck_assert_msg(kube_test_wait(as_wanted, &w, 10000), "%s '%s' should be %s",
                  model_kind_name(kind), key, present ? "stored" : "gone");
}

static json_t *source(struct kube_fx *f, const char *resource)
{
    json_t *doc = kube_sources_json(f->k), *e, *found = NULL;
    size_t i;
    json_array_foreach(json_object_get(doc, "sources"), i, e)
    {
        if (!strcmp(json_string_value(json_object_get(e, "resource")), resource))
            found = json_incref(e);
    }
    json_decref(doc);
    return found;
}

static json_t *queue_obj(const char *name, int weight, const char *parent)
{
    json_t *q = json_pack("{s:{s:s},s:{s:i}}", "metadata", "name", name, "spec", "weight", weight);
    if (parent)
        json_object_set_new(json_object_get(q, "spec"), "parent", json_string(parent));
    return q;
}

/* A Queue created on the API server appears in the store (as Volcano's apiVersion) and in
 * the scheduler's queue tree, follows its changes and goes when the API server deletes it;
 * a parent that does not exist is not refused (the API server admitted it). */
START_TEST(test_kube_queue_mirrored)
{
    struct kube_fx f;
    fx_open(&f);
    json_t *q[] = {queue_obj("research", 3, NULL), queue_obj("team", 1, "research")};
    for (int i = 0; i < 2; i++)
        kube_testapi_apply(&f.api, "queues", q[i]);
    mirror_start(&f);
    json_t *research = stored(&f, MODEL_QUEUE, "research");
    ck_assert_ptr_nonnull(research);
    ck_assert_str_eq(json_string_value(json_object_get(research, "apiVersion")),
                     "scheduling.volcano.sh/v1beta1");
    ck_assert_str_eq(json_string_value(json_object_get(research, "kind")), "Queue");
    ck_assert_ptr_null(json_object_get(json_object_get(research, "metadata"), "managedFields"));
    json_decref(research);
    json_t *dump = sched_view_dump(f.u.s), *queues = json_object_get(dump, "queues");
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(queues, "research"), "weight")), 3);
    ck_assert_str_eq(sched_util_str2(queues, "team", "parent"), "research");
    json_decref(dump);
    json_t *s = source(&f, "queues");
    ck_assert(json_is_true(json_object_get(s, "synced")));
    ck_assert_str_eq(json_string_value(json_object_get(s, "kind")), "Queue");
    ck_assert_str_eq(json_string_value(json_object_get(s, "apiVersion")),
                     "scheduling.volcano.sh/v1beta1");
    json_decref(s);

    /* live: a new queue naming a parent that does not exist, then deletes */
    json_t *orphan = queue_obj("orphan", 2, "ghost");
    kube_testapi_apply(&f.api, "queues", orphan);
    expect(&f, MODEL_QUEUE, "orphan", 1);
    kube_testapi_delete(&f.api, "queues", "team");
    expect(&f, MODEL_QUEUE, "team", 0);
    kube_testapi_delete(&f.api, "queues", "research");
    expect(&f, MODEL_QUEUE, "research", 0);
    dump = sched_view_dump(f.u.s);
    ck_assert_ptr_null(json_object_get(json_object_get(dump, "queues"), "research"));
    json_decref(dump);
    json_decref(orphan);
    for (int i = 0; i < 2; i++)
        json_decref(q[i]);
    fx_close(&f);
}
END_TEST

/* A pod of Volcano's: in the PodGroup named by scheduling.k8s.io/group-name. */
static json_t *volcano_pod(const char *name, const char *group)
{
    json_t *p = kube_test_pod(name, NULL, NULL, NULL, "1");
    json_object_set_new(json_object_get(p, "metadata"), "annotations",
                        json_pack("{s:s,s:s}", "scheduling.k8s.io/group-name", group,
                                  "volcano.sh/task-spec", "worker"));
    return p;
}

static int relisted_twice(void *ctx)
{
    json_t *a = source(ctx, "podgroups"), *b = source(ctx, VOLCANO_PODGROUPS);
    int ok = json_integer_value(json_object_get(a, "relists")) >= 2 &&
             json_integer_value(json_object_get(b, "relists")) >= 2;
    json_decref(a);
    json_decref(b);
    return ok;
}

/* source: volcano pkg/scheduler/api/job_info.go getJobID: a pod's job is the PodGroup its
 * scheduling.k8s.io/group-name annotation names, in its namespace. A Volcano PodGroup with
 * spec.queue is mirrored as a gang in that queue; the scheduler-plugins PodGroup beside it
 * stays a job of its own, and neither source's relist or delete touches the other's. */
START_TEST(test_kube_queue_volcano_podgroup_job)
{
    struct kube_fx f;
    fx_open(&f);
    json_t *research = queue_obj("research", 2, NULL);
    json_t *vpg = json_pack("{s:{s:s,s:s},s:{s:i,s:s,s:{s:i}}}", "metadata", "name", "job-a",
                            "namespace", "default", "spec", "minMember", 2, "queue", "research",
                            "minTaskMember", "worker", 2);
    json_t *spg = json_pack("{s:{s:s,s:s},s:{s:i}}", "metadata", "name", "gang", "namespace",
                            "default", "spec", "minMember", 1);
    json_t *w0 = volcano_pod("w-0", "job-a"), *w1 = volcano_pod("w-1", "job-a");
    json_t *g0 = kube_test_pod("g-0", NULL, NULL, "gang", "1");
    kube_testapi_apply(&f.api, "queues", research);
    kube_testapi_apply(&f.api, VOLCANO_PODGROUPS, vpg);
    kube_testapi_apply(&f.api, "podgroups", spg);
    kube_testapi_apply(&f.api, "pods", w0);
    kube_testapi_apply(&f.api, "pods", w1);
    kube_testapi_apply(&f.api, "pods", g0);
    mirror_start(&f);

    json_t *pg = stored(&f, MODEL_PODGROUP, "default/job-a");
    ck_assert_ptr_nonnull(pg);
    ck_assert_str_eq(json_string_value(json_object_get(pg, "apiVersion")),
                     "scheduling.volcano.sh/v1beta1");
    ck_assert_str_eq(sched_util_str2(pg, "spec", "queue"), "research");
    json_decref(pg);
    pg = stored(&f, MODEL_PODGROUP, "default/gang");
    ck_assert_str_eq(json_string_value(json_object_get(pg, "apiVersion")),
                     "scheduling.sigs.k8s.io/v1alpha1");
    json_decref(pg);
    json_t *dump = sched_view_dump(f.u.s), *jobs = json_object_get(dump, "jobs");
    json_t *job = json_object_get(jobs, "g:default/job-a");
    ck_assert_msg(job, "no gang default/job-a in %s", json_dumps(jobs, JSON_COMPACT));
    ck_assert_str_eq(json_string_value(json_object_get(job, "queue")), "research");
    ck_assert_int_eq(json_integer_value(json_object_get(job, "minMember")), 2);
    json_t *pods = json_object_get(job, "pods");
    ck_assert_uint_eq(json_array_size(pods), 2);
    ck_assert_str_eq(json_string_value(json_array_get(pods, 0)), "default/w-0");
    ck_assert_str_eq(json_string_value(json_array_get(pods, 1)), "default/w-1");
    job = json_object_get(jobs, "g:default/gang");
    ck_assert_str_eq(json_string_value(json_object_get(job, "queue")), "default");
    json_decref(dump);
    /* and the queue's own answer lists it (pending: no cycle ran) */
    struct err err = ERR_INIT;
    json_t *rq = NULL;
    ck_assert_msg(sched_queue(f.u.s, "research", &rq, &err) == 0, "%s", err.msg);
    json_t *want = json_pack("[s]", "default/job-a");
    ck_assert_msg(json_equal(json_object_get(rq, "pendingJobs"), want), "%s",
                  json_dumps(rq, JSON_COMPACT));
    json_decref(want);
    json_decref(rq);
    json_t *s = source(&f, VOLCANO_PODGROUPS);
    ck_assert_str_eq(json_string_value(json_object_get(s, "kind")), "PodGroup");
    ck_assert(json_is_true(json_object_get(s, "synced")));
    json_decref(s);

    /* 410 Gone: both PodGroup sources relist; each deletes only what it owns */
    json_decref(kube_testapi_control(&f.api, "compact", NULL));
    ck_assert(kube_test_wait(relisted_twice, &f, 10000));
    json_t *late = kube_test_pod("late", NULL, NULL, NULL, "1");
    kube_testapi_apply(&f.api, "pods", late); /* the watches are back: the pod arrives */
    expect(&f, MODEL_POD, "default/late", 1);
    expect(&f, MODEL_PODGROUP, "default/job-a", 1);
    expect(&f, MODEL_PODGROUP, "default/gang", 1);

    /* a delete on one source leaves the other's PodGroup */
    kube_testapi_delete(&f.api, VOLCANO_PODGROUPS, "default/job-a");
    expect(&f, MODEL_PODGROUP, "default/job-a", 0);
    pg = stored(&f, MODEL_PODGROUP, "default/gang");
    ck_assert_ptr_nonnull(pg);
    json_decref(pg);
    kube_testapi_delete(&f.api, "podgroups", "default/gang");
    expect(&f, MODEL_PODGROUP, "default/gang", 0);

    json_t *all[] = {research, vpg, spg, w0, w1, g0, late};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        json_decref(all[i]);
    fx_close(&f);
}
END_TEST

/* The relist of one PodGroup source after the mirror was down: a Volcano PodGroup deleted
 * meanwhile is found missing by its own source's relist, and the scheduler-plugins one
 * stays (its source resumed from its history). */
START_TEST(test_kube_queue_restart_relists_own_podgroups)
{
    struct kube_fx f;
    fx_open(&f);
    json_t *vpg = json_pack("{s:{s:s,s:s},s:{s:s}}", "metadata", "name", "job-a", "namespace",
                            "default", "spec", "queue", "default");
    json_t *spg = json_pack("{s:{s:s,s:s},s:{s:i}}", "metadata", "name", "gang", "namespace",
                            "default", "spec", "minMember", 1);
    kube_testapi_apply(&f.api, VOLCANO_PODGROUPS, vpg);
    kube_testapi_apply(&f.api, "podgroups", spg);
    mirror_start(&f);
    expect(&f, MODEL_PODGROUP, "default/job-a", 1);
    kube_close(f.k);
    f.k = NULL;
    kube_testapi_delete(&f.api, VOLCANO_PODGROUPS, "default/job-a");
    json_decref(kube_testapi_control(&f.api, "compact", NULL));
    sched_util_reopen(&f.u);
    mirror_start(&f);
    expect(&f, MODEL_PODGROUP, "default/job-a", 0);
    expect(&f, MODEL_PODGROUP, "default/gang", 1);
    json_decref(vpg);
    json_decref(spg);
    fx_close(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("kube_queue");
    TCase *tc = tcase_create("kube_queue");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_kube_queue_mirrored);
    tcase_add_test(tc, test_kube_queue_volcano_podgroup_job);
    tcase_add_test(tc, test_kube_queue_restart_relists_own_podgroups);
    suite_add_tcase(s, tc);
    return check_run(s);
}
