/*
 * test_kube_pgstatus.c - PodGroup status written back in bind mode, field by field
 * through a gang's life, for scheduler-plugins' and Volcano's PodGroups, and not
 * rewritten when unchanged (status PATCH calls counted by the test API server).
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
#include "kube_internal.h"
#include "kube_support.h"
#include "sched_util.h"
#include "store.h"

static void set_phase(struct kube_fx *f, const char *key, const char *phase)
{
    json_t *o = kube_testapi_object(&f->api, "pods", key);
    ck_assert_ptr_nonnull(o);
    json_object_set_new(json_object_get(o, "status"), "phase", json_string(phase));
    json_object_del(json_object_get(o, "metadata"), "managedFields");
    kube_fx_put(f, "pods", o);
}

struct pgwait {
    struct kube_fx *f;
    const char *res, *key;
    json_t *want;
};

static json_t *pg_status(struct kube_fx *f, const char *res, const char *key)
{
    json_t *o = kube_testapi_object(&f->api, res, key);
    json_t *st = json_incref(json_object_get(o, "status"));
    json_decref(o);
    return st;
}

/* 1 when every member of want is the status's (a null one: absent). */
static int pg_status_is(void *ctx)
{
    struct pgwait *w = ctx;
    json_t *st = pg_status(w->f, w->res, w->key), *v;
    const char *k;
    int ok = 1;
    json_object_foreach(w->want, k, v)
    {
        json_t *have = json_object_get(st, k);
        ok &= json_is_null(v) ? !have : json_equal(v, have);
    }
    json_decref(st);
    return ok;
}

/* Waits until the status holds want's members (a whole state: the phase alone may be
 * written a patch before the counts that go with it); takes want. Returns the status (new). */
static json_t *expect_status(struct kube_fx *f, const char *res, const char *key, json_t *want)
{
    struct pgwait w = {f, res, key, want};
    if (!kube_test_wait(pg_status_is, &w, 10000)) {
        json_t *st = pg_status(f, res, key);
        char *s = json_dumps(st, JSON_COMPACT), *x = json_dumps(want, JSON_COMPACT);
        ck_abort_msg("podgroup %s: want a status with %s, have %s", key, x, s);
    }
    json_decref(want);
    return pg_status(f, res, key);
}

/* The sigs PodGroup's phase and counts (and occupiedBy when occ). */
static json_t *sigs_want(const char *phase, int scheduled, int running, int succeeded, int failed,
                         const char *occ)
{
    return json_pack("{s:s,s:i,s:i,s:i,s:i,s:s?}", "phase", phase, "scheduled", scheduled,
                     "running", running, "succeeded", succeeded, "failed", failed, "occupiedBy",
                     occ);
}

/* Volcano's: no "scheduled" member. */
static json_t *volcano_want(const char *phase, int running, int succeeded, int failed)
{
    return json_pack("{s:s,s:n,s:i,s:i,s:i}", "phase", phase, "scheduled", "running", running,
                     "succeeded", succeeded, "failed", failed);
}

/* scheduler-plugins' PodGroup: Pending, Scheduled (bound), Running, Failed (a pod failed),
 * each field checked; an unchanged status is not patched again. */
START_TEST(test_kube_pgstatus_sigs_lifecycle)
{
    struct kube_fx f;
    const char *res = "podgroups", *g = "default/g";
    kube_fx_open(&f);
    kube_fx_gang(&f, res, "g", 2, 2, "1");
    kube_fx_start(&f, 0);
    /* a PodGroup muster reads after it started becomes Pending */
    json_t *pg = kube_testapi_object(&f.api, res, g);
    json_object_set_new(json_object_get(pg, "metadata"), "labels", json_pack("{s:s}", "x", "1"));
    json_object_del(json_object_get(pg, "metadata"), "managedFields");
    kube_fx_put(&f, res, pg); /* a change muster reads after it started */
    json_t *st = expect_status(&f, res, g, sigs_want("Pending", 0, 0, 0, 0, g));
    kube_fx_matches(kube_fx_str(st, "scheduleStartTime"),
                    "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$");
    char *start = xstrdup(kube_fx_str(st, "scheduleStartTime"));
    json_decref(st);
    kube_fx_cycle(&f, 1000);
    st = expect_status(&f, res, g, sigs_want("Scheduled", 2, 0, 0, 0, g));
    ck_assert_str_eq(kube_fx_str(st, "scheduleStartTime"), start); /* set once */
    json_decref(st);
    set_phase(&f, "default/g-0", "Running");
    set_phase(&f, "default/g-1", "Running");
    json_decref(expect_status(&f, res, g, sigs_want("Running", 2, 2, 0, 0, g)));
    /* a change that leaves the status as it is: no patch */
    struct err err = ERR_INIT;
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    long long patches = kube_testapi_stat(&f.api, "status_patch:podgroups");
    json_t *p = kube_testapi_object(&f.api, "pods", "default/g-0");
    json_object_set_new(json_object_get(json_object_get(p, "metadata"), "labels"), "touched",
                        json_string("yes"));
    json_object_del(json_object_get(p, "metadata"), "managedFields");
    kube_fx_put(&f, "pods", p);
    kube_fx_cycle(&f, 2000);
    ck_assert_int_eq(kube_testapi_stat(&f.api, "status_patch:podgroups"), patches);
    /* another writer empties the status after muster's echo arrived: written again, though
     * none of muster's facts changed */
    pg = kube_testapi_object(&f.api, res, g);
    json_object_del(pg, "status");
    json_object_del(json_object_get(pg, "metadata"), "managedFields");
    kube_fx_put(&f, res, pg);
    json_decref(expect_status(&f, res, g, sigs_want("Running", 2, 2, 0, 0, g)));
    ck_assert_int_eq(kube_testapi_stat(&f.api, "status_patch:podgroups"), patches + 1);
    set_phase(&f, "default/g-1", "Failed");
    json_decref(expect_status(&f, res, g, sigs_want("Failed", 2, 1, 0, 1, g)));
    ck_assert_int_eq(kube_fx_counter(&f, "podGroupStatusFailures"), 0);
    free(start);
    kube_fx_close(&f);
}
END_TEST

