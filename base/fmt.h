/*
 * fmt.h - snprintf for the scheduler's messages, without glibc's printf machinery.
 *
 * The why's messages (scheduler/reason/why_msg.h) are printf formats of %s, %d, %ld, %zu
 * and the like, written for every attempt that fails; glibc's vsnprintf (locale, positional
 * arguments, a FILE per call) showed in the cycle's profiles. fmt_snprintf writes those
 * conversions itself and hands any other (a flag, a width, a precision, %g) to vsnprintf,
 * so its result is always vsnprintf's, byte for byte (tests/test_fmt.c).
 *
 *     char msg[256];
 *     fmt_snprintf(msg, sizeof(msg), WHY_MSG_X, name, count);
 */
#ifndef MUSTER_FMT_H
#define MUSTER_FMT_H

#include <stdarg.h>
#include <stddef.h>

/* As vsnprintf and snprintf: at most n - 1 characters and a NUL (n > 0) into buf; returns
 * the length the whole text has. */
int fmt_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
int fmt_snprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
