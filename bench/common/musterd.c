/* musterd.c - see musterd.h. */
#include "musterd.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "alloc.h"

pid_t bench_musterd_start(const char *dir, const char *name, const char *const *extra, int *port)
{
    char *data = xasprintf("%s/%s", dir, name), *port_file = xasprintf("%s/%s.port", dir, name);
    char *bin =
        xasprintf("%s/musterd", getenv("MUSTER_BIN_DIR") ? getenv("MUSTER_BIN_DIR") : "build/bin");
    const char *base[] = {bin,           "--data-dir", data,          "--listen", "127.0.0.1:0",
                          "--port-file", port_file,    "--log-level", "warn"};
    size_t nbase = sizeof(base) / sizeof(base[0]), nextra = 0;
    while (extra && extra[nextra])
        nextra++;
    const char **argv = xcalloc(nbase + nextra + 1, sizeof(*argv));
    for (size_t i = 0; i < nbase; i++)
        argv[i] = base[i];
    for (size_t i = 0; i < nextra; i++)
        argv[nbase + i] = extra[i];
    pid_t pid = fork();
    if (pid == 0) {
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    *port = 0;
    for (int i = 0; i < 1000 && !*port; i++) {
        FILE *f = fopen(port_file, "r");
        if (f && fscanf(f, "%d", port) != 1)
            *port = 0;
        if (f)
            fclose(f);
        if (!*port)
            usleep(10000);
    }
    if (!*port) {
        fprintf(stderr, "musterd did not start (is %s built?)\n", bin);
        exit(1);
    }
    free(argv);
    free(data);
    free(port_file);
    free(bin);
    return pid;
}
