/*
 * test_uuid.c - metadata.uid (scheduler/uuid.c): version 4 UUIDs in the canonical form,
 * none repeated, also across a fork that happens while random bytes are pooled.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_run.h"
#include "core.h"

#define N 20000

static int cmp_uid(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void assert_form(const char *u)
{
    ck_assert_uint_eq(strlen(u), 36);
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            ck_assert_msg(u[i] == '-', "'%s': no dash at %d", u, i);
        else
            ck_assert_msg(strchr("0123456789abcdef", u[i]) && u[i], "'%s': not hex at %d", u, i);
    }
    ck_assert_msg(u[14] == '4', "'%s': not version 4", u);
    ck_assert_msg(strchr("89ab", u[19]) != NULL, "'%s': not the RFC 4122 variant", u);
}

START_TEST(test_uuid_form_and_distinct)
{
    static char u[N][37];
    for (int i = 0; i < N; i++) {
        sched__uuid_v4(u[i]);
        assert_form(u[i]);
    }
    qsort(u, N, sizeof(u[0]), cmp_uid);
    for (int i = 1; i < N; i++)
        ck_assert_msg(strcmp(u[i - 1], u[i]) != 0, "'%s' twice", u[i]);
}
END_TEST

/* A child forked with bytes left in the parent's pool must not hand out the same uids. */
START_TEST(test_uuid_distinct_across_fork)
{
    char first[37], mine[37], theirs[37];
    int fd[2];
    sched__uuid_v4(first); /* the pool now holds bytes for the next uids */
    ck_assert_int_eq(pipe(fd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        sched__uuid_v4(theirs);
        ssize_t w = write(fd[1], theirs, sizeof(theirs));
        _exit(w == (ssize_t)sizeof(theirs) ? 0 : 1);
    }
    sched__uuid_v4(mine);
    ck_assert_int_eq(read(fd[0], theirs, sizeof(theirs)), (ssize_t)sizeof(theirs));
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_form(theirs);
    ck_assert_msg(strcmp(mine, theirs) != 0, "parent and child both made '%s'", mine);
    close(fd[0]);
    close(fd[1]);
}
END_TEST

static Suite *uuid_suite(void)
{
    Suite *s = suite_create("uuid");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_uuid_form_and_distinct);
    tcase_add_test(tc, test_uuid_distinct_across_fork);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return check_run(uuid_suite());
}
