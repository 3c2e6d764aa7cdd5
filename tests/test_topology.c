/*
 * test_topology.c - topology gather: case folders under tests/data/topology/ (cluster.yaml
 * + expected.json: placements, states, primary reasons, why messages, the why topology
 * part, detailStatus, audit counts), detailStatus upkeep, the per-domain totals, and the
 * HTTP surface (GET /api/v1/topology, the why document's topology part) on a real musterd.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "http_client.h"
#include "sched_util.h"
#include "store.h"

static char *case_path(const char *name, const char *file)
{
    const char *src = getenv("MUSTER_SOURCE_DIR");
    char *p = NULL;
    ck_assert(asprintf(&p, "%s/tests/data/topology/%s/%s", src ? src : MUSTER_SOURCE_DIR, name,
                       file) > 0);
    return p;
}

static json_t *why_of(struct sched_util *u, const char *id)
{
    json_t *w = NULL;
    struct err err = ERR_INIT;
    ck_assert_msg(sched_why(u->s, id, &w, &err) == 0, "%s", err.msg);
    return w;
}

static json_t *stored_cnt(struct sched_util *u)
{
    MDB_txn *txn = NULL;
    json_t *cnt = NULL;
    struct err err = ERR_INIT;
    ck_assert(store_txn_begin(u->st, STORE_READ, &txn, &err) == 0);
    ck_assert_msg(store_get(txn, MODEL_TOPOLOGY, "default", &cnt, &err) == 0, "%s", err.msg);
    store_txn_abort(&txn);
    return cnt;
}

static void check_why(const char *name, struct sched_util *u, json_t *exp)
{
    const char *key;
    json_t *val;
    json_object_foreach(json_object_get(exp, "primary"), key, val)
    {
        json_t *w = why_of(u, key);
        const char *code =
            json_string_value(json_object_get(json_object_get(w, "primary"), "code"));
        ck_assert_msg(code && !strcmp(code, json_string_value(val)),
                      "case '%s': job '%s' primary %s, expected %s", name, key,
                      code ? code : "(none)", json_string_value(val));
        json_decref(w);
    }
    json_object_foreach(json_object_get(exp, "message"), key, val)
    {
        json_t *w = why_of(u, key);
        const char *msg =
            json_string_value(json_object_get(json_object_get(w, "primary"), "message"));
        ck_assert_msg(msg && strstr(msg, json_string_value(val)),
                      "case '%s': job '%s' message '%s' lacks '%s'", name, key, msg ? msg : "",
                      json_string_value(val));
        json_decref(w);
    }
    json_object_foreach(json_object_get(exp, "topology"), key, val)
    {
        json_t *w = why_of(u, key), *t = json_object_get(w, "topology");
        const char *k2;
        json_t *want;
        json_object_foreach(val, k2, want)
        {
            ck_assert_msg(json_equal(json_object_get(t, k2), want),
                          "case '%s': job '%s' topology.%s is %s", name, key, k2,
                          json_dumps(json_object_get(t, k2), JSON_ENCODE_ANY));
        }
        json_decref(w);
    }
}

static void run_case(const char *name)
{
    struct sched_util u;
    json_t *exp = sched_util_case_run(&u, "topology", name, NULL);
    sched_util_case_expect(&u, name, exp);
    check_why(name, &u, exp);
    if (json_object_get(exp, "detailStatus")) {
        json_t *cnt = stored_cnt(&u);
        json_t *got = json_object_get(json_object_get(cnt, "status"), "detailStatus");
        ck_assert_msg(json_equal(got, json_object_get(exp, "detailStatus")),
                      "case '%s': detailStatus %s", name, json_dumps(got, JSON_COMPACT));
        json_decref(cnt);
    }
    sched_util_close(&u);
    json_decref(exp);
}

START_TEST(test_topology_cases)
{
    json_t *cases = sched_util_cases("topology");
    ck_assert_uint_ge(json_array_size(cases), 15);
    size_t i;
    json_t *c;
    json_array_foreach(cases, i, c) run_case(json_string_value(c));
    json_decref(cases);
}
END_TEST

/* ---- detailStatus upkeep and per-domain totals ---- */

