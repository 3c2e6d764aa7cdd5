/*
 * fuzz_decode_stored_node.c - model_node_decode_stored (model/decode_stored_node.c), the
 * restart's reader of stored nodes, against the full path on arbitrary bytes: the text
 * parsed as the store parses it (model_json_load), model_node_decode.
 *
 * Invariant: when the reader reads a node, the full path reads the text, decodes it, and
 * gets the same struct.
 */
#include "fuzz.h"

#include <jansson.h>

#include "err.h"
#include "model.h"

static int same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static int nodes_same(const struct model_node *a, const struct model_node *b)
{
    if (a->nlabels != b->nlabels || a->nallocatable != b->nallocatable || a->ntaints != b->ntaints)
        return 0;
    for (size_t i = 0; i < a->nlabels; i++)
        if (!same(a->labels[i].key, b->labels[i].key) ||
            !same(a->labels[i].value, b->labels[i].value))
            return 0;
    for (size_t i = 0; i < a->nallocatable; i++)
        if (!same(a->allocatable[i].name, b->allocatable[i].name) ||
            a->allocatable[i].value != b->allocatable[i].value)
            return 0;
    for (size_t i = 0; i < a->ntaints; i++)
        if (!same(a->taints[i].key, b->taints[i].key) ||
            !same(a->taints[i].value, b->taints[i].value) ||
            !same(a->taints[i].effect, b->taints[i].effect))
            return 0;
    return same(a->name, b->name) && a->unschedulable == b->unschedulable &&
           a->not_ready == b->not_ready;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    struct model_node fast, full;
    if (!model_node_decode_stored(s, size, &fast))
        return 0;
    json_t *doc = model_json_load(s, size, NULL);
    FUZZ_CHECK(doc != NULL, "read what jansson refuses: %.*s", (int)size, s);
    struct err err = ERR_INIT;
    FUZZ_CHECK(model_node_decode(doc, &full, &err) == 0, "read what decode refuses (%s)", err.msg);
    FUZZ_CHECK(nodes_same(&fast, &full), "read differently: %.*s", (int)size, s);
    model_node_release(&fast);
    model_node_release(&full);
    json_decref(doc);
    return 0;
}
