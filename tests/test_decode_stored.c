/* test_decode_stored.c - model_pod_decode_stored (model/decode_stored.c), the restart's
 * reader of stored pods, against the full path it stands for: the text parsed, the binding
 * applied with model_pod_set_bound, model_pod_decode. Whenever it reads a pod, the two give
 * the same struct (unsupported aside: not looked for); it reads the common shapes (or the
 * restart gains nothing); it gives up on the shapes it leaves to the full path; and on
 * seeded random pods, and those bytes mutated, it never reads anything the full path
 * would refuse or read otherwise. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "err.h"
#include "json_random.h"
#include "model.h"
#include "model_pod.h"

static int str_same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static int kv_same(const struct model_kv *a, size_t na, const struct model_kv *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (!str_same(a[i].key, b[i].key) || !str_same(a[i].value, b[i].value))
            return 0;
    return 1;
}

/* The field of a and b that differ, NULL when none (unsupported is not compared). */
static const char *pod_diff(const struct model_pod *a, const struct model_pod *b)
{
    if (!str_same(a->ns, b->ns) || !str_same(a->name, b->name))
        return "ns/name";
    if (!str_same(a->uid, b->uid))
        return "uid";
    if (!str_same(a->group, b->group) || !str_same(a->task, b->task) ||
        !str_same(a->queue, b->queue) || a->topo_index != b->topo_index)
        return "group, task, queue or topology index";
    if (a->nrequests != b->nrequests)
        return "requests";
    for (size_t i = 0; i < a->nrequests; i++)
        if (!str_same(a->requests[i].name, b->requests[i].name) ||
            a->requests[i].value != b->requests[i].value)
            return "requests";
    if (a->priority != b->priority || a->preempt_never != b->preempt_never)
        return "priority";
    if (!kv_same(a->node_selector, a->nnode_selector, b->node_selector, b->nnode_selector))
        return "nodeSelector";
    if (!kv_same(a->labels, a->nlabels, b->labels, b->nlabels))
        return "labels";
    if (a->ntolerations != b->ntolerations || (a->aff == NULL) != (b->aff == NULL) ||
        a->gated != b->gated)
        return "tolerations, affinity or gates";
    if (!str_same(a->node_name, b->node_name) || !str_same(a->phase, b->phase) ||
        !str_same(a->nominated_node, b->nominated_node))
        return "node, phase or nomination";
    if (a->creation_ms != b->creation_ms || a->deletion_ms != b->deletion_ms ||
        a->start_ms != b->start_ms || a->deadline_ms != b->deadline_ms ||
        a->expected_ms != b->expected_ms)
        return "times";
    if (a->preempted != b->preempted)
        return "preempted";
    return NULL;
}

/* The reader on text[0..n) with the binding (node, ts; NULL: none) against the full path.
 * Returns 1 when the reader read it. */
static int check(const char *text, size_t n, const char *node, const char *ts)
{
    struct model_pod fast, full;
    int got = model_pod_decode_stored(text, n, node, ts, &fast);
    json_t *doc = model_json_load(text, n, NULL);
    if (!got) {
        ck_assert_ptr_null(fast.name); /* zeroed */
        json_decref(doc);
        return 0;
    }
    ck_assert_msg(doc != NULL, "read what jansson refuses: %.*s", (int)n, text);
    if (node)
        model_pod_set_bound(doc, node, ts);
    struct err err = ERR_INIT;
    ck_assert_msg(model_pod_decode(doc, &full, &err) == 0, "read what decode refuses (%s): %.*s",
                  err.msg, (int)n, text);
    const char *diff = pod_diff(&fast, &full);
    ck_assert_msg(!diff, "%s differ for %.*s (bound to %s)", diff, (int)n, text,
                  node ? node : "nothing");
    ck_assert_ptr_null(fast.unsupported);
    model_pod_release(&fast);
    model_pod_release(&full);
    json_decref(doc);
    return 1;
}

static int check_str(const char *text, const char *node, const char *ts)
{
    return check(text, strlen(text), node, ts);
}

#define TS "2026-11-01T00:00:05Z"
#define POD(meta, spec, status)                                                                    \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"" meta                    \
    "},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}"    \
    "]" spec "}" status "}"

