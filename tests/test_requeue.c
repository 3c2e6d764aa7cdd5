/*
 * test_requeue.c - waiting jobs (scheduler/view_wait.c): a job that failed is retried only
 * when an event that could make it fit happens, or when its backoff runs out; a cycle with
 * nothing to do writes nothing. Each event test parks a job, checks that an unrelated change
 * does not retry it (the cycle summary's "attempted"), then drives the event and checks that
 * the next cycle retries and places it. Times are the scheduler's now_ms, never the clock:
 * the first cycle runs at 2 s, so the job's first backoff (1 s) runs out at 3 s and every
 * cycle below runs before that unless it says otherwise.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "scheduler.h"
#include "sched_util.h"

#define NODE(name, cpu, extra)                                                                     \
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"" name "\"" extra           \
    "},\"status\":{\"allocatable\":{\"cpu\":\"" cpu "\",\"pods\":\"10\"}}}"
#define POD(name, cpu, meta, spec)                                                                 \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"" name                       \
    "\",\"namespace\":\"default\"" meta "},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"   \
    "\"x\",\"resources\":{\"requests\":{\"cpu\":\"" cpu "\"}}}]" spec "}}"
#define HOG(node, cpu, prio, phase)                                                                \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"hog\",\"namespace\":"        \
    "\"default\",\"labels\":{\"app\":\"hog\"}},\"spec\":{\"priority\":" prio                       \
    ",\"nodeName\":\"" node                                                                        \
    "\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{"             \
    "\"cpu\":\"" cpu "\"}}}]},\"status\":{\"phase\":\"" phase "\"}}"
#define PDB(name)                                                                                  \
    "{\"apiVersion\":\"policy/"                                                                    \
    "v1\",\"kind\":\"PodDisruptionBudget\",\"metadata\":{\"name\":\"" name                         \
    "\",\"namespace\":\"default\"},\"spec\":{\"minAvailable\":1,\"selector\":{"                    \
    "\"matchLabels\":{\"app\":\"other\"}}}}"
/* A pod bound to a node, asking for nothing: it frees no room (unrelated to any job here
 * but those with pod rules). */
#define BYSTANDER(node)                                                                            \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"bystander\",\"namespace\":"  \
    "\"default\"},\"spec\":{\"nodeName\":\"" node "\",\"containers\":[{\"name\":\"c\",\"image\":"  \
    "\"x\"}]},\"status\":{\"phase\":\"Running\"}}"
#define PG(name, min, ann)                                                                         \
    "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"PodGroup\",\"metadata\":{"     \
    "\"name\":\"" name "\",\"namespace\":\"default\"" ann "},\"spec\":{\"minMember\":" min "}}"
#define IN_GROUP(g) ",\"labels\":{\"pod-group.scheduling.sigs.k8s.io\":\"" g "\"}"
#define CNT                                                                                        \
    "{\"apiVersion\":\"scheduling.koordinator.sh/v1alpha1\",\"kind\":\"ClusterNetworkTopology\","  \
    "\"metadata\":{\"name\":\"default\"},\"spec\":{\"networkTopologySpec\":[{\"topologyLayer\":"   \
    "\"BlockLayer\",\"labelKey\":[\"block\"]},{\"topologyLayer\":\"NodeTopologyLayer\","           \
    "\"parentTopologyLayer\":\"BlockLayer\"}]}}"
#define MUST_BLOCK                                                                                 \
    ",\"annotations\":{\"gang.scheduling.koordinator.sh/network-topology-spec\":"                  \
    "\"{\\\"gatherStrategy\\\":[{\\\"layer\\\":\\\"BlockLayer\\\",\\\"strategy\\\":"               \
    "\\\"MustGather\\\"}]}\"}"
#define QUEUE(name, cap)                                                                           \
    "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\",\"metadata\":{"          \
    "\"name\":\"" name "\"},\"spec\":{\"weight\":1,\"capability\":{\"cpu\":\"" cap "\"}}}"
#define IN_QUEUE(q) ",\"annotations\":{\"scheduling.volcano.sh/queue-name\":\"" q "\"}"

