/* proc_sched.c - what the kernel says of a thread's scheduling (proc_sched.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_sched.h"

/* The se.slice line of one thread's sched file, 0 when it has none. */
static uint64_t slice_of(const char *path)
{
    char line[256];
    uint64_t slice = 0;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "se.slice", 8) && strchr(line, ':'))
            slice = strtoull(strchr(line, ':') + 1, NULL, 10);
    if (f)
        fclose(f);
    return slice;
}

uint64_t proc_sched_slice(pid_t pid, const char *comm)
{
    char path[320], name[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    uint64_t slice = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid, e->d_name);
        FILE *f = fopen(path, "r");
        int named = f && fgets(name, sizeof(name), f) && (name[strcspn(name, "\n")] = 0, 1) &&
                    !strcmp(name, comm);
        if (f)
            fclose(f);
        if (!named)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%s/sched", (int)pid, e->d_name);
        uint64_t one = slice_of(path);
        slice = one > slice ? one : slice;
    }
    if (d)
        closedir(d);
    return slice;
}
