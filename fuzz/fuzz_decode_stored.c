/*
 * fuzz_decode_stored.c - model_pod_decode_stored (model/decode_stored.c), the restart's
 * reader of stored pods, against the full path on arbitrary bytes: the text parsed as the
 * store parses it (model_json_load), the binding applied with model_pod_set_bound,
 * model_pod_decode. The first byte chooses a binding record or none.
 *
 * Invariant: when the reader reads a pod, the full path reads the text, decodes it, and
 * gets the same struct (unsupported aside: the reader does not look for it).
 */
#include "fuzz.h"

#include <jansson.h>

#include "err.h"
#include "model.h"
#include "model_pod.h"

static int same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static int kv_same(const struct model_kv *a, size_t na, const struct model_kv *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++)
        if (!same(a[i].key, b[i].key) || !same(a[i].value, b[i].value))
            return 0;
    return 1;
}

static int pods_same(const struct model_pod *a, const struct model_pod *b)
{
    if (a->nrequests != b->nrequests)
        return 0;
    for (size_t i = 0; i < a->nrequests; i++)
        if (!same(a->requests[i].name, b->requests[i].name) ||
            a->requests[i].value != b->requests[i].value)
            return 0;
    return same(a->ns, b->ns) && same(a->name, b->name) && same(a->uid, b->uid) &&
           same(a->group, b->group) && same(a->task, b->task) && same(a->queue, b->queue) &&
           a->topo_index == b->topo_index && a->priority == b->priority &&
           a->preempt_never == b->preempt_never &&
           kv_same(a->node_selector, a->nnode_selector, b->node_selector, b->nnode_selector) &&
           kv_same(a->labels, a->nlabels, b->labels, b->nlabels) &&
           a->ntolerations == b->ntolerations && (a->aff == NULL) == (b->aff == NULL) &&
           a->gated == b->gated && same(a->node_name, b->node_name) && same(a->phase, b->phase) &&
           same(a->nominated_node, b->nominated_node) && a->creation_ms == b->creation_ms &&
           a->deletion_ms == b->deletion_ms && a->start_ms == b->start_ms &&
           a->deadline_ms == b->deadline_ms && a->expected_ms == b->expected_ms &&
           a->preempted == b->preempted;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *node = data[0] & 1 ? "node-1" : NULL, *ts = node ? "2026-11-01T00:00:00Z" : NULL;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    struct model_pod fast, full;
    if (!model_pod_decode_stored(s, n, node, ts, &fast))
        return 0;
    json_t *doc = model_json_load(s, n, NULL);
    FUZZ_CHECK(doc != NULL, "read what jansson refuses: %.*s", (int)n, s);
    if (node)
        model_pod_set_bound(doc, node, ts);
    struct err err = ERR_INIT;
    FUZZ_CHECK(model_pod_decode(doc, &full, &err) == 0, "read what decode refuses (%s)", err.msg);
    FUZZ_CHECK(pods_same(&fast, &full), "read differently: %.*s", (int)n, s);
    FUZZ_CHECK(fast.unsupported == NULL, "an unsupported field named");
    model_pod_release(&fast);
    model_pod_release(&full);
    json_decref(doc);
    return 0;
}
