/*
 * test_sched.c - the scheduler: case folders (tests/data/sched/<case>/cluster.yaml +
 * expected.json), apply/delete, statements, view rebuild, why documents, invariants. The
 * gang timeout has its own suite (test_sched_timeout.c).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "scheduler.h"
#include "sched_invariants.h"
#include "sched_objs.h"
#include "sched_util.h"
#include "store_util.h"

/* ---- case folders ---- */

static void run_case(const char *name)
{
    struct sched_util u;
    json_t *exp = sched_util_case_run(&u, "sched", name, NULL);
    sched_util_case_expect(&u, name, exp);
    const char *key;
    json_t *val;
    json_object_foreach(json_object_get(exp, "primary"), key, val)
    {
        json_t *w = sched_util_why(&u, key);
        const char *code = sched_objs_primary(w);
        ck_assert_msg(code && !strcmp(code, json_string_value(val)),
                      "case '%s': job '%s' primary %s, expected %s", name, key,
                      code ? code : "(none)", json_string_value(val));
        json_decref(w);
    }
    /* "nodeFilter": {job: text the node filter's summary contains} */
    json_object_foreach(json_object_get(exp, "nodeFilter"), key, val)
    {
        json_t *w = sched_util_why(&u, key);
        const char *sum =
            json_string_value(json_object_get(json_object_get(w, "nodeFilter"), "summary"));
        ck_assert_msg(sum && strstr(sum, json_string_value(val)),
                      "case '%s': job '%s' node filter '%s' lacks '%s'", name, key,
                      sum ? sum : "(none)", json_string_value(val));
        json_decref(w);
    }
    sched_util_expect_why(&u, name, exp);
    sched_objs_assert_consistent_ex(&u, json_object_get(exp, "invariantsExempt"));
    sched_util_close(&u);
    json_decref(exp);
}

START_TEST(test_sched_cases)
{
    json_t *cases = sched_util_cases("sched");
    ck_assert_int_ge(json_array_size(cases), 15);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) run_case(json_string_value(c));
    json_decref(cases);
}
END_TEST

/* ---- apply / delete ---- */

START_TEST(test_sched_apply_actions)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    char buf[1024];
    sched_objs_pod_json(buf, sizeof(buf), "p", NULL, 0, 1);
    json_t *r = sched_util_apply(&u, buf, 1000);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(r, 0), "action")), "created");
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(r, 0), "name")), "default/p");
    json_decref(r);
    json_t *pod = sched_util_pod(&u, "default/p");
    json_t *meta = json_object_get(pod, "metadata");
    const char *uid = json_string_value(json_object_get(meta, "uid"));
    ck_assert_int_eq(strlen(uid), 36);
    ck_assert_int_eq(uid[14], '4');
    ck_assert_str_eq(json_string_value(json_object_get(meta, "resourceVersion")), "1");
    char *uid1 = strdup(uid);
    json_decref(pod);

    r = sched_util_apply(&u, buf, 2000);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(r, 0), "action")),
                     "unchanged");
    json_decref(r);
    sched_objs_pod_json(buf, sizeof(buf), "p", NULL, 5, 1);
    r = sched_util_apply(&u, buf, 3000);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(r, 0), "action")),
                     "configured");
    json_decref(r);
    pod = sched_util_pod(&u, "default/p");
    meta = json_object_get(pod, "metadata");
    ck_assert_str_eq(json_string_value(json_object_get(meta, "uid")), uid1);
    ck_assert_str_eq(json_string_value(json_object_get(meta, "resourceVersion")), "2");
    json_decref(pod);
    free(uid1);
    ck_assert_int_eq(sched_util_audit_count(&u, "applied", "default/p"), 3);
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

