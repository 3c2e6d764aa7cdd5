/*
 * test_reserve.c - time limits, reservations and backfill (scheduler/reserve/,
 * cycle/cycle_reserve.c, docs/reservations.md): a starving gang's reservation is on the
 * nodes that free soonest by the running jobs' limits; other jobs backfill only when they
 * end before its expected start (Slurm's rule), never without a limit; a restart keeps it;
 * activeDeadlineSeconds ends a pod on time; StrictFIFO's head reserves (Kueue).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "err.h"
#include "scheduler.h"
#include "sched_objs.h"
#include "sched_util.h"

/* A pod of cpu cpus. node: bound there and Running since 1 s (NULL: pending). limit:
 * ",\"activeDeadlineSeconds\":100" or "" (spec), ann: annotations JSON members or "". */
static void pod(struct sched_util *u, int64_t now, const char *name, const char *group,
                const char *node, int cpu, const char *spec, const char *ann)
{
    char labels[128] = "", bound[128] = "", status[128] = "";
    if (group)
        snprintf(labels, sizeof(labels), "\"pod-group.scheduling.sigs.k8s.io\":\"%s\"", group);
    if (node) {
        snprintf(bound, sizeof(bound), ",\"nodeName\":\"%s\"", node);
        snprintf(status, sizeof(status),
                 ",\"status\":{\"phase\":\"Running\",\"startTime\":\"1970-01-01T00:00:01Z\"}");
    }
    sched_util_applyf(u, now,
                      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                      "\"namespace\":\"default\",\"labels\":{%s},\"annotations\":{%s}},"
                      "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":"
                      "{\"requests\":{\"cpu\":\"%d\"}}}]%s%s}%s}",
                      name, labels, ann, cpu, bound, spec, status);
}

static void gang(struct sched_util *u, int64_t now, const char *name, int n, int cpu,
                 const char *max_wait, const char *pod_ann)
{
    char ann[128] = "";
    if (max_wait)
        snprintf(ann, sizeof(ann), "\"muster.io/max-wait\":\"%s\"", max_wait);
    sched_util_applyf(u, now,
                      "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
                      "\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\",\"annotations\":"
                      "{%s}},\"spec\":{\"minMember\":%d}}",
                      name, ann, n);
    for (int i = 0; i < n; i++) {
        char pn[64];
        snprintf(pn, sizeof(pn), "%s-%d", name, i);
        pod(u, now, pn, name, NULL, cpu, "", pod_ann);
    }
}

static json_t *reservations(struct sched_util *u)
{
    json_t *out = NULL;
    struct err err = ERR_INIT;
    ck_assert_msg(sched_reservations(u->s, &out, &err) == 0, "%s", err.msg);
    return out;
}

/* "n1,n2": the nodes of reservation i. */
static void nodes_text(json_t *r, char *buf, size_t n)
{
    size_t i, len = 0;
    json_t *x;
    buf[0] = 0;
    json_array_foreach(json_object_get(r, "nodes"), i, x) len +=
        (size_t)snprintf(buf + len, n - len, "%s%s", i ? "," : "", json_string_value(x));
}

static const char *node_of(struct sched_util *u, const char *key, char *buf, size_t n)
{
    char *s = sched_util_node_of(u, key);
    snprintf(buf, n, "%s", s ? s : "(none)");
    free(s);
    return buf;
}

/* Three 4-cpu nodes: n1 runs r1 (4 cpu) until 101 s, n2 runs r2 (2 cpu) until 61 s, n3 runs
 * r3 (4 cpu) without a limit. The gang g (2 x 4 cpu, max-wait 10 s) waits since 1 s. */
static void starving_cluster(struct sched_util *u)
{
    sched_util_open(u, NULL);
    for (int i = 1; i <= 3; i++) {
        char n[16];
        snprintf(n, sizeof(n), "n%d", i);
        sched_objs_node(u, n, "a", 4, 0);
    }
    pod(u, 1000, "r1", NULL, "n1", 4, ",\"activeDeadlineSeconds\":100", "");
    pod(u, 1000, "r2", NULL, "n2", 2, "", "\"muster.io/expected-runtime\":\"60s\"");
    pod(u, 1000, "r3", NULL, "n3", 4, "", "");
    gang(u, 1000, "g", 2, 4, "10s", "");
}

