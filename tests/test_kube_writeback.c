/*
 * test_kube_writeback.c - write-back that never wedges: one pod's binding failing (500,
 * dropped connections) while the others bind, bindings in parallel, abandonment after
 * writeback_giveup (the audit record, the why history, the counter), and a crash between the API
 * call and the acknowledgement.
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

static json_t *fail_pod(const char *pod, double seconds)
{
    return json_pack("{s:s,s:f,s:i}", "pod", pod, "seconds", seconds, "code", 500);
}

struct bound {
    struct kube_fx *f;
    const char *key;
};

static int api_bound(void *ctx)
{
    struct bound *b = ctx;
    json_t *o = kube_testapi_object(&b->f->api, "pods", b->key);
    const char *n = json_string_value(json_object_get(json_object_get(o, "spec"), "nodeName"));
    int ok = n && *n;
    json_decref(o);
    return ok;
}

static int api_is_bound(struct kube_fx *f, const char *key)
{
    struct bound b = {f, key};
    return api_bound(&b);
}

static int a_retried(void *ctx)
{
    struct kube_fx *f = ctx;
    return kube_testapi_stat(&f->api, "binding_failed:default/a") >= 3;
}

static int two_bound(void *ctx)
{
    struct kube_fx *f = ctx;
    return sched_util_audit_count(&f->u, "bound", NULL) >= 2;
}

/* One pod's binding answered 500: the other pods bind meanwhile (one of them after two
 * dropped connections); once the server takes it, the pod binds too (retried with
 * backoff, nothing given up). */
START_TEST(test_kube_writeback_one_pod_failing_others_flow)
{
    struct kube_fx f;
    kube_fx_open(&f);
    const char *names[] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++)
        kube_fx_put(&f, "pods", kube_test_pod(names[i], "muster", NULL, NULL, "1"));
    json_t *b = fail_pod("default/a", 3600);
    json_decref(kube_testapi_control(&f.api, "fail-binding", b));
    json_decref(b);
    /* c's first two bindings lose the connection instead: retried as well */
    b = json_pack("{s:s,s:i,s:b}", "pod", "default/c", "count", 2, "drop", 1);
    json_decref(kube_testapi_control(&f.api, "fail-binding", b));
    json_decref(b);
    kube_fx_start(&f, 600000);
    json_decref(sched_util_cycle(&f.u, 1000));
    struct bound wb = {&f, "default/b"}, wc = {&f, "default/c"};
    ck_assert(kube_test_wait(api_bound, &wb, 10000));
    ck_assert(kube_test_wait(api_bound, &wc, 10000));
    ck_assert(!api_is_bound(&f, "default/a"));
    struct bound wa = {&f, "default/a"};
    /* a's binding keeps being retried */
    ck_assert(kube_test_wait(a_retried, &f, 10000));
    ck_assert_int_ge(kube_fx_counter(&f, "writebackFailures"), 3);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", NULL), 2);
    b = fail_pod("default/a", 0);
    json_decref(kube_testapi_control(&f.api, "fail-binding", b));
    json_decref(b);
    ck_assert(kube_test_wait(api_bound, &wa, 10000));
    struct err err = ERR_INIT;
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", NULL), 3);
    ck_assert_int_eq(kube_fx_counter(&f, "writebackAbandoned"), 0);
    ck_assert_int_eq(kube_testapi_stat(&f.api, "bound"), 3);
    ck_assert_int_eq(kube_testapi_stat(&f.api, "binding_failed:default/c"), 2);
    kube_fx_close(&f);
}
END_TEST

/* Bindings of different pods go out in parallel (each held 150 ms by the server, as an
 * API server's latency would): several are in flight at once, every pod is bound exactly
 * once, and each has its one "bound" record. */