START_TEST(test_sched_apply_keeps_binding)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    sched_objs_node(&u, "n1", "a", 4, 0);
    sched_objs_pod(&u, "p", NULL, 0, 1);
    json_decref(sched_util_cycle(&u, 2000));
    char buf[1024];
    sched_objs_pod_json(buf, sizeof(buf), "p", NULL, 0, 1);
    json_t *r = sched_util_apply(&u, buf, 3000);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(r, 0), "action")),
                     "unchanged");
    json_decref(r);
    char *node = sched_util_node_of(&u, "default/p");
    ck_assert_str_eq(node, "n1");
    free(node);
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

START_TEST(test_sched_delete_node_fails_pods)
{
    struct sched_util u;
    struct err err = ERR_INIT;
    sched_util_open(&u, NULL);
    sched_objs_node(&u, "n1", "a", 4, 0);
    sched_objs_pod(&u, "p", NULL, 0, 1);
    json_decref(sched_util_cycle(&u, 2000));
    ck_assert_int_eq(sched_delete(u.s, MODEL_NODE, "n1", 3000, &err), 0);
    json_t *pod = sched_util_pod(&u, "default/p");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(pod, "status"), "phase")),
                     "Failed");
    json_decref(pod);
    ck_assert_int_eq(sched_delete(u.s, MODEL_NODE, "n1", 3000, &err), ERR_NOT_FOUND);
    ck_assert_int_eq(sched_delete(u.s, MODEL_POD, "default/p", 3000, &err), 0);
    ck_assert_int_eq(sched_job(u.s, "default/p", &pod, &err), ERR_NOT_FOUND);
    ck_assert_int_eq(sched_util_audit_count(&u, "deleted", NULL), 2);
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

/* ---- statements and the view ---- */

START_TEST(test_sched_discard_restores_view)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    sched_objs_node(&u, "n1", "a", 4, 0);
    sched_objs_node(&u, "n2", "a", 4, 0);
    sched_objs_busy_node(&u, "n0", 4); /* not larger than the cluster: placed, then discarded */
    sched_objs_pg(&u, "g", 3);
    sched_objs_pod(&u, "g-0", "g", 0, 3);
    sched_objs_pod(&u, "g-1", "g", 0, 3);
    sched_objs_pod(&u, "g-2", "g", 0, 3);
    json_t *before = sched_view_dump(u.s);
    json_t *sum = sched_util_cycle(&u, 2000);
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "discarded")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "placed")), 0);
    json_decref(sum);
    json_t *after = sched_view_dump(u.s);
    ck_assert_msg(json_equal(before, after), "discard did not restore the view");
    json_t *all = sched_util_audit(&u), *rec;
    size_t i;
    int found = 0;
    json_array_foreach(all, i, rec)
    {
        if (strcmp(json_string_value(json_object_get(rec, "kind")), "discarded"))
            continue;
        found = 1;
        ck_assert_str_eq(json_string_value(json_object_get(rec, "reason")), "GangShortfall");
        ck_assert_int_eq(json_array_size(json_object_get(rec, "pods")), 2);
    }
    ck_assert(found);
    json_decref(all);
    json_decref(before);
    json_decref(after);
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

static int states_with(json_t *states, const char *prefix)
{
    const char *id;
    json_t *v;
    int n = 0;
    json_object_foreach(states, id, v) n += !strncmp(json_string_value(v), prefix, strlen(prefix));
    return n;
}

/* The group of pod key (borrowed) in exempt when the pod is bound to node (NULL: whatever its
 * node): the case's own deletes may leave that gang below its minMember. */
static void exempt_group(struct sched_util *u, json_t *exempt, const char *key, const char *node)
{
    json_t *pod = sched_util_pod(u, key);
    const char *on = json_string_value(json_object_get(json_object_get(pod, "spec"), "nodeName"));
    const char *group = json_string_value(json_object_get(
        json_object_get(json_object_get(pod, "metadata"), "labels"), MODEL_LABEL_POD_GROUP));
    if (pod && group && (!node || (on && !strcmp(on, node)))) {
        char gkey[128];
        snprintf(gkey, sizeof(gkey), "default/%s", group);
        json_object_set_new(exempt, gkey, json_true());
    }
    json_decref(pod);
}

