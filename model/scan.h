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

/* A read string copied; non-empty only (NULL for null or "", decode.c's dup_or_null). */
char *model__scan_dup(struct model__str v);
char *model__scan_dup_nonempty(struct model__str v);

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

/* How a reader reads one member of an object (model__scan_object): into its state at off,
 * as one of these. */
enum model__scan_as {
    MODEL__AS_STRING, /* a string or null: struct model__str */
    MODEL__AS_MAP,    /* a map of strings: struct model__kvs */
    MODEL__AS_INT,    /* an integer (model__scan_integer): int64_t */
    MODEL__AS_BOOL,   /* true, false or null: int, 1 for true */
    MODEL__AS_FN,     /* by fn(s, state), which returns 0 or -1 to give up */
    MODEL__AS_REFUSE, /* there at all: give up (decoded by a rule the reader does not repeat) */
};
struct model__scan_field {
    const char *key;
    size_t n;
    enum model__scan_as as;
    size_t off;
    int (*fn)(struct model__scan *s, void *state);
};
#define MODEL__FIELD(key, as, off)                                                                 \
    {                                                                                              \
        key, sizeof(key) - 1, as, off, NULL                                                        \
    }
#define MODEL__FIELD_FN(key, fn)                                                                   \
    {                                                                                              \
        key, sizeof(key) - 1, MODEL__AS_FN, 0, fn                                                  \
    }
#define MODEL__FIELD_REFUSE(key)                                                                   \
    {                                                                                              \
        key, sizeof(key) - 1, MODEL__AS_REFUSE, 0, NULL                                            \
    }

/* The object at s->p: each member named in fields (at most 31, ended by {NULL}) read into
 * state as its field says, every other member skipped. Returns the fields read (bit i for
 * fields[i]), or -1 to give up: a field's reader did, a field came twice (jansson keeps the
 * last, which a reader would have to track), anything the scanner refuses. */
int model__scan_object(struct model__scan *s, const struct model__scan_field *fields, void *state);
/* The array at s->p, each element read by fn(s, state): 0, or -1 to give up. */
int model__scan_array(struct model__scan *s, int (*fn)(struct model__scan *s, void *state),
                      void *state);
/* A whole stored object by its top-level fields: 0 when the text is one object, its first
 * field (metadata) among those read, nothing after it; -1 to give up. */
int model__scan_document(struct model__scan *s, const struct model__scan_field *fields,
                         void *state);

#endif
