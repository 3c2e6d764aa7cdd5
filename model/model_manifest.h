/*
 * model_manifest.h - manifests: bytes (YAML, JSON, NDJSON) into documents, documents
 * validated with precise errors, and documents written back as YAML.
 *
 * Calling sequence (applying a manifest):
 *
 *     struct model_manifest m;
 *     json_t *errors = json_array();
 *     if (model_manifest_parse(body, len, MODEL_FMT_AUTO, &m, &err) < 0) -> 400 err.msg
 *     model_validate_all(&m, body, len, mode, errors, warnings)   (appends every problem)
 *     if (json_array_size(errors)) -> 400, nothing written
 *     model_manifest_free(&m);
 *
 * The manifest owns its documents (and their positions); validation normalizes them in
 * place. yaml.h is included only by the decoder (manifest_yaml.c) and the emitter (yamlout.c).
 */
#ifndef MUSTER_MODEL_MANIFEST_H
#define MUSTER_MODEL_MANIFEST_H

#include <jansson.h>
#include <stddef.h>

#include "model_kind.h"

struct err;

/* NDJSON: one JSON object a line (blank lines skipped); never sniffed by AUTO. */
enum model_format { MODEL_FMT_AUTO, MODEL_FMT_YAML, MODEL_FMT_JSON, MODEL_FMT_NDJSON };

struct model_doc {
    int index;   /* 1-based position among the decoded documents (empty documents are
                    not counted; each item of a List or top-level array counts one) */
    json_t *obj; /* owned: the document */
    json_t *pos; /* owned: object mapping field path ("spec.containers[0].name") to
                    [line, col] (1-based) where known; NULL when positions were not
                    recorded (JSON input, or the fast path of model_manifest_parse) */
    int kinded;  /* validation resolved its kind and apiVersion: kind */
    enum model_kind kind;
};

/* The kind of document d: the one validation found, or resolved from its kind and
 * apiVersion (model_kind_from_doc). Returns 0, or ERR_INVALID naming what is unknown. */
int model_doc_kind(const struct model_doc *d, enum model_kind *kind, struct err *err);
/* 1 when document d is of kind k (model_doc_kind). */
int model_doc_is(const struct model_doc *d, enum model_kind k);

struct model_manifest {
    struct model_doc *docs;
    size_t n;
    int validated;      /* set by model_validate_all when it found no problem: sched_apply does
                           not validate the documents again */
    int fields_checked; /* set by model_validate_all only (not by the mirror, which sets
                           validated): every field was checked against the schema, so no
                           document holds an unsupported one */
};

/* Parses a YAML stream (documents separated by ---) or JSON (one object, an array of
 * objects, or a kind: List). AUTO sniffs the first non-space byte. Empty documents are
 * skipped. A kind: List is flattened into its items. On a syntax error returns ERR_INVALID
 * with "document N: <problem> at line L col C" and out is left empty. NDJSON: a syntax
 * error or a line that is not an object is "line L: <problem>"; each document's pos maps
 * "" to [its line, 1], so every problem found in it names its line. Field positions are
 * not recorded (doc.pos is NULL): see model_validate_all. */
int model_manifest_parse(const char *buf, size_t len, enum model_format fmt,
                         struct model_manifest *out, struct err *err);
void model_manifest_free(struct model_manifest *m);

/* Like model_manifest_parse, and records every field's position (slower: a map entry per
 * field). model_validate_all calls it only when it has errors to place. */
int model_manifest_parse_positions(const char *buf, size_t len, enum model_format fmt,
                                   struct model_manifest *out, struct err *err);

/* How fields outside the schema are treated (kube-apiserver's fieldValidation):
 *   STRICT  an unknown field is a problem (the default)
 *   WARN    an unknown field is dropped and reported in warnings
 *   IGNORE  an unknown field is dropped silently
 * Unknown fields are never stored. In every mode a field muster does not support (one
 * kube-scheduler's placement depends on: a hostPort, a PersistentVolumeClaim volume, ...)
 * is a problem: "<field>: not supported by muster (<what it would change>)". The field
 * schema and its classes are listed in docs/pod-spec.md. */
enum model_fields { MODEL_FIELDS_STRICT, MODEL_FIELDS_WARN, MODEL_FIELDS_IGNORE };
/* "Strict", "Warn" or "Ignore", any case. Returns 0 or ERR_INVALID (field
 * "fieldValidation"). */
