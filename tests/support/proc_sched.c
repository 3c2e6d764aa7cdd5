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

/* Field field of the stat of a thread in dir (ctx: its number in, its value out). */
struct stat_field {
    int field, value;
};

/* The field of the stat of the thread in dir into *ctx; stops there. */
static int field_of(const char *dir, void *ctx)
{
    struct stat_field *f = ctx;
    char path[400], buf[1024];
    snprintf(path, sizeof(path), "%s/stat", dir);
    FILE *fp = fopen(path, "r");
    size_t n = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
    if (fp)
        fclose(fp);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* after the command: fields 3.. */
    for (int field = 2; field < f->field && p; field++)
        p = strchr(p + 1, ' ');
    if (p)
        f->value = atoi(p + 1);
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
    struct stat_field f = {41, -1};
    each_named(pid, comm, field_of, &f);
    return f.value;
}

int proc_sched_nice(pid_t pid, const char *comm)
{
    struct stat_field f = {19, PROC_SCHED_NONE};
    each_named(pid, comm, field_of, &f);
    return f.value;
}

uint64_t proc_sched_slice(pid_t pid, const char *comm)
{
    uint64_t slice = 0;
    each_named(pid, comm, slice_of, &slice);
    return slice;
}

/* A thread's Cpus_allowed_list (ctx: the buffer and its size) from its status; stops there. */
struct cpus_list {
    char *buf;
    size_t n;
    int found;
};

static int cpus_of(const char *dir, void *ctx)
{
    struct cpus_list *c = ctx;
    char path[400], line[512];
    snprintf(path, sizeof(path), "%s/status", dir);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "Cpus_allowed_list:", 18) != 0)
            continue;
        char *v = line + 18 + strspn(line + 18, " \t");
        v[strcspn(v, "\n")] = 0;
        snprintf(c->buf, c->n, "%s", v);
        c->found = 1;
    }
    if (f)
        fclose(f);
    return 1;
}

int proc_sched_cpus(pid_t pid, const char *comm, char *buf, size_t n)
{
    struct cpus_list c = {buf, n, 0};
    each_named(pid, comm, cpus_of, &c);
    return c.found ? 0 : -1;
}
