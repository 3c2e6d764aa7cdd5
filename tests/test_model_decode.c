/*
 * test_model_decode.c - model/'s typed decoders (pods' requests, tolerations and affinity,
 * nodes, PodGroups, topologies, bad input refused) and its YAML emitter; the kinds and
 * validation are test_model.c's.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "check_run.h"
#include "err.h"
#include "model.h"
#include "model_support.h"

static int64_t res(const struct model_res *r, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(r[i].name, name))
            return r[i].value;
    return -1;
}

START_TEST(test_model_pod_requests_sum_max)
{
    json_t *obj = model_test_load_one(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: ml\n"
        "  labels: {pod-group.scheduling.sigs.k8s.io: gang}\n"
        "  annotations: {gang.scheduling.koordinator.sh/network-topology-index: "
        "'3'}\n"
        "  creationTimestamp: '2026-01-01T00:00:01Z'\n"
        "spec:\n"
        "  priority: 100\n  preemptionPolicy: Never\n"
        "  nodeSelector: {zone: a}\n"
        "  initContainers:\n"
        "  - {name: i1, resources: {requests: {cpu: '3', memory: 1Gi}}}\n"
        "  - {name: i2, resources: {requests: {nvidia.com/gpu: 1, memory: 100Mi}}}\n"
        "  containers:\n"
        "  - {name: a, resources: {requests: {cpu: 500m, memory: 2Gi}}}\n"
        "  - {name: b, resources: {requests: {cpu: 1500m, memory: 0.5Gi}}}\n"
        "status: {nominatedNodeName: n7}\n");
    struct model_pod p;
    struct err err = ERR_INIT;
    ck_assert_int_eq(model_pod_decode(obj, &p, &err), 0);
    ck_assert_str_eq(p.ns, "ml");
    ck_assert_str_eq(p.group, "gang");
    ck_assert_int_eq(p.topo_index, 3);
    ck_assert_int_eq(res(p.requests, p.nrequests, "cpu"), 3000);            /* max(2000, 3000) */
    ck_assert_int_eq(res(p.requests, p.nrequests, "memory"), 2684354560LL); /* 2.5Gi sum */
    ck_assert_int_eq(res(p.requests, p.nrequests, "nvidia.com/gpu"), 1);    /* init only */
    ck_assert_int_eq(res(p.requests, p.nrequests, "pods"), 1);
    ck_assert_int_eq(p.priority, 100);
    ck_assert_int_eq(p.preempt_never, 1);
    ck_assert_uint_eq(p.nnode_selector, 1);
    ck_assert_str_eq(p.node_selector[0].value, "a");
    ck_assert_ptr_null(p.node_name);
    ck_assert_str_eq(p.phase, "Pending");
    ck_assert_str_eq(p.nominated_node, "n7");
    ck_assert_int_eq(p.creation_ms, 1767225601000LL);
    model_pod_release(&p);
    model_pod_release(&p); /* idempotent */
    json_decref(obj);
}
END_TEST

/* component-helpers resource.PodRequests: sidecars (restartPolicy Always) run beside the
 * containers and under every later init container; overhead is added last. */
START_TEST(test_model_pod_requests_sidecars_overhead)
{
    json_t *obj = model_test_load_one(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: s}\n"
        "spec:\n"
        "  overhead: {cpu: 500m}\n"
        "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n"
        "  initContainers:\n"
        "  - {name: i1, resources: {requests: {cpu: '5'}}}\n"
        "  - {name: s1, restartPolicy: Always, resources: {requests: {cpu: '1'}}}\n"
        "  - {name: s2, restartPolicy: Always, resources: {requests: {cpu: '2'}}}\n"
        "  - {name: i2, resources: {requests: {cpu: '5', memory: 1Gi}}}\n");
    struct model_pod p;
    ck_assert_int_eq(model_pod_decode(obj, &p, NULL), 0);
    /* containers + sidecars = 4; i2 + the sidecars before it = 8; plus 0.5 overhead */
    ck_assert_int_eq(res(p.requests, p.nrequests, "cpu"), 8500);
    ck_assert_int_eq(res(p.requests, p.nrequests, "memory"), 1073741824LL);
    model_pod_release(&p);
    json_decref(obj);
}
END_TEST

