/* test_audit_replay.c - the replay check (sched_replay): the scheduler run again from the store
 * at one audit record over the inputs recorded after it decides as the log says, through
 * preemptions, evictions after the grace period, deletions and re-applies; a logged
 * decision altered by hand is found and named; bad ranges are refused naming the
 * parameter. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../store/audit_sig.h"
#include "../store/internal.h"
#include "audit_support.h"
#include "check_run.h"
#include "err.h"
#include "sched_util.h"
#include "store_util.h"

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
    ck_assert_msg(sched_replay(u->s, from, to, 1, &out, &err) == 0, "%s", err.msg);
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

/* Inputs are replayed in runs, one transaction per run of "applied" records (audit_replay.c).
 * A run that cannot be applied is applied again record by record, so the refusal names the
 * record that cannot be, as applying them one by one did: here an object written into the
 * store by hand, with its "applied" record, behind two pods applied as usual. */
START_TEST(test_replay_names_the_input_it_cannot_apply)
{
    struct sched_util u;
    story(&u);
    json_decref(
        sched_util_apply(&u, "[" POD("good-1", "1", "1") "," POD("good-2", "1", "1") "]", 15000));
    json_t *bad = json_loads(POD("bad", "12x", "1"), 0, NULL); /* no such quantity */
    ck_assert_ptr_nonnull(bad);
    MDB_txn *txn = NULL;
    struct err err = ERR_INIT;
    uint64_t seq = 0;
    ck_assert_int_eq(store_txn_begin(u.st, STORE_WRITE, &txn, &err), 0);
    ck_assert_int_eq(store_put(txn, MODEL_POD, bad, NULL, &err), 0);
    json_t *rec =
        json_pack("{s:s,s:i,s:i,s:s,s:{s:s,s:s}}", "action", "created", "cycle", 99, "document", 1,
                  "kind", "applied", "object", "kind", "Pod", "name", "default/bad");
    ck_assert_int_eq(store_audit_append(txn, rec, &seq, &err), 0);
    ck_assert_int_eq(store_txn_commit(&txn, &err), 0);
    json_decref(rec);
    json_decref(bad);
    json_decref(sched_util_cycle(&u, 16000)); /* the run ends at this cycle's record */

    json_t *out = NULL;
    ck_assert_int_lt(sched_replay(u.s, 1, 0, 1, &out, &err), 0);
    char want[64];
    snprintf(want, sizeof(want), "replaying record %llu: ", (unsigned long long)seq);
    ck_assert_msg(!strncmp(err.msg, want, strlen(want)) && strstr(err.msg, "12x"), "%s", err.msg);
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
        ck_assert_int_eq(sched_replay(u.s, bad[i].from, bad[i].to, 1, &out, &err), ERR_INVALID);
        ck_assert_str_eq(err.field, bad[i].field);
        ck_assert_msg(strstr(err.msg, bad[i].says), "%s", err.msg);
        ck_assert_ptr_null(out);
    }
    json_decref(all);
    sched_util_close(&u);
}
END_TEST

/* The seq of the first record of kind (after seq after), or 0. */
static uint64_t seq_of(json_t *all, const char *kind, uint64_t after)
{
    size_t i;
    json_t *rec;
    json_array_foreach(all, i, rec)
    {
        uint64_t seq = (uint64_t)json_integer_value(json_object_get(rec, "seq"));
        if (seq > after && !strcmp(json_string_value(json_object_get(rec, "kind")), kind))
            return seq;
    }
    return 0;
}

/* hi (priority 10) cannot preempt top (100) and waits, its backoff doubling (retries at 2, 4,
 * 8 and 16 s); top re-applied at priority 0, which no event announces to hi (same node,
 * requests, labels), makes it a victim that hi finds at its retry at 16 s. Replayed from the
 * cycle at 8 s, the replay begins at the log's first record so that hi waits as it did live:
 * begun there with hi parked anew (1 s), it would preempt at the cycle of 10 s (which huge,
 * a pod that never fits, makes happen). */
static void backoff_story(struct sched_util *u)
{
    sched_util_open(u, &(struct sched_options){.grace_ms = 1000});
    json_decref(sched_util_apply(
        u,
        "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}, "
        "\"status\": {\"allocatable\": {\"cpu\": \"2\"}}}\n",
        500));
    json_decref(sched_util_apply(u, POD("top", "2", "100"), 500));
    json_decref(sched_util_cycle(u, 900)); /* top on n1 */
    json_decref(sched_util_apply(u, POD("hi", "2", "10"), 950));
    static const int64_t cycles[] = {1000, 2000, 4000, 8000, 9500, 10000, 12000, 16000, 17000};
    for (size_t i = 0; i < sizeof(cycles) / sizeof(cycles[0]); i++) {
        if (cycles[i] == 9500) { /* top's priority falls: hi could take its place */
            json_t *top = sched_util_pod(u, "default/top");
            json_object_set_new(json_object_get(top, "spec"), "priority", json_integer(0));
            char *text = json_dumps(top, JSON_COMPACT);
            json_decref(sched_util_apply(u, text, 9000));
            free(text);
            json_decref(top);
        }
        if (cycles[i] == 10000) /* a pod that never fits: the cycle at 10 s has work */
            json_decref(sched_util_apply(u, POD("huge", "4", "0"), 9800));
        json_decref(sched_util_cycle(u, cycles[i]));
    }
}