START_TEST(test_decode_stored_reads_common_shapes)
{
    /* what the store holds for an applied pod, bound by record or in its document */
    const char *stored = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"pod-1\","
                         "\"namespace\":\"bench\",\"creationTimestamp\":\"2026-11-01T00:00:00Z\","
                         "\"uid\":\"cc80acce\",\"resourceVersion\":\"50002\"},\"spec\":{"
                         "\"priority\":0,\"containers\":[{\"name\":\"main\",\"image\":\"bench\","
                         "\"resources\":{\"requests\":{\"cpu\":\"100m\",\"memory\":\"500Mi\"}}}]}}";
    ck_assert(check_str(stored, "node-1", TS));
    const char *shapes[] = {
        POD(",\"namespace\":\"ns\",\"labels\":{\"b\":\"2\",\"a\":\"1\",\"pod-group.scheduling.sigs."
            "k8s.io\":\"g\"},"
            "\"annotations\":{\"scheduling.volcano.sh/queue-name\":\"q\","
            "\"gang.scheduling.koordinator.sh/network-topology-index\":\"3\","
            "\"muster.io/expected-runtime\":\"1h30m\",\"volcano.sh/task-spec\":\"w\",\"x\":\"y\"}",
            ",\"nodeName\":\"n1\",\"priority\":-7,\"preemptionPolicy\":\"Never\","
            "\"activeDeadlineSeconds\":600,\"nodeSelector\":{\"z\":\"1\",\"k\":\"v\"}",
            ",\"status\":{\"phase\":\"Running\",\"startTime\":\"2026-11-01T00:00:01Z\","
            "\"conditions\":[{\"type\":\"PodScheduled\",\"status\":\"True\"},{\"type\":"
            "\"DisruptionTarget\",\"status\":\"True\",\"reason\":\"PreemptionByScheduler\"}]}"),
        POD(",\"deletionTimestamp\":\"2026-11-01T00:00:09Z\",\"uid\":\"\"",
            ",\"nodeName\":\"n1\",\"schedulerName\":\"s\"",
            ",\"status\":{\"phase\":\"Succeeded\",\"nominatedNodeName\":\"n2\"}"),
        POD(",\"namespace\":\"\"", ",\"nodeName\":\"n1\"", ",\"status\":{\"startTime\":null}"),
        /* skipped members of every kind, escapes in a skipped string */
        POD(",\"generateName\":\"p-\",\"ownerReferences\":[{\"kind\":\"Job\",\"controller\":true}]",
            ",\"nodeName\":\"n1\",\"restartPolicy\":\"Never\",\"x\":[1,-2.5,true,false,null,{}]"
            ",\"command\":[\"sh\",\"-c\",\"echo \\\"hi\\\"\\n\"]",
            ",\"status\":{\"hostIP\":\"10.0.0.1\"}"),
    };
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        ck_assert_msg(check_str(shapes[i], NULL, NULL), "gave up on %s", shapes[i]);
        ck_assert_msg(check_str(shapes[i], "n9", TS), "gave up on %s, bound", shapes[i]);
    }
    /* the binding replaces the node, clears the nomination and sets a missing start */
    struct model_pod p;
    ck_assert(model_pod_decode_stored(shapes[1], strlen(shapes[1]), "n9", TS, &p));
    ck_assert_str_eq(p.node_name, "n9");
    ck_assert_ptr_null(p.nominated_node);
    ck_assert_int_gt(p.start_ms, 0);
    model_pod_release(&p);
}
END_TEST

START_TEST(test_decode_stored_leaves_other_shapes_to_decode)
{
    const char *other[] = {
        /* unbound: the unsupported field must be looked for in the document */
        POD("", "", ""),
        /* rules it does not repeat */
        POD("", ",\"nodeName\":\"n\",\"affinity\":{}", ""),
        POD("", ",\"nodeName\":\"n\",\"tolerations\":[]", ""),
        POD("", ",\"nodeName\":\"n\",\"initContainers\":[]", ""),
        POD("", ",\"nodeName\":\"n\",\"overhead\":{\"cpu\":\"1\"}", ""),
        POD("", ",\"nodeName\":\"n\",\"schedulingGates\":[{\"name\":\"g\"}]", ""),
        POD("", ",\"nodeName\":\"n\",\"topologySpreadConstraints\":[]", ""),
        /* read fields of another type, repeated, escaped or not ASCII */
        POD(",\"labels\":{\"a\":1}", ",\"nodeName\":\"n\"", ""),
        POD(",\"name\":\"q\"", ",\"nodeName\":\"n\"", ""),
        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n\",\"containers\":[{"
        "\"resources\":"
        "{\"requests\":{\"cpu\":\"1\"},\"requests\":{\"cpu\":\"2\"}}}]}}",
        POD(",\"labels\":{\"a\":\"x\\ty\"}", ",\"nodeName\":\"n\"", ""),
        POD(",\"labels\":{\"a\":\"\xc3\xa9\"}", ",\"nodeName\":\"n\"", ""),
        POD("", ",\"nodeName\":\"n\",\"priority\":1.5", ""),
        POD("", ",\"nodeName\":\"n\",\"priority\":\"1\"", ""),
        POD("", ",\"nodeName\":\"n\",\"x\":1e3", ""),
        /* found by fuzz_decode_stored: a long integer overflowed while it was read */
        POD("", ",\"nodeName\":\"n\",\"activeDeadlineSeconds\":6666666666666666666666666666", ""),
        POD("", ",\"nodeName\":\"n\",\"x\":\"\\u0041\"", ""),
        /* what decode refuses */
        POD(",\"annotations\":{\"gang.scheduling.koordinator.sh/network-topology-index\":\"x\"}",
            ",\"nodeName\":\"n\"", ""),
        "{\"metadata\":{\"namespace\":\"ns\"},\"spec\":{\"nodeName\":\"n\"}}",
        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n\",\"containers\":[{"
        "\"resources\":"
        "{\"requests\":{\"cpu\":\"lots\"}}}]}}",
        /* not JSON */
        POD("", ",\"nodeName\":\"n\"", "") "x",
        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"nodeName\":\"n\",}}",
        "",
    };
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
        ck_assert_msg(!check_str(other[i], NULL, NULL), "read %s", other[i]);
    ck_assert(!check_str(other[1], "n9", TS)); /* bound or not */
}
END_TEST