START_TEST(test_kube_writeback_parallel)
{
    struct kube_fx f;
    char name[16];
    kube_fx_open(&f);
    for (int i = 0; i < 24; i++) {
        snprintf(name, sizeof(name), "p%02d", i);
        kube_fx_put(&f, "pods", kube_test_pod(name, "muster", NULL, NULL, "100m"));
    }
    json_t *d = json_pack("{s:i}", "ms", 150);
    json_decref(kube_testapi_control(&f.api, "binding-delay", d));
    json_decref(d);
    kube_fx_start(&f, 600000);
    json_decref(sched_util_cycle(&f.u, 1000));
    struct err err = ERR_INIT;
    ck_assert_msg(kube_wait_writeback(f.k, 60000, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(kube_testapi_stat(&f.api, "bound"), 24);
    ck_assert_int_eq(kube_testapi_stat(&f.api, "binding"), 24); /* none twice */
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", NULL), 24);
    long most = kube_testapi_stat(&f.api, "binding_max_inflight");
    ck_assert_msg(most >= 4, "at most %ld bindings were in flight at once", most);
    kube_fx_close(&f);
}
END_TEST

static int abandoned(void *ctx)
{
    return kube_fx_counter(ctx, "writebackAbandoned") >= 1;
}

/* A binding failing past writeback_giveup is given up: a "writeback-abandoned" record, a
 * WritebackAbandoned entry in the job's why history, the counter, and the pod pending
 * again in the store; the other pod is bound. */
START_TEST(test_kube_writeback_abandoned)
{
    struct kube_fx f;
    kube_fx_open(&f);
    kube_fx_put(&f, "pods", kube_test_pod("a", "muster", NULL, NULL, "1"));
    kube_fx_put(&f, "pods", kube_test_pod("b", "muster", NULL, NULL, "1"));
    json_t *b = fail_pod("default/a", 3600);
    json_decref(kube_testapi_control(&f.api, "fail-binding", b));
    json_decref(b);
    kube_fx_start(&f, 800);
    json_decref(sched_util_cycle(&f.u, 1000));
    ck_assert(kube_test_wait(abandoned, &f, 15000));
    struct err err = ERR_INIT;
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    ck_assert(api_is_bound(&f, "default/b"));
    ck_assert(!api_is_bound(&f, "default/a"));
    ck_assert_int_eq(kube_fx_counter(&f, "writebackAbandoned"), 1);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "writeback-abandoned", NULL), 1);
    json_t *audit = sched_util_audit(&f.u), *rec, *found = NULL;
    size_t i;
    json_array_foreach(audit, i, rec)
    {
        if (!strcmp(kube_fx_str(rec, "kind"), "writeback-abandoned"))
            found = rec;
    }
    ck_assert_ptr_nonnull(found);
    ck_assert_str_eq(kube_fx_str(found, "job"), "default/a");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(found, "pods"), 0)),
                     "default/a");
    ck_assert_str_eq(kube_fx_str(json_object_get(found, "details"), "of"), "placed");
    kube_fx_matches(kube_fx_str(found, "reason"),
                    "^write-back of 'placed' given up after [0-9]+s of failures: POST "
                    "'/api/v1/namespaces/default/pods/a/binding': HTTP 500");
    json_decref(audit);
    char *node = sched_util_node_of(&f.u, "default/a");
    ck_assert_str_eq(node, ""); /* pending again: the next cycle places it anew */
    free(node);
    json_t *why = sched_util_why(&f.u, "default/a"), *h, *entry = NULL;
    json_array_foreach(json_object_get(why, "history"), i, h)
    {
        if (!strcmp(kube_fx_str(h, "code"), "WritebackAbandoned"))
            entry = h;
    }
    ck_assert_ptr_nonnull(entry);
    ck_assert_str_eq(kube_fx_str(entry, "pod"), "default/a");
    kube_fx_matches(kube_fx_str(entry, "message"), "given up after");
    json_decref(why);
    kube_fx_close(&f);
}
END_TEST

/* The seq of the "placed" record of job. */
static uint64_t placed_seq(struct kube_fx *f, const char *job)
{
    json_t *audit = sched_util_audit(&f->u), *rec;
    size_t i;
    uint64_t seq = 0;
    json_array_foreach(audit, i, rec)
    {
        const char *j = json_string_value(json_object_get(rec, "job"));
        if (!strcmp(kube_fx_str(rec, "kind"), "placed") && j && !strcmp(j, job))
            seq = (uint64_t)json_integer_value(json_object_get(rec, "seq"));
    }
    json_decref(audit);
    ck_assert_msg(seq > 0, "no placed record of %s", job);
    return seq;
}

/* The persisted write-back document (new). */
static json_t *writeback_doc(struct kube_fx *f)
{
    MDB_txn *txn = NULL;
    json_t *doc = NULL;
    ck_assert_int_eq(store_txn_begin(f->u.st, STORE_READ, &txn, NULL), 0);
    ck_assert_int_eq(store_doc_get(txn, STORE_DB_MIRROR, "writeback", &doc, NULL), 0);
    store_txn_abort(&txn);
    return doc;
}

