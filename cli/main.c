/*
 * main.c - the `muster` command; everything is in the muster_cli library.
 */
#include "cli.h"

int main(int argc, char **argv)
{
    return cli_main(argc, argv);
}