START_TEST(test_model_pod_affinity_decode_and_match)
{
    json_t *obj = model_test_load_one(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a, labels: {app: web, tier: fe, team: t1}}\n"
        "spec:\n  containers: [{name: c}]\n"
        "  affinity:\n"
        "    nodeAffinity:\n"
        "      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n"
        "        - matchExpressions: [{key: gpus, operator: Gt, values: ['4']}]\n"
        "          matchFields: [{key: metadata.name, operator: NotIn, values: [bad]}]\n"
        "    podAntiAffinity:\n"
        "      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "      - labelSelector: {matchLabels: {app: web}}\n"
        "        topologyKey: zone\n"
        "        matchLabelKeys: [tier, absent]\n"
        "        mismatchLabelKeys: [team]\n"
        "  topologySpreadConstraints:\n"
        "  - {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway,\n"
        "     labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [tier]}\n");
    struct model_pod p;
    struct err err = ERR_INIT;
    ck_assert_msg(model_pod_decode(obj, &p, &err) == 0, "%s", err.msg);
    const struct model_affinity *a = p.aff;
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(a->has_node_req, 1);
    ck_assert_uint_eq(a->nnode_req, 1);
    struct model_kv big[] = {{"gpus", "8"}}, small[] = {{"gpus", "4"}}, word[] = {{"gpus", "x"}};
    ck_assert(model_node_term_match(&a->node_req[0], "n1", big, 1));
    ck_assert(!model_node_term_match(&a->node_req[0], "bad", big, 1));  /* matchFields */
    ck_assert(!model_node_term_match(&a->node_req[0], "n1", small, 1)); /* Gt is strict */
    ck_assert(!model_node_term_match(&a->node_req[0], "n1", word, 1));  /* not an integer */
    ck_assert(!model_node_term_match(&a->node_req[0], "n1", NULL, 0));  /* absent */
    /* matchLabelKeys adds tier In (fe), the absent key nothing; mismatchLabelKeys team NotIn (t1)
     */
    ck_assert_uint_eq(a->nanti_req, 1);
    const struct model_selector *sel = &a->anti_req[0].sel;
    ck_assert_uint_eq(sel->nreq, 3);
    struct model_kv fe[] = {{"app", "web"}, {"tier", "fe"}},
                    be[] = {{"app", "web"}, {"tier", "be"}};
    struct model_kv t1[] = {{"app", "web"}, {"team", "t1"}, {"tier", "fe"}};
    ck_assert(model_selector_match(sel, fe, 2));
    ck_assert(!model_selector_match(sel, be, 2));
    ck_assert(!model_selector_match(sel, t1, 3));
    ck_assert_uint_eq(a->nspread, 1);
    ck_assert_int_eq(a->spread[0].hard, 0);
    ck_assert_int_eq(a->spread[0].min_domains, 1);
    ck_assert_int_eq(a->spread[0].honor_affinity, 1);
    ck_assert_int_eq(a->spread[0].honor_taints, 0);
    ck_assert(model_selector_match(&a->spread[0].sel, fe, 2));
    ck_assert(!model_selector_match(&a->spread[0].sel, be, 2));
    ck_assert_ptr_eq(model_affinity_ref(p.aff), a);
    model_pod_release(&p);
    ck_assert_int_eq(a->refs, 1); /* still held by the extra reference */
    model_affinity_unref((struct model_affinity *)a);
    json_decref(obj);
}
END_TEST

START_TEST(test_model_pod_tolerations_and_defaults)
{
    json_t *obj = model_test_load_one("apiVersion: v1\nkind: Pod\nmetadata: {name: t}\n"
                                      "spec:\n  nodeName: n1\n  containers: [{name: c}]\n"
                                      "  tolerations:\n  - operator: Exists\n"
                                      "  - {key: gpu, value: 'yes', effect: NoSchedule}\n");
    struct model_pod p;
    ck_assert_int_eq(model_pod_decode(obj, &p, NULL), 0);
    ck_assert_int_eq(p.topo_index, -1);
    ck_assert_str_eq(p.node_name, "n1");
    ck_assert_int_eq(res(p.requests, p.nrequests, "pods"), 1);
    ck_assert_uint_eq(p.nrequests, 1);
    ck_assert_uint_eq(p.ntolerations, 2);
    ck_assert_ptr_null(p.tolerations[0].key);
    ck_assert_str_eq(p.tolerations[0].op, "Exists");
    ck_assert_ptr_null(p.tolerations[0].effect);
    ck_assert_str_eq(p.tolerations[1].key, "gpu");
    ck_assert_str_eq(p.tolerations[1].op, "Equal");
    ck_assert_str_eq(p.tolerations[1].value, "yes");
    ck_assert_str_eq(p.tolerations[1].effect, "NoSchedule");
    model_pod_release(&p);
    json_decref(obj);
}
END_TEST

