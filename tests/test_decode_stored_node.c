/* test_decode_stored_node.c - model_node_decode_stored (model/decode_stored_node.c), the
 * restart's reader of stored nodes, against the full path it stands for: the text parsed and
 * model_node_decode. Whenever it reads a node, the two give the same struct; it reads the
 * common shapes (or the restart gains nothing); it gives up on what it leaves to the full
 * path; and on seeded random nodes, and those bytes mutated, it never reads anything the
 * full path would refuse or read otherwise. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "err.h"
#include "json_random.h"
#include "model.h"

static int str_same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* The field of a and b that differ, NULL when none. */
static const char *node_diff(const struct model_node *a, const struct model_node *b)
{
    if (!str_same(a->name, b->name))
        return "name";
    if (a->nlabels != b->nlabels)
        return "labels";
    for (size_t i = 0; i < a->nlabels; i++)
        if (!str_same(a->labels[i].key, b->labels[i].key) ||
            !str_same(a->labels[i].value, b->labels[i].value))
            return "labels";
    if (a->nallocatable != b->nallocatable)
        return "allocatable";
    for (size_t i = 0; i < a->nallocatable; i++)
        if (!str_same(a->allocatable[i].name, b->allocatable[i].name) ||
            a->allocatable[i].value != b->allocatable[i].value)
            return "allocatable";
    if (a->unschedulable != b->unschedulable || a->not_ready != b->not_ready)
        return "unschedulable or not ready";
    if (a->ntaints != b->ntaints)
        return "taints";
    for (size_t i = 0; i < a->ntaints; i++)
        if (!str_same(a->taints[i].key, b->taints[i].key) ||
            !str_same(a->taints[i].value, b->taints[i].value) ||
            !str_same(a->taints[i].effect, b->taints[i].effect))
            return "taints";
    return NULL;
}

/* The reader on text[0..n) against the full path: 1 when the reader read it. */
static int check(const char *text, size_t n)
{
    struct model_node fast, full;
    int got = model_node_decode_stored(text, n, &fast);
    json_t *doc = model_json_load(text, n, NULL);
    if (!got) {
        ck_assert_ptr_null(fast.name); /* zeroed */
        json_decref(doc);
        return 0;
    }
    ck_assert_msg(doc != NULL, "read what jansson refuses: %.*s", (int)n, text);
    struct err err = ERR_INIT;
    ck_assert_msg(model_node_decode(doc, &full, &err) == 0, "read what decode refuses (%s): %.*s",
                  err.msg, (int)n, text);
    const char *diff = node_diff(&fast, &full);
    ck_assert_msg(!diff, "%s differ for %.*s", diff, (int)n, text);
    model_node_release(&fast);
    model_node_release(&full);
    json_decref(doc);
    return 1;
}

static int check_str(const char *text)
{
    return check(text, strlen(text));
}

#define NODE(meta, spec, status)                                                                   \
    "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"" meta "}" spec status  \
    "}"

