/* test_whatif.c - sched_whatif: the next cycle's decisions on a copy of the state, written
 * nowhere. Each answer is checked against what the real apply and cycle then do, and the
 * store and the view against what they were before. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_run.h"
#include "err.h"
#include "model.h"
#include "sched_util.h"

#define NODE(name, cpu)                                                                            \
    "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"" name                \
    "\"}, \"status\": {\"allocatable\": {\"cpu\": \"" cpu "\"}}}\n---\n"
#define POD(name, cpu, prio)                                                                       \
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"" name                 \
    "\", \"namespace\": \"default\"}, \"spec\": {\"priority\": " prio ", \"containers\": "         \
    "[{\"name\": \"c\", \"image\": \"x\", \"resources\": {\"requests\": {\"cpu\": \"" cpu          \
    "\"}}}]}}\n"

static void parse(const char *text, struct model_manifest *m)
{
    struct err err = ERR_INIT;
    ck_assert_msg(model_manifest_parse(text, strlen(text), MODEL_FMT_AUTO, m, &err) == 0, "%s",
                  err.msg);
}

/* The state a what-if must leave as it found: the view, the audit log, the ledger. */
struct before {
    json_t *view, *audit, *ledger;
};

static void remember(struct sched_util *u, struct before *b)
{
    b->view = sched_view_dump(u->s);
    b->audit = sched_util_audit(u);
    b->ledger = sched_util_ledger(u, NULL, NULL, NULL);
}

static void assert_unchanged(struct sched_util *u, struct before *b)
{
    json_t *view = sched_view_dump(u->s), *stored = NULL;
    struct err err = ERR_INIT;
    ck_assert_msg(json_equal(view, b->view), "the live view changed");
    ck_assert_int_eq(sched_view_dump_store(u->s, &stored, &err), 0);
    ck_assert_msg(json_equal(stored, b->view), "the store changed");
    json_t *audit = sched_util_audit(u), *ledger = sched_util_ledger(u, NULL, NULL, NULL);
    ck_assert_int_eq(json_array_size(audit), json_array_size(b->audit));
    ck_assert_int_eq(json_array_size(ledger), json_array_size(b->ledger));
    json_decref(view);
    json_decref(stored);
    json_decref(audit);
    json_decref(ledger);
    json_decref(b->view);
    json_decref(b->audit);
    json_decref(b->ledger);
}

static json_t *whatif(struct sched_util *u, const char *manifest, const char *const *cordon,
                      size_t ncordon, const struct sched_whatif_drop *drop, size_t ndrop,
                      int64_t now_ms)
{
    struct model_manifest m = {0};
    if (manifest)
        parse(manifest, &m);
    struct sched_whatif in = {manifest ? &m : NULL, cordon, ncordon, drop, ndrop};
    struct err err = ERR_INIT;
    json_t *out = NULL;
    ck_assert_msg(sched_whatif(u->s, &in, now_ms, &out, &err) == 0, "%s", err.msg);
    model_manifest_free(&m);
    return out;
}

/* The job of id in a what-if's "jobs". Borrowed. */
static json_t *job_in(json_t *res, const char *id)
{
    size_t i;
    json_t *j;
    json_array_foreach(json_object_get(res, "jobs"), i,
                       j) if (!strcmp(json_string_value(json_object_get(j, "id")), id)) return j;
    ck_abort_msg("job %s not in the answer", id);
    return NULL;
}

static const char *member_node(json_t *job, size_t i)
{
    return json_string_value(
        json_object_get(json_array_get(json_object_get(job, "members"), i), "node"));
}

START_TEST(test_whatif_places_as_the_real_cycle_then_does)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(
        &u, "# yaml\n" NODE("n1", "2") NODE("n2", "8") POD("old", "1", "0"), 1000));
    json_decref(sched_util_cycle(&u, 2000));
    struct before b;
    remember(&u, &b);

    json_t *res = whatif(&u, POD("big", "6", "0"), NULL, 0, NULL, 0, 3000);
    json_t *job = job_in(res, "default/big");
    ck_assert(json_is_true(json_object_get(job, "wouldPlace")));
    ck_assert_str_eq(member_node(job, 0), "n2");
    ck_assert_str_eq(sched_util_str2(job, "why", "state"), "Scheduled");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(res, "cycle"), "placed")),
                     1);
    /* the records it would have written: the apply's and the placement */
    size_t i, placed = 0;
    json_t *rec;
    json_array_foreach(json_object_get(res, "records"), i, rec) placed +=
        !strcmp(json_string_value(json_object_get(rec, "kind")), "placed");
    ck_assert_int_eq(placed, 1);
    assert_unchanged(&u, &b);

    /* the real thing decides the same */
    json_decref(sched_util_apply(&u, POD("big", "6", "0"), 3000));
    json_decref(sched_util_cycle(&u, 3000));
    char *node = sched_util_node_of(&u, "default/big");
    ck_assert_str_eq(node, "n2");
    free(node);
    json_decref(res);
    sched_util_close(&u);
}
END_TEST