/* The reservation goes where the running jobs' limits free room soonest: n2 (61 s) and n1
 * (101 s), not n3 (no limit); expected start 101 s; it names the jobs it waits for. Before
 * the threshold the gang has none. */
START_TEST(test_reserve_where_it_ends_soonest)
{
    struct sched_util u;
    char buf[256];
    starving_cluster(&u);
    json_decref(sched_util_cycle(&u, 5000)); /* waited 4 s of 10 */
    json_t *rs = reservations(&u);
    ck_assert_int_eq(json_array_size(rs), 0);
    json_decref(rs);
    json_decref(sched_util_cycle(&u, 20000));
    rs = reservations(&u);
    ck_assert_int_eq(json_array_size(rs), 1);
    json_t *r = json_array_get(rs, 0);
    ck_assert_str_eq(json_string_value(json_object_get(r, "job")), "default/g");
    nodes_text(r, buf, sizeof(buf));
    ck_assert_str_eq(buf, "n1,n2");
    ck_assert_int_eq(json_integer_value(json_object_get(r, "expectedStartMs")), 101000);
    ck_assert_str_eq(json_string_value(json_object_get(r, "expectedStart")),
                     "1970-01-01T00:01:41Z");
    ck_assert_str_eq(json_string_value(json_object_get(r, "reason")), "max-wait");
    json_t *waits = json_object_get(r, "waitingFor");
    ck_assert_int_eq(json_array_size(waits), 2);
    ck_assert_str_eq(json_string_value(json_array_get(waits, 0)), "default/r1");
    ck_assert_str_eq(json_string_value(json_array_get(waits, 1)), "default/r2");
    json_decref(rs);
    /* the why says so, and the audit log */
    json_t *w = sched_util_why(&u, "default/g");
    json_t *b = NULL;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(w, "blockers"), i, x)
    {
        if (!strcmp(json_string_value(json_object_get(x, "code")), "Reserved"))
            b = x;
    }
    ck_assert_ptr_nonnull(b);
    ck_assert_str_eq(json_string_value(json_object_get(b, "message")),
                     "waiting for 2 jobs on 2 nodes, expected start 00:01:41");
    json_decref(w);
    ck_assert_int_eq(sched_util_audit_count(&u, "reserved", "default/g"), 1);
    /* the job's expected end: r1 started at 1 s with a 100 s limit */
    json_t *j = sched_util_job(&u, "default/r1");
    ck_assert_str_eq(json_string_value(json_object_get(j, "expectedEnd")), "1970-01-01T00:01:41Z");
    ck_assert(json_real_value(json_object_get(j, "limitSeconds")) == 100.0);
    json_decref(j);
    j = sched_util_job(&u, "default/r3");
    ck_assert(json_is_null(json_object_get(j, "expectedEnd")));
    json_decref(j);
    /* an unchanged reservation is not written again */
    json_decref(sched_util_cycle(&u, 21000));
    ck_assert_int_eq(sched_util_audit_count(&u, "reserved", "default/g"), 1);
    ck_assert_str_eq(node_of(&u, "default/g-0", buf, sizeof(buf)), "");
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

/* Backfill only when it ends in time: a 2-cpu pod whose limit ends at 80 s (before 101 s)
 * takes n2's free room and says so; one ending at 230 s and one without a limit do not,
 * and their why says ReservedForStarving. */