/* One seed of test_sched_rebuild_equals_live: 25 rounds of nodes, gangs and lone pods,
 * deletes and cycles, then the view rebuilt from the store against the live one. *unsched and
 * *running: how many jobs ended Unschedulable and placed. */
static void rebuild_round_trip(unsigned seed, int *unsched, int *running)
{
    struct sched_util u;
    struct err err = ERR_INIT;
    sched_util_open(&u, NULL);
    srand(seed);
    char name[64], group[64];
    json_t *exempt = json_object(); /* gangs the deletes below may have broken */
    for (int round = 0; round < 25; round++) {
        snprintf(name, sizeof(name), "n%d", round % 7);
        /* a node keeps its size: shrinking a used node would over-commit it by hand */
        sched_objs_node(&u, name, round % 7 % 2 ? "a" : "b", 2 + round % 7 % 5, round % 7 % 3);
        for (int k = 0; k < 3; k++) {
            snprintf(group, sizeof(group), "g%d", (round + k) % 5);
            snprintf(name, sizeof(name), "p%d-%d", round, k);
            if (k == 0) /* a fixed minMember per group: raising it would break gangs */
                sched_objs_pg(&u, group, 1 + (round + k) % 5 % 3);
            sched_objs_pod(&u, name, k == 2 ? NULL : group, rand() % 3, 1 + rand() % 2);
        }
        if (round % 4 == 3) {
            snprintf(name, sizeof(name), "n%d", rand() % 7);
            for (int r = 0; r <= round; r++) /* the node's pods fail with it */
                for (int k = 0; k < 2; k++) {
                    char key[64];
                    snprintf(key, sizeof(key), "default/p%d-%d", r, k);
                    exempt_group(&u, exempt, key, name);
                }
            int rc = sched_delete(u.s, MODEL_NODE, name, 1000, &err);
            ck_assert(rc == 0 || rc == ERR_NOT_FOUND);
            snprintf(name, sizeof(name), "default/p%d-1", round - 1);
            exempt_group(&u, exempt, name, NULL);
            rc = sched_delete(u.s, MODEL_POD, name, 1000, &err);
            ck_assert(rc == 0 || rc == ERR_NOT_FOUND);
        }
        json_decref(sched_util_cycle(&u, 2000 + round));
        sched_objs_assert_consistent_ex(&u, exempt);
    }
    json_t *live = sched_view_dump(u.s), *live_states = sched_util_job_states(u.s);
    *unsched = states_with(live_states, "Unschedulable ");
    *running = states_with(live_states, "Running ") + states_with(live_states, "Scheduled ");
    sched_util_reopen(&u);
    json_t *reopened = sched_view_dump(u.s), *states = sched_util_job_states(u.s);
    ck_assert_msg(json_equal(live, reopened), "seed %u: the rebuilt view differs", seed);
    char *a = json_dumps(live_states, JSON_SORT_KEYS), *b = json_dumps(states, JSON_SORT_KEYS);
    ck_assert_msg(!strcmp(a, b), "seed %u: job states after the rebuild %s, live %s", seed, b, a);
    free(a);
    free(b);
    json_decref(live);
    json_decref(reopened);
    json_decref(live_states);
    json_decref(states);
    json_decref(exempt);
    sched_util_close(&u);
}

/* The view rebuilt from the store is the live one, and so is every job's state: a job its
 * last attempt left Unschedulable says so after a restart, before any cycle. Eight seeds,
 * which between them leave jobs both Unschedulable and placed. */
START_TEST(test_sched_rebuild_equals_live)
{
    int unsched = 0, running = 0;
    for (unsigned seed = 42; seed < 50; seed++) {
        int u = 0, r = 0;
        rebuild_round_trip(seed, &u, &r);
        unsched += u > 0;
        running += r > 0;
    }
    ck_assert_int_gt(unsched, 4);
    ck_assert_int_gt(running, 4);
}
END_TEST

/* An update of a pod (a label here; a status from the API server in mirror mode) is the
 * same pod: its job, of which it is the only pod, keeps its last attempt (Unschedulable,
 * not Pending until the next cycle) and its why. */