START_TEST(test_whatif_names_victims_and_displaced_jobs)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(&u, sched_util_two_preemptions, 1000));
    json_decref(sched_util_cycle(&u, 1500));
    struct before b;
    remember(&u, &b);
    char pod[1024];
    snprintf(pod, sizeof(pod), sched_util_hi_pod, "hi");

    json_t *res = whatif(&u, pod, NULL, 0, NULL, 0, 2000);
    json_t *job = job_in(res, "default/hi");
    ck_assert(json_is_false(json_object_get(job, "wouldPlace"))); /* nominated: victims go first */
    ck_assert_str_eq(json_string_value(json_object_get(job, "state")), "Pipelined");
    json_t *ledger = json_object_get(res, "preemptions");
    ck_assert_int_eq(json_array_size(ledger), 1);
    json_t *entry = json_array_get(ledger, 0);
    ck_assert_str_eq(json_string_value(json_object_get(entry, "preemptor")), "default/hi");
    /* the lowest priority goes: lo-1 (1) before lo-2 (2) */
    json_t *displaced = json_object_get(json_object_get(res, "others"), "displaced");
    ck_assert_int_eq(json_array_size(displaced), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(displaced, 0), "id")),
                     "default/lo-1");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(displaced, 0), "after")),
                     "Preempted");
    assert_unchanged(&u, &b);

    json_decref(sched_util_apply(&u, pod, 2000));
    json_decref(sched_util_cycle(&u, 2000));
    json_t *real = sched_util_ledger(&u, "default/hi", NULL, NULL);
    ck_assert_int_eq(json_array_size(real), 1);
    ck_assert(json_equal(json_object_get(json_array_get(real, 0), "victims"),
                         json_object_get(entry, "victims")));
    json_decref(real);
    json_decref(res);
    sched_util_close(&u);
}
END_TEST

START_TEST(test_whatif_cordon_and_delete)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    json_decref(
        sched_util_apply(&u, "# yaml\n" NODE("n1", "4") NODE("n2", "4") POD("a", "4", "0"), 1000));
    json_decref(sched_util_cycle(&u, 1500));
    char *na = sched_util_node_of(&u, "default/a");
    const char *other = strcmp(na, "n1") ? "n1" : "n2";
    struct before b;
    remember(&u, &b);

    /* the free node cordoned: the new pod has nowhere to go */
    json_t *res = whatif(&u, POD("b", "4", "0"), &other, 1, NULL, 0, 2000);
    json_t *job = job_in(res, "default/b");
    ck_assert(json_is_false(json_object_get(job, "wouldPlace")));
    ck_assert_str_eq(json_string_value(json_object_get(job, "state")), "Unschedulable");
    json_decref(res);

    /* a deleted the other way: b fits, and a's removal is among the changes */
    struct sched_whatif_drop drop = {MODEL_POD, "default/a"};
    res = whatif(&u, POD("b", "4", "0"), &other, 1, &drop, 1, 2000);
    job = job_in(res, "default/b");
    ck_assert(json_is_true(json_object_get(job, "wouldPlace")));
    ck_assert_str_eq(member_node(job, 0), na);
    json_t *changes = json_object_get(res, "changes");
    json_t *last = json_array_get(changes, json_array_size(changes) - 1);
    ck_assert_str_eq(json_string_value(json_object_get(last, "action")), "deleted");
    json_decref(res);

    /* bad input: a clear error naming it, nothing changed */
    struct err err = ERR_INIT;
    const char *ghost = "n9";
    struct sched_whatif in = {NULL, &ghost, 1, NULL, 0};
    ck_assert_int_eq(sched_whatif(u.s, &in, 2000, &res, &err), ERR_INVALID);
    ck_assert_str_eq(err.field, "cordon");
    ck_assert_ptr_nonnull(strstr(err.msg, "'n9'"));
    struct sched_whatif_drop gone = {MODEL_NODE, "n9"};
    struct sched_whatif in2 = {NULL, NULL, 0, &gone, 1};
    ck_assert_int_eq(sched_whatif(u.s, &in2, 2000, &res, &err), ERR_INVALID);
    ck_assert_str_eq(err.field, "delete");
    struct model_manifest m = {0};
    parse("{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"x\"}, "
          "\"spec\": {\"containers\": []}}",
          &m);
    struct sched_whatif in3 = {&m, NULL, 0, NULL, 0};
    ck_assert_int_eq(sched_whatif(u.s, &in3, 2000, &res, &err), ERR_INVALID);
    model_manifest_free(&m);
    assert_unchanged(&u, &b);
    free(na);
    sched_util_close(&u);
}
END_TEST

