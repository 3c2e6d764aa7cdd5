/*
 * test_view_load.c - the view rebuilt from the store (scheduler/view_load.c): a stored pod
 * that no longer decodes is skipped and the rest load, bound ones on their nodes; the
 * rebuilt view equals the live one of the same applies; its job slots are sized by the
 * jobs, not the pods; a group's pods join one job whatever its name's length; the room
 * reserved for many pods is made present on a helper.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check_run.h"
#include "core.h"
#include "err.h"
#include "scheduler.h"
#include "model.h"
#include "prefault.h"
#include "sched_util.h"
#include "store_util.h"
#include "view.h"

#define NODE                                                                                       \
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"                                           \
    "status: {allocatable: {cpu: \"8\", pods: \"20\"}}\n"
#define POD                                                                                        \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: p%d, namespace: t}\n"                             \
    "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]}\n"

START_TEST(test_view_load_skips_what_no_longer_decodes)
{
    struct sched_util u;
    struct err err = ERR_INIT;
    char buf[512];
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(&u, NODE, 1000));
    for (int i = 0; i < 6; i++) {
        snprintf(buf, sizeof(buf), POD, i);
        json_decref(sched_util_apply(&u, buf, 1000));
    }
    json_decref(sched_util_cycle(&u, 2000)); /* binds them: binding records */
    json_t *live = sched_view_dump(u.s);
    /* a pod the store holds but the decoder refuses (a topology index that is not a
     * number), written beside the others as an older muster might have */
    MDB_txn *txn = store_util_begin(u.st, 1);
    json_t *bad = store_util_pod("t", "p3x", NULL, NULL, NULL);
    json_object_set_new(json_object_get(bad, "metadata"), "annotations",
                        json_pack("{s:s}", MODEL_ANN_TOPOLOGY_INDEX, "abc"));
    ck_assert_msg(store_put(txn, MODEL_POD, bad, NULL, &err) == 0, "%s", err.msg);
    store_util_commit(&txn);
    json_decref(bad);

    sched_util_reopen(&u);
    json_t *rebuilt = sched_view_dump(u.s);
    ck_assert_ptr_null(json_object_get(json_object_get(rebuilt, "pods"), "t/p3x"));
    if (!json_equal(live, rebuilt)) {
        char *a = json_dumps(live, JSON_SORT_KEYS), *b = json_dumps(rebuilt, JSON_SORT_KEYS);
        ck_abort_msg("rebuilt view differs:\nlive:    %s\nrebuilt: %s", a, b);
    }
    ck_assert_int_eq(json_object_size(json_object_get(rebuilt, "pods")), 6);
    const char *node = json_string_value(
        json_object_get(json_object_get(json_object_get(rebuilt, "pods"), "t/p5"), "node"));
    ck_assert_str_eq(node, "n1");
    json_decref(live);
    json_decref(rebuilt);
    sched_util_close(&u);
}
END_TEST

#define GROUP                                                                                      \
    "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"                                \
    "metadata: {name: g%d, namespace: t}\nspec: {minMember: 8}\n"
#define GANG_POD                                                                                   \
    "apiVersion: v1\nkind: Pod\nmetadata: {name: g%d-%d, namespace: t, labels: "                   \
    "{pod-group.scheduling.sigs.k8s.io: g%d}}\n"                                                   \
    "spec: {containers: [{name: c, image: x, resources: {requests: {cpu: \"1\"}}}]}\n"

/* Jobs, not pods, size the rebuilt view's job slots: 4 gangs of 8 with PodGroups, 2
 * groups of 8 named by pods alone, a PodGroup without pods and 3 lone pods are 10 jobs
 * in 51 pods. The store counts the groups its pods name (store_pod_groups_count). */
