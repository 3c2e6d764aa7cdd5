/*
 * json_random.h - random JSON trees for differential tests (test_store_jsonw against
 * jansson's dumper, test_json_read against jansson's parser).
 *
 *     unsigned seed = 1;
 *     json_t *t = json_random_tree(&seed, 0);   new reference
 *
 * Strings with quotes, backslashes, control characters, multi-byte UTF-8 and empty keys;
 * integers over the whole int64 range; reals large and tiny; true, false, null; arrays and
 * objects nested up to 6 deep. And a text with a few bytes changed.
 */
#ifndef MUSTER_TEST_JSON_RANDOM_H
#define MUSTER_TEST_JSON_RANDOM_H

#include <jansson.h>

json_t *json_random_tree(unsigned *seed, int depth);
/* Zero to three labels "k<d>": "<d>" (d in 0-5, so some repeat): a new object. */
json_t *json_random_labels(unsigned *seed);
/* text[0..n) with one to three bytes changed, dropped or added (JSON's punctuation, digits,
 * letters of its literals, an escape, a UTF-8 and an invalid byte): new, *len bytes, not
 * terminated. For readers that must give up on, or read as jansson does, whatever they get
 * (test_decode_stored, test_decode_stored_node). */
char *json_random_mutate(unsigned *seed, const char *text, size_t n, size_t *len);

#endif
