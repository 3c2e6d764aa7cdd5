/*
 * fuzz_quantity.c - model_quantity_parse on arbitrary text, both units.
 *
 * Invariants: a parsed value is not negative; formatting it and parsing the text
 * again gives the same value. The first 8 bytes are also read as a raw value and
 * put through format -> parse.
 */
#include "fuzz.h"

#include <inttypes.h>

#include "err.h"
#include "model.h"

static void round_trip(int64_t v, int milli, const char *from)
{
    char text[64];
    int64_t back = -1;
    struct err err = ERR_INIT;
    model_quantity_format(v, milli, text, sizeof(text));
    FUZZ_CHECK(model_quantity_parse(text, milli, &back, &err) == 0,
               "'%s' (from %s, %" PRId64 ", milli %d) does not parse: %s", text, from, v, milli,
               err.msg);
    FUZZ_CHECK(back == v, "'%s' (from '%s', milli %d) parses to %" PRId64 ", not %" PRId64, text,
               from, milli, back, v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    for (int milli = 0; milli <= 1; milli++) {
        int64_t v = -1;
        struct err err = ERR_INIT;
        if (model_quantity_parse(s, milli, &v, &err) < 0) {
            FUZZ_CHECK(err.code == ERR_INVALID && *err.msg, "failure without a message");
            continue;
        }
        FUZZ_CHECK(v >= 0, "'%s' parses to %" PRId64, s, v);
        round_trip(v, milli, s);
    }
    if (size >= 8) {
        int64_t raw;
        memcpy(&raw, data, sizeof(raw));
        if (raw < 0)
            raw = raw == INT64_MIN ? 0 : -raw;
        round_trip(raw, 0, "raw bytes");
        round_trip(raw, 1, "raw bytes");
    }
    free(s);
    return 0;
}