static const char *TOPO_YAML =
    "apiVersion: scheduling.koordinator.sh/v1alpha1\n"
    "kind: ClusterNetworkTopology\n"
    "metadata: {name: default}\n"
    "spec:\n"
    "  networkTopologySpec:\n"
    "  - {topologyLayer: SpineLayer, labelKey: [network.topology.nvidia.com/spine]}\n"
    "  - {topologyLayer: BlockLayer, parentTopologyLayer: SpineLayer,"
    " labelKey: [network.topology.nvidia.com/block]}\n"
    "  - {topologyLayer: NodeTopologyLayer, parentTopologyLayer: BlockLayer}\n";

static void apply_node(struct sched_util *u, const char *name, const char *block, int cpu)
{
    char *y = NULL;
    ck_assert(asprintf(&y,
                       "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\","
                       "\"labels\":{\"network.topology.nvidia.com/spine\":\"s1\","
                       "\"network.topology.nvidia.com/block\":\"%s\"}},\"status\":"
                       "{\"allocatable\":{\"cpu\":\"%d\",\"memory\":\"8Gi\"}}}",
                       name, block, cpu) > 0);
    json_decref(sched_util_apply(u, y, 1000));
    free(y);
}

/* A store with the topology and two blocks of two nodes of cpu cores: n1, n2 in b1, n3, n4
 * in b2. */
static void open_two_blocks(struct sched_util *u, int cpu)
{
    sched_util_open(u, NULL);
    json_decref(sched_util_apply(u, TOPO_YAML, 1000));
    apply_node(u, "n1", "b1", cpu);
    apply_node(u, "n2", "b1", cpu);
    apply_node(u, "n3", "b2", cpu);
    apply_node(u, "n4", "b2", cpu);
}

static json_int_t root_nodes(struct sched_util *u)
{
    json_t *cnt = stored_cnt(u);
    json_t *first =
        json_array_get(json_object_get(json_object_get(cnt, "status"), "detailStatus"), 0);
    json_int_t n = json_integer_value(json_object_get(first, "nodeNum"));
    json_decref(cnt);
    return n;
}

START_TEST(test_topology_detail_status_follows_nodes)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(&u, TOPO_YAML, 1000));
    ck_assert_int_eq(root_nodes(&u), 0);
    apply_node(&u, "n1", "b1", 4);
    apply_node(&u, "n2", "b2", 4);
    ck_assert_int_eq(root_nodes(&u), 2);
    struct err err = ERR_INIT;
    ck_assert_msg(sched_delete(u.s, MODEL_NODE, "n2", 2000, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(root_nodes(&u), 1);
    /* Re-applying the same spec keeps the status muster owns: nothing changed. */
    json_t *res = sched_util_apply(&u, TOPO_YAML, 3000);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(res, 0), "action")),
                     "unchanged");
    json_decref(res);
    ck_assert_int_eq(root_nodes(&u), 1);
    sched_util_close(&u);
}
END_TEST

static json_t *tree(struct sched_util *u, int64_t cpu)
{
    struct sched_topo_query q = {.cpu = cpu};
    json_t *t = NULL;
    struct err err = ERR_INIT;
    ck_assert_msg(sched_topology(u->s, &q, &t, &err) == 0, "%s", err.msg);
    return t;
}