static int64_t now = 2000; /* the next cycle's time */

static void apply(struct sched_util *u, const char *doc)
{
    json_decref(sched_util_apply(u, doc, now - 50));
}

/* Runs a cycle at now (then now += 100) and returns its summary's "attempted". */
static long cycle_attempted(struct sched_util *u)
{
    json_t *sum = sched_util_cycle(u, now);
    now += 100;
    long n = (long)json_integer_value(json_object_get(sum, "attempted"));
    json_decref(sum);
    return n;
}

static void delete (struct sched_util *u, enum model_kind kind, const char *key)
{
    struct err err = ERR_INIT;
    ck_assert_msg(sched_delete(u->s, kind, key, now - 50, &err) == 0, "%s", err.msg);
}

static void assert_on(struct sched_util *u, const char *pod, const char *node)
{
    char *got = sched_util_node_of(u, pod);
    ck_assert_msg(got && !strcmp(got, node), "pod '%s' on '%s', expected '%s'", pod,
                  got ? got : "(missing)", node);
    free(got);
}

/* The first cycle tries w and fails; the next one has nothing to do. */
static void park(struct sched_util *u)
{
    now = 2000;
    ck_assert_int_ge(cycle_attempted(u), 1);
    assert_on(u, "default/w", "");
    ck_assert_int_eq(cycle_attempted(u), 0);
}

static void open_u(struct sched_util *u, int mirrored)
{
    struct sched_options o = {.grace_ms = 30000, .mirrored = mirrored};
    sched_util_open(u, &o);
}

START_TEST(test_requeue_node_added)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "2", ""));
    apply(&u, POD("w", "4", "", ""));
    park(&u);
    apply(&u, POD("other", "8", "", "")); /* a new job: tried, w is not */
    ck_assert_int_eq(cycle_attempted(&u), 1);
    apply(&u, NODE("n2", "4", ""));
    ck_assert_int_eq(cycle_attempted(&u), 2); /* w, and other (it may fit n2 too: no) */
    assert_on(&u, "default/w", "n2");
    sched_util_close(&u);
}
END_TEST

/* A node's heartbeat (its status conditions, annotations) changes nothing the scheduler
 * reads: no waiting job is retried; its allocatable growing is a change. */
START_TEST(test_requeue_node_heartbeat_is_not_an_event)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "2", ""));
    apply(&u, POD("w", "4", "", ""));
    park(&u);
    apply(&u, NODE("n1", "2", ",\"annotations\":{\"heartbeat\":\"1\"}"));
    apply(&u, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},"
              "\"status\":{\"allocatable\":{\"cpu\":\"2\",\"pods\":\"10\"},\"conditions\":[{"
              "\"type\":\"Ready\",\"status\":\"True\",\"lastHeartbeatTime\":"
              "\"2026-11-23T10:00:00Z\"}]}}");
    ck_assert_int_eq(cycle_attempted(&u), 0);
    apply(&u, NODE("n1", "4", ""));
    ck_assert_int_eq(cycle_attempted(&u), 1);
    assert_on(&u, "default/w", "n1");
    sched_util_close(&u);
}
END_TEST

START_TEST(test_requeue_pod_deleted)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "4", ""));
    apply(&u, HOG("n1", "4", "1000", "Running"));
    apply(&u, POD("w", "4", "", ""));
    park(&u);
    apply(&u, HOG("n1", "4", "1000", "Running")); /* the same pod again: nothing freed */
    ck_assert_int_eq(cycle_attempted(&u), 0);
    delete (&u, MODEL_POD, "default/hog");
    ck_assert_int_eq(cycle_attempted(&u), 1);
    assert_on(&u, "default/w", "n1");
    sched_util_close(&u);
}
END_TEST

START_TEST(test_requeue_pod_finished)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "4", ""));
    apply(&u, HOG("n1", "4", "1000", "Running"));
    apply(&u, POD("w", "4", "", ""));
    park(&u);
    apply(&u, BYSTANDER("n1"));
    ck_assert_int_eq(cycle_attempted(&u), 0);
    apply(&u, HOG("n1", "4", "1000", "Succeeded"));
    ck_assert_int_eq(cycle_attempted(&u), 1);
    assert_on(&u, "default/w", "n1");
    sched_util_close(&u);
}
END_TEST

