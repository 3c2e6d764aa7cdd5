#include "log.h"
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static enum log_level g_level = LOG_INFO;

void log_set_level(enum log_level level)
{
    g_level = level;
}

int log_parse_level(const char *s, enum log_level *out)
{
    static const char *names[] = {"debug", "info", "warn", "error", "off"};
    for (int i = 0; i <= LOG_OFF; i++) {
        if (strcmp(s, names[i]) == 0) {
            *out = (enum log_level)i;
            return 0;
        }
    }
    return ERR_INVALID;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    static const char *tags[] = {"debug", "info ", "warn ", "error"};
    char line[4096];
    struct timeval tv;
    struct tm tm;
    int n;
    va_list ap;

    if (level < g_level || level >= LOG_OFF)
        return;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    n = (int)strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
    n += snprintf(line + n, sizeof(line) - (size_t)n, ".%03dZ %s ", (int)(tv.tv_usec / 1000),
                  tags[level]);
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    n = (int)strlen(line);
    line[n++] = '\n';
    /* one write(2) per line keeps lines from different threads whole */
    if (write(STDERR_FILENO, line, (size_t)n) < 0)
        return;
}
