/*
 * test_crash_preempt.c - kill musterd with SIGKILL at random moments while it preempts:
 * a cluster of four blocks filled by low-priority gangs, a MustGather BlockLayer gang of
 * higher priority than everything before it arriving each round, a 0.2 s grace period so
 * that marking victims, removing them and binding the preemptor all happen between kills
 * (a much shorter grace ends at the next 10 ms cycle, and kills would seldom find a victim
 * marked).
 * After every kill the store must be as of a committed cycle (crash_support.h) and the
 * preemption state must be whole:
 *   - every pod muster marked (deletionTimestamp, DisruptionTarget) is a victim of a
 *     ledger entry (STORE_DB_PREEMPTIONS);
 *   - every ledger entry's victims are marked or gone;
 *   - every pod's status.nominatedNodeName names an existing node;
 *   - the audit chain verifies (sched_invariants).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "crash_support.h"
#include "scheduler.h"
#include "err.h"
#include "check_run.h"

#define BLOCKS 4
#define PER_BLOCK 4
#define KILLS 50

static char *cluster_yaml(void)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    len += (size_t)snprintf(
        buf + len, cap - len,
        "{\"apiVersion\": \"scheduling.koordinator.sh/v1alpha1\", \"kind\": "
        "\"ClusterNetworkTopology\", \"metadata\": {\"name\": \"default\"}, \"spec\": "
        "{\"networkTopologySpec\": [{\"topologyLayer\": \"BlockLayer\", \"labelKey\": "
        "[\"block\"]}, {\"topologyLayer\": \"NodeTopologyLayer\", \"parentTopologyLayer\": "
        "\"BlockLayer\"}]}}\n---\n");
    for (int b = 0; b < BLOCKS; b++)
        for (int i = 0; i < PER_BLOCK; i++)
            len += (size_t)snprintf(buf + len, cap - len,
                                    "apiVersion: v1\nkind: Node\nmetadata:\n  name: b%d-n%d\n"
                                    "  labels: {block: b%d}\nstatus:\n  allocatable: {cpu: "
                                    "\"4\", memory: 16Gi, pods: \"20\"}\n---\n",
                                    b, i, b);
    return buf;
}

/* A gang of size whole-node pods; with gather a MustGather BlockLayer spec. */
static char *gang_yaml(const char *name, int size, int priority, int gather)
{
    size_t cap = 1 << 14, len = 0;
    char *buf = malloc(cap);
    len += (size_t)snprintf(buf + len, cap - len,
                            "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"
                            "metadata:\n  name: %s\n  namespace: crash\n",
                            name);
    if (gather)
        len += (size_t)snprintf(buf + len, cap - len,
                                "  annotations:\n    gang.scheduling.koordinator.sh/"
                                "network-topology-spec: '{\"gatherStrategy\": [{\"layer\": "
                                "\"BlockLayer\", \"strategy\": \"MustGather\"}]}'\n");
    len += (size_t)snprintf(buf + len, cap - len, "spec:\n  minMember: %d\n---\n", size);
    for (int p = 0; p < size; p++)
        len += (size_t)snprintf(
            buf + len, cap - len,
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s-%d\n  namespace: crash\n"
            "  labels: {pod-group.scheduling.sigs.k8s.io: %s}\nspec:\n  priority: %d\n"
            "  containers:\n  - name: c\n    resources: {requests: {cpu: \"4\", memory: "
            "1Gi}}\n---\n",
            name, p, name, priority);
    return buf;
}

struct preempt_ctx {
    json_t *victims; /* pod key -> ledger entry id, for the store being checked */
    int kill_no;
    long entries, bound;                                      /* of the store being checked */
    long marked_seen, nominated_seen, entries_max, bound_max; /* over all kills */
};

static int entry_cb(void *ctx, const char *key, json_t *entry)
{
    struct preempt_ctx *pc = ctx;
    size_t i;
    json_t *x;
    (void)key;
    pc->entries++;
    pc->bound += json_is_true(json_object_get(entry, "bound"));
    json_array_foreach(json_object_get(entry, "victims"), i, x) json_object_set(
        pc->victims, json_string_value(json_object_get(x, "pod")), json_object_get(entry, "id"));
    return 0;
}

static int disruption_target(json_t *pod)
{
    size_t i;
    json_t *cd;
    json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, cd)
    {
        const char *type = json_string_value(json_object_get(cd, "type"));
        if (type && !strcmp(type, "DisruptionTarget"))
            return 1;
    }
    return 0;
}

struct pod_ctx {
    struct preempt_ctx *pc;
    MDB_txn *txn;
};

