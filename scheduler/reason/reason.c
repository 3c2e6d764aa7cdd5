/*
 * reason.c - the reason codes (WHY_MAP), the typed blockers an attempt collects and the
 * preemption verdict: the vocabulary every part of the scheduler decides in.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "fmt.h"
#include "reason.h"

static const struct {
    const char *name;
    enum why_class cls;
} codes[] = {
#define WHY__ROW(name, str, cls) {str, WHY_CLASS_##cls},
    WHY_MAP(WHY__ROW)
#undef WHY__ROW
};

const char *why_code_name(int code)
{
    return code >= 0 && code < WHY_CODE_COUNT ? codes[code].name : "Unknown";
}

int why_code_from_name(const char *name)
{
    for (int k = 0; name && k < WHY_CODE_COUNT; k++)
        if (!strcmp(codes[k].name, name))
            return k;
    return -1;
}

enum why_class why_code_class(int code)
{
    return code >= 0 && code < WHY_CODE_COUNT ? codes[code].cls : WHY_CLASS_WAITING;
}

const char *why_class_name(enum why_class cls)
{
    static const char *const names[] = {"NEVER",    "POLICY", "ORDER",      "CAPACITY",
                                        "TOPOLOGY", "GANG",   "PREEMPTION", "WAITING"};
    return (unsigned)cls < sizeof(names) / sizeof(names[0]) ? names[cls] : "WAITING";
}

const char *sched__preempt_count(long n, char *buf, size_t len)
{
    char digits[32];
    int nd = fmt_snprintf(digits, sizeof(digits), "%ld", n < 0 ? -n : n);
    size_t o = 0;
    if (n < 0 && o + 1 < len)
        buf[o++] = '-';
    for (int i = 0; i < nd && o + 2 < len; i++) {
        if (i && (nd - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = 0;
    return buf;
}

/* ---- blockers ---- */

void sched__blocker_add(struct sched_blockers *bs, enum why_code code, json_t *extra,
                        const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    fmt_vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    XGROW(bs->b, bs->n + 1, bs->cap);
    bs->b[bs->n++] = (struct sched_blocker){code, xstrdup(msg), extra};
}

void sched__blockers_take(struct sched_blockers *dst, struct sched_blockers *src)
{
    if (!src->n)
        return; /* src->b may be NULL, which memcpy may not be given */
    XGROW(dst->b, dst->n + src->n, dst->cap);
    memcpy(dst->b + dst->n, src->b, src->n * sizeof(*src->b));
    dst->n += src->n;
    src->n = 0;
}

void sched__blockers_release(struct sched_blockers *bs)
{
    for (size_t i = 0; i < bs->n; i++) {
        free(bs->b[i].message);
        json_decref(bs->b[i].extra);
    }
    free(bs->b);
    memset(bs, 0, sizeof(*bs));
}

const struct sched_blocker *sched__blockers_primary(const struct sched_blockers *bs)
{
    const struct sched_blocker *best = NULL;
    for (size_t i = 0; i < bs->n; i++)
        if (!best || bs->b[i].code < best->code)
            best = &bs->b[i];
    return best;
}

void sched__preempt_verdict_release(struct sched_preempt_verdict *v)
{
    json_decref(v->detail);
    memset(v, 0, sizeof(*v));
    v->code = -1;
}