START_TEST(test_sched_pod_update_keeps_attempt)
{
    struct sched_util u;
    char buf[1024], *labels;
    sched_util_open(&u, NULL);
    sched_objs_node(&u, "n1", "a", 2, 0);
    sched_objs_pod(&u, "big", NULL, 0, 4);
    json_decref(sched_util_cycle(&u, 2000));
    json_t *j = sched_util_job(&u, "default/big");
    ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "Unschedulable");
    ck_assert_str_eq(json_string_value(json_object_get(j, "reason")), "ExceedsClusterCapacity");
    json_decref(j);
    sched_objs_pod_json(buf, sizeof(buf), "big", NULL, 0, 4);
    ck_assert_ptr_nonnull(labels = strstr(buf, "\"labels\":{}"));
    char updated[1100];
    snprintf(updated, sizeof(updated), "%.*s\"labels\":{\"team\":\"a\"}%s", (int)(labels - buf),
             buf, labels + strlen("\"labels\":{}"));
    json_t *res = sched_util_apply(&u, updated, 3000);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(res, 0), "action")),
                     "configured");
    json_decref(res);
    j = sched_util_job(&u, "default/big");
    ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "Unschedulable");
    ck_assert_str_eq(json_string_value(json_object_get(j, "reason")), "ExceedsClusterCapacity");
    json_decref(j);
    sched_util_close(&u);
}
END_TEST

START_TEST(test_sched_cycle_small_map_grows)
{
    /* A 1 MiB map: the cycle's transaction may hit the map limit; the cycle is then
     * retried on a rebuilt view and must still place everything exactly once. */
    struct sched_util u;
    struct err err = ERR_INIT;
    memset(&u, 0, sizeof(u));
    u.dir = store_util_tmpdir();
    u.st = store_util_open(u.dir, 1 << 20, STORE_SYNC_NONE);
    ck_assert_msg(sched_open(u.st, &u.opts, &u.s, &err) == 0, "%s", err.msg);
    for (int i = 0; i < 40; i++) {
        char name[32];
        snprintf(name, sizeof(name), "n%02d", i);
        sched_objs_node(&u, name, "a", 110, 0);
    }
    for (int i = 0; i < 4000; i++) {
        char name[32];
        snprintf(name, sizeof(name), "p%04d", i);
        sched_objs_pod(&u, name, NULL, 0, 1);
    }
    json_t *sum = sched_util_cycle(&u, 2000);
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "placed")), 4000);
    json_decref(sum);
    ck_assert_int_eq(sched_util_audit_count(&u, "placed", NULL), 4000);
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

/* ---- why ---- */

START_TEST(test_sched_why_gang_shortfall)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    sched_objs_node(&u, "n1", "a", 4, 0);
    sched_objs_busy_node(&u, "n0", 4); /* the cluster has the 8 cpus the gang needs, in use */
    sched_objs_pg(&u, "g", 4);
    for (int i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof(name), "g-%d", i);
        sched_objs_pod(&u, name, "g", 0, 2);
    }
    json_decref(sched_util_cycle(&u, 2000));
    json_t *w = sched_util_why(&u, "default/g");
    ck_assert_str_eq(sched_objs_primary(w), "GangShortfall");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(w, "primary"), "class")),
                     "GANG");
    json_t *g = json_array_get(json_object_get(w, "gang"), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(g, "minMember")), 4);
    ck_assert_int_eq(json_integer_value(json_object_get(g, "members")), 5);
    ck_assert_int_eq(json_integer_value(json_object_get(g, "bound")), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(g, "placeable")), 2);
    ck_assert_str_eq(json_string_value(json_object_get(w, "state")), "Unschedulable");
    ck_assert_int_eq(json_integer_value(json_object_get(w, "cycle")), 1);
    ck_assert_int_gt(json_integer_value(json_object_get(w, "auditSeq")), 0);
    json_t *b;
    size_t i;
    int capacity = 0;
    json_array_foreach(json_object_get(w, "blockers"), i, b) capacity |=
        !strcmp(json_string_value(json_object_get(b, "code")), "InsufficientCapacity");
    ck_assert(capacity);
    json_decref(w);
    sched_util_close(&u);
}
END_TEST

