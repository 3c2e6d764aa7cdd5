/*
 * test_cli.c - the `muster` command and the musterd client, on real binaries.
 *
 * Units (table and age formatting, client error translation) run in-process; every
 * other test runs build/bin/muster as a process, against a real musterd started on
 * port 0 in a fresh temporary directory when the command needs a server.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "cli.h"
#include "cli_support.h"
#include "client.h"
#include "err.h"
#include "model.h"
#include "check_run.h"

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* ---- units ---- */

START_TEST(test_cli_age_format)
{
    static const struct {
        int64_t ms;
        const char *want;
    } cases[] = {
        {0, "0s"},
        {59999, "59s"},
        {60000, "1m"},
        {5 * 60000 + 59000, "5m"},
        {3600000, "1h"},
        {23 * 3600000, "23h"},
        {86400000, "1d"},
        {2 * 86400000 + 5, "2d"},
        {400LL * 86400000, "1y"},
        {-1, "<unknown>"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[32];
        cli_format_age(cases[i].ms, buf, sizeof(buf));
        ck_assert_msg(strcmp(buf, cases[i].want) == 0, "age %lld: got '%s', want '%s'",
                      (long long)cases[i].ms, buf, cases[i].want);
    }
}
END_TEST

START_TEST(test_cli_table_format)
{
    static const char *const cols[] = {"name", "status", "age"};
    struct cli_table *t = cli_table_new(3, cols);
    cli_table_add(t, (const char *const[]){"node-long-name", "Ready", "5m"});
    cli_table_add(t, (const char *const[]){"n2", NULL, "2d"});
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cli_table_print(t, f);
    fclose(f);
    ck_assert_str_eq(buf, "NAME             STATUS   AGE\n"
                          "node-long-name   Ready    5m\n"
                          "n2               <none>   2d\n");
    free(buf);
    cli_table_free(t);
}
END_TEST

START_TEST(test_cli_client_connection_refused)
{
    struct client *c = NULL;
    struct err err = ERR_INIT;
    struct client_response resp = CLIENT_RESPONSE_INIT;
    char url[64], want[160];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", cli_free_port());
    ck_assert_int_eq(client_open(url, NULL, &c, &err), 0);
    ck_assert_int_eq(client_request(c, "GET", "/healthz", NULL, 0, NULL, &resp, &err), ERR_NETWORK);
    snprintf(want, sizeof(want), "cannot reach musterd at '%s': Connection refused", url);
    ck_assert_str_eq(err.msg, want);
    ck_assert_ptr_null(resp.body);
    client_close(c);
}
END_TEST

START_TEST(test_cli_client_error_body)
{
    struct err err = ERR_INIT;
    char body[] = "{\"error\":{\"code\":\"NotFound\",\"message\":\"pod 'default/x' not found\"}}";
    struct client_response resp = {404, body, sizeof(body) - 1};
    ck_assert_int_eq(client_error(&resp, &err), ERR_NOT_FOUND);
    ck_assert_str_eq(err.msg, "pod 'default/x' not found");
    char text[] = "upstream broke";
    struct client_response plain = {502, text, sizeof(text) - 1};
    ck_assert_int_eq(client_error(&plain, &err), ERR_INTERNAL);
    ck_assert_str_eq(err.msg, "HTTP 502: upstream broke");
    char *e = client_escape("a b/c&d");
    ck_assert_str_eq(e, "a%20b%2Fc%26d");
    free(e);
}
END_TEST

/* ---- usage, no server needed ---- */

/* A usage error is two lines on stderr: the problem, then where the usage is (the
 * command's own when the command is known), never the whole help; exit 2. */
static void expect_usage(const char *const *args, const char *needle)
{
    struct cli_result r;
    char hint[96];
    int known = args[0] && strcmp(args[0], "frobnicate") != 0 && strcmp(args[0], "help") != 0;
    snprintf(hint, sizeof(hint), "\nrun 'muster help%s%s' for usage\n", known ? " " : "",
             known ? args[0] : "");
    cli_run(NULL, NULL, args, &r);
    ck_assert_msg(r.status == 2, "'%s': exit %d, want 2", args[0] ? args[0] : "", r.status);
    ck_assert_msg(strncmp(r.err, "error: ", 7) == 0 && strstr(r.err, needle) != NULL,
                  "stderr lacks '%s':\n%s", needle, r.err);
    ck_assert_msg(strstr(r.err, hint) && strlen(strstr(r.err, hint)) == strlen(hint) &&
                      strchr(r.err, '\n') == strstr(r.err, hint),
                  "want the problem and '%s', got:\n%s", hint + 1, r.err);
    ck_assert_msg(strstr(r.err, "usage: muster") == NULL, "the whole help printed:\n%s", r.err);
    ck_assert_str_eq(r.out, "");
    cli_result_release(&r);
}

START_TEST(test_cli_usage_errors)
{
    expect_usage((const char *const[]){NULL}, "error: no command given");
    expect_usage(ARGS("frobnicate"), "error: unknown command 'frobnicate'");
    expect_usage(ARGS("get"), "error: get needs a resource");
    expect_usage(ARGS("get", "widgets"), "error: unknown resource 'widgets'");
    expect_usage(ARGS("get", "pods", "--bogus"), "error: unknown flag '--bogus'");
    expect_usage(ARGS("get", "pods", "-o", "xml"),
                 "error: unknown output format 'xml' (table, json, yaml, name, wide or csv)");
    expect_usage(ARGS("cycle", "-o", "wide"), "error: -o wide is not accepted by 'cycle'");
    expect_usage(ARGS("apply", "-f", "x.yaml", "-o", "wide"),
                 "error: -o wide is not accepted by 'apply'");
    expect_usage(ARGS("delete", "pod"), "error: delete pod needs a name, --all or -l SELECTOR");
    expect_usage(ARGS("help", "frobnicate"), "error: unknown command 'frobnicate'");
    expect_usage(ARGS("get", "pods", "-n"), "error: flag '-n' needs a value");
    expect_usage(ARGS("apply"), "error: apply needs -f");
    expect_usage(ARGS("apply", "-f", "x.yaml", "--cycles", "3"),
                 "error: flag '--cycles' is not accepted by 'apply'");
    expect_usage(ARGS("audit", "export", "--limit", "abc"),
                 "flag '--limit' needs a non-negative integer, got 'abc'");
    expect_usage(ARGS("audit", "rewrite"), "error: unknown audit command 'rewrite'");
    expect_usage(ARGS("describe", "pod", "x"), "error: describe needs 'job NAMESPACE/NAME'");
    expect_usage(ARGS("simulate", "-f", "c.yaml", "--tick", "-1"), "flag '--tick'");
}
END_TEST

START_TEST(test_cli_version_and_help)
{
    struct cli_result r;
    cli_run(NULL, NULL, ARGS("version"), &r);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "muster " MUSTER_VERSION "\n");
    cli_result_release(&r);
    cli_run(NULL, NULL, ARGS("help"), &r);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "simulate -f cluster.yaml"));
    cli_result_release(&r);
    /* one command's usage: its lines, no other command's */
    cli_run(NULL, NULL, ARGS("help", "delete"), &r);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "  delete -f FILE|DIR|-"));
    ck_assert_ptr_null(strstr(r.out, "simulate -f"));
    cli_result_release(&r);
}
END_TEST

