/* test_why_placed.c - a placed job's why document is stored small and completed when it
 * is read (why_record.c): the answer has every member of a full document, in order, with
 * the values a placed job's document always had, across a note and a restart. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "err.h"
#include "scheduler.h"
#include "sched_util.h"
#include "store.h"

static const char *CLUSTER =
    "---\n"
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"status\":{"
    "\"allocatable\":{\"cpu\":\"4\"}}}\n---\n"
    "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"PodGroup\",\"metadata\":{"
    "\"name\":\"g\",\"namespace\":\"default\"},\"spec\":{\"minMember\":2}}\n---\n"
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"g-0\",\"namespace\":"
    "\"default\",\"labels\":{\"pod-group.scheduling.sigs.k8s.io\":\"g\"}},\"spec\":{"
    "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":"
    "\"1\"}}}]}}\n---\n"
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"g-1\",\"namespace\":"
    "\"default\",\"labels\":{\"pod-group.scheduling.sigs.k8s.io\":\"g\"}},\"spec\":{"
    "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":"
    "\"1\"}}}]}}\n---\n"
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":"
    "\"default\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{"
    "\"requests\":{\"cpu\":\"1\"}}}]}}\n";

/* The members of a full why document, in order (why_record.c). */
static const char *const FULL[] = {"job",       "state",       "cycle", "auditSeq",
                                   "primary",   "blockers",    "gang",  "nodeFilter",
                                   "topology",  "preemption",  "ahead", "history",
                                   "placement", "gangTimeout", "queue", NULL};

static void assert_members(json_t *w, int gang)
{
    const char *key;
    json_t *v;
    size_t k = 0;
    json_object_foreach(w, key, v)
    {
        if (!gang && FULL[k] && !strcmp(FULL[k], "gangTimeout"))
            k++;
        ck_assert_msg(FULL[k] && !strcmp(key, FULL[k]), "member %zu is '%s', want '%s'", k, key,
                      FULL[k] ? FULL[k] : "(end)");
        k++;
    }
    if (!gang && FULL[k] && !strcmp(FULL[k], "gangTimeout"))
        k++;
    ck_assert_msg(!FULL[k], "member '%s' missing", FULL[k] ? FULL[k] : "");
}

static void assert_placed_doc(json_t *w, const char *job, const char *pod, int gang)
{
    assert_members(w, gang);
    ck_assert_str_eq(json_string_value(json_object_get(w, "job")), job);
    ck_assert_str_eq(json_string_value(json_object_get(w, "state")), "Scheduled");
    ck_assert(json_is_null(json_object_get(w, "primary")));
    ck_assert_int_eq(json_array_size(json_object_get(w, "blockers")), 0);
    ck_assert_int_eq(json_array_size(json_object_get(w, "ahead")), 0);
    ck_assert(json_is_null(json_object_get(w, "nodeFilter")));
    ck_assert_str_eq(sched_util_str2(w, "preemption", "reason"), "not needed: the job was placed");
    ck_assert(json_is_false(json_object_get(json_object_get(w, "preemption"), "attempted")));
    json_t *nodes = json_object_get(json_object_get(w, "placement"), "nodes");
    ck_assert_str_eq(json_string_value(json_object_get(nodes, pod)), "n1");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(w, "placement"), "cycle")),
                     json_integer_value(json_object_get(w, "cycle")));
    json_t *h = json_object_get(w, "history");
    ck_assert_str_eq(
        json_string_value(json_object_get(json_array_get(h, json_array_size(h) - 1), "code")),
        "Placed");
    ck_assert_str_eq(sched_util_str2(w, "queue", "name"), "default");
    if (gang) {
        json_t *g = json_array_get(json_object_get(w, "gang"), 0);
        ck_assert_int_eq(json_integer_value(json_object_get(g, "minMember")), 2);
        ck_assert_int_eq(json_integer_value(json_object_get(g, "bound")), 2);
        ck_assert(json_is_null(json_object_get(json_object_get(w, "gangTimeout"), "deadline")));
    } else {
        ck_assert_int_eq(json_array_size(json_object_get(w, "gang")), 0); /* a lone pod */
    }
}

/* What the store holds for a placed job: the small record, without the shared parts. */
static json_t *stored(struct sched_util *u, const char *job)
{
    MDB_txn *txn = NULL;
    json_t *doc = NULL;
    ck_assert_int_eq(store_txn_begin(u->st, STORE_READ, &txn, NULL), 0);
    ck_assert_int_eq(store_doc_get(txn, STORE_DB_WHY, job, &doc, NULL), 0);
    store_txn_abort(&txn);
    return doc;
}

