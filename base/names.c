/* names.c - closed sets of names: lookup and a joined list for messages. */
#include "names.h"

#include <stdio.h>
#include <string.h>

int names_index(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; name && i < n; i++)
        if (!strcmp(names[i], name))
            return (int)i;
    return -1;
}

const char *names_join(const char *const *names, size_t n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
    return buf;
}