START_TEST(test_cli_server_down)
{
    char env[96], want[160];
    int port = cli_free_port();
    snprintf(env, sizeof(env), "MUSTER_SERVER=http://127.0.0.1:%d", port);
    struct cli_result r;
    cli_run((const char *const[]){env, NULL}, NULL, ARGS("get", "nodes"), &r);
    ck_assert_int_eq(r.status, 1);
    snprintf(want, sizeof(want),
             "error: cannot reach musterd at 'http://127.0.0.1:%d': Connection refused\n", port);
    ck_assert_str_eq(r.err, want);
    ck_assert_str_eq(r.out, "");
    cli_result_release(&r);
    /* --server wins over the environment */
    cli_run(NULL, NULL, ARGS("--server", env + strlen("MUSTER_SERVER="), "cycle"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.err, want);
    cli_result_release(&r);
}
END_TEST

/* ---- simulate: offline, one case per folder in tests/data/cli/simulate ---- */

START_TEST(test_cli_simulate_cases)
{
    char *root = cli_data_path("simulate");
    DIR *d = opendir(root);
    struct dirent *e;
    int cases = 0;
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *cluster = xasprintf("%s/%s/cluster.yaml", root, e->d_name);
        char *rel = xasprintf("simulate/%s/expected.json", e->d_name);
        char *want_s = cli_data(rel);
        json_error_t je;
        json_t *want = json_loads(want_s, 0, &je);
        ck_assert_msg(want != NULL, "%s: %s", rel, je.text);
        /* optional "args": more flags for this case, whitespace-separated */
        char *args_path = xasprintf("%s/%s/args", root, e->d_name);
        char *extra = NULL;
        const char *argv[16] = {"simulate", "-f", cluster};
        size_t argc = 3;
        if (access(args_path, R_OK) == 0) {
            char *rel_args = xasprintf("simulate/%s/args", e->d_name);
            extra = cli_data(rel_args);
            free(rel_args);
            for (char *w = strtok(extra, " \t\n"); w && argc < 15; w = strtok(NULL, " \t\n"))
                argv[argc++] = w;
        }
        argv[argc] = NULL;
        struct cli_result r;
        cli_run(NULL, NULL, argv, &r);
        ck_assert_msg(r.status == 0, "%s: exit %d: %s", e->d_name, r.status, r.err);
        json_t *got = json_loads(r.out, 0, &je);
        ck_assert_msg(got != NULL, "%s: output is not JSON: %s", e->d_name, r.out);
        ck_assert_msg(json_equal(got, want), "%s: got\n%s", e->d_name, r.out);
        json_decref(got);
        json_decref(want);
        cli_result_release(&r);
        free(want_s);
        free(extra);
        free(args_path);
        free(rel);
        free(cluster);
        cases++;
    }
    closedir(d);
    free(root);
    ck_assert_int_ge(cases, 3);
}
END_TEST