int model_fields_parse(const char *s, enum model_fields *out, struct err *err);
/* "Strict", "Warn", "Ignore". Static storage. */
const char *model_fields_name(enum model_fields mode);

/* Validates every document (model_validate_fields) and appends every problem to errors and,
 * in WARN mode, every dropped unknown field to warnings (may be NULL; same shape as the
 * problems). When there are problems and src (the bytes m was parsed from, or NULL) is
 * YAML whose positions were not recorded, parses it again with positions and validates
 * again, so the messages name the line and column; valid manifests never pay for
 * positions. Returns the number of problems. */
int model_validate_all(struct model_manifest *m, const char *src, size_t len,
                       enum model_fields mode, json_t *errors, json_t *warnings);

/* model_validate, and then the document's fields against the schema of its kind (mode
 * as above; warnings may be NULL). What objects sent to muster go through; mirrored
 * objects, which cannot be refused, go through model_validate alone. */
int model_validate_fields(struct model_doc *doc, enum model_fields mode, json_t *errors,
                          json_t *warnings);

/* The path of the first field of obj that muster does not support ("spec.volumes[0].
 * persistentVolumeClaim"; new), NULL when there is none (unknown fields are not looked
 * at). *why (static storage, when why is not NULL) says what the field would change.
 * Allocates nothing when there is none. */
char *model_unsupported_field(enum model_kind kind, json_t *obj, const char **why);

/* The field schema as Markdown: per kind, the honoured fields, the known fields beside them
 * and every unsupported field with what it would change (docs/pod-spec.md). New. */
char *model_fields_doc(void);

/* A kind or one of its fields from the schema (`muster explain`): what is "Pod",
 * "pod.spec.containers" (kinds as model_kind_from_resource takes them, field names as
 * written). *out (new): {"kind", "path" ("" for the kind), "type" ("PodSpec",
 * "[]Container", "scalar", "map[string]scalar", ...), "class" (honoured, known or
 * unsupported; absent for a kind), "why" (an unsupported field's), "fields": [{"name",
 * "type", "class", "why"?}] (empty below a scalar, list or map)}. ERR_INVALID naming the
 * unknown kind, or the field that does not exist and the type it was looked for in. */
int model_explain(const char *what, json_t **out, struct err *err);

/* Validates one document and normalizes it in place (metadata.namespace defaults to
 * "default" for namespaced kinds). Appends one object per problem to errors:
 *   {"document": 3, "kind": "Pod", "name": "default/w-1",
 *    "field": "spec.containers[0].resources.requests.cpu",
 *    "message": "document 3 (Pod default/w-1), spec.containers[0].resources.requests.cpu:
 *                invalid quantity '12x' at line 40 col 18", "line": 40, "col": 18}
 * Returns the number of problems appended (0 when valid). */
int model_validate(struct model_doc *doc, json_t *errors);

/* The deepest nesting muster accepts in a document: more than any Kubernetes object needs,
 * and it bounds the recursion of everything that later walks a stored object (validation,
 * encoding, every GET reply on civetweb's small worker stacks). */
#define MODEL_MAX_DEPTH 64
/* 1 when v holds a value nested deeper than MODEL_MAX_DEPTH; *path (new) is then where
 * ("spec.a.b[3]"), else 0. */
int model_too_deep(json_t *v, char **path);
/* The first document of m nested deeper than MODEL_MAX_DEPTH: 1 with its place in m->docs
 * in *at and model_too_deep's path in *path (new), or 0. A big manifest's two halves are
 * walked on two threads. */
int model_manifest_too_deep(const struct model_manifest *m, size_t *at, char **path);

/* Emits a JSON value as YAML (block style, kubectl-like) into a new string. */
char *model_yaml_dump(json_t *value);

/* JSON read as json_loadb(s, n, flags) reads it, with flags 0 or (reject_dups)
 * JSON_REJECT_DUPLICATES, without jansson's lexer (json_read.c): the same value, member
 * order included, or NULL where the reader gives up (a rarer form, or bytes that are not
 * JSON): then json_loadb answers, errors and all. New. */
json_t *model_json_read(const char *s, size_t n, int reject_dups);
/* json_loadb(s, n, 0, jerr) as it answers, value and errors (*jerr set only on error),
 * read by model_json_read where it can. New, or NULL. */
json_t *model_json_load(const char *s, size_t n, json_error_t *jerr);

#endif