START_TEST(test_why_placed_full_answer_small_record)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(&u, CLUSTER, 1000));
    json_decref(sched_util_cycle(&u, 2000));
    json_t *g = sched_util_why(&u, "default/g"), *p = sched_util_why(&u, "default/p");
    assert_placed_doc(g, "default/g", "g-0", 1);
    assert_placed_doc(p, "default/p", "p", 0);

    json_t *raw = stored(&u, "default/g");
    ck_assert_ptr_null(json_object_get(raw, "primary"));
    ck_assert_ptr_null(json_object_get(raw, "blockers"));
    ck_assert_ptr_null(json_object_get(raw, "gangTimeout"));
    ck_assert_ptr_nonnull(json_object_get(raw, "placement"));
    json_decref(raw);

    /* the same answer from a scheduler rebuilt from the store */
    sched_util_reopen(&u);
    json_t *g2 = sched_util_why(&u, "default/g"), *p2 = sched_util_why(&u, "default/p");
    char *d1 = json_dumps(g, JSON_COMPACT), *d2 = json_dumps(g2, JSON_COMPACT);
    ck_assert_msg(json_equal(g, g2), "before %s\nafter  %s", d1, d2);
    free(d1);
    free(d2);
    ck_assert(json_equal(p, p2));
    json_decref(g);
    json_decref(p);
    json_decref(g2);
    json_decref(p2);
    sched_util_close(&u);
}
END_TEST

/* A placed job's queue part is the queue as its placement left it: allocations move with
 * each placement, and what the queue deserves moves with its demand (one more pod, on a
 * node added before the second cycle), though the text of the plan's members is kept
 * between documents. */
START_TEST(test_why_placed_queue_part_at_placement)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(&u, CLUSTER, 1000));
    json_decref(sched_util_cycle(&u, 2000));
    sched_util_applyf(
        &u, 3000,
        "---\n{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n2\"},"
        "\"status\":{\"allocatable\":{\"cpu\":\"4\"}}}\n---\n"
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"q\","
        "\"namespace\":\"default\"},\"spec\":{\"containers\":[{\"name\":\"c\","
        "\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}\n");
    json_decref(sched_util_cycle(&u, 4000));
    json_t *p = sched_util_why(&u, "default/p"), *q = sched_util_why(&u, "default/q");
    json_t *pq = json_object_get(p, "queue"), *qq = json_object_get(q, "queue");
    ck_assert_str_eq(sched_util_str2(pq, "deserved", "cpu"), "3");
    ck_assert_str_eq(sched_util_str2(qq, "deserved", "cpu"), "4");
    ck_assert_str_eq(sched_util_str2(qq, "allocated", "cpu"), "4");
    const char *pa = sched_util_str2(pq, "allocated", "cpu");
    ck_assert_msg(!strcmp(pa, "1") || !strcmp(pa, "3"), "p's queue allocated %s", pa);
    json_decref(p);
    json_decref(q);
    sched_util_close(&u);
}
END_TEST

/* Jobs of two queues placed in one cycle: each document has its own queue's plan (the
 * text of the plan's members is kept between documents only while it is the same). */
START_TEST(test_why_placed_queue_part_per_queue)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    char buf[1024];
    json_decref(sched_util_apply(&u,
                                 "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
                                 "\"n1\"},\"status\":{\"allocatable\":{\"cpu\":\"8\"}}}",
                                 1000));
    const char *names[] = {"qa", "qb"};
    for (int q = 0; q < 2; q++) {
        snprintf(buf, sizeof(buf),
                 "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\","
                 "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"weight\":1}}",
                 names[q]);
        json_decref(sched_util_apply(&u, buf, 1000));
    }
    /* qa asks 1 cpu, qb 2: what each deserves is its demand */
    const char *pods[][2] = {{"a0", "qa"}, {"b0", "qb"}, {"b1", "qb"}};
    for (int i = 0; i < 3; i++) {
        snprintf(buf, sizeof(buf),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                 "\"namespace\":\"default\",\"annotations\":{\"scheduling.volcano.sh/queue-name\":"
                 "\"%s\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\","
                 "\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
                 pods[i][0], pods[i][1]);
        json_decref(sched_util_apply(&u, buf, 1000));
    }
    json_decref(sched_util_cycle(&u, 2000));
    for (int i = 0; i < 3; i++) {
        char id[64];
        snprintf(id, sizeof(id), "default/%s", pods[i][0]);
        json_t *w = sched_util_why(&u, id), *q = json_object_get(w, "queue");
        ck_assert_str_eq(sched_util_str2(w, "queue", "name"), pods[i][1]);
        ck_assert_str_eq(sched_util_str2(q, "deserved", "cpu"), i == 0 ? "1" : "2");
        json_decref(w);
    }
    sched_util_close(&u);
}
END_TEST

