/*
 * cli_support.h - test helpers for the `muster` CLI: run the real binary and
 * start a real musterd on port 0 in a fresh temporary directory.
 *
 * Calling sequence:
 *
 *     struct cli_musterd d;
 *     cli_musterd_start(NULL, &d);           ck_assert-fails when it does not come up
 *     const char *env[] = {d.server_env, NULL};
 *     struct cli_result r;
 *     cli_run(env, "pods.yaml-bytes", (const char *[]){"apply", "-f", "-", NULL}, &r);
 *     ... r.status, r.out, r.err ...
 *     cli_result_release(&r);
 *     cli_musterd_stop(&d);
 *
 * Binaries come from $MUSTER_BIN_DIR; case data from $MUSTER_SOURCE_DIR/tests/data/cli.
 */
#ifndef MUSTER_TEST_CLI_SUPPORT_H
#define MUSTER_TEST_CLI_SUPPORT_H

#include <jansson.h>
#include <sys/types.h>

struct cli_result {
    int status; /* exit code, or 128 + signal */
    char *out;  /* stdout, NUL-terminated */
    char *err;  /* stderr, NUL-terminated */
};

/* Runs $MUSTER_BIN_DIR/muster args... with extra environment entries ("K=V", NULL-ended,
 * may be NULL) and stdin_data (NULL: /dev/null). MUSTER_SERVER, MUSTER_TOKEN, MUSTER_CA,
 * MUSTER_CERT and MUSTER_KEY are cleared unless given in env. Fails the test when the binary cannot
 * run. */
void cli_run(const char *const *env, const char *stdin_data, const char *const *args,
             struct cli_result *out);
void cli_result_release(struct cli_result *r);

struct cli_musterd {
    pid_t pid;
    char dir[256]; /* temporary directory (data dir and port file inside) */
    int port;
    char url[64];         /* "http://127.0.0.1:PORT" */
    char server_env[128]; /* "MUSTER_SERVER=http://127.0.0.1:PORT" */
};

/* Starts musterd with --data-dir, --listen 127.0.0.1:0, --port-file and, when token is not
 * NULL, --token. Waits for the port file (10 s at most). Fails the test otherwise. */
void cli_musterd_start(const char *token, struct cli_musterd *d);
/* Stops the musterd process (SIGTERM, then SIGKILL after 5 s), keeping its data. */
void cli_musterd_halt(struct cli_musterd *d);
/* Starts musterd again, without a token, on the same data (halting it first if running). */
void cli_musterd_resume(struct cli_musterd *d);
/* With musterd stopped: overwrites every occurrence of the bytes `from` in the LMDB data
 * file with `to` (same length), as a disk fault would. Returns the number replaced. */
int cli_musterd_tamper(struct cli_musterd *d, const char *from, const char *to);
/* SIGTERM, wait, remove the directory. */
void cli_musterd_stop(struct cli_musterd *d);

/* A checked fixture of one musterd a test (tcase_add_checked_fixture(tc, cli_fixture_setup,
 * cli_fixture_teardown)): setup starts it into *d and points env (2 entries) at it, as
 * {d->server_env, NULL}; teardown stops it. cli_fixture_use names d and env, in main()
 * before the tests are forked. */
void cli_fixture_use(struct cli_musterd *d, const char **env);
void cli_fixture_setup(void);
void cli_fixture_teardown(void);
/* cli_run, failing the test unless muster exits 0 (its arguments, exit code, stdout and
 * stderr in the message). The caller releases r. */
void cli_run_ok(const char *const *env, const char *stdin_data, const char *const *args,
                struct cli_result *r);

/* An argument list for cli_run: CLI_ARGS("get", "pods") */
#define CLI_ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* cli_run_ok's output parsed as JSON (new); fails the test when it is not JSON. */
json_t *cli_run_json(const char *const *env, const char *const *args);
/* Line i (0-based) of s as a new string of its whitespace-separated words joined by one
 * space. */
char *cli_line_words(const char *s, int i);
/* The lines of s (its newlines). */
int cli_count_lines(const char *s);
/* 1 when some line of out starts with prefix (words separated by single spaces). */
int cli_has_line(const char *out, const char *prefix);
/* Fails unless line i of out starts with prefix (words separated by single spaces). */
void cli_expect_line(const char *out, int i, const char *prefix);

struct musterd;
/* Starts m without the cycle timer (cycle_interval 0, sync none), so `muster cycle` alone
 * decides which cycle a document comes from; env (2 entries) becomes {"MUSTER_SERVER=...",
 * NULL}, the string kept in env_buf (n bytes). */
void cli_musterd_untimed(struct musterd *m, char *env_buf, size_t n, const char **env);

/* A TCP port on 127.0.0.1 where nothing listens (bound, then closed). */
int cli_free_port(void);

/* Reads $MUSTER_SOURCE_DIR/tests/data/cli/<rel> into a new string; fails the test if absent. */
char *cli_data(const char *rel);
/* The absolute path of tests/data/cli/<rel>. New string. */
char *cli_data_path(const char *rel);

#endif
