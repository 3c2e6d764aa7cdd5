#include "clock.h"
#include "err.h"
#include "numfmt.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z in seconds since the epoch. */
#define CLOCK__MIN_S (-62167219200LL)
#define CLOCK__MAX_S 253402300799LL

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

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm):
 * exact for every year, no time_t or timegm range to worry about. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

/* Floor division, so times before the epoch keep positive remainders. */
static int64_t floor_div(int64_t a, int64_t b, int64_t *rem)
{
    int64_t q = a / b, r = a % b;
    if (r < 0) {
        q--;
        r += b;
    }
    *rem = r;
    return q;
}

/* "YYYY-MM-DDTHH:MM:SS" of ms; any int64 formats (years past 9999 get more digits). */
static void format_head(int64_t ms, char *buf, size_t n, int64_t *frac)
{
    int64_t secs = floor_div(ms, 1000, frac), sod, y;
    int64_t days = floor_div(secs, 86400, &sod);
    int m, d;
    civil_from_days(days, &y, &m, &d);
    if (y < 0 || y > 9999 || n < 20) {
        snprintf(buf, n, "%04" PRId64 "-%02d-%02dT%02d:%02d:%02d", y, m, d, (int)(sod / 3600),
                 (int)(sod / 60 % 60), (int)(sod % 60));
        return;
    }
    /* the common case by hand: every object and audit record carries a time, and snprintf
     * was a tenth of an apply's formatting */
    int f[] = {(int)(y / 100),       (int)(y % 100), m, d, (int)(sod / 3600),
               (int)(sod / 60 % 60), (int)(sod % 60)};
    static const char sep[] = {0, 0, '-', '-', 'T', ':', ':'};
    char *q = buf;
    for (int i = 0; i < 7; i++) {
        if (sep[i])
            *q++ = sep[i];
        q = numfmt_pad(q, (unsigned)f[i], 2);
    }
    *q = '\0';
}

/* s[0..len) into buf of n bytes, cut and terminated as snprintf would. */
static void put_cut(char *buf, size_t n, const char *s, size_t len)
{
    if (!n)
        return;
    if (len > n - 1)
        len = n - 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
}

void clock_format_rfc3339(int64_t ms, char *buf, size_t n)
{
    int64_t frac;
    char head[72];
    format_head(ms, head, 64, &frac);
    size_t len = strlen(head);
    memcpy(head + len, "Z", 2);
    put_cut(buf, n, head, len + 1);
}

void clock_format_rfc3339_ms(int64_t ms, char *buf, size_t n)
{
    int64_t frac;
    char head[72];
    format_head(ms, head, 64, &frac);
    char *q = head + strlen(head);
    *q++ = '.';
    q = numfmt_pad(q, (unsigned)frac, 3);
    *q++ = 'Z';
    *q = '\0';
    put_cut(buf, n, head, (size_t)(q - head));
}

/* Exactly `digits` decimal digits at *p, advancing it; -1 when they are not there. */
static int fixed(const char **p, int digits)
{
    int v = 0;
    for (int i = 0; i < digits; i++, (*p)++) {
        if (!isdigit((unsigned char)**p))
            return -1;
        v = v * 10 + (**p - '0');
    }
    return v;
}

static int expect(const char **p, const char *one_of)
{
    if (!**p || !strchr(one_of, **p))
        return -1;
    (*p)++;
    return 0;
}

static int days_in_month(int y, int m)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* RFC 3339 section 5.6 strictly, as Go's time.RFC3339 reads it (T separator, no leap
 * second), with years 0000-9999 and the instant in that range, so every parsed time
 * formats back to itself. */
int clock_parse_rfc3339(const char *s, int64_t *ms, struct err *err)
{
    const char *p = s;
    int64_t frac_ms = 0, offset_s = 0;
    int y, mo, d, h, mi, sec;

    if (!p || (y = fixed(&p, 4)) < 0 || expect(&p, "-") || (mo = fixed(&p, 2)) < 0 ||
        expect(&p, "-") || (d = fixed(&p, 2)) < 0 || expect(&p, "Tt") || (h = fixed(&p, 2)) < 0 ||
        expect(&p, ":") || (mi = fixed(&p, 2)) < 0 || expect(&p, ":") || (sec = fixed(&p, 2)) < 0)
        goto bad;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 59)
        goto bad;
    if (*p == '.') {
        int digits = 0;
        p++;
        if (!isdigit((unsigned char)*p))
            goto bad;
        for (; isdigit((unsigned char)*p); p++)
            if (digits++ < 3)
                frac_ms = frac_ms * 10 + (*p - '0');
        for (; digits < 3; digits++)
            frac_ms *= 10;
    }
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '+' ? 1 : -1, oh, om;
        if ((oh = fixed(&p, 2)) < 0 || expect(&p, ":") || (om = fixed(&p, 2)) < 0 || oh > 23 ||
            om > 59)
            goto bad;
        offset_s = sign * (oh * 3600 + om * 60);
    } else {
        goto bad;
    }
    if (*p)
        goto bad;
    int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset_s;
    if (secs < CLOCK__MIN_S || secs > CLOCK__MAX_S)
        goto bad;
    *ms = secs * 1000 + frac_ms;
    return 0;
bad:
    return err_set(err, ERR_INVALID, "invalid timestamp '%s' (want RFC 3339)", s ? s : "");
}