START_TEST(test_model_node_decode)
{
    json_t *obj =
        model_test_load_one("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n"
                            "  labels: {network.topology.nvidia.com/block: b1}\n"
                            "spec:\n  unschedulable: true\n"
                            "  taints: [{key: gpu, effect: NoSchedule}]\n"
                            "status:\n  capacity: {cpu: '64'}\n"
                            "  allocatable: {cpu: 63500m, memory: 1.5Gi, nvidia.com/gpu: 8, "
                            "pods: '110', x: 100m}\n");
    struct model_node n;
    ck_assert_int_eq(model_node_decode(obj, &n, NULL), 0);
    ck_assert_str_eq(n.name, "n1");
    ck_assert_int_eq(n.unschedulable, 1);
    ck_assert_uint_eq(n.nlabels, 2); /* and kubernetes.io/hostname, as the kubelet sets it */
    ck_assert_str_eq(n.labels[0].value, "b1");
    ck_assert_str_eq(model_label(n.labels, n.nlabels, MODEL_LABEL_HOSTNAME), "n1");
    ck_assert_int_eq(res(n.allocatable, n.nallocatable, "cpu"), 63500);
    ck_assert_int_eq(res(n.allocatable, n.nallocatable, "memory"), 1610612736LL);
    ck_assert_int_eq(res(n.allocatable, n.nallocatable, "nvidia.com/gpu"), 8);
    ck_assert_int_eq(res(n.allocatable, n.nallocatable, "pods"), 110);
    ck_assert_int_eq(res(n.allocatable, n.nallocatable, "x"), 1); /* rounded up */
    ck_assert_uint_eq(n.ntaints, 1);
    ck_assert_str_eq(n.taints[0].value, "");
    ck_assert_str_eq(n.taints[0].effect, "NoSchedule");
    model_node_release(&n);
    model_node_release(NULL);
    json_decref(obj);
}
END_TEST

START_TEST(test_model_podgroup_groups)
{
    json_t *obj = model_test_load_one(
        "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"
        "metadata:\n  name: master\n  namespace: team\n  annotations:\n"
        "    gang.scheduling.koordinator.sh/groups: '[\"worker\", \"other/ps\", \"team/worker\"]'\n"
        "    gang.scheduling.koordinator.sh/network-topology-spec: '{bad json'\n"
        "spec: {minMember: 4}\n");
    struct model_podgroup g;
    ck_assert_int_eq(model_podgroup_decode(obj, &g, NULL), 0);
    ck_assert_int_eq(g.min_member, 4);
    ck_assert_uint_eq(g.ngroups, 3);
    ck_assert_str_eq(g.groups[0], "team/worker");
    ck_assert_str_eq(g.groups[1], "other/ps");
    ck_assert_str_eq(g.groups[2], "team/master"); /* itself, added */
    ck_assert_int_eq(g.has_spec, 1);              /* kept, not refused: the why says SpecInvalid */
    ck_assert_uint_eq(g.ngather, 0);
    ck_assert_ptr_nonnull(strstr(g.spec_error, "network-topology-spec is not a JSON object"));
    model_podgroup_release(&g);
    json_decref(obj);

    obj = model_test_load_one("apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"
                              "metadata: {name: solo}\nspec: {minMember: 1}\n");
    ck_assert_int_eq(model_podgroup_decode(obj, &g, NULL), 0);
    ck_assert_uint_eq(g.ngroups, 0);
    ck_assert_int_eq(g.has_spec, 0);
    ck_assert_ptr_null(g.spec_error);
    ck_assert_str_eq(g.ns, "default");
    model_podgroup_release(&g);
    json_decref(obj);
}
END_TEST

/* The network-topology-spec is decoded with the PodGroup: its entries in order, and a
 * malformed entry kept as an error after the entries before it (never a failed decode). */