START_TEST(test_view_load_sizes_jobs_by_jobs)
{
    struct sched_util u;
    struct err err = ERR_INIT;
    char buf[512];
    sched_util_open(&u, NULL);
    for (int g = 0; g < 7; g++) {
        if (g < 4 || g == 6) {
            snprintf(buf, sizeof(buf), GROUP, g);
            json_decref(sched_util_apply(&u, buf, 1000));
        }
        for (int k = 0; g < 6 && k < 8; k++) {
            snprintf(buf, sizeof(buf), GANG_POD, g, k, g);
            json_decref(sched_util_apply(&u, buf, 1000));
        }
    }
    for (int i = 0; i < 3; i++) {
        snprintf(buf, sizeof(buf), POD, i);
        json_decref(sched_util_apply(&u, buf, 1000));
    }
    MDB_txn *txn = store_util_begin(u.st, 0);
    uint64_t groups = 0, grouped = 0;
    ck_assert_msg(store_pod_groups_count(txn, &groups, &grouped, &err) == 0, "%s", err.msg);
    store_txn_abort(&txn);
    ck_assert_uint_eq(groups, 6);
    ck_assert_uint_eq(grouped, 48);
    json_t *live = sched_view_dump(u.s);
    sched_util_reopen(&u);
    json_t *rebuilt = sched_view_dump(u.s);
    ck_assert(json_equal(live, rebuilt));
    ck_assert_int_eq(json_object_size(json_object_get(rebuilt, "jobs")), 10);
    /* at most 3 + 6 + 5 = 14 slots asked for (a PodGroup and its pods' group count twice),
     * not one a pod */
    ck_assert_msg(u.s->v->capjobs <= 16, "%zu job slots for 10 jobs in 51 pods", u.s->v->capjobs);
    ck_assert_msg(u.s->v->job_ix.cap <= 64, "a job map of %zu slots", u.s->v->job_ix.cap);
    json_decref(live);
    json_decref(rebuilt);
    sched_util_close(&u);
}
END_TEST

/* The pods of a group whose name (an annotation, of any length) makes a job key longer
 * than the job map's 512 bytes join one job, found by its id, live and rebuilt alike: a
 * pod's job key made on a decoding thread is cut as every other key of the map. */
START_TEST(test_view_load_long_group_name)
{
    struct sched_util u;
    struct err err = ERR_INIT;
    char group[601], buf[1024];
    memset(group, 'g', 600);
    group[600] = '\0';
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(&u, NODE, 1000));
    /* an apply refuses such a name now (not a PodGroup's): written as an older muster
     * might have, and loaded */
    MDB_txn *txn = store_util_begin(u.st, 1);
    for (int i = 0; i < 2; i++) {
        snprintf(buf, sizeof(buf), "q%d", i);
        json_t *pod = store_util_pod("t", buf, NULL, NULL, NULL);
        json_object_set_new(json_object_get(pod, "metadata"), "annotations",
                            json_pack("{s:s}", MODEL_ANN_GROUP_NAME, group));
        ck_assert_msg(store_put(txn, MODEL_POD, pod, NULL, &err) == 0, "%s", err.msg);
        json_decref(pod);
    }
    store_util_commit(&txn);
    snprintf(buf, sizeof(buf), "t/%s", group);
    for (int round = 0; round < 2; round++) {
        sched_util_reopen(&u);
        int ji = sched__view_gang_job(u.s->v, buf);
        ck_assert_int_ge(ji, 0);
        ck_assert_uint_eq(u.s->v->jobs[ji].npods, 2);
        ck_assert_int_eq(sched__view_job(u.s->v, buf), ji);
    }
    sched_util_close(&u);
}
END_TEST

/* The room reserved for a restart's or a big apply's pods is made present on a helper
 * (prefault.h), all of it by the join: the new slots and the maps' new tables; a small
 * reserve starts no helper. */
START_TEST(test_view_reserve_prefaults)
{
    struct sched_view *v = sched__view_new();
    ck_assert_ptr_null(sched__view_reserve(v, 100, 100));
    struct prefault *pf = sched__view_reserve(v, 20000, 20000);
    ck_assert_ptr_nonnull(pf);
    prefault_join(pf);
    const size_t page = (size_t)getpagesize();
    unsigned char vec[1];
    /* a page well inside the pod slots and one inside the job map's keys */
    const char *at[] = {(const char *)(v->pods + 10000), (const char *)(v->job_ix.keys + 20000)};
    int populates = 1;
    for (size_t i = 0; i < 2; i++) {
        void *pg = (void *)((uintptr_t)at[i] & ~(uintptr_t)(page - 1));
        ck_assert_int_eq(mincore(pg, page, vec), 0);
        populates &= vec[0] & 1;
    }
    /* a kernel before MADV_POPULATE_WRITE makes nothing present: then only the helper's start
     * is checked */
    void *probe = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (madvise(probe, page, MADV_POPULATE_WRITE) == 0)
        ck_assert(populates);
    munmap(probe, page);
    sched__view_free(v);
}
END_TEST

static Suite *view_load_suite(void)
{
    Suite *s = suite_create("view_load");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_view_load_skips_what_no_longer_decodes);
    tcase_add_test(tc, test_view_load_sizes_jobs_by_jobs);
    tcase_add_test(tc, test_view_load_long_group_name);
    tcase_add_test(tc, test_view_reserve_prefaults);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(view_load_suite());
}