/* The cluster's capacity behind ExceedsClusterCapacity follows the nodes from one cycle to
 * the next (the sums are kept until a node changes, cycle.c): a node added, then the other
 * one cordoned, change the answer. */
START_TEST(test_sched_cluster_capacity_follows_nodes)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    sched_objs_node(&u, "a", "cpu", 4, 0);
    sched_objs_pod(&u, "wide", NULL, 0, 6);
    json_decref(sched_util_cycle(&u, 2000));
    json_t *w = sched_util_why(&u, "default/wide");
    ck_assert_str_eq(sched_util_str2(w, "primary", "code"), "ExceedsClusterCapacity");
    ck_assert_str_eq(sched_util_str2(w, "primary", "message"), "needs 6 cpu, the cluster has 4");
    json_decref(w);
    sched_objs_node(&u, "b", "cpu", 4, 0);
    json_decref(sched_util_cycle(&u, 3000));
    w = sched_util_why(&u, "default/wide");
    ck_assert_str_eq(sched_util_str2(w, "primary", "code"), "ExceedsAllocatable");
    json_decref(w);
    char node[512];
    snprintf(node, sizeof(node),
             "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"a\",\"labels\":{"
             "\"pool\":\"cpu\"}},\"spec\":{\"unschedulable\":true},\"status\":{\"allocatable\":{"
             "\"cpu\":\"4\"}}}");
    json_decref(sched_util_apply(&u, node, 4000));
    json_decref(sched_util_cycle(&u, 5000));
    w = sched_util_why(&u, "default/wide");
    ck_assert_str_eq(sched_util_str2(w, "primary", "message"),
                     "needs 6 cpu, the cluster has 4 on its 1 schedulable nodes");
    json_decref(w);
    sched_util_close(&u);
}
END_TEST

START_TEST(test_sched_why_node_filter)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    sched_objs_node(&u, "g1", "gpu", 8, 4);
    sched_objs_node(&u, "g2", "gpu", 8, 4);
    sched_objs_node(&u, "g3", "gpu", 8, 8);
    sched_objs_node(&u, "c1", "cpu", 8, 0);
    sched_objs_node(&u, "c2", "cpu", 8, 0);
    /* a job that takes 6 GPUs of g3 first, leaving at most 4 free anywhere */
    const char *first = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"first\","
                        "\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},\"spec\":{\"containers\":"
                        "[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{"
                        "\"nvidia.com/gpu\":\"6\"}}}],\"nodeSelector\":{\"pool\":\"gpu\"}}}";
    const char *big = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"big\","
                      "\"creationTimestamp\":\"2026-01-01T00:00:09Z\"},\"spec\":{\"containers\":"
                      "[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{"
                      "\"nvidia.com/gpu\":\"8\"}}}],\"nodeSelector\":{\"pool\":\"gpu\"}}}";
    json_decref(sched_util_apply(&u, first, 1000));
    json_decref(sched_util_apply(&u, big, 1000));
    json_decref(sched_util_cycle(&u, 2000));
    char *node = sched_util_node_of(&u, "default/first");
    ck_assert_str_eq(node, "g3");
    free(node);
    json_t *w = sched_util_why(&u, "default/big");
    json_t *nf = json_object_get(w, "nodeFilter");
    ck_assert_str_eq(json_string_value(json_object_get(nf, "summary")),
                     "0/5 nodes fit: 3 Insufficient nvidia.com/gpu (need 8, max free 4), "
                     "2 node selector mismatch (nodeSelector pool=gpu on 3 nodes)");
    ck_assert_int_eq(json_integer_value(json_object_get(nf, "total")), 5);
    ck_assert_int_eq(json_integer_value(json_object_get(nf, "fit")), 0);
    json_t *r0 = json_array_get(json_object_get(nf, "reasons"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(r0, "resource")), "nvidia.com/gpu");
    ck_assert_int_eq(json_integer_value(json_object_get(r0, "nodes")), 3);
    ck_assert_int_eq(json_integer_value(json_object_get(r0, "need")), 8);
    ck_assert_int_eq(json_integer_value(json_object_get(r0, "maxFree")), 4);
    /* g3 could hold it but for "first", placed ahead of it in the same cycle */
    ck_assert_str_eq(sched_objs_primary(w), "TakenByEarlierJobs");
    json_t *ahead = json_array_get(json_object_get(w, "ahead"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(ahead, "job")), "default/first");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(ahead, "nodes"), 0)), "g3");
    json_decref(w);
    sched_util_close(&u);
}
END_TEST