START_TEST(test_requeue_node_uncordoned)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "4", ""));
    apply(&u, NODE("n2", "4", ""));
    apply(&u,
          "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"spec\":{"
          "\"unschedulable\":true},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"pods\":\"10\"}}}");
    apply(&u, HOG("n2", "4", "1000", "Running"));
    apply(&u, POD("w", "4", "", ""));
    park(&u);
    apply(&u, BYSTANDER("n1"));
    ck_assert_int_eq(cycle_attempted(&u), 0);
    apply(&u, NODE("n1", "4", ""));
    ck_assert_int_eq(cycle_attempted(&u), 1);
    assert_on(&u, "default/w", "n1");
    sched_util_close(&u);
}
END_TEST

/* Narrow: room freed on a node the job's static filters refuse does not wake it. */
START_TEST(test_requeue_capacity_narrow)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "4", ",\"labels\":{\"pool\":\"a\"}"));
    apply(&u, NODE("n2", "4", ",\"labels\":{\"pool\":\"b\"}"));
    apply(&u, HOG("n1", "4", "1000", "Running"));
    apply(&u, "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"hog-b\","
              "\"namespace\":\"default\"},\"spec\":{\"priority\":1000,\"nodeName\":\"n2\","
              "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{"
              "\"cpu\":\"4\"}}}]},\"status\":{\"phase\":\"Running\"}}");
    apply(&u, POD("w", "4", "", ",\"nodeSelector\":{\"pool\":\"a\"}"));
    park(&u);
    delete (&u, MODEL_POD, "default/hog-b"); /* room on n2, which w's selector refuses */
    ck_assert_int_eq(cycle_attempted(&u), 0);
    apply(&u, NODE("n2", "8", ",\"labels\":{\"pool\":\"b\"}")); /* n2 grows: still refused */
    ck_assert_int_eq(cycle_attempted(&u), 0);
    delete (&u, MODEL_POD, "default/hog");
    ck_assert_int_eq(cycle_attempted(&u), 1);
    assert_on(&u, "default/w", "n1");
    sched_util_close(&u);
}
END_TEST

/* Its own spec: a pod of the job re-applied asking for less, a gang's missing member. */
START_TEST(test_requeue_own_spec)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "4", ""));
    apply(&u, POD("w", "8", "", ""));
    apply(&u, PG("g", "2", ""));
    apply(&u, POD("g-0", "1", IN_GROUP("g"), ""));
    park(&u);
    assert_on(&u, "default/g-0", "");
    apply(&u, PDB("unrelated"));
    ck_assert_int_eq(cycle_attempted(&u), 0);
    apply(&u, POD("w", "2", "", ""));
    ck_assert_int_eq(cycle_attempted(&u), 1);
    assert_on(&u, "default/w", "n1");
    apply(&u, POD("g-1", "1", IN_GROUP("g"), ""));
    ck_assert_int_eq(cycle_attempted(&u), 1);
    assert_on(&u, "default/g-0", "n1");
    assert_on(&u, "default/g-1", "n1");
    sched_util_close(&u);
}
END_TEST

/* A gang that waits for members that are there but fewer than minMember pending: a member
 * of it deleted and re-created is its own change. Here: minMember lowered on its PodGroup. */
START_TEST(test_requeue_podgroup_changed)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "4", ""));
    apply(&u, PG("g", "3", ""));
    apply(&u, POD("g-0", "1", IN_GROUP("g"), ""));
    apply(&u, POD("g-1", "1", IN_GROUP("g"), ""));
    now = 2000;
    ck_assert_int_ge(cycle_attempted(&u), 1);
    ck_assert_int_eq(cycle_attempted(&u), 0);
    apply(&u, PG("g", "2", ""));
    ck_assert_int_eq(cycle_attempted(&u), 1);
    assert_on(&u, "default/g-0", "n1");
    sched_util_close(&u);
}
END_TEST