/* The node pod is bound to. */
static void assert_node(struct sched_util *u, const char *pod, const char *want)
{
    char *node = sched_util_node_of(u, pod);
    ck_assert_str_eq(node, want);
    free(node);
}

/* A note (bind mode's write-back) adds to the history and keeps the rest of the answer. */
START_TEST(test_why_placed_note_keeps_answer)
{
    struct sched_util u;
    struct err err = ERR_INIT;
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(&u, CLUSTER, 1000));
    json_decref(sched_util_cycle(&u, 2000));
    json_t *entry = json_pack("{s:s,s:s}", "code", "WritebackAbandoned", "message", "test");
    ck_assert_msg(sched_why_note(u.s, "default/p", entry, 3000, &err) == 0, "%s", err.msg);
    json_decref(entry);
    json_t *p = sched_util_why(&u, "default/p"), *h = json_object_get(p, "history");
    assert_members(p, 0);
    ck_assert_int_eq(json_array_size(h), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 1), "code")),
                     "WritebackAbandoned");
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(p, "placement"), "nodes"), "p")),
                     "n1");
    json_decref(p);
    sched_util_close(&u);
}
END_TEST

/* A job placed at its first try keeps no history in memory (the placed record writes its
 * one entry): preempted in a later cycle, its history is read back from the document, so it
 * says Placed, then PreemptedBy. */
START_TEST(test_why_placed_first_try_then_preempted)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    sched_util_applyf(&u, 1000,
                      "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                      "status: {allocatable: {cpu: \"4\"}}\n---\n"
                      "apiVersion: v1\nkind: Pod\nmetadata: {name: lo, namespace: default}\n"
                      "spec: {priority: 1, containers: [{name: c, image: x, resources: "
                      "{requests: {cpu: \"4\"}}}]}\n");
    json_decref(sched_util_cycle(&u, 2000));
    assert_node(&u, "default/lo", "n1");
    sched_util_applyf(&u, 3000,
                      "apiVersion: v1\nkind: Pod\nmetadata: {name: hi, namespace: default}\n"
                      "spec: {priority: 100, containers: [{name: c, image: x, resources: "
                      "{requests: {cpu: \"4\"}}}]}\n");
    json_decref(sched_util_cycle(&u, 4000));
    json_t *w = sched_util_why(&u, "default/lo"), *h = json_object_get(w, "history");
    ck_assert_str_eq(json_string_value(json_object_get(w, "state")), "Preempted");
    ck_assert_int_eq(json_array_size(h), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 0), "code")), "Placed");
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(h, 0), "cycle")), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 1), "code")),
                     "PreemptedBy");
    json_decref(w);
    sched_util_close(&u);
}
END_TEST

/* The history entry i of job id's why: its cycle, time and code. */
static void assert_entry(struct sched_util *u, const char *id, size_t n, size_t i, int cycle,
                         const char *ts, const char *code)
{
    json_t *w = sched_util_why(u, id), *h = json_object_get(w, "history");
    ck_assert_int_eq(json_array_size(h), n);
    json_t *e = json_array_get(h, i);
    ck_assert_int_eq(json_integer_value(json_object_get(e, "cycle")), cycle);
    ck_assert_str_eq(json_string_value(json_object_get(e, "ts")), ts);
    ck_assert_str_eq(json_string_value(json_object_get(e, "code")),
                     code ? code : sched_util_str2(w, "primary", "code"));
    json_decref(w);
}

/* A job failing at its first try keeps its one history entry without a tree (why_record.c):
 * the entry says the cycle, time and reason, a failure for the same reason adds nothing,
 * and once placed (here after a restart, which reads the history back) it says both.
 * restart 2: placed at the first cycle after the restart, with nothing in memory (its
 * record is written only if it has no document: it has one, which is read first). */