/* Like the live scheduler, the what-if leaves a job the last cycle tried and parked alone
 * until a change it waits on: a new pod does not make it try the waiting gang again, a
 * deletion that frees room does, and it is placed. */
START_TEST(test_whatif_parks_as_the_live_cycle)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(&u, "# yaml\n" NODE("n1", "4") POD("small", "2", "0"), 1000));
    json_decref(sched_util_cycle(&u, 1200)); /* small placed */
    json_decref(sched_util_apply(&u, POD("big", "4", "0"), 1300));
    json_decref(sched_util_cycle(&u, 1500)); /* big tried, parked */
    char *small = sched_util_node_of(&u, "default/small");
    ck_assert_str_eq(small, "n1");
    free(small);

    json_t *res = whatif(&u, POD("tiny", "1", "0"), NULL, 0, NULL, 0, 2000);
    ck_assert_int_eq(
        json_integer_value(json_object_get(json_object_get(res, "cycle"), "attempted")),
        1); /* tiny alone */
    json_t *others = json_object_get(res, "others");
    ck_assert_int_eq(json_array_size(json_object_get(others, "placed")) +
                         json_array_size(json_object_get(others, "changed")),
                     0);
    json_decref(res);

    struct sched_whatif_drop drop = {MODEL_POD, "default/small"};
    res = whatif(&u, NULL, NULL, 0, &drop, 1, 2000);
    json_t *placed = json_object_get(json_object_get(res, "others"), "placed");
    ck_assert_int_eq(json_array_size(placed), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(placed, 0), "id")),
                     "default/big");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(placed, 0), "before")),
                     "Unschedulable");
    json_decref(res);
    sched_util_close(&u);
}
END_TEST

/* The what-if never takes the scheduler's lock: it answers while a long cycle holds it (a
 * what-if that waited for the lock would hang here until the test's timeout). */
START_TEST(test_whatif_answers_while_the_lock_is_held)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(&u, "# yaml\n" NODE("n1", "4"), 1000));
    struct sched_hold *h = sched_hold(u.s);
    json_t *res = whatif(&u, POD("p", "1", "0"), NULL, 0, NULL, 0, 2000);
    sched_hold_release(h);
    ck_assert(json_is_true(json_object_get(job_in(res, "default/p"), "wouldPlace")));
    json_decref(res);
    sched_util_close(&u);
}
END_TEST

struct racer {
    struct sched_util *u;
    int done, answers;
};

static void *whatifs(void *arg)
{
    struct racer *r = arg;
    while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
        json_t *res = whatif(r->u, POD("probe", "1", "0"), NULL, 0, NULL, 0, 5000);
        json_decref(res);
        __atomic_add_fetch(&r->answers, 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* What-ifs beside real applies and cycles: each answers from a consistent snapshot, and the
 * live state is what the real calls alone make of it. */
START_TEST(test_whatif_beside_real_cycles)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(&u, "# yaml\n" NODE("n1", "64"), 1000));
    struct racer r = {.u = &u};
    pthread_t t;
    pthread_create(&t, NULL, whatifs, &r);
    /* 40 rounds, and on until the what-ifs answered a few (they started meanwhile) */
    for (int i = 0; i < 40 || __atomic_load_n(&r.answers, __ATOMIC_ACQUIRE) < 3; i++) {
        char name[32], doc[1024];
        snprintf(name, sizeof(name), "p%d", i);
        snprintf(doc, sizeof(doc), sched_util_hi_pod, name);
        json_decref(sched_util_apply(&u, doc, 2000 + i));
        json_decref(sched_util_cycle(&u, 2000 + i));
        if (i >= 40)
            usleep(2000);
    }
    __atomic_store_n(&r.done, 1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    ck_assert_int_ge(r.answers, 3);
    ck_assert_int_eq(sched_util_audit_count(&u, "placed", NULL), 16); /* 64 cpu / 4 */
    ck_assert_ptr_null(sched_util_pod(&u, "default/probe"));
    sched_util_close(&u);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_whatif_places_as_the_real_cycle_then_does,
                            test_whatif_names_victims_and_displaced_jobs,
                            test_whatif_cordon_and_delete,
                            test_whatif_parks_as_the_live_cycle,
                            test_whatif_answers_while_the_lock_is_held,
                            test_whatif_beside_real_cycles,
                            NULL};
    return check_run(check_suite("whatif", NULL, NULL, tests));
}
