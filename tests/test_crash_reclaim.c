/*
 * test_crash_reclaim.c - kill musterd with SIGKILL at random moments while queues reclaim
 * from each other (docs/queues.md): 16 whole-node slots shared by queues qa and qb, each
 * holding 8 with gangs of 2 whole-node pods; every round swaps their weights (3:1, then
 * 1:3), so the favoured queue is deserved 12 slots, holds 8, and its pending gangs reclaim
 * whole gangs of the other queue down to the other's deserved 4. A new gang arrives in
 * each queue every round. A 0.2 s grace period puts marking victims, removing them and
 * binding the reclaimers between kills, as in test_crash_preempt.c.
 * After every kill the store must be as of a committed cycle (crash_support.h) and no
 * reclaim may be half done:
 *   - every pod muster marked (deletionTimestamp, DisruptionTarget) is a victim of a
 *     ledger entry, and every victim of an entry is marked or gone;
 *   - every pod with status.nominatedNodeName is nominated to that node by a ledger entry
 *     of its own job;
 *   - the ledger is complete: entry ids run 1..N without a gap; every entry of kind
 *     reclaim names its queue and victimQueues, and each victim's queue is one of those,
 *     never the preemptor's; every entry has a "preempted" audit record per victim job;
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

#define NODES 16
#define KILLS 50

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

/* Queues qa and qb with weights wa and wb. */
static char *queues_yaml(int wa, int wb)
{
    char *buf = malloc(512);
    snprintf(buf, 512,
             "apiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: qa}\n"
             "spec: {weight: %d}\n---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\n"
             "metadata: {name: qb}\nspec: {weight: %d}\n",
             wa, wb);
    return buf;
}

/* A gang of 2 whole-node pods in queue q (the pods' queue-name annotation); memory is to
 * spare, only cpu is contended. */
static char *gang_yaml(const char *name, const char *q)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    len += (size_t)snprintf(buf + len, cap - len,
                            "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"
                            "metadata:\n  name: %s\n  namespace: crash\nspec:\n  minMember: 2\n"
                            "---\n",
                            name);
    for (int p = 0; p < 2; p++)
        len += (size_t)snprintf(
            buf + len, cap - len,
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s-%d\n  namespace: crash\n"
            "  labels: {pod-group.scheduling.sigs.k8s.io: %s}\n"
            "  annotations: {scheduling.volcano.sh/queue-name: %s}\nspec:\n  priority: 1\n"
            "  containers:\n  - name: c\n    resources: {requests: {cpu: \"4\", memory: 1Gi}}\n"
            "---\n",
            name, p, name, q);
    return buf;
}

struct reclaim_ctx {
    int kill_no;
    json_t *victims;     /* pod key -> entry id, for the store being checked */
    json_t *nominations; /* pod key -> {"node", "job"} of the entries */
    json_t *audited;     /* "id job" -> true: "preempted" audit records */
    long entries, reclaims, max_id;
    long reclaims_max, marked_seen, nominated_seen; /* over all kills */
};