START_TEST(test_sched_why_history)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    sched_objs_node(&u, "n1", "a", 1, 0);
    sched_objs_node(&u, "n0", "a", 1, 0); /* 2 cpus in all: not larger than the cluster */
    sched_objs_pod(&u, "p", NULL, 0, 2);
    for (int i = 0; i < 3; i++) /* the 2nd and 3rd have nothing to do: p waits for a change */
        json_decref(sched_util_cycle(&u, 2000 + i));
    ck_assert_int_eq(sched_util_audit_count(&u, "unschedulable", "default/p"), 1);
    ck_assert_int_eq(sched_util_audit_count(&u, "cycle", NULL), 1);
    json_t *w = sched_util_why(&u, "default/p");
    ck_assert_str_eq(sched_objs_primary(w), "ExceedsAllocatable");
    ck_assert_int_eq(json_array_size(json_object_get(w, "history")), 1);
    json_decref(w);
    sched_objs_node(&u, "n2", "a", 4, 0);
    json_decref(sched_util_cycle(&u, 3000));
    w = sched_util_why(&u, "default/p");
    json_t *h = json_object_get(w, "history");
    ck_assert_int_eq(json_array_size(h), 2);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 0), "code")),
                     "ExceedsAllocatable");
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(h, 0), "cycle")), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(h, 1), "code")), "Placed");
    /* cycle numbers count the cycles that wrote: the idle ones took none */
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(h, 1), "cycle")), 2);
    ck_assert_str_eq(json_string_value(json_object_get(
                         json_object_get(json_object_get(w, "placement"), "nodes"), "p")),
                     "n2");
    ck_assert_str_eq(json_string_value(json_object_get(w, "state")), "Scheduled");
    json_decref(w);
    sched_util_close(&u);
}
END_TEST

/* ---- jobs, metrics ---- */

START_TEST(test_sched_jobs_api)
{
    struct sched_util u;
    struct err err = ERR_INIT;
    sched_util_open(&u, NULL);
    sched_objs_node(&u, "n1", "a", 4, 0);
    sched_objs_pg(&u, "g", 2);
    sched_objs_pod(&u, "g-0", "g", 7, 1);
    sched_objs_pod(&u, "g-1", "g", 7, 1);
    sched_objs_pod(&u, "lone", NULL, 0, 9);
    json_t *jobs = NULL;
    ck_assert_int_eq(sched_jobs(u.s, "Pending", &jobs, &err), 0);
    ck_assert_int_eq(json_array_size(jobs), 2);
    json_decref(jobs);
    json_decref(sched_util_cycle(&u, 2000));
    ck_assert_int_eq(sched_jobs(u.s, "Scheduled", &jobs, &err), 0);
    ck_assert_int_eq(json_array_size(jobs), 1);
    json_t *j = json_array_get(jobs, 0);
    ck_assert_str_eq(json_string_value(json_object_get(j, "id")), "default/g");
    ck_assert_str_eq(json_string_value(json_object_get(j, "kind")), "gang");
    ck_assert_int_eq(json_integer_value(json_object_get(j, "priority")), 7);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "minMember")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(j, "placed")), 2);
    ck_assert_str_eq(json_string_value(
                         json_object_get(json_array_get(json_object_get(j, "members"), 0), "node")),
                     "n1");
    json_decref(jobs);
    ck_assert_int_eq(sched_jobs(u.s, "Unschedulable", &jobs, &err), 0);
    ck_assert_int_eq(json_array_size(jobs), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(jobs, 0), "kind")), "pod");
    json_decref(jobs);
    ck_assert_int_eq(sched_jobs(u.s, "Bogus", &jobs, &err), ERR_INVALID);
    ck_assert_int_eq(sched_job(u.s, "default/nope", &jobs, &err), ERR_NOT_FOUND);
    char *m = sched_metrics(u.s);
    ck_assert_ptr_nonnull(strstr(m, "muster_pods_placed_total 2\n"));
    ck_assert_ptr_nonnull(strstr(m, "muster_jobs{state=\"Unschedulable\"} 1\n"));
    ck_assert_ptr_nonnull(strstr(m, "muster_cycle_duration_seconds_count 1\n"));
    free(m);
    sched_util_close(&u);
}
END_TEST

