/*
 * test_thread.c - how musterd's threads present themselves to the kernel (base/thread.c):
 * the policy and time slice of bulk and interactive threads, the lower weight of background
 * ones, the front end's real-time policy and its refusal, and a policy an operator chose left
 * alone. The slices are checked where the
 * kernel reports them (Linux 6.12 and later); elsewhere only the policies are. Also memory
 * made present on a helper thread (base/prefault.c): the whole pages of each range and no
 * others, their contents untouched by writes that run beside it. And CPU lists (base/cpus.c):
 * read as Linux writes them or refused naming where, checked against the CPUs the process may
 * use, and a thread put on them.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_run.h"
#include "cpus.h"
#include "err.h"
#include "prefault.h"
#include "proc_sched.h"
#include "thread.h"

/* The calling thread's slice by its name (each test runs in its own process). */
static uint64_t my_slice(const char *comm)
{
    return proc_sched_slice(getpid(), comm);
}

static int my_policy(void)
{
    struct sched_param sp;
    int policy = -1;
    ck_assert_int_eq(pthread_getschedparam(pthread_self(), &policy, &sp), 0);
    return policy;
}

START_TEST(test_thread_long_slice)
{
    thread_long_slice("t-bulk");
    ck_assert_int_eq(my_policy(), SCHED_OTHER);
    uint64_t bulk = my_slice("t-bulk");
    if (bulk == 0) {
        fprintf(stderr, "thread: the kernel reports no slices: only policies checked\n");
        return;
    }
    ck_assert_uint_eq(bulk, THREAD_LONG_SLICE_NS);
}
END_TEST

/* A background thread is a bulk thread THREAD_BACKGROUND_NICE lower (nice 10 from the
 * default 0), never past 19; a niced process's background threads stay below its others. */
START_TEST(test_thread_background_lower_weight)
{
    ck_assert_int_eq(getpriority(PRIO_PROCESS, 0), 0);
    thread_background("t-back");
    ck_assert_int_eq(my_policy(), SCHED_BATCH);
    ck_assert_int_eq(getpriority(PRIO_PROCESS, 0), THREAD_BACKGROUND_NICE);
    ck_assert_int_eq(proc_sched_nice(getpid(), "t-back"), THREAD_BACKGROUND_NICE);
    uint64_t slice = my_slice("t-back");
    if (slice)
        ck_assert_uint_eq(slice, THREAD_LONG_SLICE_NS);
    thread_long_slice("t-back"); /* a bulk thread keeps the nice value it has */
    ck_assert_int_eq(getpriority(PRIO_PROCESS, 0), THREAD_BACKGROUND_NICE);
}
END_TEST

START_TEST(test_thread_background_nice_capped)
{
    ck_assert_int_eq(setpriority(PRIO_PROCESS, 0, 15), 0);
    thread_background("t-back");
    ck_assert_int_eq(my_policy(), SCHED_BATCH);
    ck_assert_int_eq(getpriority(PRIO_PROCESS, 0), 19);
}
END_TEST

/* The nice value a new background thread ends up with. */
static void *background_main(void *arg)
{
    thread_background("t-back");
    *(int *)arg = getpriority(PRIO_PROCESS, 0) * 100 + (my_policy() == SCHED_BATCH);
    return NULL;
}