START_TEST(test_topology_domain_totals_incremental)
{
    struct sched_util u;
    sched_util_open(&u, NULL);
    json_decref(sched_util_apply(&u, TOPO_YAML, 1000));
    apply_node(&u, "n1", "b1", 4);
    apply_node(&u, "n2", "b1", 4);
    apply_node(&u, "n3", "b2", 4);
    char *path = case_path("offer_slots_block", "cluster.yaml"), *yaml = sched_util_read(path);
    /* only the gang of that case: its PodGroup and pods */
    char *pg = strstr(yaml, "{\"apiVersion\": \"scheduling.sigs.k8s.io");
    ck_assert_ptr_nonnull(pg);
    char *docs = NULL;
    ck_assert(asprintf(&docs, "---\n%s", pg) > 0);
    json_decref(sched_util_apply(&u, docs, 1500));
    free(docs);
    json_decref(sched_util_cycle(&u, 2000));
    json_t *live = tree(&u, 1000);
    /* Every node holds the gang; n3 wins because its block b2 offers fewer slots. */
    json_t *blocks = json_object_get(
        json_array_get(json_object_get(json_object_get(live, "root"), "children"), 0), "children");
    json_t *b1 = json_array_get(blocks, 0), *b2 = json_array_get(blocks, 1);
    ck_assert_str_eq(json_string_value(json_object_get(b2, "name")), "b2");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(b2, "used"), "cpu")), "4");
    ck_assert_int_eq(json_integer_value(json_object_get(b2, "largestGang")), 0);
    ck_assert_int_eq(json_array_size(json_object_get(b2, "jobs")), 1);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(b1, "used"), "cpu")), "0");
    ck_assert_int_eq(json_integer_value(json_object_get(b1, "largestGang")), 8);
    sched_util_reopen(&u);
    json_t *rebuilt = tree(&u, 1000);
    ck_assert_msg(json_equal(live, rebuilt), "live %s\nrebuilt %s", json_dumps(live, JSON_COMPACT),
                  json_dumps(rebuilt, JSON_COMPACT));
    json_decref(live);
    json_decref(rebuilt);
    free(path);
    free(yaml);
    sched_util_close(&u);
}
END_TEST

/* ---- HTTP ---- */

static const char *const yaml_ct[] = {"Content-Type: application/yaml", NULL};

static json_t *call(struct musterd *m, const char *method, const char *path, const char *body,
                    long want)
{
    struct http_resp r;
    http_request(method, m->base, path, body, body ? yaml_ct : NULL, &r);
    ck_assert_msg(r.status == want, "%s %s: status %ld, want %ld: %s", method, path, r.status, want,
                  r.body);
    json_t *j = json_incref(r.json);
    http_resp_free(&r);
    return j;
}

static struct musterd start_cluster(const char *case_name)
{
    struct musterd m;
    char cfg[] = "/tmp/muster-topo-cfg-XXXXXX";
    int fd = mkstemp(cfg);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "cycle_interval: 0\n", 18), 18);
    close(fd);
    const char *args[] = {"--config", cfg, NULL};
    ck_assert_msg(musterd_start(&m, NULL, args) == 0, "musterd did not start");
    unlink(cfg);
    char *path = case_path(case_name, "cluster.yaml"), *yaml = sched_util_read(path);
    json_decref(call(&m, "POST", "/api/v1/manifests", yaml, 201));
    json_decref(call(&m, "POST", "/api/v1/cycles", NULL, 200));
    free(path);
    free(yaml);
    return m;
}

START_TEST(test_topology_http_tree)
{
    struct musterd m = start_cluster("fill_children_first");
    json_t *t = call(&m, "GET", "/api/v1/topology?pod_cpu=500m", NULL, 200);
    json_t *want_layers = json_pack("[s,s]", "SpineLayer", "BlockLayer");
    ck_assert(json_equal(json_object_get(t, "layers"), want_layers));
    json_decref(want_layers);
    json_t *root = json_object_get(t, "root");
    ck_assert_str_eq(json_string_value(json_object_get(root, "layer")), "ClusterTopologyLayer");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(root, "capacity"), "cpu")),
                     "6");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(root, "used"), "cpu")), "6");
    ck_assert_int_eq(json_integer_value(json_object_get(root, "largestGang")), 0);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(root, "jobs"), 0)),
                     "default/g");
    json_t *s1 = json_array_get(json_object_get(root, "children"), 0);
    json_t *b2 = json_array_get(json_object_get(s1, "children"), 1);
    ck_assert_str_eq(json_string_value(json_object_get(b2, "name")), "b2");
    ck_assert_str_eq(json_string_value(json_object_get(b2, "layer")), "BlockLayer");
    json_t *want_nodes = json_pack("[s,s]", "n2", "n3");
    ck_assert(json_equal(json_object_get(b2, "nodes"), want_nodes));
    json_decref(want_nodes);
    json_decref(t);
    t = call(&m, "GET", "/api/v1/topology?pod_cpu=abc", NULL, 400);
    json_decref(t);
    t = call(&m, "GET", "/api/v1/topology?like=default/nope", NULL, 404);
    json_decref(t);
    ck_assert_int_eq(musterd_stop(&m), 0);
    musterd_cleanup(&m);
}
END_TEST

