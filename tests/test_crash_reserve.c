/*
 * test_crash_reserve.c - kill musterd with SIGKILL at random moments while gangs starve,
 * reserve and are placed (docs/reservations.md): 16 whole-node (4 cpu) slots; every round
 * brings one-node pods that end themselves after 1 s (activeDeadlineSeconds, so the
 * scheduler fails them: deadline-exceeded) and a gang of 4 whole-node pods that starves
 * after 20 ms (max_wait 0.02), so gangs reserve the nodes the short pods free and later
 * short pods backfill or wait. After every kill the store must be as of a committed cycle
 * (crash_support.h) and the reservations consistent with it:
 *   - each stored reservation's job is a PodGroup of the store with a pending pod, or a
 *     pending lone pod (max_wait is global): a placed job's reservation went in the
 *     transaction that placed it;
 *   - no node is in two reservations;
 *   - the last "reserved" audit record of each reserved job names the stored nodes, and no
 *     "unreserved" record follows it;
 *   - the audit chain verifies (sched_invariants).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_run.h"
#include "crash_support.h"
#include "scheduler.h"
#include "err.h"
#include "model.h"

#define NODES 16
#define KILLS 25

static char *cluster_yaml(void)
{
    size_t cap = 1 << 15, len = 0;
    char *buf = malloc(cap);
    for (int i = 0; i < NODES; i++)
        len += (size_t)snprintf(buf + len, cap - len,
                                "apiVersion: v1\nkind: Node\nmetadata:\n  name: n%02d\nstatus:\n"
                                "  allocatable: {cpu: \"4\", memory: 16Gi, pods: \"20\"}\n---\n",
                                i);
    return buf;
}

/* n one-node pods of round k that end after 1 s. */
static char *shorts_yaml(int k, int n)
{
    size_t cap = 8192, len = 0;
    char *buf = malloc(cap);
    for (int p = 0; p < n; p++)
        len += (size_t)snprintf(buf + len, cap - len,
                                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: s-%d-%d\n"
                                "  namespace: crash\nspec:\n  activeDeadlineSeconds: 1\n"
                                "  containers:\n  - name: c\n    resources: {requests: {cpu: "
                                "\"4\", memory: 1Gi}}\n---\n",
                                k, p);
    return buf;
}

/* A gang of 4 whole-node pods with a 1 s limit. */
static char *gang_yaml(int k)
{
    size_t cap = 8192, len = 0;
    char *buf = malloc(cap);
    len += (size_t)snprintf(buf + len, cap - len,
                            "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"
                            "metadata:\n  name: g-%d\n  namespace: crash\nspec:\n  minMember: 4\n"
                            "---\n",
                            k);
    for (int p = 0; p < 4; p++)
        len += (size_t)snprintf(
            buf + len, cap - len,
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: g-%d-%d\n  namespace: crash\n"
            "  labels: {pod-group.scheduling.sigs.k8s.io: g-%d}\nspec:\n"
            "  activeDeadlineSeconds: 1\n  containers:\n  - name: c\n"
            "    resources: {requests: {cpu: \"4\", memory: 1Gi}}\n---\n",
            k, p, k);
    return buf;
}

struct resv_ctx {
    int kill_no;
    MDB_txn *txn;
    json_t *last;  /* job -> its last "reserved" record's nodes, or null after "unreserved" */
    json_t *nodes; /* node -> job, over the stored reservations */
    int pending;   /* has_pending found one */
    long seen, most;
};

static int audit_cb(void *ctx, uint64_t seq, const char *json, size_t len)
{
    struct resv_ctx *rc = ctx;
    (void)seq;
    if (!memmem(json, len, "reserved\"", 9))
        return 0;
    json_t *rec = json_loadb(json, len, 0, NULL);
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    const char *job = json_string_value(json_object_get(rec, "job"));
    if (kind && job && !strcmp(kind, "reserved"))
        json_object_set(rc->last, job, json_object_get(rec, "nodes"));
    else if (kind && job && !strcmp(kind, "unreserved"))
        json_object_set_new(rc->last, job, json_null());
    json_decref(rec);
    return 0;
}

