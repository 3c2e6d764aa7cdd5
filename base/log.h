/*
 * log.h - one-line log messages to stderr.
 *
 * Format: "2026-11-22T03:50:04.123Z info  message". Thread-safe (one write per
 * line). The level is process-wide; set it once at start-up.
 */
#ifndef MUSTER_LOG_H
#define MUSTER_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR, LOG_OFF };

void log_set_level(enum log_level level);
/* Parses "debug|info|warn|error|off"; returns 0 or ERR_INVALID. */
int log_parse_level(const char *s, enum log_level *out);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