/* simulate validates fields as a strict apply does: an unknown field and an unsupported one
 * are errors, never a simulation of something else. */
START_TEST(test_cli_simulate_strict_fields)
{
    const char *yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: typo}\n"
                       "spec:\n  priorty: 1\n  containers:\n  - name: c\n"
                       "    ports: [{containerPort: 80, hostPort: 80}]\n";
    struct cli_result r;
    cli_run(NULL, yaml, ARGS("simulate", "-f", "-"), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "spec.priorty: unknown field (not in PodSpec; did you mean "
                                "'priority'?) at line 5 col 12"),
                  "%s", r.err);
    ck_assert_msg(strstr(r.err, "spec.containers[0].ports[0].hostPort: not supported by muster"),
                  "%s", r.err);
    ck_assert_str_eq(r.out, "");
    cli_result_release(&r);
}
END_TEST

START_TEST(test_cli_simulate_invalid_lists_every_error)
{
    char *path = cli_data_path("invalid/manifest.yaml");
    struct cli_result r;
    cli_run(NULL, NULL, ARGS("simulate", "-f", path), &r);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strncmp(r.err, "error: ", 7) == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "bad-cpu") && strstr(r.err, "12x"), "%s", r.err);
    ck_assert_msg(strstr(r.err, "bad-priority") && strstr(r.err, "spec.priority"), "%s", r.err);
    ck_assert_str_eq(r.out, "");
    cli_result_release(&r);
    free(path);
}
END_TEST

/* Files that do not exist, directories and empty input are errors naming the file, never
 * an empty simulation that exits 0. */