/* ---- invariants ---- */

static void put_raw(struct sched_util *u, enum model_kind kind, const char *json)
{
    MDB_txn *txn = NULL;
    json_t *obj = json_loads(json, 0, NULL);
    ck_assert_ptr_nonnull(obj);
    ck_assert_int_eq(store_txn_begin(u->st, STORE_WRITE, &txn, NULL), 0);
    ck_assert_int_eq(store_put(txn, kind, obj, NULL, NULL), 0);
    ck_assert_int_eq(store_txn_commit(&txn, NULL), 0);
    json_decref(obj);
}

START_TEST(test_sched_invariants_detect_corruption)
{
    struct sched_util u;
    char why[512];
    sched_util_open(&u, NULL);
    sched_objs_node(&u, "n1", "a", 2, 0);
    sched_objs_pg(&u, "g", 2);
    sched_objs_pod(&u, "g-0", "g", 0, 1);
    sched_objs_pod(&u, "g-1", "g", 0, 1);
    json_decref(sched_util_cycle(&u, 2000));
    ck_assert_msg(sched_invariants_check(u.st, why, sizeof(why)) == 0, "%s", why);

    /* over-commit n1 */
    put_raw(&u, MODEL_POD,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\",\"namespace\":"
            "\"default\"},\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\","
            "\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}");
    ck_assert_int_eq(sched_invariants_check(u.st, why, sizeof(why)), -1);
    ck_assert_ptr_nonnull(strstr(why, "over-committed"));
    ck_assert_int_eq(sched_delete(u.s, MODEL_POD, "default/x", 3000, NULL), 0);

    /* a gang of 3 with one member bound */
    sched_objs_pg(&u, "h", 3);
    for (int i = 0; i < 3; i++) {
        char buf[1024];
        snprintf(buf, sizeof(buf),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"h-%d\","
                 "\"namespace\":\"default\",\"labels\":{\"pod-group.scheduling.sigs.k8s.io\":"
                 "\"h\"}},\"spec\":{%s\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
                 i, i == 0 ? "\"nodeName\":\"n1\"," : "");
        put_raw(&u, MODEL_POD, buf);
    }
    ck_assert_int_eq(sched_invariants_check(u.st, why, sizeof(why)), -1);
    ck_assert_ptr_nonnull(strstr(why, "'default/h' is partially placed"));
    sched_util_close(&u);

    /* a pod on a missing node */
    sched_util_open(&u, NULL);
    put_raw(&u, MODEL_POD,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"y\",\"namespace\":"
            "\"default\"},\"spec\":{\"nodeName\":\"ghost\",\"containers\":[{\"name\":\"c\","
            "\"image\":\"x\"}]}}");
    ck_assert_int_eq(sched_invariants_check(u.st, why, sizeof(why)), -1);
    ck_assert_ptr_nonnull(strstr(why, "missing node 'ghost'"));
    sched_util_close(&u);
}
END_TEST

