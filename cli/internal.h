/*
 * internal.h - shared state of the `muster` commands (folder-internal).
 *
 * cli.c parses the whole command line once (flags may come anywhere, kubectl
 * style), picks the command, checks that every flag given is one the command
 * accepts, and calls its function. Commands return an exit code; they print
 * failures through cli__fail so every error looks the same:
 * "error: <message>" on stderr, then each validation error the server listed.
 */
#ifndef MUSTER_CLI_INTERNAL_H
#define MUSTER_CLI_INTERNAL_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "err.h"
#include "model.h"

struct client;

enum cli_output { CLI_OUT_TABLE, CLI_OUT_JSON, CLI_OUT_YAML };

#define CLI_MAX_POS 64
#define CLI_MAX_FLAGS 24

struct cli {
    const char *server;  /* --server, $MUSTER_SERVER, http://127.0.0.1:8080 */
    const char *token;   /* --token, $MUSTER_TOKEN, NULL */
    const char *ca;      /* --ca, $MUSTER_CA: verifies https:// servers; NULL: system CAs */
    const char *cert;    /* --cert, $MUSTER_CERT: client certificate (mTLS) or NULL */
    const char *key;     /* --key, $MUSTER_KEY: its key; NULL: in the cert file */
    const char *command; /* the first positional (the command's name, or what was typed) */
    enum cli_output output;
    int names; /* -o name: kind/name lines (get, apply, delete); output is CLI_OUT_TABLE */
    int wide;  /* -o wide: the table with more columns (get); output is CLI_OUT_TABLE */
    int csv;   /* -o csv: comma-separated values with a header (report jobs) */
    const char *pos[CLI_MAX_POS]; /* positionals after the command name */
    size_t npos;
    const char *flag_name[CLI_MAX_FLAGS]; /* long names of the flags given */
    const char *flag_val[CLI_MAX_FLAGS];  /* their values ("" for switches) */
    size_t nflags;
    struct client *client; /* opened on first use */
    json_t *errors;        /* validation errors of the last failed call, or NULL */
    int64_t now_ms;
};

/* The value of a flag given on the command line (long name), NULL when absent; "" for a
 * switch that is present. Borrowed from argv. */
const char *cli__flag(struct cli *cli, const char *name);
/* Every value of a repeatable flag, in command-line order, into vals (at most max); returns
 * how many. Borrowed from argv. */
size_t cli__flag_all(struct cli *cli, const char *name, const char **vals, size_t max);
/* Parses a flag as a non-negative integer; ERR_INVALID naming the flag. *out untouched when
 * the flag is absent. */
int cli__flag_u64(struct cli *cli, const char *name, uint64_t *out, struct err *err);
/* Prints "error: <msg>" for a usage problem and "run 'muster help <command>' for usage" on
 * stderr; returns CLI_EXIT_USAGE. */
