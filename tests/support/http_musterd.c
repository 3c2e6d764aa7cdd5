/* http_musterd.c - a real musterd process for the API and server tests. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "http_client.h"

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static const char *bin_dir(void)
{
    const char *d = getenv("MUSTER_BIN_DIR");
    return d ? d : "build/bin";
}

char *test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0, got;

    if (!f)
        return NULL;
    do {
        if (n + 4096 + 1 > cap)
            buf = realloc(buf, cap = (cap ? cap * 2 : 8192) + 4097);
        got = fread(buf + n, 1, 4096, f);
        n += got;
    } while (got > 0);
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

int test_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    fputs(text, f);
    return fclose(f) == 0 ? 0 : -1;
}

/* fork + exec musterd with stderr to log (appended); returns the pid. */
static pid_t spawn(const char *const *argv, const char *log)
{
    pid_t parent = getpid();
    pid_t pid = fork();

    if (pid != 0)
        return pid;
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(127);
    int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        dup2(fd, 2);
        dup2(fd, 1);
        close(fd);
    }
    execv(argv[0], (char *const *)argv);
    _exit(127);
}

static void rm_root(const char *root)
{
    char cmd[400];

    if (root[0] && !strncmp(root, "/tmp/muster-test-", 17)) {
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        if (system(cmd) != 0)
            fprintf(stderr, "cannot remove %s\n", root);
    }
}

/* Check ends a failed test with _exit(), skipping the teardown: a small guardian process
 * removes the directory once the test process is gone (musterd itself gets SIGTERM from
 * PR_SET_PDEATHSIG). After a normal teardown the directory is already gone. */
static void guard(const char *root)
{
    pid_t parent = getpid();

    if (fork() != 0)
        return;
    setsid(); /* Check kills the test's process group when the test ends */
    while (getppid() == parent)
        sleep_ms(100);
    sleep_ms(1000); /* let musterd finish its shutdown */
    rm_root(root);
    _exit(0);
}

int musterd_start_status(struct musterd *m, const char *root, const char *const *args,
                         int *exit_status)
{
    const char *argv[64];
    char bin[512];
    size_t n = 0;

    if (!root) {
        memset(m, 0, sizeof(*m));
        snprintf(m->root, sizeof(m->root), "/tmp/muster-test-XXXXXX");
        if (!mkdtemp(m->root))
            return -1;
        guard(m->root);
    } else if (root != m->root) {
        snprintf(m->root, sizeof(m->root), "%s", root);
    }
    snprintf(m->data_dir, sizeof(m->data_dir), "%s/data", m->root);
    snprintf(m->port_file, sizeof(m->port_file), "%s/port", m->root);
    snprintf(m->log_file, sizeof(m->log_file), "%s/musterd.log", m->root);
    unlink(m->port_file);
    snprintf(bin, sizeof(bin), "%s/musterd", bin_dir());
    argv[n++] = bin;
    argv[n++] = "--data-dir";
    argv[n++] = m->data_dir;
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    argv[n++] = "--port-file";
    argv[n++] = m->port_file;
    for (size_t i = 0; args && args[i] && n < 63; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    m->pid = spawn(argv, m->log_file);
    /* up to 30 s: a sanitizer build on a loaded 2-core machine can be slow to start */
    for (int i = 0; i < 3000; i++) {
        int status;
        char *text = test_read_file(m->port_file, NULL);
        if (text) {
            m->port = atoi(text);
            free(text);
            snprintf(m->base, sizeof(m->base), "http://127.0.0.1:%d", m->port);
            return 0;
        }
        if (waitpid(m->pid, &status, WNOHANG) == m->pid) {
            char *log = test_read_file(m->log_file, NULL);
            fprintf(stderr, "musterd exited at start: %s\n", log ? log : "(no log)");
            free(log);
            m->pid = 0;
            if (exit_status)
                *exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            return -1;
        }
        sleep_ms(10);
    }
    fprintf(stderr, "musterd did not write its port file within 30 s\n");
    return -1;
}

int musterd_start(struct musterd *m, const char *root, const char *const *args)
{
    return musterd_start_status(m, root, args, NULL);
}

int musterd_stop(struct musterd *m)
{
    int status = 0;

    if (m->pid <= 0)
        return -1;
    kill(m->pid, SIGTERM);
    for (int i = 0; i < 1000; i++) {
        if (waitpid(m->pid, &status, WNOHANG) == m->pid) {
            m->pid = 0;
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        }
        sleep_ms(10);
    }
    kill(m->pid, SIGKILL);
    waitpid(m->pid, &status, 0);
    m->pid = 0;
    return -1;
}

void musterd_cleanup(struct musterd *m)
{
    if (m->pid > 0)
        musterd_stop(m);
    rm_root(m->root);
    m->root[0] = '\0';
}

int musterd_run(const char *const *args, char **err_out)
{
    char root[] = "/tmp/muster-test-XXXXXX", log[300], bin[512];
    const char *argv[64];
    size_t n = 0;
    int status = 0, code = -1;

    if (!mkdtemp(root))
        return -1;
    snprintf(log, sizeof(log), "%s/stderr", root);
    snprintf(bin, sizeof(bin), "%s/musterd", bin_dir());
    argv[n++] = bin;
    for (size_t i = 0; args && args[i] && n < 63; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    pid_t pid = spawn(argv, log);
    for (int i = 0; i < 500; i++) {
        if (waitpid(pid, &status, WNOHANG) == pid) {
            code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
            pid = 0;
            break;
        }
        sleep_ms(10);
    }
    if (pid) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
    }
    if (err_out)
        *err_out = test_read_file(log, NULL);
    unlink(log);
    rmdir(root);
    return code;
}

long test_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

void test_nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int test_count_in_file(const char *path, const char *needle)
{
    char *text = test_read_file(path, NULL);
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, needle)); p += strlen(needle))
        n++;
    free(text);
    return n;
}