static int pod_cb(void *ctx, const char *key, json_t *pod)
{
    struct pod_ctx *x = ctx;
    struct preempt_ctx *pc = x->pc;
    int deleting = json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp") != NULL;
    int target = disruption_target(pod);
    if (deleting || target) {
        pc->marked_seen++;
        ck_assert_msg(json_object_get(pc->victims, key) != NULL,
                      "kill %d: pod '%s' marked for deletion but no ledger entry names it",
                      pc->kill_no, key);
    }
    const char *nom =
        json_string_value(json_object_get(json_object_get(pod, "status"), "nominatedNodeName"));
    if (nom && *nom) {
        json_t *node = NULL;
        struct err err = ERR_INIT;
        pc->nominated_seen++;
        ck_assert_msg(store_get(x->txn, MODEL_NODE, nom, &node, &err) == 0,
                      "kill %d: pod '%s' nominated to missing node '%s'", pc->kill_no, key, nom);
        json_decref(node);
    }
    return 0;
}

static void check_preemption(MDB_txn *txn, int kill_no, void *ctx)
{
    struct preempt_ctx *pc = ctx;
    struct err err = ERR_INIT;
    struct pod_ctx x = {pc, txn};
    const char *key;
    json_t *id;
    pc->victims = json_object();
    pc->kill_no = kill_no;
    pc->entries = pc->bound = 0;
    ck_assert_msg(store_doc_each(txn, STORE_DB_PREEMPTIONS, "e:", entry_cb, pc, &err) == 0,
                  "kill %d: ledger: %s", kill_no, err.msg);
    ck_assert_msg(store_each(txn, MODEL_POD, NULL, pod_cb, &x, &err) == 0, "kill %d: pods: %s",
                  kill_no, err.msg);
    json_object_foreach(pc->victims, key, id)
    {
        json_t *pod = NULL;
        int rc = store_get(txn, MODEL_POD, key, &pod, &err);
        ck_assert_msg(rc == 0 || rc == ERR_NOT_FOUND, "kill %d: '%s': %s", kill_no, key, err.msg);
        ck_assert_msg(!pod ||
                          (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp") &&
                           disruption_target(pod)),
                      "kill %d: victim '%s' of ledger entry %lld is neither marked nor gone",
                      kill_no, key, (long long)json_integer_value(id));
        json_decref(pod);
    }
    json_decref(pc->victims);
    pc->victims = NULL;
    pc->entries_max = pc->entries > pc->entries_max ? pc->entries : pc->entries_max;
    pc->bound_max = pc->bound > pc->bound_max ? pc->bound : pc->bound_max;
}

START_TEST(test_crash_preempt_sigkill_during_preemption)
{
    struct musterd m;
    char root[256], name[64];
    char *cfg = crash_config("cycle_interval: 0.01\nmark_running: true\ngrace_period: 0.2\n");
    const char *args[] = {"--config", cfg, NULL};
    struct preempt_ctx pc = {0};

    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    ck_assert_int_eq(musterd_start(&m, NULL, args), 0);
    snprintf(root, sizeof(root), "%s", m.root);
    crash_post_yaml(&m, cluster_yaml());
    for (int g = 0; g < BLOCKS * PER_BLOCK / 2; g++) {
        snprintf(name, sizeof(name), "lo-%d", g);
        crash_post_yaml(&m, gang_yaml(name, 2, 1, 0));
    }
    for (int k = 1; k <= KILLS; k++) {
        /* each round's gang outranks everything before it, so it always finds victims */
        snprintf(name, sizeof(name), "hi-%d", k);
        crash_post_yaml(&m, gang_yaml(name, 2 + k % 3, 100 + k, 1));
        snprintf(name, sizeof(name), "lo-r%d", k);
        crash_post_yaml(&m, gang_yaml(name, 2, 1, 0));
        crash_kill(&m, 150000);
        crash_check_store(m.data_dir, k, check_preemption, &pc);
        ck_assert_int_eq(musterd_start(&m, root, args), 0);
    }
    usleep(500000);
    ck_assert_int_eq(musterd_stop(&m), 0);
    crash_check_store(m.data_dir, KILLS + 1, check_preemption, &pc);
    /* across every kill and restart, the log explains each decision, the preemptions
     * among them (musterd's options: mark_running, grace_period 0.2 s) */
    crash_replay_store(m.data_dir, &(struct sched_options){.mark_running = 1, .grace_ms = 200});
    /* the kills landed while preemptions were under way, not on an idle daemon */
    ck_assert_msg(pc.entries_max >= KILLS / 2, "only %ld preemptions", pc.entries_max);
    ck_assert_msg(pc.bound_max >= KILLS / 4, "only %ld preemptors bound", pc.bound_max);
    ck_assert_msg(pc.marked_seen > 0, "no kill found a victim marked and not yet removed");
    ck_assert_msg(pc.nominated_seen > 0, "no kill found a nominated preemptor");
    musterd_cleanup(&m);
    crash_config_free(cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("crash_preempt");
    TCase *tc = tcase_create("sigkill");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_crash_preempt_sigkill_during_preemption);
    suite_add_tcase(s, tc);
    return check_run(s);
}
