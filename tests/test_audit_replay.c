/* test_audit_replay.c - the replay check (sched_replay): the scheduler run again from the store
 * at one audit record over the inputs recorded after it decides as the log says, through
 * preemptions, evictions after the grace period, deletions and re-applies; a logged
 * decision altered by hand is found and named; bad ranges are refused naming the
 * parameter. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../store/internal.h"
#include "check_run.h"
#include "err.h"
#include "sched_util.h"

#define POD(name, cpu, prio)                                                                       \
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"" name                 \
    "\", \"namespace\": \"default\"}, \"spec\": {\"priority\": " prio ", \"containers\": "         \
    "[{\"name\": \"c\", \"image\": \"x\", \"resources\": {\"requests\": {\"cpu\": \"" cpu          \
    "\"}}}]}}\n"

/* Two rounds of preemption (hi-1 then hi-2), the victims evicted after their grace
 * period, a pod deleted and one re-applied changed: every kind of input and decision. */
static void story(struct sched_util *u)
{
    struct sched_options opts = {.grace_ms = 2000, .mark_running = 1};
    sched_util_open(u, &opts);
    sched_util_two_rounds(u);               /* cycles at 2 s and 6 s */
    json_decref(sched_util_cycle(u, 9000)); /* victims of round 1 gone, hi-1 binds */
    json_decref(sched_util_apply(u, POD("late", "1", "5"), 9500));
    json_decref(sched_util_cycle(u, 12000)); /* round 2's victims gone, hi-2 binds */
    struct err err = ERR_INIT;
    ck_assert_int_eq(sched_delete(u->s, MODEL_POD, "default/hi-1", 12500, &err), 0);
    json_decref(sched_util_cycle(u, 13000)); /* late fits where hi-1 was */
    json_decref(sched_util_cycle(u, 14000));
}

static json_t *replay(struct sched_util *u, uint64_t from, uint64_t to)
{
    struct err err = ERR_INIT;
    json_t *out = NULL;
    ck_assert_msg(sched_replay(u->s, from, to, &out, &err) == 0, "%s", err.msg);
    return out;
}

static json_int_t num(json_t *o, const char *k)
{
    return json_integer_value(json_object_get(o, k));
}

START_TEST(test_replay_agrees_with_the_log)
{
    struct sched_util u;
    story(&u);
    json_t *all = sched_util_audit(&u);
    json_t *res = replay(&u, 1, 0);
    ck_assert_msg(json_is_true(json_object_get(res, "ok")), "%s",
                  json_dumps(json_object_get(res, "cyclesDiffering"), JSON_INDENT(1)));
    ck_assert_int_eq(num(res, "to"), (json_int_t)json_array_size(all));
    ck_assert_int_ge(num(res, "cycles"), 6);
    /* preempted, nominated, evicted, placed, running: every one compared */
    ck_assert_int_ge(num(res, "decisions"), 10);
    ck_assert_int_ge(num(res, "inputs"), 6);
    json_decref(res);

    /* from the middle: the store at a cycle record, then on */
    size_t i;
    json_t *rec;
    uint64_t mid = 0;
    json_array_foreach(all, i,
                       rec) if (!mid &&
                                !strcmp(json_string_value(json_object_get(rec, "kind")), "cycle") &&
                                json_integer_value(json_object_get(rec, "cycle")) == 2) mid =
        (uint64_t)json_integer_value(json_object_get(rec, "seq"));
    ck_assert_uint_gt(mid, 0);
    res = replay(&u, mid, 0);
    ck_assert_msg(json_is_true(json_object_get(res, "ok")), "%s",
                  json_dumps(json_object_get(res, "cyclesDiffering"), JSON_INDENT(1)));
    ck_assert_int_ge(num(res, "cycles"), 4);
    json_decref(res);
    json_decref(all);
    sched_util_close(&u);
}
END_TEST

START_TEST(test_replay_finds_an_altered_decision)
{
    struct sched_util u;
    story(&u);
    json_t *all = sched_util_audit(&u);
    size_t i;
    json_t *rec, *victim = NULL;
    json_array_foreach(all, i,
                       rec) if (!victim && !strcmp(json_string_value(json_object_get(rec, "kind")),
                                                   "preempted")) victim = rec;
    ck_assert_ptr_nonnull(victim);
    /* the log now says round 1 took lo-2 (not lo-1, the lower priority) */
    json_t *forged = json_deep_copy(victim);
    json_object_set_new(forged, "job", json_string("default/lo-2"));
    json_object_set_new(forged, "pods", json_pack("[s]", "default/lo-2"));
    char *text = json_dumps(forged, JSON_COMPACT | JSON_SORT_KEYS);
    MDB_txn *txn = NULL;
    struct err err = ERR_INIT;
    ck_assert_int_eq(store_txn_begin(u.st, STORE_WRITE, &txn, &err), 0);
    ck_assert_int_eq(
        store__audit_put_raw(txn, (uint64_t)json_integer_value(json_object_get(victim, "seq")),
                             text, strlen(text), &err),
        0);
    ck_assert_int_eq(store_txn_commit(&txn, &err), 0);
    free(text);

    json_t *res = replay(&u, 1, 0);
    ck_assert(json_is_false(json_object_get(res, "ok")));
    ck_assert_int_eq(num(res, "differences"), 1);
    json_t *d = json_array_get(json_object_get(res, "cyclesDiffering"), 0);
    ck_assert_int_eq(num(d, "cycle"), json_integer_value(json_object_get(victim, "cycle")));
    char *logged = json_dumps(json_object_get(d, "logged"), 0);
    char *replayed = json_dumps(json_object_get(d, "replayed"), 0);
    ck_assert_ptr_nonnull(strstr(logged, "lo-2"));
    ck_assert_ptr_nonnull(strstr(replayed, "lo-1"));
    free(logged);
    free(replayed);
    json_decref(res);
    json_decref(forged);
    json_decref(all);
    sched_util_close(&u);
}
END_TEST

START_TEST(test_replay_bad_ranges)
{
    struct sched_util u;
    story(&u);
    json_t *all = sched_util_audit(&u), *out = NULL;
    uint64_t last = json_array_size(all);
    struct {
        uint64_t from, to;
        const char *field, *says;
    } bad[] = {
        {0, 0, "from", "before the history kept"},
        {5, last + 1, "to", "not a range of the log"},
        {10, 5, "from", "not a range of the log"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct err err = ERR_INIT;
        ck_assert_int_eq(sched_replay(u.s, bad[i].from, bad[i].to, &out, &err), ERR_INVALID);
        ck_assert_str_eq(err.field, bad[i].field);
        ck_assert_msg(strstr(err.msg, bad[i].says), "%s", err.msg);
        ck_assert_ptr_null(out);
    }
    json_decref(all);
    sched_util_close(&u);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_replay_agrees_with_the_log, test_replay_finds_an_altered_decision,
                            test_replay_bad_ranges, NULL};
    return check_run(check_suite("audit_replay", NULL, NULL, tests));
}