START_TEST(test_reserve_backfill_only_when_it_ends_in_time)
{
    struct sched_util u;
    char buf[256];
    starving_cluster(&u);
    json_decref(sched_util_cycle(&u, 20000));
    pod(&u, 20000, "short", NULL, NULL, 2, "", "\"muster.io/expected-runtime\":\"60s\"");
    pod(&u, 20000, "long", NULL, NULL, 2, "", "\"muster.io/expected-runtime\":\"210s\"");
    pod(&u, 20000, "nolimit", NULL, NULL, 2, "", "");
    json_decref(sched_util_cycle(&u, 21000));
    ck_assert_str_eq(node_of(&u, "default/short", buf, sizeof(buf)), "n2");
    ck_assert_str_eq(node_of(&u, "default/long", buf, sizeof(buf)), "");
    ck_assert_str_eq(node_of(&u, "default/nolimit", buf, sizeof(buf)), "");
    /* the placed record and the why of the backfilled job say so */
    json_t *all = sched_util_audit(&u), *rec;
    size_t i;
    int found = 0;
    json_array_foreach(all, i, rec)
    {
        const char *kind = json_string_value(json_object_get(rec, "kind"));
        const char *job = json_string_value(json_object_get(rec, "job"));
        if (strcmp(kind, "placed") || strcmp(job, "default/short"))
            continue;
        json_t *bf = json_object_get(rec, "backfill");
        ck_assert_ptr_nonnull(bf);
        ck_assert_str_eq(
            json_string_value(json_object_get(
                json_array_get(json_object_get(bf, "reservations"), 0), "reservation")),
            "default/g");
        found++;
    }
    json_decref(all);
    ck_assert_int_eq(found, 1);
    json_t *w = sched_util_why(&u, "default/short");
    ck_assert_ptr_nonnull(json_object_get(w, "backfill"));
    json_decref(w);
    w = sched_util_why(&u, "default/long");
    ck_assert_str_eq(sched_objs_primary(w), "ReservedForStarving");
    json_decref(w);
    /* /metrics counts them */
    char *met = sched_metrics(u.s);
    ck_assert_ptr_nonnull(strstr(met, "\nmuster_backfills_total 1\n"));
    ck_assert_ptr_nonnull(strstr(met, "\nmuster_reservations 1\n"));
    ck_assert_ptr_nonnull(strstr(met, "\nmuster_reservations_total 1\n"));
    free(met);
    w = sched_util_why(&u, "default/nolimit");
    ck_assert_str_eq(sched_objs_primary(w), "ReservedForStarving");
    ck_assert_ptr_nonnull(
        strstr(json_string_value(json_object_get(json_object_get(w, "primary"), "message")),
               "has no time limit"));
    json_decref(w);
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

/* No limit, no backfill: even a pod that would fit on a reserved node's free room now is
 * kept off it when it has no limit, while the same pod with a short limit is placed. */
START_TEST(test_reserve_no_limit_no_backfill)
{
    struct sched_util u;
    char buf[256];
    starving_cluster(&u);
    json_decref(sched_util_cycle(&u, 20000));
    pod(&u, 20000, "free", NULL, NULL, 1, "", "");
    json_decref(sched_util_cycle(&u, 21000));
    ck_assert_str_eq(node_of(&u, "default/free", buf, sizeof(buf)), "");
    /* a lower-priority reservation does not hold a higher-priority job back */
    pod(&u, 22000, "urgent", NULL, NULL, 1, ",\"priority\":100", "");
    json_decref(sched_util_cycle(&u, 23000));
    ck_assert_str_eq(node_of(&u, "default/urgent", buf, sizeof(buf)), "n2");
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

/* A restart keeps the reservation (the view rebuilt from the store holds the same nodes),
 * and it goes when the gang is placed: r1's activeDeadlineSeconds ends it at 101 s, r2's
 * estimate ends nothing (it is marked Succeeded as a kubelet would report it). */
START_TEST(test_reserve_restart_keeps_and_placement_ends)
{
    struct sched_util u;
    char buf[256];
    starving_cluster(&u);
    json_decref(sched_util_cycle(&u, 20000));
    json_t *before = reservations(&u);
    sched_util_reopen(&u);
    json_t *after = reservations(&u);
    ck_assert(json_equal(before, after));
    json_decref(before);
    json_decref(after);
    sched_objs_assert_consistent(&u);
    /* still held after the restart: no backfill without a limit */
    pod(&u, 30000, "free", NULL, NULL, 1, "", "");
    json_decref(sched_util_cycle(&u, 31000));
    ck_assert_str_eq(node_of(&u, "default/free", buf, sizeof(buf)), "");
    /* r2 finishes (the kubelet reports it), r1 passes its deadline at 101 s */
    sched_util_applyf(&u, 62000,
                      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"r2\","
                      "\"namespace\":\"default\",\"annotations\":{\"muster.io/expected-runtime\":"
                      "\"60s\"}},\"spec\":{\"nodeName\":\"n2\",\"containers\":[{\"name\":\"c\","
                      "\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]},"
                      "\"status\":{\"phase\":\"Succeeded\",\"startTime\":"
                      "\"1970-01-01T00:00:01Z\"}}");
    json_decref(sched_util_cycle(&u, 100900));
    ck_assert_str_eq(node_of(&u, "default/g-0", buf, sizeof(buf)), "");
    json_t *r1 = sched_util_pod(&u, "default/r1");
    ck_assert_str_eq(sched_util_str2(r1, "status", "phase"), "Running");
    json_decref(r1);
    json_decref(sched_util_cycle(&u, 101000));
    r1 = sched_util_pod(&u, "default/r1");
    ck_assert_str_eq(sched_util_str2(r1, "status", "phase"), "Failed");
    ck_assert_str_eq(sched_util_str2(r1, "status", "reason"), "DeadlineExceeded");
    json_decref(r1);
    ck_assert_int_eq(sched_util_audit_count(&u, "deadline-exceeded", "default/r1"), 1);
    ck_assert_str_ne(node_of(&u, "default/g-0", buf, sizeof(buf)), "");
    ck_assert_str_ne(node_of(&u, "default/g-1", buf, sizeof(buf)), "");
    json_decref(sched_util_cycle(&u, 102000));
    json_t *rs = reservations(&u);
    ck_assert_int_eq(json_array_size(rs), 0);
    json_decref(rs);
    ck_assert_int_eq(sched_util_audit_count(&u, "unreserved", "default/g"), 1);
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

/* activeDeadlineSeconds ends a pod on time (standalone, as the kubelet): Running until
 * start + deadline, Failed with reason DeadlineExceeded from then, its node free again;
 * muster.io/expected-runtime ends nothing. */
START_TEST(test_reserve_deadline_ends_pod_on_time)
{
    struct sched_util u;
    char buf[64];
    struct sched_options opts = {.mark_running = 1};
    sched_util_open(&u, &opts);
    sched_objs_node(&u, "n1", "a", 4, 0);
    pod(&u, 1000, "d", NULL, NULL, 4, ",\"activeDeadlineSeconds\":30", "");
    pod(&u, 1000, "e", NULL, NULL, 4, "", "\"muster.io/expected-runtime\":\"10s\"");
    json_decref(sched_util_cycle(&u, 2000)); /* d binds at 2 s */
    ck_assert_str_eq(node_of(&u, "default/d", buf, sizeof(buf)), "n1");
    json_decref(sched_util_cycle(&u, 31999));
    json_t *p = sched_util_pod(&u, "default/d");
    ck_assert_str_eq(sched_util_str2(p, "status", "phase"), "Running");
    json_decref(p);
    json_decref(sched_util_cycle(&u, 32000));
    p = sched_util_pod(&u, "default/d");
    ck_assert_str_eq(sched_util_str2(p, "status", "phase"), "Failed");
    ck_assert_str_eq(sched_util_str2(p, "status", "reason"), "DeadlineExceeded");
    json_decref(p);
    json_decref(sched_util_cycle(&u, 33000)); /* e takes the freed node */
    ck_assert_str_eq(node_of(&u, "default/e", buf, sizeof(buf)), "n1");
    json_decref(sched_util_cycle(&u, 80000)); /* an estimate ends nothing */
    p = sched_util_pod(&u, "default/e");
    ck_assert_str_eq(sched_util_str2(p, "status", "phase"), "Running");
    json_decref(p);
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

/* Within its topology rule: under MustGather BlockLayer the reservation is the block that
 * frees soonest as a whole (b2: n3 at 61 s, n4 at 71 s), not the two nodes that free
 * soonest across blocks (n1 at 51 s, n3 at 61 s). */
START_TEST(test_reserve_within_must_gather)
{
    struct sched_util u;
    char buf[256];
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(
        &u,
        "apiVersion: scheduling.koordinator.sh/v1alpha1\nkind: ClusterNetworkTopology\n"
        "metadata: {name: default}\nspec:\n  networkTopologySpec:\n"
        "  - {topologyLayer: BlockLayer, labelKey: [block]}\n"
        "  - {topologyLayer: NodeTopologyLayer, parentTopologyLayer: BlockLayer}\n",
        1000));
    const char *nodes[][2] = {{"n1", "b1"}, {"n2", "b1"}, {"n3", "b2"}, {"n4", "b2"}};
    for (int i = 0; i < 4; i++)
        sched_util_applyf(&u, 1000,
                          "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":"
                          "\"%s\",\"labels\":{\"block\":\"%s\"}},\"status\":{\"allocatable\":"
                          "{\"cpu\":\"4\"}}}",
                          nodes[i][0], nodes[i][1]);
    pod(&u, 1000, "r1", NULL, "n1", 4, ",\"activeDeadlineSeconds\":50", "");
    pod(&u, 1000, "r2", NULL, "n2", 4, ",\"activeDeadlineSeconds\":200", "");
    pod(&u, 1000, "r3", NULL, "n3", 4, ",\"activeDeadlineSeconds\":60", "");
    pod(&u, 1000, "r4", NULL, "n4", 4, ",\"activeDeadlineSeconds\":70", "");
    sched_util_applyf(&u, 1000,
                      "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
                      "\"metadata\":{\"name\":\"g\",\"namespace\":\"default\",\"annotations\":"
                      "{\"muster.io/max-wait\":\"5s\",\"gang.scheduling.koordinator.sh/"
                      "network-topology-spec\":\"{\\\"gatherStrategy\\\":[{\\\"layer\\\":"
                      "\\\"BlockLayer\\\",\\\"strategy\\\":\\\"MustGather\\\"}]}\"}},"
                      "\"spec\":{\"minMember\":2}}");
    pod(&u, 1000, "g-0", "g", NULL, 4, "", "");
    pod(&u, 1000, "g-1", "g", NULL, 4, "", "");
    json_decref(sched_util_cycle(&u, 10000));
    json_t *rs = reservations(&u);
    ck_assert_int_eq(json_array_size(rs), 1);
    nodes_text(json_array_get(rs, 0), buf, sizeof(buf));
    ck_assert_str_eq(buf, "n3,n4");
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(rs, 0), "expectedStartMs")),
                     71000);
    json_decref(rs);
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

/* Mirror only (no scheduler name: muster writes nothing to the API server): muster never
 * fails a mirrored pod itself; the kubelet's Failed status, mirrored back, frees the node
 * like any other end. The deadline still counts as the job's limit. */
START_TEST(test_reserve_deadline_left_to_kubelet_in_mirror_mode)
{
    struct sched_util u;
    char buf[64];
    struct sched_options opts = {.mirrored = 1};
    sched_util_open(&u, &opts);
    sched_objs_node(&u, "n1", "a", 4, 0);
    pod(&u, 1000, "d", NULL, "n1", 4, ",\"activeDeadlineSeconds\":10", "");
    pod(&u, 1000, "next", NULL, NULL, 4, "", "");
    json_decref(sched_util_cycle(&u, 60000)); /* 59 s past its start */
    json_t *p = sched_util_pod(&u, "default/d");
    ck_assert_str_eq(sched_util_str2(p, "status", "phase"), "Running");
    json_decref(p);
    ck_assert_int_eq(sched_util_audit_count(&u, "deadline-exceeded", NULL), 0);
    json_t *j = sched_util_job(&u, "default/d");
    ck_assert_str_eq(json_string_value(json_object_get(j, "expectedEnd")), "1970-01-01T00:00:11Z");
    json_decref(j);
    ck_assert_str_eq(node_of(&u, "default/next", buf, sizeof(buf)), "");
    /* the kubelet's status, as the mirror applies it */
    sched_util_applyf(&u, 61000,
                      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"d\","
                      "\"namespace\":\"default\"},\"spec\":{\"nodeName\":\"n1\","
                      "\"activeDeadlineSeconds\":10,\"containers\":[{\"name\":\"c\",\"image\":"
                      "\"x\",\"resources\":{\"requests\":{\"cpu\":\"4\"}}}]},\"status\":{"
                      "\"phase\":\"Failed\",\"reason\":\"DeadlineExceeded\",\"startTime\":"
                      "\"1970-01-01T00:00:01Z\"}}");
    json_decref(sched_util_cycle(&u, 62000));
    ck_assert_str_eq(node_of(&u, "default/next", buf, sizeof(buf)), "n1");
    sched_util_close(&u);
}
END_TEST

/* Bind mode: a pod muster binds (spec.schedulerName "muster") that runs past its deadline
 * is marked Failed / DeadlineExceeded at start + deadline, with a "deadline-exceeded" outbox
 * record naming its node (write-back writes the status: test_kube_musterd.c); a pod of
 * another scheduler past its deadline is left to its kubelet, and stays as mirrored. */
START_TEST(test_reserve_deadline_bind_mode_ends_own_pods)
{
    struct sched_util u;
    char buf[64];
    struct sched_options opts = {.mirrored = 1, .bind_scheduler = "muster"};
    sched_util_open(&u, &opts);
    sched_objs_node(&u, "n1", "a", 4, 0);
    sched_objs_node(&u, "n2", "a", 4, 0);
    pod(&u, 1000, "mine", NULL, "n1", 4,
        ",\"schedulerName\":\"muster\",\"activeDeadlineSeconds\":10", "");
    pod(&u, 1000, "theirs", NULL, "n2", 4,
        ",\"schedulerName\":\"other\",\"activeDeadlineSeconds\":10", "");
    json_decref(sched_util_cycle(&u, 10999)); /* started at 1 s: due at 11 s */
    json_t *p = sched_util_pod(&u, "default/mine");
    ck_assert_str_eq(sched_util_str2(p, "status", "phase"), "Running");
    json_decref(p);
    ck_assert_int_eq(sched_util_audit_count(&u, "deadline-exceeded", NULL), 0);
    json_decref(sched_util_cycle(&u, 11000));
    p = sched_util_pod(&u, "default/mine");
    ck_assert_str_eq(sched_util_str2(p, "status", "phase"), "Failed");
    ck_assert_str_eq(sched_util_str2(p, "status", "reason"), "DeadlineExceeded");
    json_decref(p);
    p = sched_util_pod(&u, "default/theirs");
    ck_assert_str_eq(sched_util_str2(p, "status", "phase"), "Running");
    json_decref(p);
    ck_assert_int_eq(sched_util_audit_count(&u, "deadline-exceeded", "default/mine"), 1);
    ck_assert_int_eq(sched_util_audit_count(&u, "deadline-exceeded", NULL), 1);
    /* the record is an outbox entry: the pod and the node it ran on */
    json_t *all = sched_util_audit(&u), *rec = NULL;
    for (size_t i = 0; i < json_array_size(all); i++)
        if (!strcmp(json_string_value(json_object_get(json_array_get(all, i), "kind")),
                    "deadline-exceeded"))
            rec = json_array_get(all, i);
    ck_assert_ptr_nonnull(rec);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(rec, "pods"), 0)),
                     "default/mine");
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(rec, "nodes"), 0)), "n1");
    json_decref(all);
    /* later cycles write no second record; n1 is free for a pending pod, n2 is not */
    pod(&u, 12000, "next", NULL, NULL, 4, ",\"schedulerName\":\"muster\"", "");
    json_decref(sched_util_cycle(&u, 13000));
    ck_assert_str_eq(node_of(&u, "default/next", buf, sizeof(buf)), "n1");
    json_decref(sched_util_cycle(&u, 60000));
    ck_assert_int_eq(sched_util_audit_count(&u, "deadline-exceeded", NULL), 1);
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

