/* test_why_memo.c - a failing job whose outcome is the last failing job's but for its own id
 * takes that job's why texts (scheduler/record/why_memo.c): with the memo on and off
 * (why_memo_off) every stored why document and every audit record are the same bytes, over
 * every case folder and a cluster built to tempt it (pods not named after their gang, a taint
 * whose key is a job's id, so that an id shows where names do not); and the memo answered
 * some jobs there, so the comparison shows something. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "err.h"
#include "scheduler.h"
#include "sched_util.h"
#include "store.h"
#include "why_store.h"

/* The scheduler's muster_why_reused_total. */
static long reused(struct sched_util *u)
{
    return sched_util_metric(u, "muster_why_reused_total");
}

/* Both stores hold the same why documents and the same audit records (but for what the clock
 * says: the times of the applies' records, a cycle's duration, and so the hashes). */
static void assert_same(struct sched_util *on, struct sched_util *off, const char *where)
{
    json_t *a = why_store_all(on->st), *b = why_store_all(off->st), *v;
    const char *k;
    ck_assert_msg(json_object_size(a) == json_object_size(b), "%s: %zu why documents, %zu", where,
                  json_object_size(a), json_object_size(b));
    json_object_foreach(b, k, v)
    {
        char *x = json_object_get(a, k) ? json_dumps(json_object_get(a, k), JSON_COMPACT) : NULL;
        char *y = json_dumps(v, JSON_COMPACT);
        ck_assert_msg(x && !strcmp(x, y), "%s: why of '%s'\nmemo %s\nparts %s", where, k,
                      x ? x : "(none)", y);
        free(x);
        free(y);
    }
    json_decref(a);
    json_decref(b);
    json_t *la = sched_util_audit(on), *lb = sched_util_audit(off);
    ck_assert_int_eq(json_array_size(la), json_array_size(lb));
    for (size_t i = 0; i < json_array_size(lb); i++) {
        /* the time of an apply's records is the clock's, and the hash covers it */
        json_t *ra = json_array_get(la, i), *rb = json_array_get(lb, i);
        json_object_del(ra, "ts");
        json_object_del(rb, "ts");
        json_object_del(ra, "hash");
        json_object_del(rb, "hash");
        json_object_del(ra, "durationMs"); /* a cycle's, measured */
        json_object_del(rb, "durationMs");
        char *x = json_dumps(json_array_get(la, i), JSON_COMPACT | JSON_SORT_KEYS);
        char *y = json_dumps(json_array_get(lb, i), JSON_COMPACT | JSON_SORT_KEYS);
        ck_assert_msg(!strcmp(x, y), "%s: audit record %zu\nmemo %s\nparts %s", where, i, x, y);
        free(x);
        free(y);
    }
    json_decref(la);
    json_decref(lb);
}

/* Each case folder run with the memo and without: the same records. Returns the jobs the
 * memo answered. */
static long cases_same(const char *area)
{
    json_t *names = sched_util_cases(area), *name;
    size_t i;
    long n = 0;
    json_array_foreach(names, i, name)
    {
        const char *c = json_string_value(name);
        struct sched_util on, off;
        json_t *e1 = sched_util_case_run(&on, area, c, NULL);
        struct sched_options o = on.opts;
        o.why_memo_off = 1;
        json_t *e2 = sched_util_case_run(&off, area, c, &o);
        ck_assert_int_eq(reused(&off), 0);
        n += reused(&on);
        char where[256];
        snprintf(where, sizeof(where), "%s/%s", area, c);
        assert_same(&on, &off, where);
        json_decref(e1);
        json_decref(e2);
        sched_util_close(&on);
        sched_util_close(&off);
    }
    json_decref(names);
    return n;
}

START_TEST(test_why_memo_cases_same_records)
{
    long n = cases_same("sched") + cases_same("topology") + cases_same("preempt");
    ck_assert_msg(n > 0, "the memo answered no job in any case folder: the comparison shows "
                         "nothing");
}
END_TEST

/* Node n1 (4 cpu) holds a 3-cpu pod; node n2 (4 cpu) is tainted with key "default/job-07",
 * which no pod tolerates: the node filter of every pod names job-07's id. Then n lone 2-cpu
 * pods (default/job-00 ...), gangs of two 2-cpu pods named after their gang (gang-<g>-<p>) and
 * gangs whose pods are not (w<g>x<p>). Most cannot fit. */
