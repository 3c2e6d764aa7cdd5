/* static.c - the web UI's files, served from the UI directory for GET outside /api/. */
#include <civetweb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "handlers.h"
#include "http.h"

/* 1 when the path could leave the UI directory or names a hidden file. */
static int unsafe(const char *path)
{
    return strstr(path, "/.") != NULL || strchr(path, '\\') != NULL;
}

void api__static(struct req *r)
{
    struct stat sb;
    char *file = NULL;

    if (unsafe(r->path)) {
        api__reply_errorf(r, ERR_NOT_FOUND, "no file for '%s'", r->path);
        return;
    }
    file = xasprintf("%s%s", r->api->ui_dir, r->path);
    if (stat(file, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        char *index = xasprintf("%s%sindex.html", file, file[strlen(file) - 1] == '/' ? "" : "/");
        free(file);
        file = index;
    }
    if (stat(file, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        api__reply_errorf(r, ERR_NOT_FOUND, "no file for '%s'", r->path);
    } else {
        __atomic_add_fetch(&r->api->requests, 1, __ATOMIC_RELAXED); /* as send_head counts */
        __atomic_add_fetch(&r->api->by_class[2], 1, __ATOMIC_RELAXED);
        mg_send_file(r->conn, file);
        r->status = 200;
        r->bytes = (size_t)sb.st_size;
    }
    free(file);
}
