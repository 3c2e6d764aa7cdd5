/*
 * thread.h - how musterd's own threads present themselves to the kernel.
 *
 * Linux's EEVDF scheduler (6.12 and later) lets a thread ask for its time slice: a thread
 * woken with a shorter slice than the one running preempts it at once, where two threads
 * of equal slices take turns at the end of the running one's slice, which the kernel sees
 * at its next tick (4 ms at HZ=250). So musterd's CPU-bound threads ask for a long slice
 * and its front end for a short one: whatever wakes (a request for the front end, a client
 * or another process on the same cores) runs ahead of the cycle instead of after it, unless
 * it ran more than its share just before (EEVDF then makes it wait for the tick all the
 * same). A slice does not change a thread's share of the CPU, only when it gets it. Older
 * kernels refuse the slice and keep the policy.
 */
#ifndef MUSTER_THREAD_H
#define MUSTER_THREAD_H

#include <stddef.h>

#define THREAD_LONG_SLICE_NS 20000000ULL /* 20 ms */
#define THREAD_SHORT_SLICE_NS 100000ULL  /* 0.1 ms, the least the kernel gives */

/* Names the calling thread (at most 15 bytes show in top -H and perf) and, when its policy
 * is the default SCHED_OTHER, gives it a long slice: for CPU-bound work that no one waits
 * on by the millisecond but that must keep its share (the cycle). Threads of the default
 * slice or shorter that wake (a request for the front end) preempt it at once; it keeps
 * SCHED_OTHER, so that when it wakes it takes its turn against other processes' CPU-bound
 * threads: as SCHED_BATCH (until session 22) it could not preempt them, and beside two
 * busy loops, even at nice 10, the cycle waited for a core four times as long as it ran
 * (bench/README.md, "Session 22"). A policy an operator set (chrt) is kept, and so is the
 * nice value. */
void thread_long_slice(const char *name);

/* How much lower than the process's a background thread's priority is: at nice 10 its
 * weight is a tenth of a nice-0 thread's, so a front end or a cycle that wakes on its core
 * is rarely in EEVDF's debt against it and preempts it at once (bench/README.md, "Reads
 * under load"), and it takes a tenth of the share of a core they both want. */
#define THREAD_BACKGROUND_NICE 10

/* SCHED_BATCH with the long slice and a nice value THREAD_BACKGROUND_NICE (or
 * thread_background_nice's) above the thread's, at most 19: for work that yields to the
 * cycle and to whatever answers requests, and takes any core they leave (the read cache's
 * remaker, the thread of an apply, a what-if or a replay, the history's shipper). Kept,
 * like the policy, when an operator chose a policy. */
void thread_background(const char *name);
/* How much lower background threads made from now on run (musterd's background_nice): 0
 * leaves them at the process's nice value. On a machine shared with other busy processes,
 * an apply's thread at a tenth of their weight holds the scheduler's lock ten times as
 * long. */
void thread_background_nice(int up);

/* While a background thread holds a lock long that threads of the process's priority wait
 * for (the scheduler's, for an apply), it runs at the nice value it had before
 * thread_background raised it, so that beside other processes' busy threads it does not
 * hold the lock ten times as long (a priority inversion: bench/README.md, "Session 23").
 * thread_boost before taking the lock, thread_unboost after giving it back; nothing for
 * other threads. Lowering a nice value takes CAP_SYS_NICE (or RLIMIT_NICE): refused once,
 * it is logged and not tried again. */
void thread_boost(void);
void thread_unboost(void);

/* Work on [0, n) in two halves: fn(ctx, 0, 0, n / 2) on the calling thread and fn(ctx, 1,
 * n / 2, n) on a thread of its own when n is split or more; fn(ctx, 0, 0, n) alone below
 * that. Without a thread both halves run here, one after the other. Returns when both are
 * done. For the documents of a big manifest, which share nothing. */
void thread_halves(size_t n, size_t split, void (*fn)(void *ctx, int half, size_t from, size_t to),
                   void *ctx);

/* Names the calling thread and, when its policy is SCHED_OTHER, asks for a short slice:
 * for a thread that answers requests in microseconds. */
void thread_short(const char *name);

/* thread_short, or with realtime set SCHED_FIFO at the lowest real-time priority (1, reset on
 * fork), for the front end (musterd's front_priority): a woken real-time thread takes a core
 * from any SCHED_OTHER or SCHED_BATCH one at once, whatever EEVDF's accounts say, so no
 * answer waits for the kernel's tick behind a cycle or an apply (bench/README.md, "Session
 * 22"). Its work per wake-up must be short and bounded. Returns 0, or the errno of the
 * kernel's refusal (EPERM without CAP_SYS_NICE or an RLIMIT_RTPRIO of 1 or more, or in a
 * cgroup without real-time runtime), the short slice then taken instead. A policy an
 * operator chose (chrt) is kept. */
int thread_interactive(const char *name, int realtime);

/* 0 when this process's threads may run SCHED_FIFO (tried on a thread of its own, which
 * ends), else the errno of the refusal. */
int thread_realtime_allowed(void);

struct cpus;
/* Puts the calling thread on c's CPUs (cpus.h; nothing when c is unset) and logs where, or
 * the kernel's refusal (then it runs where it did): what names the thread, key the setting. */
void thread_pin(const char *what, const char *key, const struct cpus *c);

#endif
