/*
 * cpus.h - the cores a thread of musterd's runs on (musterd's cycle_cpus and front_cpus).
 *
 * On a small machine the cycle loses its throughput to whatever else wakes on its core:
 * the front end answering reads, and clients on the same machine. Keeping the cycle on
 * cores of its own and the threads that answer reads on others stops that (bench/README.md,
 * "Session 25"). A list is written as Linux writes them (cpuset(7), "List format"): CPU
 * numbers and ranges, comma-separated, "0", "2-3", "0,4-7". The stride and group forms
 * some kernel files accept ("0-7:2/4") are refused, not read as something else.
 *
 *     struct cpus c;
 *     if (cpus_parse("0-1", &c, &err) < 0 || cpus_allowed(&c, &err) < 0)
 *         ... err.msg names what is wrong ...
 *     cpus_pin(&c); on the thread, at its start
 */
#ifndef MUSTER_CPUS_H
#define MUSTER_CPUS_H

#include <sched.h>
#include <stddef.h>

struct err;

/* A CPU list. A zeroed one (set 0) stands for no list: the thread runs where the process may. */
struct cpus {
    int set; /* a list was given */
    cpu_set_t mask;
};

/* text as a CPU list into *out: 0, or ERR_INVALID naming what is wrong and where (out then
 * unchanged). CPU numbers are below CPU_SETSIZE (1024). */
int cpus_parse(const char *text, struct cpus *out, struct err *err);
/* c as a list ("0,2-3") into buf of n bytes (truncated, always terminated); "" when unset. */
void cpus_format(const struct cpus *c, char *buf, size_t n);
/* 0 when the process may run on every CPU of c (or c is unset), else ERR_INVALID naming those
 * it may not and those it may. */
int cpus_allowed(const struct cpus *c, struct err *err);
/* Puts the calling thread on c's CPUs (nothing when c is unset): 0, or the kernel's errno.
 * Threads it starts afterwards inherit the list. */
int cpus_pin(const struct cpus *c);

#endif
