/*
 * thread.h - how musterd's own threads present themselves to the kernel.
 */
#ifndef MUSTER_THREAD_H
#define MUSTER_THREAD_H

/* Names the calling thread (at most 15 bytes show in top -H and perf) and, when its policy
 * is the default SCHED_OTHER, makes it SCHED_BATCH: for CPU-bound work that no one waits
 * on by the millisecond (the cycle, the read cache's remaker). The kernel then treats it as
 * such (sched(7)): it keeps its share of the CPU and is disturbed less by threads that wake
 * often, such as the front end's. A policy an operator set (chrt) is kept, and so is the
 * nice value. */
void thread_batch(const char *name);

#endif
