/*
 * fuzz_rfc3339.c - clock_parse_rfc3339 on arbitrary text.
 *
 * Invariant: a parsed time formatted with milliseconds parses back to the same time.
 */
#include "fuzz.h"

#include <inttypes.h>

#include "clock.h"
#include "err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size), text[64];
    int64_t ms = 0, back = 0;
    struct err err = ERR_INIT;
    if (clock_parse_rfc3339(s, &ms, &err) == 0) {
        clock_format_rfc3339_ms(ms, text, sizeof(text));
        FUZZ_CHECK(clock_parse_rfc3339(text, &back, &err) == 0,
                   "'%s' (from '%s') does not parse: %s", text, s, err.msg);
        FUZZ_CHECK(back == ms, "'%s' -> %" PRId64 " -> '%s' -> %" PRId64, s, ms, text, back);
        clock_format_rfc3339(ms, text, sizeof(text));
    } else {
        FUZZ_CHECK(err.code == ERR_INVALID && *err.msg, "failure without a message");
    }
    free(s);
    return 0;
}