/* Strings are scanned eight bytes at a time (model/scan.c): a byte that spoils a plain
 * string is found at every offset of a long one, and plain ones of every length are read. */
START_TEST(test_decode_stored_string_bytes_at_every_offset)
{
    static const char bad[] = {'\\', 0x01, 0x1f, 0x7f, (char)0x80, (char)0xc3, (char)0xff};
    char value[40], text[512];
    for (size_t len = 0; len < 24; len++) {
        memset(value, 'v', len);
        value[len] = '\0';
        snprintf(text, sizeof(text), POD(",\"labels\":{\"a\":\"%s\"}", ",\"nodeName\":\"n\"", ""),
                 value);
        ck_assert_msg(check_str(text, NULL, NULL), "gave up on a plain string of %zu bytes", len);
        for (size_t at = 0; at < len; at++)
            for (size_t b = 0; b < sizeof(bad); b++) {
                value[at] = bad[b];
                snprintf(text, sizeof(text),
                         POD(",\"labels\":{\"a\":\"%s\"}", ",\"nodeName\":\"n\"", ""), value);
                ck_assert_msg(!check_str(text, NULL, NULL), "read byte 0x%02x at %zu of %zu",
                              (unsigned char)bad[b], at, len);
                value[at] = 'v';
            }
    }
}
END_TEST

