/* main.c - musterd: parse the configuration and run until SIGTERM / SIGINT. */
#include <stdio.h>

#include "err.h"
#include "server.h"

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
