/*
 * test_crash.c - kill musterd with SIGKILL at random moments while it schedules, restart it,
 * and check after every kill that the store is as of a committed cycle: no gang partially
 * placed, no pod bound twice or to two nodes, no node over-committed, the audit sequence
 * gap-free and the hash chain verifying (tests/support/crash_support.h). Preemption under
 * kills is test_crash_preempt.c.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "crash_support.h"
#include "scheduler.h"
#include "check_run.h"

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

START_TEST(test_crash_sigkill_during_cycles)
{
    struct musterd m;
    char root[256];
    char *cfg = crash_config("cycle_interval: 0.01\nmark_running: true\ngrace_period: 0\n");
    const char *args[] = {"--config", cfg, NULL};
    int placed_max = 0;

    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    ck_assert_int_eq(musterd_start(&m, NULL, args), 0);
    snprintf(root, sizeof(root), "%s", m.root);
    crash_post_yaml(&m, cluster_yaml());
    for (int k = 1; k <= KILLS; k++) {
        /* new gangs keep the scheduler busy; deleting old pods frees room for them */
        for (int g = 0; g < 3; g++)
            crash_post_yaml(&m, gang_yaml(k, g, 2 + (k + g) % 5, (k + g) % 4 == 0));
        if (k > 3) {
            char path[128];
            struct http_resp r;
            snprintf(path, sizeof(path), "/api/v1/pods/crash/g%d-0-a-0", k - 3);
            http_request("DELETE", m.base, path, NULL, NULL, &r);
            http_resp_free(&r);
        }
        crash_kill(&m, 40000);
        int bound = crash_check_store(m.data_dir, k, NULL, NULL);
        if (bound > placed_max)
            placed_max = bound;
        ck_assert_int_eq(musterd_start(&m, root, args), 0);
    }
    ck_assert_int_eq(musterd_stop(&m), 0);
    /* the kills landed while work was being done, not on an idle daemon */
    ck_assert_msg(placed_max >= NODES, "only %d pods were ever placed", placed_max);
    crash_check_store(m.data_dir, KILLS + 1, NULL, NULL);
    /* across every kill and restart, the log explains each decision (musterd's options:
     * mark_running, grace_period 0 = at the next cycle) */
    crash_replay_store(m.data_dir, &(struct sched_options){.mark_running = 1, .grace_ms = 1});
    musterd_cleanup(&m);
    crash_config_free(cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("crash");
    TCase *tc = tcase_create("sigkill");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_crash_sigkill_during_cycles);
    suite_add_tcase(s, tc);
    return check_run(s);
}