/* Crash between the API call and the ack: the binding was made but not acknowledged;
 * after a restart it is redone once (409, same node: bound), and a record finished out
 * of order before the crash (b, behind a failing a) is not redone. */
START_TEST(test_kube_writeback_crash_between_call_and_ack)
{
    struct kube_fx f;
    struct err err = ERR_INIT;
    kube_fx_open(&f);
    kube_fx_put(&f, "pods", kube_test_pod("a", "muster", NULL, NULL, "1"));
    kube_fx_put(&f, "pods", kube_test_pod("b", "muster", NULL, NULL, "1"));
    kube_fx_put(&f, "pods", kube_test_pod("c", "muster", NULL, NULL, "1"));
    json_t *b = fail_pod("default/a", 3600);
    json_decref(kube_testapi_control(&f.api, "fail-binding", b));
    json_decref(b);
    kube_fx_start(&f, 600000);
    /* a and b in one cycle (a before b), then the write-back stops ("crash") with a
     * unfinished and b done out of order */
    json_decref(sched_util_cycle(&f.u, 1000));
    struct bound wb = {&f, "default/b"};
    ck_assert(kube_test_wait(api_bound, &wb, 10000));
    ck_assert(kube_test_wait(api_bound, &(struct bound){&f, "default/c"}, 10000));
    ck_assert(kube_test_wait(two_bound, &f, 10000));
    kube_close(f.k);
    f.k = NULL;
    /* what the crash leaves: ackSeq before a's record, b listed done after it */
    uint64_t seq_a = placed_seq(&f, "default/a"), seq_b = placed_seq(&f, "default/b");
    ck_assert_uint_lt(seq_a, seq_b); /* a's record comes first: b finished out of order */
    json_t *wb_doc = writeback_doc(&f);
    ck_assert_int_eq(json_integer_value(json_object_get(wb_doc, "ackSeq")), seq_a - 1);
    char key[32];
    snprintf(key, sizeof(key), "%llu", (unsigned long long)seq_b);
    json_t *done_b = json_object_get(json_object_get(wb_doc, "done"), key);
    ck_assert_int_eq(json_array_size(done_b), 1);
    ck_assert_str_eq(json_string_value(json_array_get(done_b, 0)), "default/b");
    json_decref(wb_doc);
    long long b_calls = kube_testapi_stat(&f.api, "binding");
    /* the call for a "was made" before the crash: the server has it bound */
    char *node = sched_util_node_of(&f.u, "default/a");
    json_t *pa = kube_testapi_object(&f.api, "pods", "default/a");
    json_object_set_new(json_object_get(pa, "spec"), "nodeName", json_string(node));
    json_object_del(json_object_get(pa, "metadata"), "managedFields");
    kube_fx_put(&f, "pods", pa);
    b = fail_pod("default/a", 0);
    json_decref(kube_testapi_control(&f.api, "fail-binding", b));
    json_decref(b);
    kube_fx_start(&f, 600000);
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    /* a: redone once, answered 409 on the same node: bound; b and c: not redone */
    ck_assert_int_eq(kube_testapi_stat(&f.api, "binding"), b_calls + 1);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", "default/a"), 1);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", NULL), 3);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bind-refused", NULL), 0);
    /* and a second restart redoes nothing */
    kube_close(f.k);
    f.k = NULL;
    kube_fx_start(&f, 600000);
    ck_assert_msg(kube_wait_writeback(f.k, 10000, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(kube_testapi_stat(&f.api, "binding"), b_calls + 1);
    ck_assert_int_eq(sched_util_audit_count(&f.u, "bound", NULL), 3);
    free(node);
    kube_fx_close(&f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("kube_writeback");
    TCase *tc = tcase_create("kube_writeback");
    tcase_set_timeout(tc, 90);
    tcase_add_test(tc, test_kube_writeback_one_pod_failing_others_flow);
    tcase_add_test(tc, test_kube_writeback_parallel);
    tcase_add_test(tc, test_kube_writeback_abandoned);
    tcase_add_test(tc, test_kube_writeback_crash_between_call_and_ack);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(suite());
}
