/*
 * fuzz.h - what the libFuzzer harnesses in fuzz/ share.
 *
 * Each harness is one fuzz_<name>.c defining LLVMFuzzerTestOneInput; fuzz/build.sh
 * compiles it with -fsanitize=fuzzer,address,undefined against the instrumented
 * sources of base/, model/, store/ and server/config.c. A broken invariant is a
 * crash: FUZZ_CHECK prints the reason and aborts, so libFuzzer saves the input.
 */
#ifndef MUSTER_FUZZ_H
#define MUSTER_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz invariant '%s' broken: ", #cond);                                \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* The input as a new NUL-terminated string (stops at the first NUL byte). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