START_TEST(test_decode_stored_node_reads_common_shapes)
{
    /* what the store holds for an applied node, and for a mirrored one */
    const char *stored =
        "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-00001\","
        "\"labels\":{\"network.topology.nvidia.com/block\":\"block-0\"},\"uid\":\"a1\","
        "\"creationTimestamp\":\"2026-11-01T00:00:00Z\",\"resourceVersion\":\"7\"},\"status\":{"
        "\"allocatable\":{\"cpu\":\"32\",\"memory\":\"256Gi\",\"pods\":\"110\"}}}";
    ck_assert(check_str(stored));
    const char *shapes[] = {
        NODE(",\"labels\":{\"kubernetes.io/hostname\":\"h1\",\"b\":\"2\",\"a\":\"\"}",
             ",\"spec\":{\"unschedulable\":true,\"podCIDR\":\"10.0.0.0/24\",\"taints\":[{\"key\":"
             "\"k\",\"value\":\"v\",\"effect\":\"NoSchedule\"},{\"key\":\"x\",\"effect\":"
             "\"NoExecute\",\"timeAdded\":\"2026-11-01T00:00:00Z\"},{\"value\":null}]}",
             ",\"status\":{\"capacity\":{\"cpu\":\"64\"},\"allocatable\":{\"cpu\":\"63500m\","
             "\"nvidia.com/gpu\":\"8\",\"memory\":\"1Ti\"},\"conditions\":[{\"type\":"
             "\"MemoryPressure\",\"status\":\"False\"},{\"type\":\"Ready\",\"status\":\"False\","
             "\"reason\":\"KubeletNotReady\"}],\"nodeInfo\":{\"kubeletVersion\":\"v1.30\"}}"),
        NODE("", ",\"spec\":{\"unschedulable\":false,\"taints\":[]}",
             ",\"status\":{\"capacity\":{\"cpu\":\"4\",\"memory\":\"1.5Gi\"},\"conditions\":[{"
             "\"type\":\"Ready\",\"status\":\"True\"}]}"),
        NODE(",\"labels\":{}", ",\"spec\":{\"unschedulable\":null}",
             ",\"status\":{\"allocatable\":{},\"capacity\":{\"cpu\":\"4\"},\"conditions\":[{"
             "\"type\":\"Ready\"},{\"type\":null,\"status\":\"x\"}]}"),
        NODE("", "", ""),
        /* skipped members of every kind, escapes in a skipped string */
        NODE(",\"annotations\":{\"a\":\"\\\"q\\\"\"},\"ownerReferences\":[{\"x\":[1,-2.5,true,"
             "false,null,{}]}]",
             ",\"spec\":{\"providerID\":\"p\"}", ",\"status\":{\"addresses\":[]}"),
    };
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        ck_assert_msg(check_str(shapes[i]), "gave up on %s", shapes[i]);
    /* the hostname label added when missing, allocatable over capacity, the last Ready */
    struct model_node n;
    ck_assert(model_node_decode_stored(shapes[1], strlen(shapes[1]), &n));
    ck_assert_uint_eq(n.nlabels, 1);
    ck_assert_str_eq(model_label(n.labels, n.nlabels, MODEL_LABEL_HOSTNAME), "n1");
    ck_assert_uint_eq(n.nallocatable, 2);
    ck_assert(!n.not_ready);
    model_node_release(&n);
    ck_assert(model_node_decode_stored(shapes[0], strlen(shapes[0]), &n));
    ck_assert(n.not_ready);
    ck_assert(n.unschedulable);
    ck_assert_uint_eq(n.ntaints, 3);
    ck_assert_str_eq(n.taints[2].effect, "");
    ck_assert_uint_eq(n.nallocatable, 3);
    model_node_release(&n);
}
END_TEST

START_TEST(test_decode_stored_node_leaves_other_shapes_to_decode)
{
    const char *other[] = {
        /* read fields of another type (decode skips, defaults or refuses them) */
        NODE(",\"labels\":{\"a\":1}", "", ""),
        NODE(",\"labels\":null", "", ""),
        NODE("", ",\"spec\":{\"unschedulable\":1}", ""),
        NODE("", ",\"spec\":{\"taints\":[\"k\"]}", ""),
        NODE("", ",\"spec\":{\"taints\":[{\"key\":7}]}", ""),
        NODE("", ",\"spec\":{\"taints\":{}}", ""),
        NODE("", "", ",\"status\":{\"allocatable\":{\"cpu\":4}}"),
        NODE("", "", ",\"status\":{\"allocatable\":null,\"capacity\":{\"cpu\":\"4\"}}"),
        NODE("", "", ",\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":true}]}"),
        NODE("", "", ",\"status\":{\"conditions\":{}}"),
        /* repeated, escaped or not ASCII */
        NODE(",\"name\":\"n2\"", "", ""),
        NODE(",\"labels\":{\"a\":\"1\",\"a\":\"2\"}", "", ""),
        NODE(",\"labels\":{\"a\":\"x\\ty\"}", "", ""),
        NODE(",\"labels\":{\"a\":\"\xc3\xa9\"}", "", ""),
        /* what decode refuses */
        NODE("", "", ",\"status\":{\"allocatable\":{\"cpu\":\"lots\"}}"),
        "{\"metadata\":{\"name\":\"\"}}",
        "{\"metadata\":{\"labels\":{}}}",
        "{\"kind\":\"Node\"}",
        /* not JSON */
        NODE("", "", "") "x",
        "{\"metadata\":{\"name\":\"n\"},}",
        "",
    };
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
        ck_assert_msg(!check_str(other[i]), "read %s", other[i]);
}
END_TEST