static int background_nice_of_new_thread(void)
{
    pthread_t t;
    int got = -1;
    ck_assert_int_eq(pthread_create(&t, NULL, background_main, &got), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_msg(got % 100 == 1, "not SCHED_BATCH");
    return got / 100;
}

/* background_nice (thread_background_nice): 5 makes background threads made from then on 5
 * lower, 0 leaves them at the process's nice value; bulk threads either way. */
START_TEST(test_thread_background_nice_set)
{
    ck_assert_int_eq(background_nice_of_new_thread(), THREAD_BACKGROUND_NICE);
    thread_background_nice(5);
    ck_assert_int_eq(background_nice_of_new_thread(), 5);
    thread_background_nice(0);
    ck_assert_int_eq(background_nice_of_new_thread(), 0);
    thread_background_nice(THREAD_BACKGROUND_NICE);
}
END_TEST

/* thread_boost: a background thread back at the nice value it was raised from while it
 * holds the scheduler's lock, its policy and slice kept; thread_unboost: raised again. A
 * thread thread_background did not raise is left alone. Lowering a nice value takes
 * CAP_SYS_NICE: checked as root, and refused as nobody (test_thread_boost_refused). */
START_TEST(test_thread_boost)
{
    if (geteuid() != 0) {
        fprintf(stderr, "thread: not root: a boost is refused (test_thread_boost_refused)\n");
        return;
    }
    ck_assert_int_eq(setpriority(PRIO_PROCESS, 0, 3), 0);
    thread_boost(); /* not a background thread */
    ck_assert_int_eq(getpriority(PRIO_PROCESS, 0), 3);
    thread_unboost();
    ck_assert_int_eq(getpriority(PRIO_PROCESS, 0), 3);

    thread_background("t-back");
    ck_assert_int_eq(getpriority(PRIO_PROCESS, 0), 3 + THREAD_BACKGROUND_NICE);
    uint64_t slice = my_slice("t-back");
    thread_boost();
    thread_boost(); /* twice: the same */
    ck_assert_int_eq(getpriority(PRIO_PROCESS, 0), 3);
    ck_assert_int_eq(my_policy(), SCHED_BATCH);
    ck_assert_uint_eq(my_slice("t-back"), slice);
    thread_unboost();
    ck_assert_int_eq(getpriority(PRIO_PROCESS, 0), 3 + THREAD_BACKGROUND_NICE);
    thread_unboost(); /* not boosted: nothing */
    ck_assert_int_eq(getpriority(PRIO_PROCESS, 0), 3 + THREAD_BACKGROUND_NICE);
    thread_boost(); /* and again */
    ck_assert_int_eq(getpriority(PRIO_PROCESS, 0), 3);
    thread_unboost();
}
END_TEST

/* Unprivileged (root's child as nobody; no CAP_SYS_NICE, RLIMIT_NICE 0) the kernel refuses the
 * lower nice value: the thread keeps its own, and after the first refusal no more are asked for. */
static int boost_unprivileged(void)
{
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_NICE, &none) != 0 ||
        (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)))
        return 10;
    thread_background("t-user");
    int raised = getpriority(PRIO_PROCESS, 0);
    if (raised != THREAD_BACKGROUND_NICE)
        return 2;
    thread_boost();
    if (getpriority(PRIO_PROCESS, 0) != raised)
        return 3;
    thread_unboost();
    return getpriority(PRIO_PROCESS, 0) == raised ? 0 : 4;
}

/* fn in a child process, which must exit 0; 10 says it could not drop its privilege there
 * (root without CAP_SETUID): then nothing is checked, and that is said. */
static void in_child_unprivileged(int (*fn)(void))
{
    pid_t child = fork();
    if (child == 0)
        _exit(fn());
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status));
    if (WEXITSTATUS(status) == 10) {
        fprintf(stderr, "thread: cannot become nobody here: the refusal is not checked\n");
        return;
    }
    ck_assert_int_eq(WEXITSTATUS(status), 0);
}

START_TEST(test_thread_boost_refused)
{
    in_child_unprivileged(boost_unprivileged);
}
END_TEST

/* What thread_halves ran: each half's range and whether it ran on the caller's thread. */
struct seen {
    pthread_t caller;
    size_t from[2], to[2];
    int calls[2], here[2];
};

static void note_half(void *ctx, int half, size_t from, size_t to)
{
    struct seen *s = ctx;
    s->calls[half]++;
    s->from[half] = from;
    s->to[half] = to;
    s->here[half] = pthread_equal(pthread_self(), s->caller);
}

/* Below the split one call does it all here; from it, the first half here and the second on a
 * thread of its own, the two ranges covering [0, n) once. */
START_TEST(test_thread_halves)
{
    struct seen s = {.caller = pthread_self()};
    thread_halves(9, 10, note_half, &s);
    ck_assert_int_eq(s.calls[0], 1);
    ck_assert_int_eq(s.calls[1], 0);
    ck_assert_uint_eq(s.from[0], 0);
    ck_assert_uint_eq(s.to[0], 9);
    ck_assert(s.here[0]);
    memset(&s, 0, sizeof(s));
    s.caller = pthread_self();
    thread_halves(11, 10, note_half, &s);
    ck_assert_int_eq(s.calls[0], 1);
    ck_assert_int_eq(s.calls[1], 1);
    ck_assert_uint_eq(s.from[0], 0);
    ck_assert_uint_eq(s.to[0], 5);
    ck_assert_uint_eq(s.from[1], 5);
    ck_assert_uint_eq(s.to[1], 11);
    ck_assert(s.here[0]);
    ck_assert(!s.here[1]);
}
END_TEST

START_TEST(test_thread_short_slice)
{
    pthread_setname_np(pthread_self(), "t-front");
    uint64_t dflt = my_slice("t-front");
    thread_short("t-front");
    ck_assert_int_eq(my_policy(), SCHED_OTHER);
    if (dflt == 0)
        return;
    ck_assert_uint_eq(my_slice("t-front"), THREAD_SHORT_SLICE_NS);
    ck_assert_uint_lt(THREAD_SHORT_SLICE_NS, dflt);
}
END_TEST