/* A random pod of the shapes the reader reads, and some it leaves. */
static json_t *random_pod(unsigned *seed)
{
    static const char *const qty[] = {"1", "100m", "500Mi", "2Gi", "0.5", "3", "bad", "1e3"};
    static const char *const res[] = {"cpu", "memory", "nvidia.com/gpu", "pods"};
    static const char *const phases[] = {"Pending", "Running", "Succeeded", "Failed", ""};
    static const char *const times[] = {"2026-11-01T00:00:00Z", "2026-11-01T10:00:00.5+02:00",
                                        "yesterday", ""};
    json_t *meta = json_pack("{s:s}", "name", "p");
    if (rand_r(seed) % 4)
        json_object_set_new(meta, "namespace", json_string(rand_r(seed) % 5 ? "ns" : ""));
    if (rand_r(seed) % 2)
        json_object_set_new(meta, "creationTimestamp", json_string(times[rand_r(seed) % 4]));
    if (rand_r(seed) % 5 == 0)
        json_object_set_new(meta, "deletionTimestamp", json_string(times[rand_r(seed) % 4]));
    json_t *labels = json_random_labels(seed), *ann = json_object();
    if (rand_r(seed) % 4 == 0)
        json_object_set_new(labels, MODEL_LABEL_POD_GROUP,
                            json_string(rand_r(seed) % 3 ? "g" : ""));
    if (rand_r(seed) % 4 == 0)
        json_object_set_new(ann, MODEL_ANN_GROUP_NAME, json_string("h"));
    if (rand_r(seed) % 4 == 0)
        json_object_set_new(rand_r(seed) % 2 ? ann : labels, MODEL_ANN_TASK_SPEC, json_string("t"));
    if (rand_r(seed) % 4 == 0)
        json_object_set_new(ann, MODEL_ANN_QUEUE_NAME, json_string(rand_r(seed) % 3 ? "q" : ""));
    if (rand_r(seed) % 5 == 0)
        json_object_set_new(ann, MODEL_ANN_EXPECTED_RUNTIME,
                            json_string(rand_r(seed) % 2 ? "90s" : "soon"));
    if (rand_r(seed) % 6 == 0)
        json_object_set_new(ann, MODEL_ANN_TOPOLOGY_INDEX,
                            json_string(rand_r(seed) % 2 ? "4" : "-1"));
    if (rand_r(seed) % 5)
        json_object_set_new(meta, "labels", labels);
    else
        json_decref(labels);
    if (rand_r(seed) % 3)
        json_object_set_new(meta, "annotations", ann);
    else
        json_decref(ann);
    json_t *containers = json_array();
    for (int c = rand_r(seed) % 3 + 1; c > 0; c--) {
        json_t *req = json_object();
        for (int i = rand_r(seed) % 3; i >= 0; i--)
            json_object_set_new(req, res[rand_r(seed) % 4], json_string(qty[rand_r(seed) % 8]));
        json_array_append_new(containers,
                              json_pack("{s:s,s:s,s:{s:o,s:{s:s}}}", "name", "c", "image", "i",
                                        "resources", "requests", req, "limits", "cpu", "2"));
    }
    json_t *spec = json_pack("{s:o}", "containers", containers);
    if (rand_r(seed) % 2)
        json_object_set_new(spec, "priority", json_integer(rand_r(seed) % 2000 - 1000));
    if (rand_r(seed) % 4 == 0)
        json_object_set_new(spec, "preemptionPolicy",
                            json_string(rand_r(seed) % 2 ? "Never" : "PreemptLowerPriority"));
    if (rand_r(seed) % 4 == 0)
        json_object_set_new(spec, "nodeSelector", json_pack("{s:s,s:s}", "zone", "a", "b", "c"));
    if (rand_r(seed) % 2)
        json_object_set_new(spec, "nodeName", json_string(rand_r(seed) % 6 ? "n1" : ""));
    if (rand_r(seed) % 5 == 0)
        json_object_set_new(spec, "activeDeadlineSeconds", json_integer(rand_r(seed) % 3 * 300));
    if (rand_r(seed) % 10 == 0)
        json_object_set_new(spec, "tolerations", json_pack("[{s:s}]", "operator", "Exists"));
    json_t *pod = json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "v1", "kind", "Pod", "metadata",
                            meta, "spec", spec);
    if (rand_r(seed) % 2) {
        json_t *st = json_object();
        if (rand_r(seed) % 2)
            json_object_set_new(st, "phase", json_string(phases[rand_r(seed) % 5]));
        if (rand_r(seed) % 3 == 0)
            json_object_set_new(st, "nominatedNodeName", json_string("n2"));
        if (rand_r(seed) % 3 == 0)
            json_object_set_new(st, "startTime", json_string(times[rand_r(seed) % 4]));
        if (rand_r(seed) % 3 == 0)
            json_object_set_new(st, "conditions",
                                json_pack("[{s:s,s:s,s:s}]", "type", "DisruptionTarget", "status",
                                          rand_r(seed) % 2 ? "True" : "False", "reason",
                                          "PreemptionByScheduler"));
        json_object_set_new(pod, "status", st);
    }
    return pod;
}

START_TEST(test_decode_stored_random_pods_and_mutations)
{
    unsigned seed = 3119;
    int read = 0, mutated_read = 0;
    for (int k = 0; k < 3000; k++) {
        json_t *pod = random_pod(&seed);
        char *text = json_dumps(pod, JSON_COMPACT | (rand_r(&seed) % 3 ? 0 : JSON_SORT_KEYS));
        size_t n = strlen(text);
        int bound = rand_r(&seed) % 2;
        const char *ts = rand_r(&seed) % 8 ? TS : "not a time";
        read += check(text, n, bound ? "n7" : NULL, bound ? ts : NULL);
        for (int m = 0; m < 8; m++) {
            size_t len;
            char *b = json_random_mutate(&seed, text, n, &len);
            mutated_read += check(b, len, "n7", TS);
            free(b);
        }
        free(text);
        json_decref(pod);
    }
    /* the generator makes mostly readable pods; some mutations keep them readable */
    ck_assert_int_gt(read, 800);
    ck_assert_int_gt(mutated_read, 500);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_decode_stored_reads_common_shapes,
                            test_decode_stored_leaves_other_shapes_to_decode,
                            test_decode_stored_string_bytes_at_every_offset,
                            test_decode_stored_random_pods_and_mutations, NULL};
    return check_run(check_suite("decode_stored", NULL, NULL, tests));
}