START_TEST(test_requeue_queue_changed)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "4", ""));
    apply(&u, QUEUE("q", "1"));
    apply(&u, POD("w", "2", IN_QUEUE("q"), ""));
    park(&u);
    apply(&u, BYSTANDER("n1"));
    ck_assert_int_eq(cycle_attempted(&u), 0);
    apply(&u, QUEUE("q", "2"));
    ck_assert_int_eq(cycle_attempted(&u), 1);
    assert_on(&u, "default/w", "n1");
    sched_util_close(&u);
}
END_TEST

/* With several queues, another queue's usage moving is an event: a job placed in it. */
START_TEST(test_requeue_other_queue_usage)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "4", ""));
    apply(&u, QUEUE("q", "1"));
    apply(&u, QUEUE("r", "4"));
    apply(&u, POD("w", "2", IN_QUEUE("q"), ""));
    park(&u);
    apply(&u, POD("x", "1", IN_QUEUE("r"), ""));
    ck_assert_int_eq(cycle_attempted(&u), 1); /* x, placed: r's usage moved */
    assert_on(&u, "default/x", "n1");
    ck_assert_int_eq(cycle_attempted(&u), 1); /* w retried (still over q's capability) */
    ck_assert_int_eq(cycle_attempted(&u), 0);
    sched_util_close(&u);
}
END_TEST

START_TEST(test_requeue_topology)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "4", ",\"labels\":{\"block\":\"b1\"}"));
    apply(&u, PG("g", "2", MUST_BLOCK));
    apply(&u, POD("g-0", "1", IN_GROUP("g"), ""));
    apply(&u, POD("g-1", "1", IN_GROUP("g"), ""));
    now = 2000;
    ck_assert_int_ge(cycle_attempted(&u), 1);
    assert_on(&u, "default/g-0", "");
    apply(&u, PDB("unrelated"));
    ck_assert_int_eq(cycle_attempted(&u), 0);
    apply(&u, CNT);
    ck_assert_int_eq(cycle_attempted(&u), 1);
    assert_on(&u, "default/g-0", "n1");
    sched_util_close(&u);
}
END_TEST

/* Mirrored: a PodGroup may name a PriorityClass that does not exist yet. */
START_TEST(test_requeue_priority_class)
{
    struct sched_util u;
    open_u(&u, 1);
    apply(&u, NODE("n1", "4", ""));
    apply(&u, "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
              "\"metadata\":{\"name\":\"g\",\"namespace\":\"default\"},\"spec\":{\"minMember\":1,"
              "\"priorityClassName\":\"urgent\"}}");
    apply(&u, POD("g-0", "1", IN_GROUP("g"), ""));
    now = 2000;
    ck_assert_int_ge(cycle_attempted(&u), 1);
    assert_on(&u, "default/g-0", "");
    apply(&u, PDB("unrelated"));
    ck_assert_int_eq(cycle_attempted(&u), 0);
    apply(&u, "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":{"
              "\"name\":\"urgent\"},\"value\":100}");
    ck_assert_int_eq(cycle_attempted(&u), 1);
    assert_on(&u, "default/g-0", "n1");
    sched_util_close(&u);
}
END_TEST

/* A PodDisruptionBudget wakes a job that tried preemption, not one that did not. */
START_TEST(test_requeue_pdb)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "4", ""));
    apply(&u, HOG("n1", "4", "1000", "Running"));
    apply(&u, POD("w", "4", "", ",\"priority\":10"));
    apply(&u, POD("big", "64", "", ""));
    now = 2000;
    ck_assert_int_eq(cycle_attempted(&u), 2);
    json_t *why = sched_util_why(&u, "default/w");
    ck_assert_ptr_nonnull(json_object_get(why, "preemption"));
    json_decref(why);
    ck_assert_int_eq(cycle_attempted(&u), 0);
    apply(&u, PDB("budget"));
    ck_assert_int_eq(cycle_attempted(&u), 1); /* w; big never tried preemption */
    sched_util_close(&u);
}
END_TEST