START_TEST(test_topology_http_largest_gang_and_why)
{
    struct musterd m = start_cluster("mustgather_unmet");
    json_t *t = call(&m, "GET", "/api/v1/topology?like=default/g", NULL, 200);
    json_t *root = json_object_get(t, "root");
    ck_assert_int_eq(json_integer_value(json_object_get(root, "largestGang")), 8);
    json_t *b1 = json_array_get(
        json_object_get(json_array_get(json_object_get(root, "children"), 0), "children"), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(b1, "largestGang")), 4);
    json_decref(t);
    json_t *w = call(&m, "GET", "/api/v1/jobs/default/g/why", NULL, 200);
    json_t *topo = json_object_get(w, "topology");
    ck_assert_str_eq(json_string_value(json_object_get(topo, "strategy")), "MustGather");
    ck_assert_str_eq(json_string_value(json_object_get(topo, "layer")), "BlockLayer");
    ck_assert_str_eq(json_string_value(json_object_get(topo, "summary")),
                     "MustGather BlockLayer: 0/2 blocks hold 8 pods; best b1 holds 4 (cpu)");
    json_t *best = json_array_get(json_object_get(topo, "best"), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(best, "holds")), 4);
    ck_assert_str_eq(json_string_value(json_object_get(best, "limit")), "cpu");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(w, "primary"), "class")),
                     "TOPOLOGY");
    json_decref(w);
    json_t *cnt = call(&m, "GET", "/api/v1/clusternetworktopologies/default", NULL, 200);
    json_t *ds = json_object_get(json_object_get(cnt, "status"), "detailStatus");
    ck_assert_int_eq(json_array_size(ds), 4);
    json_decref(cnt);
    ck_assert_int_eq(musterd_stop(&m), 0);
    musterd_cleanup(&m);
}
END_TEST

/* ---- largestGang and the why's "holds" share one rule ---- */

/* A pod: bound to node, or pending with status.nominatedNodeName nom; stuck pending pods
 * select a label no node has, so the cycle places nothing and the view stays as the why
 * saw it. */
static void apply_pod(struct sched_util *u, const char *name, const char *group, int prio, int cpu,
                      const char *node, const char *nom, int stuck)
{
    char q[16];
    snprintf(q, sizeof(q), "%d", cpu);
    json_t *pod = json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:i,s:[{s:s,s:s,s:{s:{s:s}}}]},s:{}}",
                            "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
                            "namespace", "default", "creationTimestamp", "2026-01-01T00:00:01Z",
                            "spec", "priority", prio, "containers", "name", "c", "image", "busybox",
                            "resources", "requests", "cpu", q, "status");
    if (group)
        json_object_set_new(json_object_get(pod, "metadata"), "labels",
                            json_pack("{s:s}", "pod-group.scheduling.sigs.k8s.io", group));
    if (node)
        json_object_set_new(json_object_get(pod, "spec"), "nodeName", json_string(node));
    if (stuck)
        json_object_set_new(json_object_get(pod, "spec"), "nodeSelector",
                            json_pack("{s:s}", "no-such-label", "x"));
    if (nom)
        json_object_set_new(json_object_get(pod, "status"), "nominatedNodeName", json_string(nom));
    if (node)
        json_object_set_new(json_object_get(pod, "status"), "phase", json_string("Running"));
    char *y = json_dumps(pod, 0);
    json_decref(sched_util_apply(u, y, 1000));
    free(y);
    json_decref(pod);
}

