/*
 * fuzz_yaml_split.c - a YAML stream read as two streams on two threads, cut at a document
 * marker past its middle (model__yaml_read_split, manifest_yaml_split.c), against the
 * whole read (model__yaml_parse), on arbitrary bytes of any length (musterd splits only
 * streams of 64 KiB or more; the rule it relies on does not depend on the length).
 *
 * Invariant: what the split read reads, the whole read reads too, and gives the same
 * documents (json_equal, in order) with the same numbers; what the whole read refuses,
 * the split read refuses, leaving its manifest empty.
 */
#include "fuzz.h"

#include <jansson.h>

#include "../model/internal.h"
#include "err.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    struct model_manifest split = {0}, whole = {0};
    struct err err = ERR_INIT;
    int rs = model__yaml_read_split(s, size, &split);
    int rw = model__yaml_parse(s, size, 0, &whole, &err);
    if (rs < 0)
        FUZZ_CHECK(split.n == 0 && split.docs == NULL, "a refused split read kept documents");
    else {
        FUZZ_CHECK(rw == 0, "split read what the whole read refuses: %s", err.msg);
        FUZZ_CHECK(split.n == whole.n, "split read %zu documents, whole %zu", split.n, whole.n);
        for (size_t i = 0; i < split.n; i++) {
            FUZZ_CHECK(split.docs[i].index == whole.docs[i].index,
                       "document %zu numbered %d, whole %d", i, split.docs[i].index,
                       whole.docs[i].index);
            FUZZ_CHECK(json_equal(split.docs[i].obj, whole.docs[i].obj), "document %zu differs", i);
        }
    }
    model_manifest_free(&split);
    model_manifest_free(&whole);
    return 0;
}
