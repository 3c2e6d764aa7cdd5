/*
 * json_random.c - random JSON trees for the tests that hold the store's writer and reader
 * to jansson (see json_random.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_random.h"

json_t *json_random_tree(unsigned *seed, int depth)
{
    static const char *const words[] = {
        "a",          "ab",          "b", "spec", "x\"y",     "n\\m",
        "t\tab\r\n/", "caf\xc3\xa9", "",  "Z",    "\x01\x1f", "\xe2\x82\xac\xf0\x9f\x98\x80"};
    int kind = rand_r(seed) % (depth > 4 ? 6 : 8);
    switch (kind) {
    case 0:
        return json_string(words[rand_r(seed) % 12]);
    case 1:
        return json_integer(/* the whole int64 range, both signs */
                            (json_int_t)(((uint64_t)rand_r(seed) << 33) -
                                         ((uint64_t)rand_r(seed) << 2)));
    case 2:
        return json_real((rand_r(seed) - RAND_MAX / 2) / (double)(1 + rand_r(seed) % 1000) *
                         (rand_r(seed) % 3 ? 1 : 1e-12));
    case 3:
        return rand_r(seed) % 2 ? json_true() : json_false();
    case 4:
        return json_null();
    case 5:
        return json_string("plain");
    case 6: {
        json_t *a = json_array();
        for (int i = rand_r(seed) % 5; i > 0; i--)
            json_array_append_new(a, json_random_tree(seed, depth + 1));
        return a;
    }
    default: {
        json_t *o = json_object();
        for (int i = rand_r(seed) % 6; i > 0; i--)
            json_object_set_new(o, words[rand_r(seed) % 12], json_random_tree(seed, depth + 1));
        return o;
    }
    }
}

json_t *json_random_labels(unsigned *seed)
{
    json_t *labels = json_object();
    for (int i = rand_r(seed) % 4; i > 0; i--) {
        char k[16];
        snprintf(k, sizeof(k), "k%d", rand_r(seed) % 6);
        json_object_set_new(labels, k, json_string(k + 1));
    }
    return labels;
}

char *json_random_mutate(unsigned *seed, const char *text, size_t n, size_t *len)
{
    static const char mut[] = "{}[]\",:0123456789aeE.-+ \\ntruefalsenull\xc3\xa9\xff\t";
    char *b = malloc(n + 4);
    memcpy(b, text, n);
    *len = n;
    for (int e = rand_r(seed) % 3; e >= 0 && *len > 0; e--) {
        size_t at = (size_t)rand_r(seed) % *len;
        int how = rand_r(seed) % 3;
        if (how == 0) {
            b[at] = mut[rand_r(seed) % (sizeof(mut) - 1)];
        } else if (how == 1) {
            memmove(b + at, b + at + 1, *len - at - 1);
            (*len)--;
        } else {
            memmove(b + at + 1, b + at, *len - at);
            b[at] = mut[rand_r(seed) % (sizeof(mut) - 1)];
            (*len)++;
        }
    }
    return b;
}