/* Mirror mode: a PodGroup naming a class that has not arrived waits with a blocker naming
 * it, then takes the class's value when it comes; pods are not refused, and a pod the API
 * server gave a spec.priority keeps it. */
START_TEST(test_sched_podgroup_class_missing_waits_in_mirror_mode)
{
    struct sched_util u;
    struct sched_options opts = {.mirrored = 1};
    sched_util_open(&u, &opts);
    sched_objs_node(&u, "n1", "a", 4, 0);
    json_decref(sched_util_apply(
        &u,
        "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"PodGroup\",\"metadata\":{"
        "\"name\":\"g\",\"namespace\":\"default\"},\"spec\":{\"minMember\":1,"
        "\"priorityClassName\":\"later\"}}",
        1000));
    sched_objs_pod(&u, "g-0", "g", 0, 1);
    json_decref(sched_util_apply(
        &u,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"k\",\"namespace\":"
        "\"default\"},\"spec\":{\"priority\":7,\"priorityClassName\":\"unknown\",\"containers\":[{"
        "\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}",
        1000));
    json_decref(sched_util_cycle(&u, 2000));
    json_t *w = sched_util_why(&u, "default/g");
    ck_assert_str_eq(sched_objs_primary(w), "PriorityClassMissing");
    json_t *b = json_array_get(json_object_get(w, "blockers"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(b, "priorityClass")), "later");
    json_decref(w);
    char *node = sched_util_node_of(&u, "default/g-0");
    ck_assert_str_eq(node, "");
    free(node);
    node = sched_util_node_of(&u, "default/k");
    ck_assert_str_eq(node, "n1");
    free(node);
    json_t *pod = sched_util_pod(&u, "default/k");
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(pod, "spec"), "priority")),
                     7);
    json_decref(pod);
    sched_objs_assert_consistent(&u);

    json_decref(
        sched_util_apply(&u,
                         "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":"
                         "\"PriorityClass\",\"metadata\":{\"name\":\"later\"},\"value\":55}",
                         3000));
    json_t *job = NULL;
    struct err err = ERR_INIT;
    ck_assert_int_eq(sched_job(u.s, "default/g", &job, &err), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(job, "priority")), 55);
    json_decref(job);
    sched_objs_assert_consistent(&u);
    json_decref(sched_util_cycle(&u, 4000));
    node = sched_util_node_of(&u, "default/g-0");
    ck_assert_str_eq(node, "n1");
    free(node);
    /* deleting the class takes the job's priority back to its pods' */
    ck_assert_int_eq(sched_delete(u.s, MODEL_PRIORITYCLASS, "later", 5000, &err), 0);
    ck_assert_int_eq(sched_job(u.s, "default/g", &job, &err), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(job, "priority")), 0);
    json_decref(job);
    ck_assert_int_eq(sched_delete(u.s, MODEL_PRIORITYCLASS, "system-node-critical", 5000, &err),
                     ERR_CONFLICT);
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

static Suite *sched_suite(void)
{
    Suite *s = suite_create("sched");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sched_cases);
    tcase_add_test(tc, test_sched_apply_actions);
    tcase_add_test(tc, test_sched_apply_keeps_binding);
    tcase_add_test(tc, test_sched_delete_node_fails_pods);
    tcase_add_test(tc, test_sched_discard_restores_view);
    tcase_add_test(tc, test_sched_rebuild_equals_live);
    tcase_add_test(tc, test_sched_pod_update_keeps_attempt);
    tcase_add_test(tc, test_sched_cycle_small_map_grows);
    tcase_add_test(tc, test_sched_why_gang_shortfall);
    tcase_add_test(tc, test_sched_why_node_filter);
    tcase_add_test(tc, test_sched_cluster_capacity_follows_nodes);
    tcase_add_test(tc, test_sched_why_history);
    tcase_add_test(tc, test_sched_jobs_api);
    tcase_add_test(tc, test_sched_podgroup_class_missing_waits_in_mirror_mode);
    tcase_add_test(tc, test_sched_invariants_detect_corruption);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(sched_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
