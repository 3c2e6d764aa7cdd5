/*
 * why_mid.c - a why document's text with its job's id marked (why_class.c's class
 * template, the memo's shared middle part, why_memo.c): every occurrence of the id replaced
 * by the marker byte \x01, which JSON text never holds raw (the writer escapes control
 * characters), so marking and unmarking is the identity whatever the id occurs in; and
 * struct why_mid, such a text counted by reference.
 */
#include <stdlib.h>
#include <string.h>

#include "why.h"

#define MARK '\x01'

char *sched__why_mark(const char *s, size_t len, const char *id)
{
    size_t il = strlen(id);
    char *out = xmalloc(len + 1), *o = out;
    const char *p = s, *end = s + len;
    for (const char *hit; (hit = memmem(p, (size_t)(end - p), id, il)) != NULL; p = hit + il) {
        memcpy(o, p, (size_t)(hit - p));
        o += hit - p;
        *o++ = MARK;
    }
    memcpy(o, p, (size_t)(end - p));
    o[end - p] = '\0';
    return out;
}

char *sched__why_unmark(const char *s, const char *id)
{
    size_t il = strlen(id), sl = strlen(s), n = 0;
    const char *end = s + sl;
    for (const char *p = s; (p = memchr(p, MARK, (size_t)(end - p))) != NULL; p++)
        n++;
    char *out = xmalloc(sl + n * il + 1), *o = out;
    for (const char *p = s;;) {
        const char *hit = memchr(p, MARK, (size_t)(end - p));
        size_t run = (size_t)((hit ? hit : end) - p);
        memcpy(o, p, run);
        o += run;
        if (!hit)
            break;
        memcpy(o, id, il);
        o += il;
        p = hit + 1;
    }
    *o = '\0';
    return out;
}

struct why_mid *sched__why_mid_new(char *text, int marked)
{
    struct why_mid *m = xcalloc(1, sizeof(*m));
    *m = (struct why_mid){1, marked, text};
    return m;
}

struct why_mid *sched__why_mid_ref(struct why_mid *m)
{
    if (m)
        m->refs++;
    return m;
}

void sched__why_mid_unref(struct why_mid *m)
{
    if (m && --m->refs == 0) {
        free(m->text);
        free(m);
    }
}

/* plain is marked with its markers replaced by id (as sched__why_unmark makes it). */
static int unmarked_eq(const char *plain, const char *marked, const char *id)
{
    size_t il = strlen(id);
    for (;;) {
        const char *hit = strchr(marked, MARK);
        size_t run = hit ? (size_t)(hit - marked) : strlen(marked);
        if (strncmp(plain, marked, run))
            return 0;
        plain += run;
        if (!hit)
            return *plain == '\0';
        if (strncmp(plain, id, il))
            return 0;
        plain += il;
        marked = hit + 1;
    }
}

int sched__why_mid_eq(const struct why_mid *a, const struct why_mid *b, const char *id)
{
    if (!a || !b)
        return a == b;
    if (a == b || a->marked == b->marked) /* marking one id is one to one */
        return a == b || !strcmp(a->text, b->text);
    return a->marked ? unmarked_eq(b->text, a->text, id) : unmarked_eq(a->text, b->text, id);
}