START_TEST(test_cli_bad_input_files)
{
    static const struct {
        const char *args[4];
        const char *needle;
    } cases[] = {
        {{"simulate", "-f", "/nonexistent/c.yaml", NULL},
         "cannot open '/nonexistent/c.yaml': No such file or directory"},
        {{"simulate", "-f", "/tmp", NULL}, "cannot read '/tmp': Is a directory"},
        {{"simulate", "-f", "/dev/null", NULL}, "'/dev/null' holds no documents"},
        {{"simulate", "-f", "-", NULL}, "'-' holds no documents"},
        {{"apply", "-f", "/nonexistent/c.yaml", NULL}, "cannot open '/nonexistent/c.yaml'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cli_result r;
        cli_run(NULL, NULL, cases[i].args, &r); /* stdin is /dev/null */
        ck_assert_msg(r.status == 1, "%s %s: exit %d, want 1", cases[i].args[0], cases[i].args[2],
                      r.status);
        ck_assert_msg(strstr(r.err, cases[i].needle) != NULL, "stderr lacks '%s':\n%s",
                      cases[i].needle, r.err);
        ck_assert_str_eq(r.out, "");
        cli_result_release(&r);
    }
    /* apply reads a directory's manifests: one with none (only folders) is an error */
    struct cli_result r;
    char *dir = cli_data_path("simulate"), want[512];
    cli_run(NULL, NULL, ARGS("apply", "-f", dir), &r);
    ck_assert_int_eq(r.status, 1);
    snprintf(want, sizeof(want), "error: no *.yaml, *.yml or *.json file in '%s'\n", dir);
    ck_assert_str_eq(r.err, want);
    ck_assert_str_eq(r.out, "");
    cli_result_release(&r);
    free(dir);
}
END_TEST

/* Runs bash with the completion script sourced, completing the words of line (the last one,
 * possibly empty, is completed); returns COMPREPLY joined by spaces (new). */
static char *complete_line(const char *script, const char *words)
{
    char *cmd = xasprintf("bash -c 'source %s; COMP_WORDS=(%s); "
                          "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _muster; "
                          "printf %%s \"${COMPREPLY[*]}\"'",
                          script, words);
    FILE *p = popen(cmd, "r");
    char buf[4096];
    size_t n;
    ck_assert_ptr_nonnull(p);
    n = fread(buf, 1, sizeof(buf) - 1, p);
    buf[n] = '\0';
    ck_assert_int_eq(pclose(p), 0);
    free(cmd);
    return xstrdup(buf);
}

/* The script parses (bash -n), completes every command `muster help` lists, the kinds after
 * get, and a command's flags. */
START_TEST(test_cli_completion_bash)
{
    struct cli_result r, help;
    char path[] = "/tmp/muster-completion-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    cli_run(NULL, NULL, ARGS("completion", "bash"), &r);
    ck_assert_int_eq(r.status, 0);
    ck_assert_int_eq(write(fd, r.out, strlen(r.out)), (ssize_t)strlen(r.out));
    close(fd);
    char *check = xasprintf("bash -n %s", path);
    ck_assert_int_eq(system(check), 0);
    free(check);

    char *all = complete_line(path, "muster \"\"");
    cli_run(NULL, NULL, ARGS("help"), &help);
    int ncmds = 0;
    for (char *line = strstr(help.out, "\ncommands:\n"); line && (line = strchr(line, '\n'));) {
        line++;
        char name[32];
        /* a command's first usage line: two spaces, then its name */
        if (line[0] == ' ' && line[1] == ' ' && line[2] != ' ' &&
            sscanf(line + 2, "%31[a-z]", name) == 1) {
            char *padded = xasprintf(" %s ", name), *in = xasprintf(" %s ", all);
            ck_assert_msg(strstr(in, padded), "'%s' is not completed: %s", name, all);
            free(padded);
            free(in);
            ncmds++;
        }
    }
    ck_assert_int_ge(ncmds, 12);
    free(all);
    char *c = complete_line(path, "muster ge");
    ck_assert_str_eq(c, "get");
    free(c);
    c = complete_line(path, "muster -n ux get po");
    ck_assert_str_eq(c, "pods podgroups poddisruptionbudgets");
    free(c);
    c = complete_line(path, "muster delete jobs --al");
    ck_assert_str_eq(c, "--all-namespaces --all");
    free(c);
    c = complete_line(path, "muster get pods -o y");
    ck_assert_str_eq(c, "yaml");
    free(c);
    cli_result_release(&help);
    cli_result_release(&r);
    unlink(path);

    cli_run(NULL, NULL, ARGS("completion", "fish"), &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "error: completion needs a shell: bash or zsh\n"
                            "run 'muster help completion' for usage\n");
    cli_result_release(&r);
}
END_TEST

/* The zsh script is a #compdef file that loads bashcompinit and defines the same _muster
 * (zsh is not on the test machine: the function is checked in bash, the header by text). */
START_TEST(test_cli_completion_zsh)
{
    struct cli_result z, b;
    cli_run(NULL, NULL, ARGS("completion", "zsh"), &z);
    cli_run(NULL, NULL, ARGS("completion", "bash"), &b);
    ck_assert_int_eq(z.status, 0);
    ck_assert_msg(strncmp(z.out, "#compdef muster\n", 16) == 0, "%s", z.out);
    ck_assert_ptr_nonnull(strstr(z.out, "\nautoload -U +X bashcompinit && bashcompinit\n"));
    /* after the headers, the bash script's function and its complete line, unchanged */
    ck_assert_str_eq(strstr(z.out, "\n_muster()\n"), strstr(b.out, "\n_muster()\n"));
    char path[] = "/tmp/muster-completion-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    const char *fn = strstr(z.out, "\n_muster()\n") + 1;
    ck_assert_int_eq(write(fd, fn, strlen(fn)), (ssize_t)strlen(fn));
    close(fd);
    char *c = complete_line(path, "muster completion \"\"");
    ck_assert_str_eq(c, "bash zsh");
    free(c);
    unlink(path);
    cli_result_release(&z);
    cli_result_release(&b);
}
END_TEST

/* explain reads the schema validation uses: a field's type and class, the fields below,
 * any case and short names for the kind, and a usage error naming a field that is not. */
START_TEST(test_cli_explain)
{
    struct cli_result r;
    cli_run(NULL, NULL, ARGS("explain", "PO.spec.containers.resources"), &r);
    ck_assert_int_eq(r.status, 0);
    ck_assert_str_eq(r.out, "KIND:   Pod\n"
                            "FIELD:  spec.containers.resources <ResourceRequirements> (honoured)\n"
                            "\n"
                            "FIELD      TYPE                  MUSTER\n"
                            "claims     <[]ResourceClaim>     unsupported\n"
                            "limits     <map[string]scalar>   honoured\n"
                            "requests   <map[string]scalar>   honoured\n");
    cli_result_release(&r);
    cli_run(NULL, NULL, ARGS("explain", "pod.spec.containers.resources.claims", "-o", "json"), &r);
    ck_assert_int_eq(r.status, 0);
    json_t *doc = json_loads(r.out, 0, NULL);
    ck_assert_str_eq(json_string_value(json_object_get(doc, "class")), "unsupported");
    ck_assert_ptr_nonnull(json_string_value(json_object_get(doc, "why")));
    json_decref(doc);
    cli_result_release(&r);
    cli_run(NULL, NULL, ARGS("explain", "pod.spec.nope"), &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "error: Pod has no field 'spec.nope' (fields of PodSpec)\n"
                            "run 'muster help explain' for usage\n");
    cli_result_release(&r);
    cli_run(NULL, NULL, ARGS("explain", "widget"), &r);
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.err, "error: unknown kind 'widget'\nrun 'muster help explain' for usage\n");
    cli_result_release(&r);
}
END_TEST

static Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("offline");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_cli_age_format);
    tcase_add_test(tc, test_cli_table_format);
    tcase_add_test(tc, test_cli_client_connection_refused);
    tcase_add_test(tc, test_cli_client_error_body);
    tcase_add_test(tc, test_cli_usage_errors);
    tcase_add_test(tc, test_cli_version_and_help);
    tcase_add_test(tc, test_cli_server_down);
    tcase_add_test(tc, test_cli_simulate_cases);
    tcase_add_test(tc, test_cli_simulate_invalid_lists_every_error);
    tcase_add_test(tc, test_cli_simulate_strict_fields);
    tcase_add_test(tc, test_cli_bad_input_files);
    tcase_add_test(tc, test_cli_completion_bash);
    tcase_add_test(tc, test_cli_completion_zsh);
    tcase_add_test(tc, test_cli_explain);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(cli_suite());
}