static int min_member_2(void *ctx)
{
    struct kube_fx *f = ctx;
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

/* Volcano's PodGroup: Inqueue with the Unschedulable condition while the gang is short of
 * members, Running once bound (Scheduled condition), a failed pod counted, Completed when
 * every pod finished. */
START_TEST(test_kube_pgstatus_volcano_lifecycle)
{
    struct kube_fx f;
    const char *res = "podgroups.scheduling.volcano.sh";
    kube_fx_open(&f);
    kube_fx_gang(&f, res, "v", 3, 2, "1"); /* minMember 3, two pods */
    kube_fx_start(&f, 0);
    kube_fx_cycle(&f, 1000);
    json_t *st = expect_status(&f, res, "default/v", volcano_want("Inqueue", 0, 0, 0));
    json_t *conds = json_object_get(st, "conditions");
    ck_assert_int_eq(json_array_size(conds), 1);
    json_t *c = json_array_get(conds, 0);
    ck_assert_str_eq(kube_fx_str(c, "type"), "Unschedulable");
    ck_assert_str_eq(kube_fx_str(c, "status"), "True");
    ck_assert_str_eq(kube_fx_str(c, "reason"), "NotEnoughResources");
    json_t *why = sched_util_why(&f.u, "default/v");
    char want[512];
    snprintf(want, sizeof(want), "3/2 tasks in gang unschedulable: %s",
             kube_fx_str(json_object_get(why, "primary"), "message"));
    ck_assert_str_eq(kube_fx_str(c, "message"), want);
    kube_fx_matches(kube_fx_str(c, "lastTransitionTime"), "^[0-9]{4}-[0-9]{2}-[0-9]{2}T");
    json_decref(why);
    json_decref(st);
    /* the gang becomes satisfiable: minMember 2 */
    json_t *pg = kube_testapi_object(&f.api, res, "default/v");
    json_object_set_new(json_object_get(pg, "spec"), "minMember", json_integer(2));
    json_object_del(json_object_get(pg, "metadata"), "managedFields");
    kube_fx_put(&f, res, pg);
    struct err err = ERR_INIT;
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    /* the mirror applies the change before the cycle reads it */
    ck_assert(kube_test_wait(min_member_2, &f, 10000));
    kube_fx_cycle(&f, 2000);
    st = expect_status(&f, res, "default/v", volcano_want("Running", 0, 0, 0));
    conds = json_object_get(st, "conditions");
    ck_assert_int_eq(json_array_size(conds), 2); /* by type, as Volcano keeps them */
    c = json_array_get(conds, 1);
    ck_assert_str_eq(kube_fx_str(c, "type"), "Scheduled");
    ck_assert_str_eq(kube_fx_str(c, "status"), "True");
    ck_assert_str_eq(kube_fx_str(c, "reason"), "tasks in gang are ready to be scheduled");
    json_decref(st);
    set_phase(&f, "default/v-0", "Running");
    set_phase(&f, "default/v-1", "Failed");
    json_decref(expect_status(&f, res, "default/v", volcano_want("Running", 1, 0, 1)));
    set_phase(&f, "default/v-0", "Succeeded");
    json_decref(expect_status(&f, res, "default/v", volcano_want("Completed", 0, 1, 1)));
    kube_fx_close(&f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kube_pgstatus");
    TCase *tc = tcase_create("kube_pgstatus");
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_kube_pgstatus_sigs_lifecycle);
    tcase_add_test(tc, test_kube_pgstatus_volcano_lifecycle);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