static int has_pending(void *ctx, const char *key)
{
    struct resv_ctx *rc = ctx;
    json_t *pod = NULL;
    if (store_get(rc->txn, MODEL_POD, key, &pod, NULL) == 0 && model_pod_json_pending(pod))
        rc->pending = 1;
    json_decref(pod);
    return 0;
}

static int resv_cb(void *ctx, const char *key, json_t *doc)
{
    struct resv_ctx *rc = ctx;
    struct err err = ERR_INIT;
    json_t *pg = NULL;
    size_t i;
    json_t *n;
    rc->pending = 0;
    if (store_get(rc->txn, MODEL_PODGROUP, key, &pg, &err) == 0)
        ck_assert_int_eq(store_pods_of_group(rc->txn, key, has_pending, rc, &err), 0);
    else /* a lone pod starves too (max_wait is global) */
        has_pending(rc, key);
    json_decref(pg);
    ck_assert_msg(rc->pending, "kill %d: '%s' holds a reservation with no pending pod", rc->kill_no,
                  key);
    rc->seen++;
    json_array_foreach(json_object_get(doc, "nodes"), i, n)
    {
        const char *name = json_string_value(n);
        json_t *other = json_object_get(rc->nodes, name);
        ck_assert_msg(!other, "kill %d: node '%s' is reserved for '%s' and '%s'", rc->kill_no, name,
                      other ? json_string_value(other) : "", key);
        json_object_set_new(rc->nodes, name, json_string(key));
    }
    json_t *last = json_object_get(rc->last, key);
    ck_assert_msg(last && json_equal(last, json_object_get(doc, "nodes")),
                  "kill %d: the reservation of '%s' is not the one its last audit record names",
                  rc->kill_no, key);
    return 0;
}

static void check_resv(MDB_txn *txn, int kill_no, void *ctx)
{
    struct resv_ctx *rc = ctx;
    struct err err = ERR_INIT;
    long before = rc->seen;
    rc->seen = 0;
    rc->kill_no = kill_no;
    rc->txn = txn;
    rc->last = json_object();
    rc->nodes = json_object();
    ck_assert_int_eq(store_audit_scan(txn, 1, 0, audit_cb, rc, &err), 0);
    ck_assert_msg(store_doc_each(txn, STORE_DB_RESERVATIONS, NULL, resv_cb, rc, &err) == 0,
                  "kill %d: reservations: %s", kill_no, err.msg);
    rc->most = rc->seen > rc->most ? rc->seen : rc->most;
    rc->seen += before;
    json_decref(rc->last);
    json_decref(rc->nodes);
}

START_TEST(test_crash_reserve_sigkill_across_reservations)
{
    struct musterd m;
    char root[256];
    char *cfg = crash_config("cycle_interval: 0.01\nmark_running: true\ngrace_period: 0\n"
                             "max_wait: 0.02\n");
    const char *args[] = {"--config", cfg, NULL};
    struct resv_ctx rc = {0};

    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    ck_assert_int_eq(musterd_start(&m, NULL, args), 0);
    snprintf(root, sizeof(root), "%s", m.root);
    crash_post_yaml(&m, cluster_yaml());
    for (int k = 1; k <= KILLS; k++) {
        crash_post_yaml(&m, shorts_yaml(k, 14));
        crash_post_yaml(&m, gang_yaml(k));
        crash_kill(&m, 400000);
        crash_check_store(m.data_dir, k, check_resv, &rc);
        ck_assert_int_eq(musterd_start(&m, root, args), 0);
    }
    usleep(500000);
    ck_assert_int_eq(musterd_stop(&m), 0);
    crash_check_store(m.data_dir, KILLS + 1, check_resv, &rc);
    /* across every kill and restart, the log explains each decision, the reservations
     * among them (musterd's options: mark_running, grace_period 0, max_wait 0.02) */
    crash_replay_store(
        m.data_dir, &(struct sched_options){.mark_running = 1, .grace_ms = 1, .max_wait_ms = 20});
    /* the kills landed while reservations were held, not on an idle daemon */
    ck_assert_msg(rc.seen > 0, "no kill found a reservation stored");
    musterd_cleanup(&m);
    crash_config_free(cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("crash_reserve");
    TCase *tc = tcase_create("sigkill");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_crash_reserve_sigkill_across_reservations);
    suite_add_tcase(s, tc);
    return check_run(s);
}