/* A random node of the shapes the reader reads, and some it leaves. */
static json_t *random_node(unsigned *seed)
{
    static const char *const qty[] = {"1", "100m", "500Mi", "2Gi", "0.5", "32", "bad", "1e3"};
    static const char *const res[] = {"cpu", "memory", "nvidia.com/gpu", "pods"};
    static const char *const effects[] = {"NoSchedule", "PreferNoSchedule", "NoExecute", ""};
    json_t *meta = json_pack("{s:s}", "name", rand_r(seed) % 20 ? "n1" : "");
    json_t *labels = json_random_labels(seed);
    if (rand_r(seed) % 3 == 0)
        json_object_set_new(labels, MODEL_LABEL_HOSTNAME, json_string("h"));
    if (rand_r(seed) % 5)
        json_object_set_new(meta, "labels", labels);
    else
        json_decref(labels);
    json_t *node = json_pack("{s:s,s:s,s:o}", "apiVersion", "v1", "kind", "Node", "metadata", meta);
    if (rand_r(seed) % 2) {
        json_t *spec = json_object();
        if (rand_r(seed) % 2)
            json_object_set_new(spec, "unschedulable", json_boolean(rand_r(seed) % 2));
        json_t *taints = json_array();
        for (int i = rand_r(seed) % 3; i > 0; i--)
            json_array_append_new(taints, json_pack("{s:s,s:s,s:s}", "key", "k", "value", "v",
                                                    "effect", effects[rand_r(seed) % 4]));
        json_object_set_new(spec, "taints", taints);
        json_object_set_new(node, "spec", spec);
    }
    if (rand_r(seed) % 4) {
        json_t *st = json_object();
        for (int m = 0; m < 2; m++) {
            if (rand_r(seed) % 2 == 0)
                continue;
            json_t *q = json_object();
            for (int i = rand_r(seed) % 4; i >= 0; i--)
                json_object_set_new(q, res[rand_r(seed) % 4], json_string(qty[rand_r(seed) % 8]));
            json_object_set_new(st, m ? "capacity" : "allocatable", q);
        }
        if (rand_r(seed) % 2)
            json_object_set_new(st, "conditions",
                                json_pack("[{s:s,s:s},{s:s,s:s}]", "type", "Ready", "status",
                                          rand_r(seed) % 3 ? "True" : "False", "type",
                                          rand_r(seed) % 2 ? "Ready" : "DiskPressure", "status",
                                          rand_r(seed) % 2 ? "True" : "Unknown"));
        json_object_set_new(node, "status", st);
    }
    return node;
}

START_TEST(test_decode_stored_node_random_nodes_and_mutations)
{
    unsigned seed = 4127;
    int read = 0, mutated_read = 0;
    for (int k = 0; k < 3000; k++) {
        json_t *node = random_node(&seed);
        char *text = json_dumps(node, JSON_COMPACT | (rand_r(&seed) % 3 ? 0 : JSON_SORT_KEYS));
        size_t n = strlen(text);
        read += check(text, n);
        for (int m = 0; m < 8; m++) {
            size_t len;
            char *b = json_random_mutate(&seed, text, n, &len);
            mutated_read += check(b, len);
            free(b);
        }
        free(text);
        json_decref(node);
    }
    /* the generator makes mostly readable nodes; some mutations keep them readable */
    ck_assert_int_gt(read, 1000);
    ck_assert_int_gt(mutated_read, 1000);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_decode_stored_node_reads_common_shapes,
                            test_decode_stored_node_leaves_other_shapes_to_decode,
                            test_decode_stored_node_random_nodes_and_mutations, NULL};
    return check_run(check_suite("decode_stored_node", NULL, NULL, tests));
}
