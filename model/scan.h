/*
 * scan.h - the scanner of stored JSON text (model/ internal, prefix model__scan): for the
 * readers of stored objects that skip the jansson tree (decode_stored.c for pods,
 * decode_stored_node.c for nodes). It reads the text as jansson writes it and gives up
 * (-1) on anything it cannot read exactly as jansson would: an escape in a read string, a
 * byte outside printable ASCII, a number jansson might read otherwise, a repeated key; the
 * reader then leaves the object to the full decoder.
 */
#ifndef MUSTER_MODEL_SCAN_H
#define MUSTER_MODEL_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "model_objects.h"

struct model__scan {
    const char *p, *end;
};

/* A string as read: the bytes between the quotes (no escapes), or null (s NULL). */
struct model__str {
    const char *s;
    size_t n;
};

/* k is the literal lit. */
#define MODEL__IS(k, lit) ((k).n == sizeof(lit) - 1 && memcmp((k).s, lit, sizeof(lit) - 1) == 0)

/* Skips white space. */
void model__scan_ws(struct model__scan *s);
/* s->p is at c. */
int model__scan_at(struct model__scan *s, char c);
/* A string without escapes at s->p (its opening quote): 0, or -1 to give up. Printable
 * ASCII only: the reader then never has to agree with jansson on UTF-8. */
int model__scan_string(struct model__scan *s, struct model__str *out);
/* A string or null at s->p: 0 (out->s NULL for null), or -1 to give up. */
int model__scan_string_or_null(struct model__scan *s, struct model__str *out);
/* A JSON integer jansson reads as one (no fraction or exponent, at most 18 digits, no
 * leading zero) into *v: 0, or -1 to give up. */
int model__scan_integer(struct model__scan *s, int64_t *v);
/* Skips any value (depth: how deep it lies): 0, or -1 to give up. */
int model__scan_skip(struct model__scan *s, int depth);
/* Object members: 1 with the key in *k and s->p at its value, 0 past the closing brace,
 * -1 to give up. *first starts at 1 just after the opening brace. */
int model__scan_member(struct model__scan *s, int *first, struct model__str *k);
/* Array elements, as model__scan_member. */
int model__scan_element(struct model__scan *s, int *first);
/* Opens an object (or array, open '['): 0, or -1 when s->p is not at one. */
int model__scan_open(struct model__scan *s, char open);
/* A read string copied; non-empty only (NULL for null or "", decode.c's dup_or_null). */
char *model__scan_dup(struct model__str v);
char *model__scan_dup_nonempty(struct model__str v);
/* The read keys of an object, each seen at most once (bit: the key's): -1 for a repeated
 * one, to give up (jansson keeps the last, which a reader would have to track). */
int model__scan_seen(unsigned *mask, unsigned bit);

/* A map of strings (labels, annotations, nodeSelector) into kv, in document order; a value
 * that is not a string, or a key twice, gives up. */
struct model__kvs {
    struct model_kv *kv;
    size_t n, cap;
};
int model__scan_string_map(struct model__scan *s, struct model__kvs *out);
void model__scan_kvs_free(struct model__kvs *m);
/* The value of key in m (borrowed), NULL when absent. */
const char *model__scan_kv_get(const struct model__kvs *m, const char *key);

/* The members of a stored object's top level that a reader reads (each given its reader's
 * state r), NULL to skip one. */
struct model__scan_doc {
    int (*metadata)(struct model__scan *s, void *r);
    int (*spec)(struct model__scan *s, void *r);
    int (*status)(struct model__scan *s, void *r);
};
/* A whole stored object: 0 when the text is one object with a metadata member, each of
 * its members at most once and nothing after it, read by d's readers; -1 to give up. */
int model__scan_document(struct model__scan *s, const struct model__scan_doc *d, void *r);

#endif
