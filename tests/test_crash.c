/*
 * test_crash.c - kill musterd with SIGKILL at random moments while it schedules, restart it,
 * and check after every kill that the store is as of a committed cycle: no gang partially
 * placed, no pod bound twice or to two nodes, no node over-committed, the audit sequence
 * gap-free and the hash chain verifying.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "http_client.h"
#include "sched_invariants.h"
#include "store.h"

#define NODES 24
#define KILLS 50

static char *cluster_yaml(void)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (int i = 0; i < NODES; i++) {
        len += (size_t)snprintf(buf + len, cap - len,
                                "apiVersion: v1\nkind: Node\nmetadata:\n  name: n%02d\n"
                                "status:\n  allocatable: {cpu: \"4\", memory: 16Gi, pods: "
                                "\"20\"}\n---\n",
                                i);
    }
    return buf;
}

/* A gang of `size` pods of 1 cpu (so gangs compete for whole nodes), or, with pair, a
 * GangGroup of two PodGroups. Names are unique per round so a pod is never re-created. */
static char *gang_yaml(int round, int g, int size, int pair)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    char a[32], b[32];
    snprintf(a, sizeof(a), "g%d-%d-a", round, g);
    snprintf(b, sizeof(b), "g%d-%d-b", round, g);
    for (int k = 0; k < (pair ? 2 : 1); k++) {
        const char *pg = k ? b : a;
        len += (size_t)snprintf(buf + len, cap - len,
                                "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"
                                "metadata:\n  name: %s\n  namespace: crash\n",
                                pg);
        if (pair)
            len += (size_t)snprintf(buf + len, cap - len,
                                    "  annotations:\n    gang.scheduling.koordinator.sh/groups: "
                                    "'[\"crash/%s\",\"crash/%s\"]'\n",
                                    a, b);
        len += (size_t)snprintf(buf + len, cap - len, "spec:\n  minMember: %d\n---\n", size);
        for (int p = 0; p < size; p++)
            len += (size_t)snprintf(
                buf + len, cap - len,
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s-%d\n  namespace: crash\n"
                "  labels: {pod-group.scheduling.sigs.k8s.io: %s}\nspec:\n  priority: %d\n"
                "  containers:\n  - name: c\n    resources: {requests: {cpu: \"1\", memory: "
                "1Gi}}\n---\n",
                pg, p, pg, (round * 7 + g) % 5);
    }
    return buf;
}

/* Every bound pod was placed by exactly one "placed" record, on the node it is bound to. */
struct placed_ctx {
    json_t *node_of; /* pod key -> node from the audit log */
    int dup;
    char msg[256];
};

static int placed_cb(void *ctx, uint64_t seq, const char *json, size_t len)
{
    struct placed_ctx *pc = ctx;
    json_t *rec = json_loadb(json, len, 0, NULL), *pods, *nodes;
    if (!rec)
        return -1;
    if (strcmp(json_string_value(json_object_get(rec, "kind")), "placed") == 0) {
        pods = json_object_get(rec, "pods");
        nodes = json_object_get(rec, "nodes");
        for (size_t i = 0; i < json_array_size(pods); i++) {
            const char *pod = json_string_value(json_array_get(pods, i));
            if (json_object_get(pc->node_of, pod) && !pc->dup) {
                pc->dup = 1;
                snprintf(pc->msg, sizeof(pc->msg), "pod '%s' placed twice (seq %llu)", pod,
                         (unsigned long long)seq);
            }
            json_object_set(pc->node_of, pod, json_array_get(nodes, i));
        }
    }
    json_decref(rec);
    return 0;
}

static int bound_cb(void *ctx, const char *key, json_t *pod)
{
    struct placed_ctx *pc = ctx;
    const char *node = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    json_t *placed = json_object_get(pc->node_of, key);
    if (node && (!placed || strcmp(node, json_string_value(placed)) != 0) && !pc->dup) {
        pc->dup = 1;
        snprintf(pc->msg, sizeof(pc->msg), "pod '%s' bound to '%s' but placed on '%s'", key, node,
                 placed ? json_string_value(placed) : "(nothing)");
    }
    return 0;
}