/* The "jobs" of a domain as an array of strings (borrowed). */
static json_t *dom_jobs(json_t *dom)
{
    json_t *jobs = json_object_get(dom, "jobs");
    ck_assert_int_eq(json_integer_value(json_object_get(dom, "jobCount")), json_array_size(jobs));
    return jobs;
}

static void assert_jobs(json_t *dom, const char *want_json)
{
    json_t *want = json_loads(want_json, 0, NULL);
    char *have = json_dumps(dom_jobs(dom), JSON_COMPACT);
    ck_assert_msg(json_equal(dom_jobs(dom), want), "%s: jobs %s, want %s",
                  json_string_value(json_object_get(dom, "name")), have, want_json);
    free(have);
    json_decref(want);
}

/* Each domain lists the jobs with a pod on its nodes once, in id order, whatever order they
 * were made in and however their pods spread (a gang over two blocks is in both, and once
 * in the spine and the root). */
START_TEST(test_topology_domain_jobs_in_id_order)
{
    struct sched_util u;
    open_two_blocks(&u, 8);
    json_decref(sched_util_apply(&u,
                                 "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":"
                                 "\"PodGroup\",\"metadata\":{\"name\":\"g\",\"namespace\":"
                                 "\"default\"},\"spec\":{\"minMember\":2}}",
                                 1000));
    apply_pod(&u, "zeta", NULL, 0, 1, "n1", NULL, 0);
    apply_pod(&u, "g-0", "g", 0, 1, "n2", NULL, 0);
    apply_pod(&u, "g-1", "g", 0, 1, "n4", NULL, 0);
    apply_pod(&u, "alpha", NULL, 0, 1, "n3", NULL, 0);
    apply_pod(&u, "mid-r", NULL, 0, 1, "n1", NULL, 0);
    apply_pod(&u, "mid-s", NULL, 0, 1, "n4", NULL, 0);
    json_t *t = tree(&u, 0), *root = json_object_get(t, "root");
    json_t *spine = json_array_get(json_object_get(root, "children"), 0);
    json_t *blocks = json_object_get(spine, "children");
    const char *all = "[\"default/alpha\",\"default/g\",\"default/mid-r\",\"default/mid-s\","
                      "\"default/zeta\"]";
    assert_jobs(root, all);
    assert_jobs(spine, all);
    assert_jobs(json_array_get(blocks, 0), "[\"default/g\",\"default/mid-r\",\"default/zeta\"]");
    assert_jobs(json_array_get(blocks, 1), "[\"default/alpha\",\"default/g\",\"default/mid-s\"]");
    json_decref(t);
    sched_util_close(&u);
}
END_TEST

static json_t *find_dom(json_t *d, const char *name)
{
    if (!strcmp(json_string_value(json_object_get(d, "name")), name))
        return d;
    size_t i;
    json_t *k, *f;
    json_array_foreach(json_object_get(d, "children"), i, k) if ((f = find_dom(k, name))) return f;
    return NULL;
}

static json_int_t gang_of(json_t *tree, const char *dom)
{
    json_t *d = find_dom(json_object_get(tree, "root"), dom);
    ck_assert_msg(d != NULL, "domain '%s' not in the tree", dom);
    return json_integer_value(json_object_get(d, "largestGang"));
}

/* A MustGather gang (priority 100, 4 pods of 1 cpu) on two blocks of two 4-cpu nodes, with
 * its own nomination on n2, a higher-priority job's on n3 and a lower-priority job's on n4:
 * for every domain the why lists, largestGang (like=the job) is what it holds. */
