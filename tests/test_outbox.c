/*
 * test_outbox.c - the typed outbox records (scheduler/record/outbox.h): each kind
 * write-back reads decodes to what it says, malformed records are refused naming the
 * member (case folders tests/data/outbox/<case>/ with record.json and expected.json
 * {"member", "says"}), and every record a real scheduler writes (placements, a gang,
 * preemptions, nominations, evictions, an observed eviction, unschedulable jobs) decodes
 * and encodes back to the members the contract names.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "err.h"
#include "outbox.h"
#include "sched_util.h"

static json_t *parse(const char *text)
{
    json_error_t jerr;
    json_t *rec = json_loads(text, 0, &jerr);
    ck_assert_msg(rec != NULL, "bad JSON in the test: %s", jerr.text);
    return rec;
}

/* Decodes text, which must be a record write-back reads; r must be released. */
static void decode_ok(const char *text, struct sched_outbox_rec *r)
{
    struct err err = ERR_INIT;
    json_t *rec = parse(text);
    int rc = sched_outbox_decode(rec, r, &err);
    ck_assert_msg(rc == 1, "decode of %s: %d %s", text, rc, err.msg);
    json_decref(rec);
}

START_TEST(test_outbox_decodes_placed)
{
    struct sched_outbox_rec r;
    decode_ok("{\"kind\": \"placed\", \"job\": \"default/g\", \"cycle\": 4, \"seq\": 9, "
              "\"pods\": [\"default/g-0\", \"default/g-1\"], \"nodes\": [\"n1\", \"n2\"]}",
              &r);
    ck_assert_int_eq(r.kind, STORE_AUDIT_PLACED);
    ck_assert_str_eq(r.job, "default/g");
    ck_assert_int_eq(r.cycle, 4);
    ck_assert_uint_eq(r.npods, 2);
    ck_assert_str_eq(r.pods[0].pod, "default/g-0");
    ck_assert_str_eq(r.pods[0].node, "n1");
    ck_assert_str_eq(r.pods[1].pod, "default/g-1");
    ck_assert_str_eq(r.pods[1].node, "n2");
    ck_assert_ptr_null(r.preemptor);
    sched_outbox_rec_release(&r);
    ck_assert_ptr_null(r.job);
    ck_assert_uint_eq(r.npods, 0);
    sched_outbox_rec_release(&r); /* a released record again, and NULL */
    sched_outbox_rec_release(NULL);
}
END_TEST

/* A pod past its activeDeadlineSeconds (cycle_housekeeping.c): the pod and its node. */
START_TEST(test_outbox_decodes_deadline_exceeded)
{
    struct sched_outbox_rec r;
    decode_ok("{\"kind\": \"deadline-exceeded\", \"job\": \"default/d\", \"cycle\": 7, "
              "\"pods\": [\"default/d\"], \"nodes\": [\"n1\"], \"reason\": \"DeadlineExceeded\"}",
              &r);
    ck_assert_int_eq(r.kind, STORE_AUDIT_DEADLINE_EXCEEDED);
    ck_assert_str_eq(r.job, "default/d");
    ck_assert_int_eq(r.cycle, 7);
    ck_assert_uint_eq(r.npods, 1);
    ck_assert_str_eq(r.pods[0].pod, "default/d");
    ck_assert_str_eq(r.pods[0].node, "n1");
    ck_assert_ptr_null(r.reason); /* the reason is no member write-back reads here */
    sched_outbox_rec_release(&r);
}
END_TEST

START_TEST(test_outbox_decodes_nominated)
{
    struct sched_outbox_rec r;
    decode_ok("{\"kind\": \"nominated\", \"job\": \"default/hi\", \"pods\": [\"default/hi\"], "
              "\"nodes\": [\"n2\"], \"cleared\": [], \"ledger\": 3}",
              &r);
    ck_assert_int_eq(r.kind, STORE_AUDIT_NOMINATED);
    ck_assert_int_eq(r.cycle, -1);
    ck_assert_uint_eq(r.npods, 1);
    ck_assert_str_eq(r.pods[0].node, "n2");
    sched_outbox_rec_release(&r);
    /* a placement that cleared lower nominations: no pods of its own; the cleared ones come
     * with no node (write-back removes their nominations) */
    decode_ok("{\"kind\": \"nominated\", \"job\": \"default/hi\", \"cycle\": 2, \"pods\": [], "
              "\"nodes\": [], \"cleared\": [\"default/mid\"]}",
              &r);
    ck_assert_uint_eq(r.npods, 1);
    ck_assert_str_eq(r.pods[0].pod, "default/mid");
    ck_assert_ptr_null(r.pods[0].node);
    ck_assert_int_eq(r.cycle, 2);
    sched_outbox_rec_release(&r);
}
END_TEST