/* Opens the killed musterd's store and checks every invariant. Returns bound pods. */
static int check_store(const char *dir, int kill_no)
{
    struct store_options so = {.dir = dir};
    struct store *st = NULL;
    struct err err = ERR_INIT;
    char msg[512];
    MDB_txn *txn = NULL;
    struct placed_ctx pc = {.node_of = json_object()};

    ck_assert_msg(store_open(&so, &st, &err) == 0, "kill %d: reopen: %s", kill_no, err.msg);
    ck_assert_msg(sched_invariants_check(st, msg, sizeof(msg)) == 0, "kill %d: %s", kill_no, msg);
    ck_assert_int_eq(store_txn_begin(st, STORE_READ, &txn, &err), 0);
    ck_assert_int_eq(store_audit_scan(txn, 1, 0, placed_cb, &pc, &err), 0);
    ck_assert_int_eq(store_each(txn, MODEL_POD, NULL, bound_cb, &pc, &err), 0);
    store_txn_abort(&txn);
    ck_assert_msg(!pc.dup, "kill %d: %s", kill_no, pc.msg);
    int bound = (int)json_object_size(pc.node_of);
    json_decref(pc.node_of);
    store_close(st);
    return bound;
}

static void post_yaml(const struct musterd *m, char *yaml)
{
    static const char *const hdr[] = {"Content-Type: application/yaml", NULL};
    struct http_resp r;
    http_request("POST", m->base, "/api/v1/manifests", yaml, hdr, &r);
    /* a request may race the kill: only a completed request must have succeeded */
    ck_assert_msg(r.status == -1 || r.status == 200 || r.status == 201, "apply: %ld %s", r.status,
                  r.body ? r.body : "");
    http_resp_free(&r);
    free(yaml);
}

START_TEST(test_crash_sigkill_during_cycles)
{
    struct musterd m;
    char cfg[512], root[256];
    const char *args[] = {"--config", cfg, NULL};
    int placed_max = 0;
    FILE *f;

    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    snprintf(cfg, sizeof(cfg), "/tmp/muster-crash-%d.yaml", (int)getpid());
    f = fopen(cfg, "w");
    ck_assert_ptr_nonnull(f);
    fputs("cycle_interval: 0.01\nmark_running: true\ngrace_period: 0\nsync: full\n"
          "log_level: error\n",
          f);
    fclose(f);

    ck_assert_int_eq(musterd_start(&m, NULL, args), 0);
    snprintf(root, sizeof(root), "%s", m.root);
    post_yaml(&m, cluster_yaml());
    for (int k = 1; k <= KILLS; k++) {
        /* new gangs keep the scheduler busy; deleting old pods frees room for them */
        for (int g = 0; g < 3; g++)
            post_yaml(&m, gang_yaml(k, g, 2 + (k + g) % 5, (k + g) % 4 == 0));
        if (k > 3) {
            char path[128];
            struct http_resp r;
            snprintf(path, sizeof(path), "/api/v1/pods/crash/g%d-0-a-0", k - 3);
            http_request("DELETE", m.base, path, NULL, NULL, &r);
            http_resp_free(&r);
        }
        usleep((useconds_t)(rand() % 40000));
        kill(m.pid, SIGKILL);
        waitpid(m.pid, NULL, 0);
        int bound = check_store(m.data_dir, k);
        if (bound > placed_max)
            placed_max = bound;
        ck_assert_int_eq(musterd_start(&m, root, args), 0);
    }
    ck_assert_int_eq(musterd_stop(&m), 0);
    /* the kills landed while work was being done, not on an idle daemon */
    ck_assert_msg(placed_max >= NODES, "only %d pods were ever placed", placed_max);
    check_store(m.data_dir, KILLS + 1);
    musterd_cleanup(&m);
    unlink(cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("crash");
    TCase *tc = tcase_create("sigkill");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_crash_sigkill_during_cycles);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
