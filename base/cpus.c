/* cpus.c - CPU lists (cpus.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cpus.h"
#include "err.h"

/* A CPU number at *p of list text (digits only, below CPU_SETSIZE): 0 with *v and *p past
 * it, or ERR_INVALID naming where. */
static int number(const char *text, const char **p, int *v, struct err *err)
{
    const char *s = *p;
    long n = 0;
    int ok = *s >= '0' && *s <= '9';
    while (ok && *s >= '0' && *s <= '9') {
        n = n * 10 + (*s++ - '0');
        ok = n < CPU_SETSIZE;
    }
    if (!ok)
        return err_set(err, ERR_INVALID,
                       "CPU list '%s': expected a CPU number below %d at offset %zu", text,
                       CPU_SETSIZE, (size_t)(*p - text));
    *p = s;
    *v = (int)n;
    return 0;
}

int cpus_parse(const char *text, struct cpus *out, struct err *err)
{
    struct cpus c = {.set = 1};
    const char *p = text;
    CPU_ZERO(&c.mask);
    if (!*text)
        return err_set(err, ERR_INVALID,
                       "the CPU list is empty (write CPUs as '0', '2-3' or '0,4-7')");
    for (;;) {
        int lo = 0, hi = 0, rc;
        if ((rc = number(text, &p, &lo, err)) < 0)
            return rc;
        hi = lo;
        if (*p == '-') {
            p++;
            if ((rc = number(text, &p, &hi, err)) < 0)
                return rc;
            if (hi < lo)
                return err_set(err, ERR_INVALID, "CPU list '%s': the range %d-%d runs backwards",
                               text, lo, hi);
        }
        for (int i = lo; i <= hi; i++)
            CPU_SET((size_t)i, &c.mask);
        if (!*p)
            break;
        if (*p != ',')
            return err_set(err, ERR_INVALID,
                           "CPU list '%s': unexpected '%c' at offset %zu (write CPUs as '0', "
                           "'2-3' or '0,4-7'; strides are not read)",
                           text, *p, (size_t)(p - text));
        p++;
    }
    *out = c;
    return 0;
}

/* The CPUs of mask as a list into buf (truncated, terminated). */
static void format_mask(const cpu_set_t *mask, char *buf, size_t n)
{
    size_t len = 0;
    if (n)
        buf[0] = '\0';
    for (int i = 0; i < CPU_SETSIZE && len < n; i++) {
        if (!CPU_ISSET((size_t)i, mask))
            continue;
        int j = i;
        while (j + 1 < CPU_SETSIZE && CPU_ISSET((size_t)(j + 1), mask))
            j++;
        int w = j > i ? snprintf(buf + len, n - len, "%s%d-%d", len ? "," : "", i, j)
                      : snprintf(buf + len, n - len, "%s%d", len ? "," : "", i);
        len += w > 0 ? (size_t)w : 0;
        i = j;
    }
}

void cpus_format(const struct cpus *c, char *buf, size_t n)
{
    if (!c->set) {
        if (n)
            buf[0] = '\0';
        return;
    }
    format_mask(&c->mask, buf, n);
}

int cpus_allowed(const struct cpus *c, struct err *err)
{
    cpu_set_t may, outside;
    char a[256], b[256];
    if (!c->set)
        return 0;
    if (sched_getaffinity(0, sizeof(may), &may) != 0)
        return err_set(err, ERR_INVALID, "cannot read the CPUs this process may run on: %s",
                       strerror(errno));
    CPU_AND(&outside, &c->mask, &may);
    CPU_XOR(&outside, &outside, &c->mask); /* c's CPUs not in may */
    if (CPU_COUNT(&outside) == 0)
        return 0;
    format_mask(&outside, a, sizeof(a));
    format_mask(&may, b, sizeof(b));
    int many = CPU_COUNT(&outside) > 1;
    return err_set(err, ERR_INVALID, "CPU%s %s: not %s this process may run on (it may run on %s)",
                   many ? "s" : "", a, many ? "ones" : "one", b);
}

int cpus_pin(const struct cpus *c)
{
    if (!c->set)
        return 0;
    return pthread_setaffinity_np(pthread_self(), sizeof(c->mask), &c->mask);
}
