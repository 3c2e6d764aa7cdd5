/*
 * fuzz_json_read.c - model_json_read (model/json_read.c) against jansson's json_loadb on
 * arbitrary bytes; the first byte chooses JSON_REJECT_DUPLICATES. With duplicates refused,
 * the read of a big array or List on two threads from a guessed cut
 * (model__json_read_split, manifest_json.c) against the whole read too.
 *
 * Invariant: when the reader reads a value, json_loadb with the same flags reads the same
 * value, member order included (compared as jansson's compact dumps); the reader never
 * reads what jansson refuses; the split read reads nothing the whole read refuses, what
 * it reads is the whole read's value, and what it tries and refuses the whole read refuses.
 */
#include "fuzz.h"

#include <jansson.h>

#include "../model/internal.h"
#include "model.h"

static void check_split(const char *s, size_t n, json_t *whole)
{
    int tried;
    json_t *split = model__json_read_split(s, n, &tried);
    FUZZ_CHECK(split || !tried || !whole, "split read tried and refused what the whole read reads");
    if (split) {
        FUZZ_CHECK(whole != NULL, "split read what the whole read refuses");
        char *a = json_dumps(split, JSON_COMPACT), *b = json_dumps(whole, JSON_COMPACT);
        FUZZ_CHECK(!strcmp(a, b), "split read %s, whole %s", a, b);
        free(a);
        free(b);
    }
    json_decref(split);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int dups = data[0] & 1;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    json_error_t e;
    json_t *got = model_json_read(s, n, dups);
    json_t *want = json_loadb(s, n, dups ? JSON_REJECT_DUPLICATES : 0, &e);
    if (got) {
        FUZZ_CHECK(want != NULL, "read what jansson refuses: %s", e.text);
        char *a = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);
        char *b = json_dumps(want, JSON_COMPACT | JSON_ENCODE_ANY);
        FUZZ_CHECK(json_equal(got, want) && !strcmp(a, b), "read %s, jansson %s", a, b);
        free(a);
        free(b);
    }
    if (dups)
        check_split(s, n, got);
    json_decref(got);
    json_decref(want);
    return 0;
}