int cli__usage_error(const struct cli *cli, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Prints err (and cli->errors) to stderr; returns CLI_EXIT_FAIL. */
int cli__fail(struct cli *cli, const struct err *err);

/* at.c: 1 when --at or --seq was given; appends them to *url as ?at= / ?seq=; prints
 * nodes, pods or jobs (res) as the cluster was (GET /api/v1/state), filtered by ns (NULL:
 * all) and name (NULL: all). Returns the exit status. */
int cli__at_given(struct cli *cli);
/* 0, or the usage error (exit 2) for --at and --seq both, --at not RFC 3339, --seq not a
 * number: checked before anything is sent. */
int cli__at_check(struct cli *cli);
void cli__at_query(struct cli *cli, char **url);
int cli__get_at(struct cli *cli, const char *res, const char *ns, const char *name);

/* Sends a request to musterd. A 2xx JSON body is parsed into *out (new, may be NULL when
 * out is NULL or the body is empty). An error status becomes an ERR_* with the server's
 * message in err; the server's "errors" array is kept in cli->errors. */
int cli__call(struct cli *cli, const char *method, const char *path, const char *body, size_t len,
              const char *ctype, json_t **out, struct err *err);
/* Streams a GET's 2xx body to out. Errors as cli__call. */
int cli__stream(struct cli *cli, const char *path, FILE *out, struct err *err);
/* Appends "&key=<escaped value>" (or "?key=...") to *url (realloc'd) when value != NULL. */
void cli__query(char **url, const char *key, const char *value);

/* Prints a document as JSON (indented) or YAML, per cli->output. */
void cli__print_doc(struct cli *cli, json_t *doc);
/* GETs path for a command that prints a table: returns 1 with *doc (new) when the caller
 * should print its table, or 0 when the command is done: the error was reported or, with
 * -o json|yaml, the document printed (*rc is the exit status either way). */
int cli__get_for_table(struct cli *cli, const char *path, json_t **doc, int *rc);
/* The items of a list response: the value itself when an array, else "items", else the
 * first array member of an object. Borrowed. */
json_t *cli__items(json_t *doc);
/* Age column for an object with metadata.creationTimestamp (or a top-level
 * creationTimestamp); "<unknown>" when absent. */
void cli__age(struct cli *cli, json_t *obj, char *buf, size_t n);
/* A table cell of JSON integer v (borrowed; 0 when v is not an integer) in decimal into buf
 * of n bytes. */
void cli__int(char *buf, size_t n, json_t *v);
/* Splits "ns/name" (or "name" with default_ns) into new strings. ERR_INVALID when empty. */
int cli__split_id(const char *id, const char *default_ns, char **ns, char **name, struct err *err);

/* Keeps the items (a borrowed array, may be NULL to only check the syntax) whose
 * metadata.labels match a kubectl equality-based selector ("app=web,tier!=db,gpu,!spot");
 * the API has no selector, so this is done client side (select.c). ERR_INVALID naming a
 * requirement that does not parse; items untouched then. */
int cli__select(json_t *items, const char *selector, struct err *err);
/* The same for a kubectl field selector ("status.phase=Running,spec.nodeName!=n1": dotted
 * paths of the items as the API answers them, = / == / !=; an absent field reads as ""). */
int cli__field_select(json_t *items, const char *selector, struct err *err);

/* ---- -f for apply and delete (manifests.c) ---- */

/* Reads a whole file ("-" is stdin) into a new NUL-terminated buffer. ERR_IO naming it. */
int cli__read_all(const char *path, char **out, size_t *len, struct err *err);
/* The Content-Type of a manifest: by extension, else JSON when the first non-space byte is
 * '{' or '[', else YAML. Static storage. */
const char *cli__content_type(const char *path, const char *buf, size_t len);
/* Every -f given, in order, a directory expanded to its *.yaml, *.yml and *.json files in
 * name order (not recursed). *paths new (cli__paths_free), possibly empty. ERR_IO when a
 * directory cannot be listed. */
int cli__manifest_paths(struct cli *cli, char ***paths, size_t *n, struct err *err);
void cli__paths_free(char **paths, size_t n);
/* Reads and parses every file before returning any document: *docs (new array) holds each
 * document as parsed, in order. A file that cannot be read or parsed is an error naming it
 * ("'b.yaml': document 1: ... at line L col C"), and *docs is NULL. With mode (not NULL)
 * every document is also validated in that mode: the problems go to cli->errors, each
 * message prefixed by its file, and the result is ERR_INVALID. No documents at all is
 * ERR_INVALID too. */
int cli__load_manifests(struct cli *cli, char **paths, size_t n, const enum model_fields *mode,
                        json_t **docs, struct err *err);

/* Commands. Each returns an exit code. */
int cli__cmd_apply(struct cli *cli);
int cli__cmd_report(struct cli *cli);
int cli__cmd_get(struct cli *cli);
int cli__cmd_delete(struct cli *cli);
int cli__cmd_describe(struct cli *cli);
int cli__cmd_why(struct cli *cli);
int cli__cmd_audit(struct cli *cli);
int cli__cmd_cycle(struct cli *cli);
int cli__cmd_whatif(struct cli *cli);
int cli__cmd_simulate(struct cli *cli);
/* `muster replay` (replay.c, docs/replay.md). */
int cli__cmd_replay(struct cli *cli);
/* Reads, parses and validates (strict fields) a manifest file ("-": stdin) into m; every
 * problem goes to cli->errors (simulate.c). Returns 0, ERR_INVALID or ERR_IO. */
int cli__load_manifest(struct cli *cli, const char *path, struct model_manifest *m,
                       struct err *err);
int cli__cmd_preemptions(struct cli *cli);
/* `muster get reservations` (reservations.c). */
int cli__get_reservations(struct cli *cli);
int cli__cmd_topology(struct cli *cli);
int cli__cmd_explain(struct cli *cli);
/* postmortem.c: `muster postmortem` (-o names the bundle's directory) and `muster audit
 * verify --bundle DIR`. */
int cli__cmd_postmortem(struct cli *cli);
int cli__bundle_verify(struct cli *cli);
/* postmortem_chart.c: timeline (the bundle's entries, borrowed) as a PNG at path. 0 or
 * ERR_IO. */
int cli__postmortem_chart(json_t *timeline, const char *title, const char *path, struct err *err);

/* `muster describe node NAME` (describe_node.c). */
int cli__cmd_describe_node(struct cli *cli, const char *name);
/* `muster describe queue NAME` (queues.c). */
int cli__cmd_describe_queue(struct cli *cli, const char *name);
/* Prints queue documents (borrowed array) as the `get queues` table (queues.c). */
void cli__print_queues(json_t *queues);

/* Prints a why document readably (used by why and describe). */
void cli__print_why(struct cli *cli, json_t *why, FILE *out);

#endif
