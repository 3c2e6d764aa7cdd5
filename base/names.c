/* names.c - closed sets of names: lookup and a joined list for messages. */
#include "names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "err.h"

int names_index(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (!strcmp(names[i], name))
            return (int)i;
    return -1;
}

/* The names joined with ", " into buf (truncated to len). Returns buf. */
static const char *names_join(const char *const *names, size_t n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
    return buf;
}

int names_parse(const char *const *names, size_t n, const char *name, const char *what,
                const char *field, struct err *err)
{
    int k = names_index(names, n, name);
    if (k >= 0)
        return k;
    size_t len = 1;
    for (size_t i = 0; i < n; i++)
        len += strlen(names[i]) + 2;
    char *list = xcalloc(len, 1);
    names_join(names, n, list, len);
    err_setf(err, ERR_INVALID, field, "unknown %s '%s' (one of %s)", what, name ? name : "", list);
    free(list);
    return ERR_INVALID;
}
