/*
 * test_sched_boost.c - a background thread's apply or cycle runs at the process's priority
 * while it holds (or waits for) the scheduler's lock, and at its own again after
 * (scheduler/cycle/cycle.c sched__lock_long, base/thread.c thread_boost): else, on a machine
 * busy with other work, a cycle waits for a lock held by a thread at a tenth of everything
 * else's weight. A read taken on such a thread is not boosted.
 */
#include <check.h>
#include <pthread.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "check_run.h"
#include "err.h"
#include "model_manifest.h"
#include "proc_sched.h"
#include "sched_util.h"
#include "thread.h"

static struct sched_util u;

static void setup(void)
{
    sched_util_open(&u, NULL);
}

static void teardown(void)
{
    sched_util_close(&u);
}

enum work { APPLY, CYCLE, READ };

struct worker {
    enum work what;
    int rc, nice_after;
};

/* On a background thread named t-work: an apply, a cycle or a read of the scheduler. */
static void *work_main(void *arg)
{
    struct worker *w = arg;
    struct err err = ERR_INIT;
    json_t *out = NULL;
    thread_background("t-work");
    if (w->what == APPLY) {
        struct model_manifest m = {0};
        const char *yaml = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n";
        w->rc = model_manifest_parse(yaml, strlen(yaml), MODEL_FMT_AUTO, &m, &err);
        if (w->rc == 0)
            w->rc = sched_apply(u.s, &m, 1000, &out, &err);
        model_manifest_free(&m);
    } else if (w->what == CYCLE) {
        w->rc = sched_cycle(u.s, 2000, &out, &err);
    } else {
        out = sched_view_dump(u.s);
        w->rc = out ? 0 : -1;
    }
    json_decref(out);
    w->nice_after = getpriority(PRIO_PROCESS, 0);
    return NULL;
}

/* The nice value t-work shows once it has one other than want_not, within 5 s. */
static int nice_of_worker(int want_not)
{
    struct timespec pause = {0, 2000000};
    int n = PROC_SCHED_NONE;
    for (int i = 0; i < 2500; i++) {
        n = proc_sched_nice(getpid(), "t-work");
        if (n != PROC_SCHED_NONE && n != want_not)
            return n;
        nanosleep(&pause, NULL);
    }
    return n;
}

/* With the lock held elsewhere, the worker waits for it: boosted (or not) while it waits.
 * Not root, the kernel refuses the boost (RLIMIT_NICE 0 here, no CAP_SYS_NICE): the apply
 * or cycle then runs at its own nice value throughout, and still completes. */
static void check(enum work what, int boosted)
{
    if (geteuid() != 0) {
        struct rlimit none = {0, 0};
        ck_assert_int_eq(setrlimit(RLIMIT_NICE, &none), 0);
        boosted = 0;
    }
    struct sched_hold *h = sched_hold(u.s);
    struct worker w = {what, -1, -1};
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, work_main, &w), 0);
    if (boosted) {
        /* raised to THREAD_BACKGROUND_NICE, then back to 0 while it waits for the lock */
        ck_assert_int_eq(nice_of_worker(THREAD_BACKGROUND_NICE), 0);
    } else {
        ck_assert_int_eq(nice_of_worker(0), THREAD_BACKGROUND_NICE);
        struct timespec settle = {0, 50000000};
        nanosleep(&settle, NULL); /* waiting for the lock by now, still not boosted */
        ck_assert_int_eq(proc_sched_nice(getpid(), "t-work"), THREAD_BACKGROUND_NICE);
    }
    sched_hold_release(h);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(w.rc, 0);
    ck_assert_int_eq(w.nice_after, THREAD_BACKGROUND_NICE);
}

START_TEST(test_sched_boost_apply)
{
    check(APPLY, 1);
}
END_TEST

START_TEST(test_sched_boost_cycle)
{
    check(CYCLE, 1);
}
END_TEST

START_TEST(test_sched_boost_not_reads)
{
    check(READ, 0);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_sched_boost_apply, test_sched_boost_cycle,
                            test_sched_boost_not_reads, NULL};
    return check_run(check_suite("sched_boost", setup, teardown, tests));
}
