/*
 * clock.h - wall-clock time in milliseconds and RFC 3339 timestamps.
 *
 * Scheduling code never reads the clock itself: it takes `now_ms` from its
 * caller, so `muster simulate` can run on a simulated clock.
 */
#ifndef MUSTER_CLOCK_H
#define MUSTER_CLOCK_H

#include <stddef.h>
#include <stdint.h>

struct err;

/* Milliseconds since the Unix epoch (CLOCK_REALTIME). */
int64_t clock_now_ms(void);
/* Monotonic milliseconds, for durations. */
int64_t clock_mono_ms(void);
/* Monotonic nanoseconds, for benchmarks and histograms. */
int64_t clock_mono_ns(void);

/* Formats ms as "2026-11-22T03:50:04Z" (seconds precision, as Kubernetes does) into buf. */
void clock_format_rfc3339(int64_t ms, char *buf, size_t n);
/* Formats ms as "2026-11-22T03:50:04.123Z" (millisecond precision) into buf: for times
 * that later decisions measure from, such as a victim's deletionTimestamp, so a parse
 * gives back exactly ms. */
void clock_format_rfc3339_ms(int64_t ms, char *buf, size_t n);
/* Parses RFC 3339 ("2026-11-22T03:50:04Z", fractions and offsets allowed) into ms.
 * Returns 0 or ERR_INVALID. */
int clock_parse_rfc3339(const char *s, int64_t *ms, struct err *err);

#endif
