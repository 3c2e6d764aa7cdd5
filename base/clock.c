#include "clock.h"
#include "err.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t clock_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t clock_mono_ms(void)
{
    return clock_mono_ns() / 1000000;
}

int64_t clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void clock_format_rfc3339(int64_t ms, char *buf, size_t n)
{
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void clock_format_rfc3339_ms(int64_t ms, char *buf, size_t n)
{
    int64_t secs = ms / 1000, frac = ms % 1000;
    if (frac < 0) { /* floor, so times before the epoch keep a positive fraction */
        secs--;
        frac += 1000;
    }
    time_t t = (time_t)secs;
    struct tm tm;
    char head[48];
    gmtime_r(&t, &tm);
    strftime(head, sizeof(head), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf, n, "%s.%03dZ", head, (int)frac);
}

int clock_parse_rfc3339(const char *s, int64_t *ms, struct err *err)
{
    struct tm tm;
    const char *p;
    int64_t frac_ms = 0, offset_s = 0;

    memset(&tm, 0, sizeof(tm));
    p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p)
        goto bad;
    if (*p == '.') {
        int digits = 0;
        p++;
        if (!isdigit((unsigned char)*p))
            goto bad;
        while (isdigit((unsigned char)*p)) {
            if (digits < 3) {
                frac_ms = frac_ms * 10 + (*p - '0');
                digits++;
            }
            p++;
        }
        while (digits++ < 3)
            frac_ms *= 10;
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int hh, mm;
        if (sscanf(p + 1, "%2d:%2d", &hh, &mm) != 2 || strlen(p) != 6)
            goto bad;
        offset_s = (hh * 3600 + mm * 60) * (*p == '+' ? 1 : -1);
        p += 6;
    } else {
        goto bad;
    }
    if (*p)
        goto bad;
    *ms = ((int64_t)timegm(&tm) - offset_s) * 1000 + frac_ms;
    return 0;
bad:
    return err_set(err, ERR_INVALID, "invalid timestamp '%s' (want RFC 3339)", s);
}
