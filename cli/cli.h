/*
 * cli.h - the `muster` command: a kubectl-like client for musterd, plus the
 * offline `muster simulate`.
 *
 * main() only calls cli_main(); everything else lives in this library so the
 * tests can link the formatting helpers. Commands talk to musterd through
 * clients/client.h; `simulate` opens its own temporary store and scheduler and
 * uses exactly the sched_* calls musterd uses.
 *
 * Exit codes: 0 success, 1 failure (server error, invalid manifest, broken audit
 * chain, server down), 2 bad usage (the problem and "run 'muster help <command>' for
 * usage" on stderr).
 */
#ifndef MUSTER_CLI_H
#define MUSTER_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

/* Runs the command line; output goes to stdout, errors to stderr. Returns the exit code. */
int cli_main(int argc, char **argv);

/* Formats an age the way kubectl's AGE column does: "45s", "5m", "3h", "2d", "3y"
 * ("<unknown>" for a negative duration). */
void cli_format_age(int64_t age_ms, char *buf, size_t n);

/* ---- tables: uppercase headers, columns padded and separated by 3 spaces ---- */

struct cli_table;

/* New table with ncols columns named by headers (copied). */
struct cli_table *cli_table_new(size_t ncols, const char *const *headers);
/* Appends a row of ncols cells (copied; NULL prints as "<none>"). */
void cli_table_add(struct cli_table *t, const char *const *cells);
/* Prints the table (header first; the last column is not padded). */
void cli_table_print(struct cli_table *t, FILE *out);
/* NULL-safe. */
void cli_table_free(struct cli_table *t);

#endif