START_TEST(test_model_podgroup_topology_spec)
{
    json_t *obj = model_test_load_one(
        "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"
        "metadata:\n  name: g\n  annotations:\n"
        "    gang.scheduling.koordinator.sh/network-topology-spec: '{\"gatherStrategy\": "
        "[{\"layer\": \"SpineLayer\", \"strategy\": \"PreferGather\"}, {\"layer\": "
        "\"blockLayer\", \"strategy\": \"MustGather\"}]}'\n"
        "spec: {minMember: 2}\n");
    struct model_podgroup g;
    ck_assert_int_eq(model_podgroup_decode(obj, &g, NULL), 0);
    ck_assert_int_eq(g.has_spec, 1);
    ck_assert_ptr_null(g.spec_error);
    ck_assert_uint_eq(g.ngather, 2);
    ck_assert_str_eq(g.gather[0].layer, "SpineLayer");
    ck_assert_int_eq(g.gather[0].must, 0);
    ck_assert_str_eq(g.gather[1].layer, "blockLayer"); /* as written: matched later */
    ck_assert_int_eq(g.gather[1].must, 1);
    model_podgroup_release(&g);
    json_decref(obj);

    obj = model_test_load_one(
        "apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"
        "metadata:\n  name: g\n  annotations:\n"
        "    gang.scheduling.koordinator.sh/network-topology-spec: '{\"gatherStrategy\": "
        "[{\"layer\": \"BlockLayer\", \"strategy\": \"MustGather\"}, {\"layer\": "
        "\"SpineLayer\", \"strategy\": \"Sometimes\"}, {\"layer\": \"X\", \"strategy\": "
        "\"MustGather\"}]}'\n"
        "spec: {minMember: 2}\n");
    ck_assert_int_eq(model_podgroup_decode(obj, &g, NULL), 0);
    ck_assert_uint_eq(g.ngather, 1); /* the entry before the bad one */
    ck_assert_str_eq(g.gather[0].layer, "BlockLayer");
    ck_assert_str_eq(g.spec_error, "network-topology-spec: unknown strategy 'Sometimes' "
                                   "(MustGather or PreferGather)");
    model_podgroup_release(&g);
    json_decref(obj);

    obj = model_test_load_one("apiVersion: scheduling.sigs.k8s.io/v1alpha1\nkind: PodGroup\n"
                              "metadata:\n  name: g\n  annotations:\n"
                              "    gang.scheduling.koordinator.sh/network-topology-spec: "
                              "'{\"gatherStrategy\": {}}'\nspec: {minMember: 2}\n");
    ck_assert_int_eq(model_podgroup_decode(obj, &g, NULL), 0);
    ck_assert_str_eq(g.spec_error, "network-topology-spec: gatherStrategy must be an array");
    model_podgroup_release(&g);
    json_decref(obj);
}
END_TEST

/* podCountMultiple as a mirrored PodGroup carries it (apply refuses all but a positive
 * integer): absent and zero or less mean 1 (Koordinator ignores them), not an integer is a
 * spec error (Koordinator cannot unmarshal it). */
static struct model_podgroup pcm_decode(const char *entry2)
{
    char *spec = xasprintf("{\"gatherStrategy\": [{\"layer\": \"SpineLayer\", \"strategy\": "
                           "\"MustGather\"}, {\"layer\": \"BlockLayer\", \"strategy\": "
                           "\"PreferGather\"%s}]}",
                           entry2);
    /* not through load_one: apply's validation would refuse most of these */
    json_t *obj = json_pack("{s:{s:s,s:{s:s}},s:{s:i}}", "metadata", "name", "g", "annotations",
                            MODEL_ANN_TOPOLOGY_SPEC, spec, "spec", "minMember", 2);
    struct model_podgroup g;
    ck_assert_int_eq(model_podgroup_decode(obj, &g, NULL), 0);
    json_decref(obj);
    free(spec);
    return g;
}

START_TEST(test_model_podgroup_pod_count_multiple)
{
    struct model_podgroup g = pcm_decode(", \"podCountMultiple\": 8");
    ck_assert_ptr_null(g.spec_error);
    ck_assert_uint_eq(g.ngather, 2);
    ck_assert_int_eq(g.gather[0].pod_count_multiple, 1);
    ck_assert_int_eq(g.gather[1].pod_count_multiple, 8);
    model_podgroup_release(&g);
    g = pcm_decode(", \"podCountMultiple\": 0");
    ck_assert_ptr_null(g.spec_error);
    ck_assert_int_eq(g.gather[1].pod_count_multiple, 1);
    model_podgroup_release(&g);
    g = pcm_decode(", \"podCountMultiple\": 99999999999");
    ck_assert_int_eq(g.gather[1].pod_count_multiple, INT32_MAX);
    model_podgroup_release(&g);
    g = pcm_decode(", \"podCountMultiple\": \"8\"");
    ck_assert_uint_eq(g.ngather, 1);
    ck_assert_str_eq(g.spec_error, "network-topology-spec: gatherStrategy[1].podCountMultiple "
                                   "must be a positive integer");
    model_podgroup_release(&g);
}
END_TEST