/* Pod affinity: a job that needs a pod placed next to it is retried when one is placed. */
START_TEST(test_requeue_affinity_placement)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "4", ""));
    apply(&u, POD("w", "1", "",
                  ",\"affinity\":{\"podAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution"
                  "\":[{\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},\"topologyKey\":"
                  "\"kubernetes.io/hostname\"}]}}"));
    park(&u);
    apply(&u, POD("db", "1", ",\"labels\":{\"app\":\"db\"}", ""));
    ck_assert_int_eq(cycle_attempted(&u), 1); /* db placed */
    assert_on(&u, "default/db", "n1");
    ck_assert_int_eq(cycle_attempted(&u), 1); /* w retried */
    assert_on(&u, "default/w", "n1");
    sched_util_close(&u);
}
END_TEST

/* Nothing happens: the backoff retries the job at 1 s, then 2 s, 4 s after its failures. */
START_TEST(test_requeue_backoff)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "2", ""));
    apply(&u, POD("w", "4", "", ""));
    struct err err = ERR_INIT;
    json_t *sum = NULL;
    int64_t at[] = {2000, 2999, 3000, 4999, 5000, 8999, 9000};
    long want[] = {1, 0, 1, 0, 1, 0, 1};
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        ck_assert_msg(sched_cycle(u.s, at[i], &sum, &err) == 0, "%s", err.msg);
        ck_assert_msg(json_integer_value(json_object_get(sum, "attempted")) == want[i],
                      "cycle at %lld attempted %lld, expected %ld", (long long)at[i],
                      (long long)json_integer_value(json_object_get(sum, "attempted")), want[i]);
        json_decref(sum);
    }
    /* four tries, one unschedulable record (the why did not change), four cycle records */
    ck_assert_int_eq(sched_util_audit_count(&u, "cycle", NULL), 4);
    ck_assert_int_eq(sched_util_audit_count(&u, "unschedulable", "default/w"), 1);
    sched_util_close(&u);
}
END_TEST

/* An idle cycle: no audit record, no number; the summary says so; a new job that fits is
 * placed by the next cycle; the why of a waiting job says what retries it. */
START_TEST(test_requeue_idle_cycle)
{
    struct sched_util u;
    open_u(&u, 0);
    apply(&u, NODE("n1", "2", ""));
    apply(&u, POD("w", "4", "", ""));
    now = 2000;
    json_t *sum = sched_util_cycle(&u, 2000);
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "cycle")), 1);
    ck_assert(json_is_false(json_object_get(sum, "idle")));
    json_decref(sum);
    json_t *all = sched_util_audit(&u);
    int records = (int)json_array_size(all);
    json_decref(all);
    sum = sched_util_cycle(&u, 2100);
    ck_assert(json_is_true(json_object_get(sum, "idle")));
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "cycle")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "waiting")), 1);
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "attempted")), 0);
    ck_assert_ptr_null(json_object_get(sum, "auditSeq"));
    json_decref(sum);
    all = sched_util_audit(&u);
    ck_assert_int_eq((int)json_array_size(all), records);
    json_decref(all);
    json_t *why = sched_util_why(&u, "default/w");
    json_t *w = json_object_get(why, "waiting");
    ck_assert_ptr_nonnull(w);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(w, "retriedOn"), 0)),
                     "capacity");
    ck_assert_str_eq(json_string_value(json_object_get(w, "nextRetry")), "1970-01-01T00:00:03Z");
    json_decref(why);
    /* a cycle someone asked for is written and audited all the same */
    struct sched_caller by = {.name = "alice"};
    struct err err = ERR_INIT;
    ck_assert_msg(sched_cycle_by(u.s, 2150, &by, &sum, &err) == 0, "%s", err.msg);
    ck_assert(json_is_false(json_object_get(sum, "idle")));
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "cycle")), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "attempted")), 0);
    json_decref(sum);
    ck_assert_int_eq(sched_util_audit_count(&u, "cycle", NULL), 2);
    apply(&u, POD("small", "1", "", ""));
    sum = sched_util_cycle(&u, 2200);
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "cycle")), 3);
    ck_assert_int_eq(json_integer_value(json_object_get(sum, "attempted")), 1);
    json_decref(sum);
    assert_on(&u, "default/small", "n1");
    sched_util_close(&u);
}
END_TEST

