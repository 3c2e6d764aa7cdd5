/* thread.c - thread names and policies (thread.h). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cpus.h"
#include "log.h"
#include "thread.h"

/* struct sched_attr of sched_setattr(2), which glibc does not declare */
struct attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
};

#define RESET_ON_FORK 0x01 /* SCHED_FLAG_RESET_ON_FORK of sched_setattr(2) */

/* The calling thread's attributes into *a; 0, or -1 (logged at debug) when the kernel has no
 * sched_getattr. */
static int get_attr(const char *name, struct attr *a)
{
    *a = (struct attr){0};
    if (syscall(SYS_sched_getattr, 0, a, (unsigned)sizeof(*a), 0) == 0)
        return 0;
    log_debug("%s: no sched_getattr: %s", name, strerror(errno));
    return -1;
}

/* The nice value thread_background raised the calling thread from and to (raised_from
 * INT_MIN: it did not), and whether thread_boost has put it back now. */
static _Thread_local int raised_from = INT_MIN, raised_to;
static _Thread_local int boosted;
/* The kernel refused a boost once (no CAP_SYS_NICE and an RLIMIT_NICE too low): no more
 * tries, and one log line. */
static atomic_int boost_refused;

/* The calling thread as policy (SCHED_OTHER or SCHED_BATCH) with a time slice of slice_ns
 * (0: the kernel's) and its nice value nice_up higher (at most 19); only when its policy is
 * SCHED_OTHER. */
static void set_policy(const char *name, uint32_t policy, uint64_t slice_ns, int nice_up)
{
    struct attr a;
    if (get_attr(name, &a) < 0 || a.policy != SCHED_OTHER)
        return;
    int from = a.nice;
    a.size = (uint32_t)sizeof(a);
    a.policy = policy;
    a.runtime = slice_ns;
    a.nice = a.nice + nice_up > 19 ? 19 : a.nice + nice_up;
    int rc = (int)syscall(SYS_sched_setattr, 0, &a, 0);
    if (rc != 0) {
        log_debug("%s: no time slice of %llu ns: %s", name, (unsigned long long)slice_ns,
                  strerror(errno));
        a.runtime = 0; /* a kernel before custom slices (6.12) refuses a runtime */
        rc = (int)syscall(SYS_sched_setattr, 0, &a, 0);
        if (rc != 0)
            log_debug("%s: policy %u refused: %s", name, (unsigned)policy, strerror(errno));
    }
    if (rc == 0 && a.nice != from) {
        raised_from = from;
        raised_to = a.nice;
    }
}

void thread_boost(void)
{
    if (raised_from == INT_MIN || boosted ||
        atomic_load_explicit(&boost_refused, memory_order_relaxed))
        return;
    if (setpriority(PRIO_PROCESS, (id_t)gettid(), raised_from) == 0) {
        boosted = 1;
    } else if (!atomic_exchange(&boost_refused, 1)) {
        log_info("background threads keep nice %d while they hold the scheduler's lock (the "
                 "kernel refused nice %d: %s; CAP_SYS_NICE, or background_nice: 0)",
                 raised_to, raised_from, strerror(errno));
    }
}

void thread_unboost(void)
{
    if (!boosted)
        return;
    boosted = 0;
    if (setpriority(PRIO_PROCESS, (id_t)gettid(), raised_to) != 0)
        log_debug("nice %d again refused: %s", raised_to, strerror(errno));
}

/* The name comes last: a thread seen by its name has its policy (test_server). */
void thread_long_slice(const char *name)
{
    set_policy(name, SCHED_OTHER, THREAD_LONG_SLICE_NS, 0);
    pthread_setname_np(pthread_self(), name);
}

static atomic_int background_up = THREAD_BACKGROUND_NICE;

void thread_background_nice(int up)
{
    atomic_store(&background_up, up < 0 ? 0 : up > 19 ? 19 : up);
}

void thread_background(const char *name)
{
    set_policy(name, SCHED_BATCH, THREAD_LONG_SLICE_NS, atomic_load(&background_up));
    pthread_setname_np(pthread_self(), name);
}

struct halves {
    void (*fn)(void *ctx, int half, size_t from, size_t to);
    void *ctx;
    size_t from, to;
};

static void *second_half(void *arg)
{
    struct halves *h = arg;
    h->fn(h->ctx, 1, h->from, h->to);
    return NULL;
}

void thread_halves(size_t n, size_t split, void (*fn)(void *ctx, int half, size_t from, size_t to),
                   void *ctx)
{
    if (n < split) {
        fn(ctx, 0, 0, n);
        return;
    }
    struct halves second = {fn, ctx, n / 2, n};
    pthread_t t;
    int two = pthread_create(&t, NULL, second_half, &second) == 0;
    fn(ctx, 0, 0, n / 2);
    if (two)
        pthread_join(t, NULL);
    else
        second_half(&second);
}

void thread_short(const char *name)
{
    set_policy(name, SCHED_OTHER, THREAD_SHORT_SLICE_NS, 0);
    pthread_setname_np(pthread_self(), name);
}

/* The calling thread SCHED_FIFO at priority 1 (reset on fork) when its policy is SCHED_OTHER;
 * 0, or the errno of the kernel's refusal. */
static int set_fifo(const char *name)
{
    struct attr a;
    if (get_attr(name, &a) < 0)
        return ENOSYS;
    if (a.policy != SCHED_OTHER)
        return 0;
    a = (struct attr){
        .size = (uint32_t)sizeof(a), .policy = SCHED_FIFO, .flags = RESET_ON_FORK, .priority = 1};
    return syscall(SYS_sched_setattr, 0, &a, 0) == 0 ? 0 : errno;
}

int thread_interactive(const char *name, int realtime)
{
    int refused = realtime ? set_fifo(name) : 0;
    if (!realtime || refused)
        set_policy(name, SCHED_OTHER, THREAD_SHORT_SLICE_NS, 0);
    pthread_setname_np(pthread_self(), name);
    return refused;
}

static void *try_fifo(void *arg)
{
    *(int *)arg = set_fifo("musterd-rt-check");
    return NULL;
}

int thread_realtime_allowed(void)
{
    pthread_t t;
    int refused = ENOSYS;
    if (pthread_create(&t, NULL, try_fifo, &refused) != 0)
        return EAGAIN;
    pthread_join(t, NULL);
    return refused;
}

void thread_pin(const char *what, const char *key, const struct cpus *c)
{
    char list[256];
    if (!c->set)
        return;
    cpus_format(c, list, sizeof(list));
    int rc = cpus_pin(c);
    if (rc)
        log_warn("%s: CPUs %s refused (%s): it runs on any CPU the process may use (%s)", what,
                 list, strerror(rc), key);
    else
        log_info("%s: on CPUs %s (%s)", what, list, key);
}