/* Kueue's StrictFIFO (pkg/queue cluster_queue_strict_fifo): the head of the queue that
 * does not fit holds its place; here it gets a reservation at once, without a max-wait,
 * and a later job of a BestEffortFIFO queue that does not fit gets none. */
START_TEST(test_reserve_strict_fifo_head)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    sched_objs_node(&u, "n1", "a", 4, 0);
    pod(&u, 1000, "r1", NULL, "n1", 4, ",\"activeDeadlineSeconds\":50", "");
    sched_util_applyf(&u, 1000,
                      "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\","
                      "\"metadata\":{\"name\":\"strict\",\"annotations\":{"
                      "\"muster.io/queueing-strategy\":\"StrictFIFO\"}},\"spec\":{\"weight\":1}}");
    sched_util_applyf(
        &u, 1000,
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"head\","
        "\"namespace\":\"default\",\"annotations\":{"
        "\"scheduling.volcano.sh/queue-name\":\"strict\"}},\"spec\":{\"containers\":"
        "[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"4\"}}}"
        "]}}");
    pod(&u, 1000, "other", NULL, NULL, 4, "", "");
    json_decref(sched_util_cycle(&u, 2000));
    json_t *rs = reservations(&u);
    ck_assert_int_eq(json_array_size(rs), 1);
    json_t *r = json_array_get(rs, 0);
    ck_assert_str_eq(json_string_value(json_object_get(r, "job")), "default/head");
    ck_assert_str_eq(json_string_value(json_object_get(r, "reason")), "strict-fifo");
    ck_assert_int_eq(json_integer_value(json_object_get(r, "expectedStartMs")), 51000);
    json_decref(rs);
    sched_objs_assert_consistent(&u);
    sched_util_close(&u);
}
END_TEST