/* With realtime, SCHED_FIFO at the lowest priority, reset on fork, where the kernel allows it
 * (as root); thread_realtime_allowed says so beforehand without changing the caller. */
START_TEST(test_thread_interactive_realtime)
{
    int allowed = thread_realtime_allowed();
    ck_assert_int_eq(my_policy(), SCHED_OTHER);
    int refused = thread_interactive("t-rt", 1);
    ck_assert_int_eq(refused, allowed);
    if (refused) {
        fprintf(stderr, "thread: SCHED_FIFO refused here (%s): the fallback is checked\n",
                strerror(refused));
        ck_assert_int_eq(sched_getscheduler(0), SCHED_OTHER);
        return;
    }
    ck_assert_int_eq(sched_getscheduler(0), SCHED_FIFO | SCHED_RESET_ON_FORK);
    struct sched_param sp; /* not pthread_getschedparam: glibc keeps what it read before */
    ck_assert_int_eq(sched_getparam(0, &sp), 0);
    ck_assert_int_eq(sp.sched_priority, 1);
    /* a child does not inherit it */
    pid_t child = fork();
    if (child == 0)
        _exit(sched_getscheduler(0) == SCHED_OTHER ? 0 : 1);
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

/* A process without the privilege (here root's child as nobody, with no real-time limit) is
 * told EPERM by both, and its thread takes the short slice. */
static int refused_as_nobody(void)
{
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_RTPRIO, &none) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
        return 10; /* root without CAP_SETUID: not checked */
    if (thread_realtime_allowed() != EPERM || thread_interactive("t-user", 1) != EPERM)
        return 3;
    return sched_getscheduler(0) == SCHED_OTHER ? 0 : 4;
}

START_TEST(test_thread_realtime_refused)
{
    if (geteuid() != 0) {
        fprintf(stderr,
                "thread: not root: the refusal is checked by test_thread_interactive_realtime\n");
        return;
    }
    in_child_unprivileged(refused_as_nobody);
}
END_TEST

/* A policy set from outside (chrt, systemd) is the operator's: nothing changes it. */
START_TEST(test_thread_operator_policy_kept)
{
    struct sched_param sp = {0};
    ck_assert_int_eq(pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp), 0);
    pthread_setname_np(pthread_self(), "t-op");
    uint64_t before = my_slice("t-op");
    thread_short("t-op");
    thread_long_slice("t-op");
    thread_background("t-op");
    ck_assert_int_eq(my_policy(), SCHED_IDLE);
    ck_assert_int_eq(getpriority(PRIO_PROCESS, 0), 0);
    ck_assert_uint_eq(my_slice("t-op"), before);
}
END_TEST

/* text read as a list, and written back as want. */
static void list_reads_as(const char *text, const char *want)
{
    struct cpus c = {0};
    struct err err = ERR_INIT;
    char out[256];
    ck_assert_msg(cpus_parse(text, &c, &err) == 0, "%s: %s", text, err.msg);
    ck_assert(c.set);
    cpus_format(&c, out, sizeof(out));
    ck_assert_str_eq(out, want);
}

/* text refused with a message holding want; the list it was to fill unchanged. */
static void list_refused(const char *text, const char *want)
{
    struct cpus c = {0};
    struct err err = ERR_INIT;
    ck_assert_int_eq(cpus_parse(text, &c, &err), ERR_INVALID);
    ck_assert_msg(strstr(err.msg, want), "%s: %s", text, err.msg);
    ck_assert(!c.set);
}

START_TEST(test_cpus_parse)
{
    list_reads_as("0", "0");
    list_reads_as("3", "3");
    list_reads_as("0-3", "0-3");
    list_reads_as("0,2-3", "0,2-3");
    list_reads_as("5,0-1,1", "0-1,5"); /* in any order, repeats merged */
    list_reads_as("0-1,2,3", "0-3");
    list_reads_as("1023", "1023");
    list_refused("", "empty");
    list_refused("3-1", "the range 3-1 runs backwards");
    list_refused("0-7:2", "unexpected ':' at offset 3");
    list_refused("0-7:2/4", "strides are not read");
    list_refused("0,,1", "expected a CPU number below 1024 at offset 2");
    list_refused("1024", "below 1024 at offset 0");
    list_refused("99999999999999999999", "below 1024");
    list_refused("-1", "at offset 0");
    list_refused("0-", "at offset 2");
    list_refused(" 0", "at offset 0");
    list_refused("0 ", "unexpected ' ' at offset 1");
    list_refused("all", "at offset 0");
    struct cpus unset = {0};
    char out[8] = "x";
    cpus_format(&unset, out, sizeof(out));
    ck_assert_str_eq(out, "");
}
END_TEST

/* A list of the CPUs this process may run on is allowed, and a thread put on one of them runs
 * there alone; a CPU outside them is refused, named with those it may use. */
