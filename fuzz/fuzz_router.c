/*
 * fuzz_router.c - the request router's pure part on arbitrary request targets: the path
 * decoding and checks musterd runs before routing (api__path_decode, api__path_problem)
 * and the lookup in the one route table (api__route_lookup).
 *
 * The first byte picks the method, the rest is the raw path as sent. Invariants: a decoded
 * path holds no NUL and is no longer than the raw one; a path that passes the checks and
 * finds a route gives back the raw path when its captured segments are put into the
 * route's pattern (no segment was skipped or split), and every captured segment decodes
 * to a non-empty name without '/'; a path without a route lists in allow only the table's
 * methods.
 */
#include "fuzz.h"

#include "../web/http.h"
#include "../web/routes.h"

static void check_rebuilt(int route, struct req *r, const char *raw)
{
    const char *pattern = api__route_pattern(route);
    char *out = malloc(strlen(raw) + strlen(pattern) + 2);
    size_t n = 0, k = 0;

    FUZZ_CHECK(out != NULL, "out of memory");
    for (const char *p = pattern; *p;) {
        if (*p == '{') {
            FUZZ_CHECK(k < r->nparams, "pattern '%s' has more segments than captured", pattern);
            size_t len = strlen(r->params[k]);
            memcpy(out + n, r->params[k++], len);
            n += len;
            p = strchr(p, '}') + 1;
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = '\0';
    FUZZ_CHECK(k == r->nparams, "captured %zu segments for '%s'", r->nparams, pattern);
    size_t rl = strlen(raw);
    int same = !strcmp(out, raw) || (rl == n + 1 && raw[n] == '/' && !strncmp(out, raw, n));
    FUZZ_CHECK(same, "route '%s' for '%s' rebuilds as '%s'", pattern, raw, out);
    free(out);
    for (size_t i = 0; i < r->nparams; i++) {
        char *name = NULL;
        const char *why = NULL;
        FUZZ_CHECK(api__path_decode(r->params[i], strlen(r->params[i]), &name, &why) == 0,
                   "segment '%s' of a checked path does not decode: %s", r->params[i], why);
        FUZZ_CHECK(*name && !strchr(name, '/'), "segment '%s' decodes to '%s'", r->params[i], name);
        free(name);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const methods[] = {"GET", "HEAD", "POST", "DELETE", "PUT", "OPTIONS"};
    if (size < 1)
        return 0;
    char *raw = fuzz_cstr(data + 1, size - 1);
    char *decoded = NULL;
    const char *why = NULL;
    struct req r = {.method = methods[data[0] % 6], .raw_path = raw};

    if (api__path_decode(raw, strlen(raw), &decoded, &why) < 0) {
        FUZZ_CHECK(why && *why && !decoded, "a failed decode without a reason");
        free(raw);
        return 0;
    }
    FUZZ_CHECK(strlen(decoded) <= strlen(raw), "decoding '%s' grew it", raw);
    r.path = decoded;
    if (!api__path_problem(raw, decoded)) {
        char allow[128];
        int route = api__route_lookup(&r, allow, sizeof(allow));
        if (route >= 0) {
            check_rebuilt(route, &r, raw);
        } else {
            FUZZ_CHECK(r.nparams == 0, "parameters left after no match");
            for (const char *a = allow; *a;) {
                size_t len = strcspn(a, ",");
                int known = 0;
                for (size_t m = 0; m < 6; m++)
                    known |= strlen(methods[m]) == len && !strncmp(methods[m], a, len);
                FUZZ_CHECK(known, "allow '%s' names an unknown method", allow);
                a += len;
                a += strspn(a, ", ");
            }
        }
    }
    api__params_free(&r);
    free(decoded);
    free(raw);
    return 0;
}