START_TEST(test_model_topology_decode)
{
    char path[4096];
    size_t len;
    json_t *docs;
    snprintf(path, sizeof(path), "%s/valid/koordinator_cnt/input.yaml", model_test_data_dir());
    char *buf = model_test_read(path, &len);
    ck_assert_ptr_nonnull(buf);
    json_t *messages = model_test_check(buf, len, &docs);
    ck_assert_uint_eq(json_array_size(messages), 0);
    struct model_topology t;
    ck_assert_int_eq(model_topology_decode(json_array_get(docs, 0), &t, NULL), 0);
    ck_assert_str_eq(t.name, "default");
    ck_assert_uint_eq(t.nlayers, 3);
    ck_assert_str_eq(t.layers[0].name, "SpineLayer");
    ck_assert_ptr_null(t.layers[0].parent);
    ck_assert_str_eq(t.layers[1].parent, "SpineLayer");
    ck_assert_uint_eq(t.layers[1].nlabel_keys, 1);
    ck_assert_str_eq(t.layers[1].label_keys[0], "network.topology.nvidia.com/block");
    ck_assert_str_eq(t.layers[2].name, "NodeTopologyLayer");
    ck_assert_uint_eq(t.layers[2].nlabel_keys, 0);
    model_topology_release(&t);
    json_decref(messages);
    json_decref(docs);
    free(buf);
}
END_TEST

START_TEST(test_model_decode_rejects_bad_input)
{
    struct model_pod p;
    struct err err = ERR_INIT;
    json_t *obj = json_pack("{s{ss}s{s[{s{s{ss}}}]}}", "metadata", "name", "p", "spec",
                            "containers", "resources", "requests", "cpu", "lots");
    ck_assert_int_eq(model_pod_decode(obj, &p, &err), ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "invalid quantity 'lots'"));
    ck_assert_ptr_null(p.name); /* released on failure */
    json_decref(obj);
}
END_TEST

static void round_trip(json_t *value)
{
    struct model_manifest m;
    struct err err = ERR_INIT;
    char *yaml = model_yaml_dump(value);
    ck_assert_ptr_nonnull(yaml);
    ck_assert_msg(model_manifest_parse(yaml, strlen(yaml), MODEL_FMT_YAML, &m, &err) == 0, "%s\n%s",
                  err.msg, yaml);
    ck_assert_uint_eq(m.n, 1);
    ck_assert_msg(json_equal(m.docs[0].obj, value), "round trip changed the value:\n%s", yaml);
    model_manifest_free(&m);
    free(yaml);
}

START_TEST(test_model_yaml_dump_round_trip)
{
    json_t *tricky =
        json_pack("{ss ss ss ss ss ss ss ss ss ss ss si sf sb sn s[] s{} s[s{si}] ss ss}", "s1",
                  "true", "s2", "yes", "s3", "123", "s4", "1.5", "s5", "", "s6", "null", "s7", "~",
                  "s8", "multi\nline\n", "s9", "- not a list", "s10", "key: value", "s11", "0x10",
                  "i", -42, "f", 0.1, "b", 1, "n", "empty", "emptyobj", "list", "a", "x", 1,
                  "unicode", "gr\xc3\xbc\xc3\x9f", "trail", "ends with space ");
    round_trip(tricky);
    json_decref(tricky);

    char path[4096];
    size_t len;
    json_t *docs;
    snprintf(path, sizeof(path), "%s/valid/pod_init_containers/input.yaml", model_test_data_dir());
    char *buf = model_test_read(path, &len);
    json_decref(model_test_check(buf, len, &docs));
    round_trip(json_array_get(docs, 0));
    char *yaml = model_yaml_dump(json_array_get(docs, 0));
    /* kubectl-like: block style, sequences flush with their key */
    ck_assert_ptr_nonnull(strstr(yaml, "apiVersion: v1\nkind: Pod\nmetadata:\n"));
    ck_assert_ptr_nonnull(strstr(yaml, "  containers:\n  - image: trainer:1.0\n"));
    ck_assert_ptr_nonnull(strstr(yaml, "status: \"False\""));
    free(yaml);
    json_decref(docs);
    free(buf);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model_decode");
    TCase *tc = tcase_create("model_decode");
    tcase_add_test(tc, test_model_pod_requests_sum_max);
    tcase_add_test(tc, test_model_pod_tolerations_and_defaults);
    tcase_add_test(tc, test_model_pod_requests_sidecars_overhead);
    tcase_add_test(tc, test_model_pod_affinity_decode_and_match);
    tcase_add_test(tc, test_model_node_decode);
    tcase_add_test(tc, test_model_podgroup_groups);
    tcase_add_test(tc, test_model_podgroup_topology_spec);
    tcase_add_test(tc, test_model_podgroup_pod_count_multiple);
    tcase_add_test(tc, test_model_topology_decode);
    tcase_add_test(tc, test_model_decode_rejects_bad_input);
    tcase_add_test(tc, test_model_yaml_dump_round_trip);
    suite_add_tcase(s, tc);
    return check_run(s);
}