START_TEST(test_why_placed_first_failure_history)
{
    for (int restart = 0; restart <= 2; restart++) {
        struct sched_util u;
        sched_util_open(&u, NULL);
        sched_util_applyf(&u, 1000,
                          "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                          "status: {allocatable: {cpu: \"4\"}}\n---\n"
                          "apiVersion: v1\nkind: Pod\nmetadata: {name: big, namespace: default}\n"
                          "spec: {containers: [{name: c, image: x, resources: "
                          "{requests: {cpu: \"8\"}}}]}\n");
        json_decref(sched_util_cycle(&u, 2000));
        assert_entry(&u, "default/big", 1, 0, 1, "1970-01-01T00:00:02Z", NULL);
        json_t *w = sched_util_why(&u, "default/big");
        char *code = strdup(sched_util_str2(w, "primary", "code"));
        json_decref(w);
        if (restart)
            sched_util_reopen(&u);
        int placed_cycle = 2;
        if (restart < 2) {
            json_decref(sched_util_cycle(&u, 400000)); /* past its backoff: fails again */
            assert_entry(&u, "default/big", 1, 0, 1, "1970-01-01T00:00:02Z", code);
            placed_cycle = 3;
        }
        sched_util_applyf(&u, 401000,
                          "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"
                          "status: {allocatable: {cpu: \"16\"}}\n");
        json_decref(sched_util_cycle(&u, 402000));
        assert_node(&u, "default/big", "n2");
        assert_entry(&u, "default/big", 2, 0, 1, "1970-01-01T00:00:02Z", code);
        assert_entry(&u, "default/big", 2, 1, placed_cycle, "1970-01-01T00:06:42Z", "Placed");
        json_t *now = sched_util_why(&u, "default/big");
        ck_assert_str_eq(json_string_value(json_object_get(now, "state")), "Scheduled");
        json_decref(now);
        free(code);
        sched_util_close(&u);
    }
}
END_TEST

/* A failing job's document is written in parts (its "ahead" text shared by the jobs that
 * fail in a row): what is stored decodes to the full document, members in order. */
START_TEST(test_why_placed_failing_document_in_parts)
{
    static const char *const FAILED[] = {
        "job",        "state",    "cycle",      "auditSeq", "primary", "blockers", "gang",
        "nodeFilter", "topology", "preemption", "ahead",    "history", "queue",    NULL};
    struct sched_util u;
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(&u, CLUSTER, 1000));
    char big[1024];
    for (int i = 0; i < 3; i++) {
        snprintf(big, sizeof(big),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"big%d\","
                 "\"namespace\":\"default\",\"creationTimestamp\":\"2026-01-01T00:00:0%dZ\"},"
                 "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{"
                 "\"requests\":{\"cpu\":\"2\"}}}]}}",
                 i, i + 1);
        json_decref(sched_util_apply(&u, big, 1000));
    }
    json_decref(sched_util_cycle(&u, 2000));
    for (int i = 0; i < 3; i++) {
        snprintf(big, sizeof(big), "default/big%d", i);
        if (i > 0) { /* big1 and big2 differ from big0 only by name: records of its class */
            json_t *raw = stored(&u, big);
            ck_assert_ptr_nonnull(json_object_get(raw, "classRecord"));
            json_decref(raw);
            continue;
        }
        json_t *raw = stored(&u, big), *v;
        const char *key;
        size_t k = 0;
        json_object_foreach(raw, key, v)
        {
            ck_assert_msg(FAILED[k] && !strcmp(key, FAILED[k]), "%s: member %zu is '%s'", big, k,
                          key);
            k++;
        }
        ck_assert_ptr_null(FAILED[k]);
        ck_assert_str_eq(sched_util_str2(raw, "primary", "code"), "TakenByEarlierJobs");
        json_t *a = json_array_get(json_object_get(raw, "ahead"), 0);
        ck_assert_str_eq(json_string_value(json_object_get(a, "job")), "default/g");
        json_decref(raw);
    }
    sched_util_close(&u);
}
END_TEST

static Suite *why_placed_suite(void)
{
    Suite *s = suite_create("why_placed");
    TCase *tc = tcase_create("why_placed");
    tcase_add_test(tc, test_why_placed_full_answer_small_record);
    tcase_add_test(tc, test_why_placed_note_keeps_answer);
    tcase_add_test(tc, test_why_placed_first_try_then_preempted);
    tcase_add_test(tc, test_why_placed_failing_document_in_parts);
    tcase_add_test(tc, test_why_placed_first_failure_history);
    tcase_add_test(tc, test_why_placed_queue_part_at_placement);
    tcase_add_test(tc, test_why_placed_queue_part_per_queue);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(why_placed_suite());
}