START_TEST(test_cpus_allowed_and_pin)
{
    cpu_set_t may;
    ck_assert_int_eq(sched_getaffinity(0, sizeof(may), &may), 0);
    int first = -1, outside = -1;
    for (int i = 0; i < CPU_SETSIZE; i++) {
        if (CPU_ISSET((size_t)i, &may) && first < 0)
            first = i;
        if (!CPU_ISSET((size_t)i, &may) && outside < 0)
            outside = i;
    }
    ck_assert_int_ge(first, 0);
    char text[32];
    struct cpus c;
    struct err err = ERR_INIT;
    snprintf(text, sizeof(text), "%d", first);
    ck_assert_int_eq(cpus_parse(text, &c, &err), 0);
    ck_assert_int_eq(cpus_allowed(&c, &err), 0);
    ck_assert_int_eq(cpus_pin(&c), 0);
    cpu_set_t now;
    ck_assert_int_eq(pthread_getaffinity_np(pthread_self(), sizeof(now), &now), 0);
    ck_assert_int_eq(CPU_COUNT(&now), 1);
    ck_assert(CPU_ISSET((size_t)first, &now));
    struct cpus unset = {0};
    ck_assert_int_eq(cpus_allowed(&unset, &err), 0);
    ck_assert_int_eq(cpus_pin(&unset), 0); /* nothing changes */
    ck_assert_int_eq(pthread_getaffinity_np(pthread_self(), sizeof(now), &now), 0);
    ck_assert_int_eq(CPU_COUNT(&now), 1);
    if (outside < 0)
        return; /* every CPU a set can name is this process's */
    snprintf(text, sizeof(text), "%d,%d", first, outside);
    ck_assert_int_eq(cpus_parse(text, &c, &err), 0);
    ck_assert_int_eq(cpus_allowed(&c, &err), ERR_INVALID);
    char want[64];
    snprintf(want, sizeof(want), "CPU %d: not one this process may run on", outside);
    ck_assert_msg(strstr(err.msg, want), "%s", err.msg);
}
END_TEST

/* Which of the npages pages from p are resident (mincore reports anonymous pages too). */
static void resident(const char *p, size_t npages, unsigned char *vec)
{
    ck_assert_int_eq(mincore((void *)p, npages * (size_t)getpagesize(), vec), 0);
}

/* The helper makes the whole pages inside each range present, none outside, and a writer
 * beside it keeps what it wrote. A kernel before MADV_POPULATE_WRITE (5.14) populates
 * nothing: then only the contents are checked. */
START_TEST(test_prefault)
{
    const size_t page = (size_t)getpagesize(), npages = 4096;
    char *p = mmap(NULL, npages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(p, MAP_FAILED);
    int populates = madvise(p + (npages - 1) * page, page, MADV_POPULATE_WRITE) == 0;
    /* range 0: pages 1-2 whole, pages 0 and 3 cut; range 1: pages 8 to 4087, written here
     * meanwhile */
    void *at[] = {p + 100, p + 8 * page};
    size_t len[] = {3 * page, 4080 * page};
    struct prefault *pf = prefault_start(at, len, 2);
    ck_assert_ptr_nonnull(pf);
    for (size_t i = 8; i < 4088; i++)
        p[i * page + i % page] = (char)(i | 1);
    prefault_join(pf);
    unsigned char vec[4096];
    resident(p, npages, vec);
    for (size_t i = 8; i < 4088; i++)
        ck_assert_int_eq(p[i * page + i % page], (char)(i | 1));
    if (populates) {
        ck_assert(!(vec[0] & 1));
        ck_assert(vec[1] & 1);
        ck_assert(vec[2] & 1);
        ck_assert(!(vec[3] & 1));
        ck_assert(!(vec[4] & 1));
        ck_assert(!(vec[4088] & 1));
    }
    /* nothing whole to make present: no helper */
    void *none[] = {p + 4089 * page + 1};
    size_t small[] = {page};
    ck_assert_ptr_null(prefault_start(none, small, 1));
    prefault_join(NULL);
    munmap(p, npages * page);
}
END_TEST

int main(void)
{
    const TTest *tests[] = {test_thread_long_slice,
                            test_thread_background_lower_weight,
                            test_thread_background_nice_capped,
                            test_thread_background_nice_set,
                            test_thread_boost,
                            test_thread_boost_refused,
                            test_thread_halves,
                            test_thread_short_slice,
                            test_thread_interactive_realtime,
                            test_thread_realtime_refused,
                            test_thread_operator_policy_kept,
                            test_prefault,
                            test_cpus_parse,
                            test_cpus_allowed_and_pin,
                            NULL};
    return check_run(check_suite("thread", NULL, NULL, tests));
}