START_TEST(test_topology_largest_gang_agrees_with_why)
{
    struct sched_util u;
    open_two_blocks(&u, 4);
    apply_pod(&u, "fill-1", NULL, 1000, 3, "n1", NULL, 0);
    apply_pod(&u, "fill-2", NULL, 1000, 2, "n2", NULL, 0);
    apply_pod(&u, "fill-3", NULL, 1000, 2, "n3", NULL, 0);
    apply_pod(&u, "fill-4", NULL, 1000, 2, "n4", NULL, 0);
    apply_pod(&u, "hi", NULL, 200, 1, NULL, "n3", 1);
    apply_pod(&u, "lo", NULL, 5, 1, NULL, "n4", 1);
    json_decref(sched_util_apply(
        &u,
        "{\"apiVersion\": \"scheduling.sigs.k8s.io/v1alpha1\", \"kind\": \"PodGroup\", "
        "\"metadata\": {\"name\": \"g\", \"namespace\": \"default\", \"annotations\": "
        "{\"gang.scheduling.koordinator.sh/network-topology-spec\": \"{\\\"gatherStrategy\\\": "
        "[{\\\"layer\\\": \\\"BlockLayer\\\", \\\"strategy\\\": \\\"MustGather\\\"}]}\"}}, "
        "\"spec\": {\"minMember\": 4}}",
        1000));
    apply_pod(&u, "g-0", "g", 100, 1, NULL, "n2", 0);
    for (int i = 1; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof(name), "g-%d", i);
        apply_pod(&u, name, "g", 100, 1, NULL, NULL, 0);
    }
    json_decref(sched_util_cycle(&u, 2000));

    json_t *w = why_of(&u, "default/g"), *topo = json_object_get(w, "topology");
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(w, "primary"), "code")),
                     "TopologyNoDomain");
    struct sched_topo_query q = {.like = "default/g"};
    json_t *t = NULL;
    struct err err = ERR_INIT;
    ck_assert_msg(sched_topology(u.s, &q, &t, &err) == 0, "%s", err.msg);
    json_int_t needed = json_integer_value(json_object_get(topo, "needed"));
    json_t *best = json_object_get(topo, "best"), *b;
    size_t i;
    ck_assert_int_eq(json_array_size(best), 2);
    json_array_foreach(best, i, b)
    {
        const char *name = json_string_value(json_object_get(b, "name"));
        json_int_t holds = json_integer_value(json_object_get(b, "holds"));
        json_int_t gang = gang_of(t, name);
        ck_assert_msg((gang < needed ? gang : needed) == holds,
                      "domain '%s': largestGang %lld, why holds %lld", name, (long long)gang,
                      (long long)holds);
    }
    /* b1: 1 + 2 (its own nomination is no reservation); b2: 1 (hi reserves) + 2 (lo not) */
    ck_assert_int_eq(gang_of(t, "b1"), 3);
    ck_assert_int_eq(gang_of(t, "b2"), 3);
    ck_assert_int_eq(gang_of(t, "s1"), 6);
    json_decref(t);
    /* A bare shape is a gang of priority 0 owning no nomination: every nomination reserves. */
    t = tree(&u, 1000);
    ck_assert_int_eq(gang_of(t, "b1"), 2);
    ck_assert_int_eq(gang_of(t, "b2"), 2);
    json_decref(t);
    json_decref(w);
    sched_util_close(&u);
}
END_TEST

static Suite *topology_suite(void)
{
    Suite *s = suite_create("topology");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_topology_cases);
    tcase_add_test(tc, test_topology_detail_status_follows_nodes);
    tcase_add_test(tc, test_topology_domain_totals_incremental);
    tcase_add_test(tc, test_topology_domain_jobs_in_id_order);
    tcase_add_test(tc, test_topology_http_tree);
    tcase_add_test(tc, test_topology_http_largest_gang_and_why);
    tcase_add_test(tc, test_topology_largest_gang_agrees_with_why);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(topology_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
