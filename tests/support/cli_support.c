/*
 * cli_support.c - run `muster` and musterd as real processes for the CLI tests.
 */
#include "cli_support.h"

#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alloc.h"
#include "http_client.h"

static const char *bin_dir(void)
{
    const char *d = getenv("MUSTER_BIN_DIR");
    ck_assert_msg(d && *d, "MUSTER_BIN_DIR is not set");
    return d;
}

static char *slurp_fd(int fd)
{
    char *buf = NULL;
    size_t len = 0, cap = 0;
    lseek(fd, 0, SEEK_SET);
    for (;;) {
        XGROW(buf, len + 4096 + 1, cap);
        ssize_t n = read(fd, buf + len, 4096);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    return buf;
}

static int temp_fd(const char *content)
{
    char path[] = "/tmp/muster-cli-io-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    unlink(path);
    if (content) {
        size_t n = strlen(content);
        ck_assert_int_eq(write(fd, content, n), (ssize_t)n);
        lseek(fd, 0, SEEK_SET);
    }
    return fd;
}

void cli_run(const char *const *env, const char *stdin_data, const char *const *args,
             struct cli_result *out)
{
    char *bin = xasprintf("%s/muster", bin_dir());
    ck_assert_msg(access(bin, X_OK) == 0, "'%s' is not executable", bin);
    int in = stdin_data ? temp_fd(stdin_data) : open("/dev/null", O_RDONLY);
    int o = temp_fd(NULL), e = temp_fd(NULL);
    size_t n = 0;
    while (args[n])
        n++;
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const char **argv = xcalloc(n + 2, sizeof(*argv));
        argv[0] = "muster";
        memcpy(argv + 1, args, n * sizeof(*argv));
        unsetenv("MUSTER_SERVER");
        unsetenv("MUSTER_TOKEN");
        unsetenv("MUSTER_CA");
        unsetenv("MUSTER_CERT");
        unsetenv("MUSTER_KEY");
        for (size_t i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        dup2(in, 0);
        dup2(o, 1);
        dup2(e, 2);
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    int st = 0;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    out->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    out->out = slurp_fd(o);
    out->err = slurp_fd(e);
    close(in);
    close(o);
    close(e);
    free(bin);
}

void cli_result_release(struct cli_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

int cli_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    socklen_t len = sizeof(a);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Starts musterd on d->dir (which exists), after removing a stale port file. */
static void start_in(const char *token, struct cli_musterd *d)
{
    char *bin = xasprintf("%s/musterd", bin_dir());
    char *data = xasprintf("%s/data", d->dir);
    char *port = xasprintf("%s/port", d->dir);
    char *log = xasprintf("%s/musterd.log", d->dir);
    ck_assert_msg(access(bin, X_OK) == 0, "'%s' is not executable", bin);
    unlink(port);
    d->port = 0;
    d->pid = fork();
    ck_assert_int_ge(d->pid, 0);
    if (d->pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (token)
            execl(bin, "musterd", "--data-dir", data, "--listen", "127.0.0.1:0", "--port-file",
                  port, "--token", token, (char *)NULL);
        else
            execl(bin, "musterd", "--data-dir", data, "--listen", "127.0.0.1:0", "--port-file",
                  port, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200 && d->port <= 0; i++) {
        FILE *f = fopen(port, "r");
        if (f) {
            if (fscanf(f, "%d", &d->port) != 1)
                d->port = 0;
            fclose(f);
        }
        if (d->port <= 0) {
            int st;
            ck_assert_msg(waitpid(d->pid, &st, WNOHANG) == 0, "musterd exited early, see %s", log);
            sleep_ms(50);
        }
    }
    ck_assert_msg(d->port > 0, "musterd did not write its port file");
    snprintf(d->url, sizeof(d->url), "http://127.0.0.1:%d", d->port);
    snprintf(d->server_env, sizeof(d->server_env), "MUSTER_SERVER=%s", d->url);
    free(bin);
    free(data);
    free(port);
    free(log);
}

void cli_musterd_start(const char *token, struct cli_musterd *d)
{
    memset(d, 0, sizeof(*d));
    snprintf(d->dir, sizeof(d->dir), "/tmp/muster-cli-test-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(d->dir));
    start_in(token, d);
}

void cli_musterd_halt(struct cli_musterd *d)
{
    if (d->pid > 0) {
        kill(d->pid, SIGTERM);
        int st;
        for (int i = 0; i < 200 && waitpid(d->pid, &st, WNOHANG) == 0; i++)
            sleep_ms(25);
        if (waitpid(d->pid, &st, WNOHANG) == 0) {
            kill(d->pid, SIGKILL);
            waitpid(d->pid, &st, 0);
        }
        d->pid = 0;
    }
}

void cli_musterd_resume(struct cli_musterd *d)
{
    cli_musterd_halt(d);
    start_in(NULL, d);
}

void cli_musterd_stop(struct cli_musterd *d)
{
    cli_musterd_halt(d);
    if (d->dir[0]) {
        char *cmd = xasprintf("rm -rf '%s'", d->dir);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", d->dir);
        free(cmd);
        d->dir[0] = '\0';
    }
}

/* Where cli_fixture_setup starts its musterd: set in the parent before the tests are forked,
 * read in each child. */
static struct cli_musterd *fixture_d;
static const char **fixture_env;

void cli_fixture_use(struct cli_musterd *d, const char **env)
{
    fixture_d = d;
    fixture_env = env;
}

void cli_fixture_setup(void)
{
    cli_musterd_start(NULL, fixture_d);
    fixture_env[0] = fixture_d->server_env;
    fixture_env[1] = NULL;
}

void cli_fixture_teardown(void)
{
    cli_musterd_stop(fixture_d);
}

void cli_run_ok(const char *const *env, const char *stdin_data, const char *const *args,
                struct cli_result *r)
{
    cli_run(env, stdin_data, args, r);
    ck_assert_msg(r->status == 0, "muster %s %s: exit %d\nstdout:\n%s\nstderr:\n%s", args[0],
                  args[1] ? args[1] : "", r->status, r->out, r->err);
}

int cli_musterd_tamper(struct cli_musterd *d, const char *from, const char *to)
{
    char *path = xasprintf("%s/data/data.mdb", d->dir);
    size_t n = strlen(from), hits = 0;
    ck_assert_uint_eq(n, strlen(to));
    int fd = open(path, O_RDWR);
    ck_assert_msg(fd >= 0, "cannot open %s", path);
    char *buf = slurp_fd(fd);
    off_t size = lseek(fd, 0, SEEK_END);
    for (off_t i = 0; i + (off_t)n <= size; i++) {
        if (memcmp(buf + i, from, n) != 0)
            continue;
        ck_assert_int_eq(pwrite(fd, to, n, i), (ssize_t)n);
        hits++;
    }
    close(fd);
    free(buf);
    free(path);
    return (int)hits;
}

char *cli_data_path(const char *rel)
{
    const char *src = getenv("MUSTER_SOURCE_DIR");
    ck_assert_msg(src && *src, "MUSTER_SOURCE_DIR is not set");
    return xasprintf("%s/tests/data/cli/%s", src, rel);
}

char *cli_data(const char *rel)
{
    char *path = cli_data_path(rel);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    int fd = fileno(f);
    char *s = slurp_fd(fd);
    fclose(f);
    free(path);
    return s;
}

json_t *cli_run_json(const char *const *env, const char *const *args)
{
    struct cli_result r;
    json_error_t je;
    cli_run_ok(env, NULL, args, &r);
    json_t *doc = json_loads(r.out, 0, &je);
    ck_assert_msg(doc != NULL, "not JSON (%s):\n%s", je.text, r.out);
    cli_result_release(&r);
    return doc;
}

/* Line i (0-based) of s as a new string of whitespace-separated words joined by one space. */
char *cli_line_words(const char *s, int i)
{
    while (i-- > 0 && s) {
        s = strchr(s, '\n');
        s = s ? s + 1 : NULL;
    }
    ck_assert_ptr_nonnull(s);
    const char *end = strchr(s, '\n');
    size_t n = end ? (size_t)(end - s) : strlen(s);
    char *out = xcalloc(1, n + 1);
    size_t o = 0;
    for (size_t k = 0; k < n; k++) {
        if (s[k] == ' ') {
            if (o > 0 && out[o - 1] != ' ')
                out[o++] = ' ';
        } else {
            out[o++] = s[k];
        }
    }
    while (o > 0 && out[o - 1] == ' ')
        out[--o] = '\0';
    return out;
}

int cli_count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* 1 when some line of out starts with prefix (words separated by single spaces). */
int cli_has_line(const char *out, const char *prefix)
{
    int found = 0;
    for (int i = 0; i < cli_count_lines(out) && !found; i++) {
        char *w = cli_line_words(out, i);
        found = strncmp(w, prefix, strlen(prefix)) == 0;
        free(w);
    }
    return found;
}

void cli_expect_line(const char *out, int i, const char *prefix)
{
    char *w = cli_line_words(out, i);
    ck_assert_msg(strncmp(w, prefix, strlen(prefix)) == 0, "line %d is '%s', want '%s...'\n%s", i,
                  w, prefix, out);
    free(w);
}

void cli_musterd_untimed(struct musterd *m, char *env_buf, size_t n, const char **env)
{
    char cfg[] = "/tmp/muster-cli-untimed-XXXXXX";
    int fd = mkstemp(cfg);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(test_write_file(cfg, "cycle_interval: 0\nsync: none\nlog_level: warn\n"), 0);
    const char *args[] = {"--config", cfg, NULL};
    ck_assert_msg(musterd_start(m, NULL, args) == 0, "musterd did not start");
    unlink(cfg);
    snprintf(env_buf, n, "MUSTER_SERVER=%s", m->base);
    env[0] = env_buf;
    env[1] = NULL;
}
