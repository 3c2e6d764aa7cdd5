/* main.c - musterd: parse the configuration and run until SIGTERM / SIGINT. */
#include <stdio.h>

#include "err.h"
#include "server.h"

#ifdef MUSTER_JEMALLOC_CONF
/* jemalloc's options, read when it starts (MALLOC_CONF adds to them). It serves a request of
 * 8 MiB or more ("oversize") from an arena of its own that gives the memory back at once, so
 * each big request body, read by the front end, forwarded and read again, faulted all its
 * pages in anew three times over (37 ms of a 12 MiB body's 50): 0 serves them from the
 * threads' arenas, which keep freed memory for reuse as long as the rest
 * (bench/README.md, "Allocation"). */
const char *malloc_conf = "oversize_threshold:0";
#endif

int main(int argc, char **argv)
{
    struct server_config c;
    struct err err = ERR_INIT;
    int done = 0, rc;

    server_config_init(&c);
    rc = server_args(argc, argv, &c, &done, &err);
    if (rc < 0) {
        fprintf(stderr, "musterd: %s\n", err.msg);
        server_config_release(&c);
        return 2;
    }
    if (!done)
        rc = server_run(&c, &err);
    if (rc < 0)
        fprintf(stderr, "musterd: %s\n", err.msg);
    server_config_release(&c);
    return rc < 0 ? 1 : 0;
}
