/* proc_sched.c - what the kernel says of a thread's scheduling (proc_sched.h). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proc_sched.h"

/* Calls fn(task directory, ctx) for each thread of pid named comm, until it returns
 * nonzero. */
static void each_named(pid_t pid, const char *comm, int (*fn)(const char *dir, void *ctx),
                       void *ctx)
{
    char path[320], name[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int)pid, e->d_name);
        FILE *f = fopen(path, "r");
        int named = f && fgets(name, sizeof(name), f) && (name[strcspn(name, "\n")] = 0, 1) &&
                    !strcmp(name, comm);
        if (f)
            fclose(f);
        snprintf(path, sizeof(path), "/proc/%d/task/%s", (int)pid, e->d_name);
        if (named && fn(path, ctx))
            break;
    }
    if (d)
        closedir(d);
}

/* The policy (field 41 of stat) of the thread in dir into *ctx (an int); stops there. */
static int policy_of(const char *dir, void *ctx)
{
    char path[400], buf[1024];
    snprintf(path, sizeof(path), "%s/stat", dir);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* after the command: fields 3.. */
    for (int field = 2; field < 41 && p; field++)
        p = strchr(p + 1, ' ');
    if (p)
        *(int *)ctx = atoi(p + 1);
    return p != NULL;
}

/* The longer of *ctx (a uint64_t) and the se.slice line of the thread in dir. */
static int slice_of(const char *dir, void *ctx)
{
    char path[400], line[256];
    snprintf(path, sizeof(path), "%s/sched", dir);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof(line), f)) {
        uint64_t slice = !strncmp(line, "se.slice", 8) && strchr(line, ':')
                             ? strtoull(strchr(line, ':') + 1, NULL, 10)
                             : 0;
        if (slice > *(uint64_t *)ctx)
            *(uint64_t *)ctx = slice;
    }
    if (f)
        fclose(f);
    return 0;
}

int proc_sched_policy(pid_t pid, const char *comm)
{
    int policy = -1;
    each_named(pid, comm, policy_of, &policy);
    return policy;
}

uint64_t proc_sched_slice(pid_t pid, const char *comm)
{
    uint64_t slice = 0;
    each_named(pid, comm, slice_of, &slice);
    return slice;
}