static char *cluster(int n)
{
    char *y = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&y, &len);
    fputs("---\n{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"status\":"
          "{\"allocatable\":{\"cpu\":\"4\"}}}\n"
          "---\n{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n2\"},\"spec\":{"
          "\"taints\":[{\"key\":\"default/job-07\",\"effect\":\"NoSchedule\"}]},\"status\":{"
          "\"allocatable\":{\"cpu\":\"4\"}}}\n"
          "---\n{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"first\","
          "\"namespace\":\"default\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},\"spec\":{"
          "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":"
          "\"3\"}}}]}}\n",
          f);
    for (int i = 0; i < n; i++)
        fprintf(f,
                "---\n{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"job-%02d\","
                "\"namespace\":\"default\",\"creationTimestamp\":\"2026-01-01T00:%02d:00Z\"},"
                "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{"
                "\"requests\":{\"cpu\":\"2\"}}}]}}\n",
                i, i + 1);
    for (int g = 0; g < 8; g++) {
        const char *group = g < 4 ? "gang" : "w";
        fprintf(f,
                "---\n{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
                "\"metadata\":{\"name\":\"%s-%d\",\"namespace\":\"default\"},\"spec\":{"
                "\"minMember\":2}}\n",
                group, g);
        for (int p = 0; p < 2; p++) {
            char pod[32];
            if (g < 4)
                snprintf(pod, sizeof(pod), "gang-%d-%d", g, p);
            else
                snprintf(pod, sizeof(pod), "w%dx%d", g, p);
            fprintf(f,
                    "---\n{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
                    "\"namespace\":\"default\",\"creationTimestamp\":\"2026-01-01T01:%02d:00Z\","
                    "\"labels\":{\"pod-group.scheduling.sigs.k8s.io\":\"%s-%d\"}},\"spec\":{"
                    "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":"
                    "{\"cpu\":\"2\"}}}]}}\n",
                    pod, g, group, g);
        }
    }
    fclose(f);
    return y;
}

static void both_apply(struct sched_util *on, struct sched_util *off, const char *yaml, int64_t at)
{
    json_decref(sched_util_apply(on, yaml, at));
    json_decref(sched_util_apply(off, yaml, at));
}

static void both_cycle(struct sched_util *on, struct sched_util *off, int64_t at)
{
    json_decref(sched_util_cycle(on, at));
    json_decref(sched_util_cycle(off, at));
}

/* Jobs failing in a row with the same outcome take the texts of the one before; a job whose
 * id the shared text names (job-07, in the node filter) and gangs whose pods are not named
 * after them get theirs written; over cycles, an edit and a free, both forms say the same. */
START_TEST(test_why_memo_tempting_cluster)
{
    struct sched_util on, off;
    struct sched_options o = {.why_memo_off = 1};
    sched_util_open(&on, NULL);
    sched_util_open(&off, &o);
    char *y = cluster(12);
    both_apply(&on, &off, y, 1000);
    free(y);
    both_cycle(&on, &off, 2000);
    assert_same(&on, &off, "first cycle");
    long first = reused(&on);
    ck_assert_msg(first > 0, "the memo answered no job");
    ck_assert_int_eq(reused(&off), 0);
    json_t *why = sched_util_why(&on, "default/job-07");
    ck_assert_str_eq(json_string_value(json_object_get(why, "job")), "default/job-07");
    ck_assert_msg(strstr(sched_util_str2(why, "primary", "message"), "pod 'default/job-07'"), "%s",
                  sched_util_str2(why, "primary", "message"));
    json_decref(why);
    why = sched_util_why(&on, "default/w-6");
    char *text = json_dumps(why, JSON_COMPACT);
    ck_assert_msg(strstr(text, "default/w6x") != NULL, "w-6's why names none of its pods: %s",
                  text);
    free(text);
    json_decref(why);

    /* job-03 asks for 1 cpu (still too much on n1, n2 tainted), the first pod goes */
    const char *edit =
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"job-03\",\"namespace\":"
        "\"default\",\"creationTimestamp\":\"2026-01-01T00:04:00Z\"},\"spec\":{\"containers\":[{"
        "\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}";
    both_apply(&on, &off, edit, 3000);
    both_cycle(&on, &off, 4000);
    assert_same(&on, &off, "after the edit");
    struct err err = ERR_INIT;
    ck_assert_msg(sched_delete(on.s, MODEL_POD, "default/first", 5000, &err) == 0, "%s", err.msg);
    ck_assert_msg(sched_delete(off.s, MODEL_POD, "default/first", 5000, &err) == 0, "%s", err.msg);
    both_cycle(&on, &off, 6000);
    both_cycle(&on, &off, 70000); /* past every backoff: all tried again */
    assert_same(&on, &off, "after the free");
    ck_assert_int_ge(reused(&on), first);
    sched_util_close(&on);
    sched_util_close(&off);
}
END_TEST

