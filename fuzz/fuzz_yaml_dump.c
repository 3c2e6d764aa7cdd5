/*
 * fuzz_yaml_dump.c - model_yaml_dump round trip on JSON values the fuzzer builds.
 *
 * The input is read as JSON (any value, NUL allowed in strings); dumped as YAML under
 * a wrapper key (so arrays and kind: List are not flattened into documents) and parsed
 * back, it must be json_equal to what was dumped. Values nested deeper than the
 * reader's limit must be refused with a message instead.
 */
#include "fuzz.h"

#include "err.h"
#include "model.h"

#define READER_DEPTH 256 /* model/manifest_yaml.c MAX_DEPTH */

static int depth(json_t *v)
{
    int d = 0;
    size_t i;
    const char *k;
    json_t *c;
    if (json_is_array(v))
        json_array_foreach(v, i, c)
        {
            int cd = depth(c);
            d = cd > d ? cd : d;
        }
    if (json_is_object(v))
        json_object_foreach(v, k, c)
        {
            int cd = depth(c);
            d = cd > d ? cd : d;
        }
    return d + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *v = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (!v)
        return 0;
    json_t *wrap = json_pack("{so}", "v", v);
    char *yaml = model_yaml_dump(wrap);
    FUZZ_CHECK(yaml != NULL, "dump failed");
    struct model_manifest m = {0};
    struct err err = ERR_INIT;
    int rc = model_manifest_parse(yaml, strlen(yaml), MODEL_FMT_YAML, &m, &err);
    if (depth(wrap) > READER_DEPTH) {
        FUZZ_CHECK(rc < 0 && strstr(err.msg, "nested too deeply"), "deep value: %d %s", rc,
                   err.msg);
    } else {
        FUZZ_CHECK(rc == 0, "dump does not parse: %s\n%s", err.msg, yaml);
        FUZZ_CHECK(m.n == 1, "%zu documents", m.n);
        if (!json_equal(m.docs[0].obj, wrap)) {
            char *got = json_dumps(m.docs[0].obj, JSON_ENCODE_ANY);
            FUZZ_CHECK(0, "round trip differs\nyaml:\n%s\ngot: %s", yaml, got);
        }
    }
    model_manifest_free(&m);
    free(yaml);
    json_decref(wrap);
    return 0;
}