static int entry_cb(void *ctx, const char *key, json_t *e)
{
    struct reclaim_ctx *rc = ctx;
    size_t i;
    json_t *x;
    (void)key;
    long id = (long)json_integer_value(json_object_get(e, "id"));
    rc->entries++;
    rc->max_id = id > rc->max_id ? id : rc->max_id;
    const char *kind = json_string_value(json_object_get(e, "kind"));
    const char *preemptor = json_string_value(json_object_get(e, "preemptor"));
    int reclaim = kind && !strcmp(kind, "reclaim");
    rc->reclaims += reclaim;
    const char *own = json_string_value(json_object_get(json_object_get(e, "queue"), "name"));
    ck_assert_msg(!reclaim || (own && json_array_size(json_object_get(e, "victimQueues"))),
                  "kill %d: reclaim entry %ld lacks its queue or victimQueues", rc->kill_no, id);
    json_array_foreach(json_object_get(e, "victims"), i, x)
    {
        json_object_set_new(rc->victims, json_string_value(json_object_get(x, "pod")),
                            json_integer(id));
        char ak[512];
        snprintf(ak, sizeof(ak), "%ld %s", id, json_string_value(json_object_get(x, "job")));
        ck_assert_msg(json_object_get(rc->audited, ak) != NULL,
                      "kill %d: entry %ld: no \"preempted\" audit record of victim job '%s'",
                      rc->kill_no, id, json_string_value(json_object_get(x, "job")));
        if (!reclaim)
            continue;
        const char *vq = json_string_value(json_object_get(x, "queue"));
        int listed = 0;
        size_t k;
        json_t *q;
        json_array_foreach(json_object_get(e, "victimQueues"), k, q) listed |=
            vq && !strcmp(vq, json_string_value(json_object_get(q, "name")));
        ck_assert_msg(listed && strcmp(vq, own),
                      "kill %d: entry %ld: victim '%s' of queue '%s' is not a victimQueue",
                      rc->kill_no, id, json_string_value(json_object_get(x, "pod")),
                      vq ? vq : "(none)");
    }
    const char *pod;
    json_t *node;
    json_object_foreach(json_object_get(e, "nominations"), pod, node)
    {
        json_t *n = json_pack("{s:O,s:s}", "node", node, "job", preemptor ? preemptor : "");
        json_object_set_new(rc->nominations, pod, n);
    }
    return 0;
}