START_TEST(test_outbox_decodes_preempted)
{
    struct sched_outbox_rec r;
    decode_ok("{\"kind\": \"preempted\", \"job\": \"default/lo\", \"preemptor\": \"default/hi\", "
              "\"triggerPod\": \"default/hi-0\", \"cycle\": 7, \"ledger\": 1, \"reason\": "
              "\"PreemptionByScheduler\", \"pods\": [\"default/lo-0\"], \"nodes\": [\"n1\"]}",
              &r);
    ck_assert_int_eq(r.kind, STORE_AUDIT_PREEMPTED);
    ck_assert_str_eq(r.job, "default/lo");
    ck_assert_str_eq(r.preemptor, "default/hi");
    ck_assert_str_eq(r.trigger_pod, "default/hi-0");
    ck_assert_str_eq(r.reason, "PreemptionByScheduler");
    ck_assert_str_eq(r.pods[0].pod, "default/lo-0");
    ck_assert_str_eq(r.pods[0].node, "n1");
    ck_assert_int_eq(r.observed, 0);
    sched_outbox_rec_release(&r);
}
END_TEST

START_TEST(test_outbox_decodes_evicted)
{
    struct sched_outbox_rec r;
    /* the mirror's DELETE of a victim: no job needed, no node known, observed */
    decode_ok("{\"kind\": \"evicted\", \"pods\": [\"default/lo\"], \"nodes\": [null], "
              "\"reason\": \"removed by the API server\", \"observed\": true}",
              &r);
    ck_assert_int_eq(r.kind, STORE_AUDIT_EVICTED);
    ck_assert_ptr_null(r.job);
    ck_assert_ptr_null(r.pods[0].node);
    ck_assert_int_eq(r.observed, 1);
    ck_assert_str_eq(r.reason, "removed by the API server");
    sched_outbox_rec_release(&r);
}
END_TEST

START_TEST(test_outbox_decodes_unschedulable_and_the_rest)
{
    struct sched_outbox_rec r;
    struct err err = ERR_INIT;
    decode_ok("{\"kind\": \"unschedulable\", \"job\": \"default/a\", \"cycle\": 2, \"reason\": "
              "\"MembersMissing\", \"message\": \"1 of 3 members\", \"blockers\": []}",
              &r);
    ck_assert_int_eq(r.code, WHY_MEMBERS_MISSING);
    ck_assert_str_eq(r.message, "1 of 3 members");
    ck_assert_uint_eq(r.npods, 0);
    sched_outbox_rec_release(&r);
    decode_ok("{\"kind\": \"applied\", \"cycle\": 0, \"object\": {\"kind\": \"Pod\"}, \"job\": "
              "\"default/a\"}",
              &r);
    ck_assert_str_eq(r.job, "default/a");
    sched_outbox_rec_release(&r);
    decode_ok("{\"kind\": \"deleted\", \"cycle\": 0, \"object\": {\"kind\": \"Node\"}}", &r);
    ck_assert_ptr_null(r.job);
    sched_outbox_rec_release(&r);
    /* a kind write-back does not read: 0, nothing decoded, even with odd members */
    json_t *rec = parse("{\"kind\": \"cycle\", \"cycle\": 3, \"job\": 5, \"pods\": 1}");
    ck_assert_int_eq(sched_outbox_decode(rec, &r, &err), 0);
    ck_assert_int_eq(r.kind, STORE_AUDIT_CYCLE);
    ck_assert_ptr_null(r.job);
    sched_outbox_rec_release(&r);
    json_decref(rec);
}
END_TEST

