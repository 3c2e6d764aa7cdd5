/*
 * proc_sched.h - what the kernel says of a thread's scheduling (/proc/PID/task/TID/stat and
 * sched).
 */
#ifndef MUSTER_TESTS_PROC_SCHED_H
#define MUSTER_TESTS_PROC_SCHED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The scheduling policy (SCHED_OTHER, SCHED_BATCH, ...) of process pid's first thread named
 * comm, from its stat; -1 when no thread has that name. */
int proc_sched_policy(pid_t pid, const char *comm);

/* The nice value of process pid's first thread named comm, from its stat; PROC_SCHED_NONE
 * when no thread has that name. */
#define PROC_SCHED_NONE (-100)
int proc_sched_nice(pid_t pid, const char *comm);

/* The longest time slice (se.slice, ns) among process pid's threads named comm; 0 when the
 * kernel does not report one (before Linux 6.12's custom slices) or no thread has that name. */
uint64_t proc_sched_slice(pid_t pid, const char *comm);

/* The CPUs process pid's first thread named comm may run on (its status's
 * Cpus_allowed_list, "0-1") into buf of n bytes; 0, or -1 when no thread has that name. */
int proc_sched_cpus(pid_t pid, const char *comm, char *buf, size_t n);

#endif