/* Bad input is refused with the field named, and nothing is written. */
START_TEST(test_reserve_bad_input_refused)
{
    struct sched_util u;
    struct err err = ERR_INIT;
    struct model_manifest m = {0};
    json_t *res = NULL;
    const char *bad[] = {
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":"
        "\"default\",\"annotations\":{\"muster.io/expected-runtime\":\"soon\"}},\"spec\":{"
        "\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":"
        "\"default\"},\"spec\":{\"activeDeadlineSeconds\":0,\"containers\":[{\"name\":\"c\","
        "\"image\":\"x\"}]}}",
        "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"Queue\",\"metadata\":{"
        "\"name\":\"q\",\"annotations\":{\"muster.io/queueing-strategy\":\"Strict\"}}}",
        "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"PodGroup\",\"metadata\":"
        "{\"name\":\"g\",\"namespace\":\"default\",\"annotations\":{\"muster.io/max-wait\":"
        "\"-5m\"}},\"spec\":{\"minMember\":1}}",
    };
    const char *field[] = {"muster.io/expected-runtime", "activeDeadlineSeconds",
                           "muster.io/queueing-strategy", "muster.io/max-wait"};
    sched_util_open(&u, NULL);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(model_manifest_parse(bad[i], strlen(bad[i]), MODEL_FMT_AUTO, &m, &err), 0);
        ck_assert_int_eq(sched_apply(u.s, &m, 1000, &res, &err), ERR_INVALID);
        ck_assert_msg(strstr(err.msg, field[i]) || strstr(err.field, field[i]),
                      "case %zu: '%s' (%s) does not name %s", i, err.msg, err.field, field[i]);
        model_manifest_free(&m);
        err_clear(&err);
    }
    ck_assert_int_eq(sched_util_audit_count(&u, "applied", NULL), 0);
    sched_util_close(&u);
}
END_TEST

static Suite *reserve_suite(void)
{
    Suite *s = suite_create("reserve");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_reserve_where_it_ends_soonest);
    tcase_add_test(tc, test_reserve_backfill_only_when_it_ends_in_time);
    tcase_add_test(tc, test_reserve_no_limit_no_backfill);
    tcase_add_test(tc, test_reserve_restart_keeps_and_placement_ends);
    tcase_add_test(tc, test_reserve_deadline_ends_pod_on_time);
    tcase_add_test(tc, test_reserve_within_must_gather);
    tcase_add_test(tc, test_reserve_deadline_left_to_kubelet_in_mirror_mode);
    tcase_add_test(tc, test_reserve_deadline_bind_mode_ends_own_pods);
    tcase_add_test(tc, test_reserve_strict_fifo_head);
    tcase_add_test(tc, test_reserve_bad_input_refused);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(reserve_suite());
}
