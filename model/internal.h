/*
 * internal.h - the manifest side of model/ (prefix model__): YAML and JSON readers, the
 * scalar rules they share with the YAML emitter, and the document list they fill.
 * Validation helpers are in validate.h, decoding helpers in decode.h.
 *
 * Scalar resolution is shared by the manifest decoder (which turns plain YAML
 * scalars into typed JSON values) and the YAML emitter (which must quote any
 * string that would re-parse as something else), so both agree by construction.
 */
#ifndef MUSTER_MODEL_INTERNAL_H
#define MUSTER_MODEL_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "model_manifest.h"

/* Resolves a plain (unquoted) YAML scalar per the YAML 1.1 rules Kubernetes users
 * expect: null (~, null, empty), booleans (true/false/yes/no/on/off in lower, Title or
 * UPPER case), integers (decimal, 0x hex, 0o and 1.1-style 0 octal, +/- sign) and
 * reals (1.5, 1e3, .5). Anything else, including .inf and .nan, stays a string.
 * Returns a new value. */
json_t *model__scalar_resolve(const char *s, size_t len);

/* Shortest decimal text that reads back as the same double, always containing
 * '.', 'e' or being inf/nan, so it re-parses as a real. */
void model__real_format(double v, char *buf, size_t n);

/* manifest_yaml.c: parses the YAML stream in buf into docs (appended to out); see
 * model_manifest_parse. Returns 0 or ERR_INVALID with "document N: ... at line L col C". */
int model__yaml_parse(const char *buf, size_t len, int want_pos, struct model_manifest *out,
                      struct err *err);
/* The bytes alias expansion may add to a stream of len bytes (docs/security.md "YAML
 * aliases"); anchors do not cross documents, so a stream's documents spend it between
 * them. */
size_t model__yaml_budget(size_t len);
/* model__yaml_parse with budget bytes for alias expansion instead of the stream's own. */
int model__yaml_read(const char *buf, size_t len, size_t budget, int want_pos,
                     struct model_manifest *out, struct err *err);
/* manifest_yaml_split.c: a YAML stream read as two streams on two threads, cut at a
 * document marker past its middle, the second part's documents numbered on: 0 with the
 * documents appended to out (empty) as model__yaml_parse appends them, or -1 with out
 * untouched when the stream is in UTF-16, has no marker past its middle, or a part does
 * not read (then the whole read decides, errors and all). For streams of
 * MODEL_YAML_SPLIT_BYTES or more: with musterd's allocator (jemalloc), two threads read
 * 100 KB in 4.8-5.0 ms instead of 5.0-7.8 and 300 KB in 12 instead of 14.5; at 30 KB
 * either way is about 2 ms. */
#define MODEL_YAML_SPLIT_BYTES ((size_t)64 << 10)
int model__yaml_read_split(const char *buf, size_t len, struct model_manifest *out);
/* manifest_yaml_split.c: a YAML stream as model__yaml_parse reads it, on two threads when it
 * is MODEL_YAML_SPLIT_BYTES or more and positions are not wanted (model__yaml_read_split),
 * as JSON's and NDJSON's readers decide for theirs. */
int model__yaml_stream_parse(const char *buf, size_t len, int want_pos, struct model_manifest *out,
                             struct err *err);

/* manifest_json.c: JSON (one value: an object, an array of objects or a kind: List) and
 * NDJSON (one object a line) into docs appended to out; see model_manifest_parse for the
 * errors. */
int model__json_parse(const char *buf, size_t len, struct model_manifest *out, struct err *err);
/* A JSON array, or an object whose first "items" member is one (a List), read as
 * model_json_read(buf, len, 1) reads it, its items in two parts on two threads; NULL when
 * it is neither, no cut near the middle was found or no thread could be made (*tried 0:
 * read it whole), or when a part does not read (*tried 1: the whole read would not either,
 * since a part is read as the whole read reads it there). */
json_t *model__json_read_split(const char *buf, size_t len, int *tried);
/* json_read.c: the elements of an array, from s (just after its '[', or just after a ','
 * that ends an element) to end, appended to a as model_json_read(..., reject_dups) reads
 * them at nesting depth depth (an element of a top-level array is at 1). Stops at the ','
 * at stop when it ends an element (1, *at = stop; stop may be NULL) or at the array's ']'
 * (0, *at = that ']'); an empty array is not read. -1 when the bytes are not such
 * elements or the reader gives up (a has what was read before). */
int model__json_read_elements(const char *s, const char *end, const char *stop, int depth,
                              int reject_dups, json_t *a, const char **at);
/* NDJSON, a body of 256 KiB or more in two parts on two threads, cut after a line past its
 * middle (the parts read as the whole does; when one does not, the whole read decides). */
int model__ndjson_parse(const char *buf, size_t len, struct model_manifest *out, struct err *err);
/* One JSON object a line, numbered from first_line; blank lines are skipped. Each
 * document's position map holds its line for the whole document (""), so every problem
 * found in it names that line. */
int model__ndjson_read(const char *buf, size_t len, int first_line, struct model_manifest *out,
                       struct err *err);

/* manifest_docs.c: appends d to out's documents as it is (its index too). */
void model__manifest_push(struct model_manifest *out, struct model_doc d);
/* A part of a stream read as a stream of its own: its bytes, and what its reader needs of
 * the whole (the alias budget it may spend, the number of its first line). */
struct model__part {
    const char *buf;
    size_t len;
    size_t budget;
    int first_line;
};
typedef int (*model__part_reader)(const struct model__part *p, struct model_manifest *out,
                                  struct err *err);
/* manifest_docs.c: the two parts of a stream read by read on two threads: 0 with the first
 * part's documents, then the second's numbered on, appended to out (empty); -1 with out
 * untouched when a part does not read (the caller then reads the whole stream, which
 * words the error). */
int model__read_parts(model__part_reader read, const struct model__part part[2],
                      struct model_manifest *out);
/* manifest_docs.c: appends a decoded top-level value to out: objects as one document, arrays and
 * kind: List as their items (positions re-keyed). Takes ownership of obj and pos. */
void model__manifest_add(struct model_manifest *out, json_t *obj, json_t *pos);

/* Records [line, col] under path in pos (NULL: positions are not being recorded). */
void model__pos_set(json_t *pos, const char *path, int line, int col);

#endif