/* tests/data/outbox/<case>/: record.json is refused, err names expected.json's member. */
START_TEST(test_outbox_refuses_malformed)
{
    json_t *cases = sched_util_cases("outbox"), *c;
    size_t i;
    ck_assert_int_ge(json_array_size(cases), 10);
    json_array_foreach(cases, i, c)
    {
        char rel[256];
        const char *name = json_string_value(c);
        snprintf(rel, sizeof(rel), "%s/record.json", name);
        char *p1 = sched_util_case_path("outbox", rel), *text = sched_util_read(p1);
        snprintf(rel, sizeof(rel), "%s/expected.json", name);
        char *p2 = sched_util_case_path("outbox", rel), *etext = sched_util_read(p2);
        ck_assert_msg(text && etext, "case '%s': cannot read its files", name);
        json_t *rec = parse(text), *exp = parse(etext);
        struct sched_outbox_rec r;
        struct err err = ERR_INIT;
        int rc = sched_outbox_decode(rec, &r, &err);
        const char *member = json_string_value(json_object_get(exp, "member"));
        const char *says = json_string_value(json_object_get(exp, "says"));
        ck_assert_msg(rc == ERR_INVALID, "case '%s': decoded (%d)", name, rc);
        ck_assert_msg(!strcmp(err.field, member), "case '%s': field '%s', expected '%s' (%s)", name,
                      err.field, member, err.msg);
        ck_assert_msg(strstr(err.msg, says), "case '%s': '%s' does not say '%s'", name, err.msg,
                      says);
        ck_assert_uint_eq(r.npods, 0); /* nothing half-decoded is left */
        ck_assert_ptr_null(r.job);
        sched_outbox_rec_release(&r);
        json_decref(rec);
        json_decref(exp);
        free(text);
        free(etext);
        free(p1);
        free(p2);
    }
    json_decref(cases);
}
END_TEST

/* The members the contract names for a kind, as rec has them (new). */
static json_t *contract_members(json_t *rec, enum store_audit_kind kind)
{
    const char *names[13];
    size_t n = 0;
    names[n++] = SCHED_OUTBOX_M_KIND;
    names[n++] = SCHED_OUTBOX_M_JOB;
    names[n++] = SCHED_OUTBOX_M_CYCLE;
    if (sched_outbox_has_pods(kind)) {
        names[n++] = SCHED_OUTBOX_M_PODS;
        names[n++] = SCHED_OUTBOX_M_NODES;
    }
    if (kind == STORE_AUDIT_NOMINATED)
        names[n++] = SCHED_OUTBOX_M_CLEARED;
    if (kind == STORE_AUDIT_PREEMPTED || kind == STORE_AUDIT_EVICTED) {
        names[n++] = SCHED_OUTBOX_M_PREEMPTOR;
        names[n++] = SCHED_OUTBOX_M_REASON;
    }
    if (kind == STORE_AUDIT_PREEMPTED)
        names[n++] = SCHED_OUTBOX_M_TRIGGER_POD;
    if (kind == STORE_AUDIT_EVICTED)
        names[n++] = SCHED_OUTBOX_M_OBSERVED;
    if (kind == STORE_AUDIT_UNSCHEDULABLE) {
        names[n++] = SCHED_OUTBOX_M_REASON;
        names[n++] = SCHED_OUTBOX_M_MESSAGE;
    }
    json_t *out = json_object();
    for (size_t i = 0; i < n; i++)
        if (json_object_get(rec, names[i]))
            json_object_set(out, names[i], json_object_get(rec, names[i]));
    return out;
}

/* Decodes every record of u's audit log; each one write-back reads must encode back to the
 * members the contract names. Counts the decoded records by kind into seen. */
static void roundtrip_log(struct sched_util *u, int seen[STORE_AUDIT_KIND_COUNT])
{
    json_t *all = sched_util_audit(u), *rec;
    size_t i;
    json_array_foreach(all, i, rec)
    {
        struct sched_outbox_rec r;
        struct err err = ERR_INIT;
        int rc = sched_outbox_decode(rec, &r, &err);
        char *text = json_dumps(rec, JSON_COMPACT);
        ck_assert_msg(rc >= 0, "record %s: %s", text, err.msg);
        if (rc == 1) {
            seen[r.kind]++;
            json_t *back = sched_outbox_encode(&r), *want = contract_members(rec, r.kind);
            char *got = json_dumps(back, JSON_COMPACT);
            ck_assert_msg(json_equal(back, want), "record %s encodes back as %s", text, got);
            struct sched_outbox_rec again;
            ck_assert_int_eq(sched_outbox_decode(back, &again, &err), 1);
            json_t *twice = sched_outbox_encode(&again);
            ck_assert(json_equal(twice, back));
            json_decref(twice);
            sched_outbox_rec_release(&again);
            free(got);
            json_decref(back);
            json_decref(want);
        }
        free(text);
        sched_outbox_rec_release(&r);
    }
    json_decref(all);
}