/* Blocks b1 (two 4-cpu nodes) and b2 (one) in zone a, node t1 in b3 tainted with key
 * "default/g-3"; gangs g-0 ... g-6 of three 2-cpu pods that must gather in one block. g-0
 * takes b1; the others fail for the topology while their pods fit single nodes, so no message
 * names the taint, but the node filter the document holds does: g-3's id shows where no name
 * of g-3 is written. g-6 tolerates the taint and asks for zone a: t1 fails it for its zone,
 * so its outcome is g-5's but for the node filter alone. */
#define ZONE_A ",\"zone\":\"a\""
#define G6_SPEC                                                                                    \
    "\"nodeSelector\":{\"zone\":\"a\"},\"tolerations\":[{\"key\":\"default/g-3\","                 \
    "\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}],"
#define GATHER_TOPOLOGY                                                                            \
    "---\n{\"apiVersion\":\"scheduling.koordinator.sh/"                                            \
    "v1alpha1\",\"kind\":\"ClusterNetworkTopology\","                                              \
    "\"metadata\":{\"name\":\"default\"},\"spec\":{\"networkTopologySpec\":[{\"topologyLayer\":"   \
    "\"BlockLayer\",\"labelKey\":[\"block\"]},{\"topologyLayer\":\"NodeTopologyLayer\","           \
    "\"parentTopologyLayer\":\"BlockLayer\"}]}}\n"
#define GATHER_NODE                                                                                \
    "---\n{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":{"     \
    "\"block\":\"%s\"%s}},\"spec\":{\"taints\":[%s]},\"status\":{\"allocatable\":{\"cpu\":\"4\"}}" \
    "}"                                                                                            \
    "\n"

static char *gather_cluster(void)
{
    char *y = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&y, &len);
    fputs(GATHER_TOPOLOGY, f);
    fprintf(f, GATHER_NODE, "a1", "b1", ZONE_A, "");
    fprintf(f, GATHER_NODE, "a2", "b1", ZONE_A, "");
    fprintf(f, GATHER_NODE, "c1", "b2", ZONE_A, "");
    fprintf(f, GATHER_NODE, "t1", "b3", "", "{\"key\":\"default/g-3\",\"effect\":\"NoSchedule\"}");
    for (int g = 0; g < 7; g++) {
        fprintf(f,
                "---\n{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"PodGroup\","
                "\"metadata\":{\"name\":\"g-%d\",\"namespace\":\"default\",\"annotations\":{"
                "\"gang.scheduling.koordinator.sh/network-topology-spec\":\"{\\\"gatherStrategy\\\""
                ":[{\\\"layer\\\":\\\"BlockLayer\\\",\\\"strategy\\\":\\\"MustGather\\\"}]}\"}},"
                "\"spec\":{\"minMember\":3}}\n",
                g);
        for (int p = 0; p < 3; p++)
            fprintf(
                f,
                "---\n{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"g-%d-%d\","
                "\"namespace\":\"default\",\"creationTimestamp\":\"2026-01-01T01:%02d:00Z\","
                "\"labels\":{\"pod-group.scheduling.sigs.k8s.io\":\"g-%d\"}},\"spec\":{%s"
                "\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":"
                "{\"cpu\":\"2\"}}}]}}\n",
                g, p, g, g, g == 6 ? G6_SPEC : "");
    }
    fclose(f);
    return y;
}

/* A job whose id the shared text names is not answered from the memo, nor is the memo kept
 * from it, and a job whose node filter alone differs gets its own: both forms store the same
 * documents, g-3's node filter still names g-3 and g-6's does not. */
START_TEST(test_why_memo_id_in_node_filter)
{
    struct sched_util on, off;
    struct sched_options o = {.why_memo_off = 1};
    sched_util_open(&on, NULL);
    sched_util_open(&off, &o);
    char *y = gather_cluster();
    both_apply(&on, &off, y, 1000);
    free(y);
    both_cycle(&on, &off, 2000);
    assert_same(&on, &off, "gather");
    ck_assert_msg(reused(&on) > 0, "the memo answered no gang");
    for (int g = 1; g < 7; g++) {
        char id[32];
        snprintf(id, sizeof(id), "default/g-%d", g);
        json_t *why = sched_util_why(&on, id);
        char *text = json_dumps(json_object_get(why, "nodeFilter"), JSON_COMPACT);
        ck_assert_msg((strstr(text, "default/g-3") != NULL) == (g < 6), "%s: %s", id, text);
        free(text);
        ck_assert_str_eq(json_string_value(json_object_get(why, "state")), "Unschedulable");
        json_decref(why);
    }
    sched_util_close(&on);
    sched_util_close(&off);
}
END_TEST

static Suite *why_memo_suite(void)
{
    Suite *s = suite_create("why_memo");
    TCase *tc = tcase_create("why_memo");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_why_memo_cases_same_records);
    tcase_add_test(tc, test_why_memo_tempting_cluster);
    tcase_add_test(tc, test_why_memo_id_in_node_filter);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(why_memo_suite());
}