START_TEST(test_replay_from_mid_log_waits_as_live)
{
    struct sched_util u;
    backoff_story(&u);
    json_t *all = sched_util_audit(&u);
    uint64_t preempted = seq_of(all, "preempted", 0);
    ck_assert_uint_gt(preempted, 0);
    /* live: at the retry of 16 s, not before (a cycle with nothing due is not counted) */
    json_t *rec = json_array_get(all, seq_of(all, "cycle", preempted) - 1);
    ck_assert_int_eq(num(rec, "clockMs"), 16000);
    uint64_t mid = 0; /* the cycle record at 8 s: hi has just failed, waiting until 16 s */
    for (uint64_t c = seq_of(all, "cycle", 0); c && !mid; c = seq_of(all, "cycle", c))
        if (num(json_array_get(all, c - 1), "clockMs") == 8000)
            mid = c;
    ck_assert_uint_gt(mid, 0);
    ck_assert_uint_lt(mid, preempted);
    json_t *res = replay(&u, mid, 0);
    ck_assert_msg(json_is_true(json_object_get(res, "ok")), "%s",
                  json_dumps(json_object_get(res, "cyclesDiffering"), JSON_INDENT(1)));
    ck_assert(json_is_true(json_object_get(res, "exact")));
    ck_assert_int_eq(num(res, "replayedFrom"), 1);
    ck_assert_int_eq(num(res, "from"), (json_int_t)mid);
    ck_assert_int_ge(num(res, "decisions"), 2); /* preempted and nominated compared */
    json_decref(res);
    /* asked to run from mid itself (exact false), it parks hi anew there and gets it wrong:
     * the preemption one cycle early, and none at 16 s */
    struct err err = ERR_INIT;
    ck_assert_int_eq(sched_replay(u.s, mid, 0, 0, &res, &err), 0);
    ck_assert(json_is_false(json_object_get(res, "exact")));
    ck_assert_int_eq(num(res, "replayedFrom"), (json_int_t)mid);
    ck_assert(json_is_false(json_object_get(res, "ok")));
    json_t *d = json_array_get(json_object_get(res, "cyclesDiffering"), 0);
    ck_assert_int_eq(num(json_array_get(all, num(d, "seq") - 1), "clockMs"), 10000);
    ck_assert_int_eq(json_array_size(json_object_get(d, "logged")), 0);
    json_decref(res);
    json_decref(all);
    sched_util_close(&u);
}
END_TEST

/* After a restart ("started": the live view was rebuilt, nothing parked) the replay begins
 * there; after a prune with no restart since, it begins where it is asked and says it is not
 * exact. */
START_TEST(test_replay_begins_at_a_restart)
{
    struct sched_util u;
    struct err err = ERR_INIT;
    story(&u);
    ck_assert_int_eq(sched_started(u.s, 14500, &err), 0);
    json_decref(sched_util_apply(&u, POD("after", "1", "1"), 14600));
    json_decref(sched_util_cycle(&u, 15000));
    json_t *all = sched_util_audit(&u);
    uint64_t started = seq_of(all, "started", 0), last = json_array_size(all);
    ck_assert_uint_gt(started, 0);
    json_t *res = replay(&u, started + 1, 0);
    ck_assert(json_is_true(json_object_get(res, "ok")));
    ck_assert(json_is_true(json_object_get(res, "exact")));
    ck_assert_int_eq(num(res, "replayedFrom"), (json_int_t)started);
    ck_assert_int_eq(num(res, "cycles"), 1);
    json_decref(res);
    json_decref(all);

    struct audit_env e; /* for its key: a checkpoint to prune behind */
    struct store_audit_key *key = NULL;
    audit_env_init(&e);
    ck_assert_int_eq(store_audit_key_load(e.key, &key, &err), 0);
    MDB_txn *txn = NULL;
    struct store_ckpt cp;
    uint64_t first = 0, deleted = 0;
    ck_assert_int_eq(store_txn_begin(u.st, STORE_WRITE, &txn, &err), 0);
    ck_assert_int_eq(store_audit_checkpoint(txn, key, &cp, &err), 0);
    ck_assert_int_eq(store_txn_commit(&txn, &err), 0);
    ck_assert_int_eq(store_audit_prune_write(u.st, last + 1, key, &first, &deleted, &err), 0);
    store_audit_key_free(key);
    store_util_rmrf(strdup(e.m.root)); /* rmrf frees its argument */
    json_decref(sched_util_apply(&u, POD("later", "1", "1"), 15500));
    json_decref(sched_util_cycle(&u, 16000));
    all = sched_util_audit(&u);
    uint64_t cyc = seq_of(all, "cycle", first);
    res = replay(&u, first, 0);
    ck_assert_msg(json_is_true(json_object_get(res, "ok")), "%s", json_dumps(res, JSON_INDENT(1)));
    ck_assert(json_is_false(json_object_get(res, "exact")));
    ck_assert_int_eq(num(res, "replayedFrom"), (json_int_t)first);
    ck_assert_uint_gt(cyc, first);
    json_decref(res);
    json_decref(all);
    sched_util_close(&u);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_replay_agrees_with_the_log,
                            test_replay_finds_an_altered_decision,
                            test_replay_bad_ranges,
                            test_replay_from_mid_log_waits_as_live,
                            test_replay_begins_at_a_restart,
                            test_replay_names_the_input_it_cannot_apply,
                            NULL};
    return check_run(check_suite("audit_replay", NULL, NULL, tests));
}