/* Two rounds of preemption (tests/test_preempt.c's): preempted, nominated, evicted when the
 * grace period ends, then placed; a gang that does not fit (unschedulable) beside one
 * placed whole (a placed record of two pods). */
START_TEST(test_outbox_roundtrips_what_the_scheduler_writes)
{
    int seen[STORE_AUDIT_KIND_COUNT] = {0};
    struct sched_util u;
    struct sched_options opts = {.grace_ms = 10000};
    json_decref(sched_util_case_run(&u, "sched", "gang_all_or_nothing", &opts));
    roundtrip_log(&u, seen);
    sched_util_close(&u);
    ck_assert_int_ge(seen[STORE_AUDIT_UNSCHEDULABLE], 1);

    sched_util_open(&u, &opts);
    sched_util_two_rounds(&u);
    json_decref(sched_util_cycle(&u, 13000)); /* lo-1 gone: evicted; hi-1 placed */
    roundtrip_log(&u, seen);
    sched_util_close(&u);
    ck_assert_int_ge(seen[STORE_AUDIT_PLACED], 2);
    ck_assert_int_ge(seen[STORE_AUDIT_NOMINATED], 1);
    ck_assert_int_ge(seen[STORE_AUDIT_PREEMPTED], 1);
    ck_assert_int_ge(seen[STORE_AUDIT_EVICTED], 1);
    ck_assert_int_ge(seen[STORE_AUDIT_APPLIED], 1);
}
END_TEST

/* A placement that clears a lower job's nomination ("nominated" with no pods), and the
 * mirror's DELETE of a victim ("evicted", observed). */
START_TEST(test_outbox_roundtrips_cleared_and_observed)
{
    int seen[STORE_AUDIT_KIND_COUNT] = {0};
    struct sched_util u;
    struct sched_options opts = {.grace_ms = 10000};
    struct err err = ERR_INIT;
    char doc[1024];
    sched_util_mid_nominated_then_hi(&u);     /* mid preempts lo, nominated to n1 */
    json_decref(sched_util_cycle(&u, 13000)); /* lo gone: hi takes n1, mid's plan cleared */
    roundtrip_log(&u, seen);
    sched_util_close(&u);
    ck_assert_int_ge(seen[STORE_AUDIT_NOMINATED], 2);

    memset(seen, 0, sizeof(seen));
    opts.mirrored = 1;
    sched_util_open(&u, &opts);
    json_decref(sched_util_apply(&u, sched_util_two_preemptions, 1000));
    snprintf(doc, sizeof(doc), sched_util_hi_pod, "hi-1");
    json_decref(sched_util_apply(&u, doc, 1500));
    json_decref(sched_util_cycle(&u, 2000));
    ck_assert_int_eq(sched_delete(u.s, MODEL_POD, "default/lo-1", 3000, &err), 0);
    roundtrip_log(&u, seen);
    ck_assert_int_eq(seen[STORE_AUDIT_EVICTED], 1);
    json_t *all = sched_util_audit(&u);
    int observed = 0;
    for (size_t i = 0; i < json_array_size(all); i++) {
        struct sched_outbox_rec r;
        if (sched_outbox_decode(json_array_get(all, i), &r, &err) == 1 &&
            r.kind == STORE_AUDIT_EVICTED)
            observed += r.observed && r.npods == 1 && !strcmp(r.pods[0].pod, "default/lo-1");
        sched_outbox_rec_release(&r);
    }
    ck_assert_int_eq(observed, 1);
    json_decref(all);
    sched_util_close(&u);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_outbox_decodes_placed,
                            test_outbox_decodes_deadline_exceeded,
                            test_outbox_decodes_nominated,
                            test_outbox_decodes_preempted,
                            test_outbox_decodes_evicted,
                            test_outbox_decodes_unschedulable_and_the_rest,
                            test_outbox_refuses_malformed,
                            test_outbox_roundtrips_what_the_scheduler_writes,
                            test_outbox_roundtrips_cleared_and_observed,
                            NULL};
    return check_run(check_suite("outbox", NULL, NULL, tests));
}