static int audit_cb(void *ctx, uint64_t seq, const char *json, size_t len)
{
    struct reclaim_ctx *rc = ctx;
    json_t *rec = json_loadb(json, len, 0, NULL);
    (void)seq;
    if (!rec)
        return -1;
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    if (kind && !strcmp(kind, "preempted")) {
        char ak[512];
        snprintf(ak, sizeof(ak), "%lld %s",
                 (long long)json_integer_value(json_object_get(rec, "ledger")),
                 json_string_value(json_object_get(rec, "job")));
        json_object_set_new(rc->audited, ak, json_true());
    }
    json_decref(rec);
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

/* "crash/g-1" -> the job "crash/g" (every pod here is "<gang>-<n>"). */
static void job_of(const char *pod, char *buf, size_t n)
{
    snprintf(buf, n, "%s", pod);
    char *dash = strrchr(buf, '-');
    if (dash)
        *dash = '\0';
}

static int pod_cb(void *ctx, const char *key, json_t *pod)
{
    struct reclaim_ctx *rc = ctx;
    if (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp") ||
        disruption_target(pod)) {
        rc->marked_seen++;
        ck_assert_msg(json_object_get(rc->victims, key) != NULL,
                      "kill %d: pod '%s' marked for deletion but no ledger entry names it",
                      rc->kill_no, key);
    }
    const char *nom =
        json_string_value(json_object_get(json_object_get(pod, "status"), "nominatedNodeName"));
    if (nom && *nom) {
        char job[256];
        json_t *n = json_object_get(rc->nominations, key);
        job_of(key, job, sizeof(job));
        rc->nominated_seen++;
        ck_assert_msg(n && !strcmp(json_string_value(json_object_get(n, "node")), nom) &&
                          !strcmp(json_string_value(json_object_get(n, "job")), job),
                      "kill %d: pod '%s' nominated to '%s' without a ledger entry of '%s' "
                      "nominating it there",
                      rc->kill_no, key, nom, job);
    }
    return 0;
}

static void check_reclaim(MDB_txn *txn, int kill_no, void *ctx)
{
    struct reclaim_ctx *rc = ctx;
    struct err err = ERR_INIT;
    const char *key;
    json_t *id;
    rc->kill_no = kill_no;
    rc->victims = json_object();
    rc->nominations = json_object();
    rc->audited = json_object();
    rc->entries = rc->reclaims = rc->max_id = 0;
    ck_assert_int_eq(store_audit_scan(txn, 1, 0, audit_cb, rc, &err), 0);
    ck_assert_msg(store_doc_each(txn, STORE_DB_PREEMPTIONS, "e:", entry_cb, rc, &err) == 0,
                  "kill %d: ledger: %s", kill_no, err.msg);
    ck_assert_msg(rc->max_id == rc->entries, "kill %d: %ld ledger entries, the last id %ld",
                  kill_no, rc->entries, rc->max_id);
    ck_assert_msg(store_each(txn, MODEL_POD, NULL, pod_cb, rc, &err) == 0, "kill %d: pods: %s",
                  kill_no, err.msg);
    json_object_foreach(rc->victims, key, id)
    {
        json_t *pod = NULL;
        int r = store_get(txn, MODEL_POD, key, &pod, &err);
        ck_assert_msg(r == 0 || r == ERR_NOT_FOUND, "kill %d: '%s': %s", kill_no, key, err.msg);
        ck_assert_msg(!pod ||
                          (json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp") &&
                           disruption_target(pod)),
                      "kill %d: victim '%s' of ledger entry %lld is neither marked nor gone",
                      kill_no, key, (long long)json_integer_value(id));
        json_decref(pod);
    }
    json_decref(rc->victims);
    json_decref(rc->nominations);
    json_decref(rc->audited);
    rc->reclaims_max = rc->reclaims > rc->reclaims_max ? rc->reclaims : rc->reclaims_max;
}

START_TEST(test_crash_reclaim_sigkill_during_reclaim)
{
    struct musterd m;
    char root[256], name[64];
    char *cfg = crash_config("cycle_interval: 0.01\nmark_running: true\ngrace_period: 0.2\n");
    const char *args[] = {"--config", cfg, NULL};
    struct reclaim_ctx rc = {0};

    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    ck_assert_int_eq(musterd_start(&m, NULL, args), 0);
    snprintf(root, sizeof(root), "%s", m.root);
    crash_post_yaml(&m, cluster_yaml());
    crash_post_yaml(&m, queues_yaml(1, 1));
    for (int g = 0; g < NODES / 2; g++) {
        snprintf(name, sizeof(name), "init-%d", g);
        crash_post_yaml(&m, gang_yaml(name, g % 2 ? "qb" : "qa"));
    }
    usleep(200000); /* both queues hold their 8 slots before the first swap */
    for (int k = 1; k <= KILLS; k++) {
        crash_post_yaml(&m, queues_yaml(k % 2 ? 3 : 1, k % 2 ? 1 : 3));
        snprintf(name, sizeof(name), "a-%d", k);
        crash_post_yaml(&m, gang_yaml(name, "qa"));
        snprintf(name, sizeof(name), "b-%d", k);
        crash_post_yaml(&m, gang_yaml(name, "qb"));
        crash_kill(&m, 150000);
        crash_check_store(m.data_dir, k, check_reclaim, &rc);
        ck_assert_int_eq(musterd_start(&m, root, args), 0);
    }
    usleep(500000);
    ck_assert_int_eq(musterd_stop(&m), 0);
    crash_check_store(m.data_dir, KILLS + 1, check_reclaim, &rc);
    /* across every kill and restart, the log explains each decision, the preemptions
     * among them (musterd's options: mark_running, grace_period 0.2 s) */
    crash_replay_store(m.data_dir, &(struct sched_options){.mark_running = 1, .grace_ms = 200});
    /* the kills landed while reclaims were under way, not on an idle daemon */
    ck_assert_msg(rc.reclaims_max >= KILLS / 2, "only %ld reclaims", rc.reclaims_max);
    ck_assert_msg(rc.marked_seen > 0, "no kill found a victim marked and not yet removed");
    ck_assert_msg(rc.nominated_seen > 0, "no kill found a nominated reclaimer");
    musterd_cleanup(&m);
    crash_config_free(cfg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("crash_reclaim");
    TCase *tc = tcase_create("sigkill");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_crash_reclaim_sigkill_during_reclaim);
    suite_add_tcase(s, tc);
    return check_run(s);
}