/* A preemptor waits for its victims on its nominated node (PreemptionWaiting) even when
 * another node has room; when the last of them is gone its own placer runs. That happens in
 * the cycle that removes the victim, whether or not the node it frees can still take the
 * preemptor: here n1 was cordoned meanwhile, so the room freed there wakes nobody, and hi,
 * parked until 17 s by its backoff, would have waited for it. */
START_TEST(test_requeue_victim_gone)
{
    static const char *node = "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
                              "\"%s\"},\"spec\":{\"unschedulable\":%s},\"status\":{"
                              "\"allocatable\":{\"cpu\":\"2\"}}}";
    static const char *pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                             "\"%s\",\"namespace\":\"default\"},\"spec\":{\"priority\":%d,"
                             "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{"
                             "\"requests\":{\"cpu\":\"2\"}}}]}}";
    struct sched_util u;
    struct sched_options opts = {.grace_ms = 10000};
    char buf[512];
    sched_util_open(&u, &opts);
    snprintf(buf, sizeof(buf), node, "n1", "false");
    json_decref(sched_util_apply(&u, buf, 500));
    snprintf(buf, sizeof(buf), pod, "lo", 0);
    json_decref(sched_util_apply(&u, buf, 500));
    json_decref(sched_util_cycle(&u, 1000)); /* lo on n1 */
    snprintf(buf, sizeof(buf), pod, "hi", 10);
    json_decref(sched_util_apply(&u, buf, 1500));
    json_decref(sched_util_cycle(&u, 2000)); /* lo preempted (gone at 12 s), hi nominated n1 */
    snprintf(buf, sizeof(buf), node, "n2", "false");
    json_decref(sched_util_apply(&u, buf, 2500));
    snprintf(buf, sizeof(buf), node, "n1", "true");
    json_decref(sched_util_apply(&u, buf, 2500));
    for (int64_t t = 3000; t <= 9000; t += 1000) { /* attempts at 3, 5 and 9 s: it waits */
        json_decref(sched_util_cycle(&u, t));
        json_t *j = sched_util_job(&u, "default/hi");
        ck_assert_str_eq(json_string_value(json_object_get(j, "state")), "Pipelined");
        json_decref(j);
    }
    json_decref(sched_util_cycle(&u, 12000)); /* lo removed; hi placed in the same cycle */
    ck_assert_ptr_null(sched_util_pod(&u, "default/lo"));
    json_t *hi = sched_util_pod(&u, "default/hi");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(hi, "spec"), "nodeName")),
                     "n2");
    json_decref(hi);
    sched_util_close(&u);
}
END_TEST

static Suite *requeue_suite(void)
{
    Suite *s = suite_create("requeue");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_requeue_node_added);
    tcase_add_test(tc, test_requeue_node_heartbeat_is_not_an_event);
    tcase_add_test(tc, test_requeue_pod_deleted);
    tcase_add_test(tc, test_requeue_pod_finished);
    tcase_add_test(tc, test_requeue_node_uncordoned);
    tcase_add_test(tc, test_requeue_capacity_narrow);
    tcase_add_test(tc, test_requeue_own_spec);
    tcase_add_test(tc, test_requeue_podgroup_changed);
    tcase_add_test(tc, test_requeue_queue_changed);
    tcase_add_test(tc, test_requeue_other_queue_usage);
    tcase_add_test(tc, test_requeue_topology);
    tcase_add_test(tc, test_requeue_priority_class);
    tcase_add_test(tc, test_requeue_pdb);
    tcase_add_test(tc, test_requeue_affinity_placement);
    tcase_add_test(tc, test_requeue_backoff);
    tcase_add_test(tc, test_requeue_idle_cycle);
    tcase_add_test(tc, test_requeue_victim_gone);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(requeue_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
