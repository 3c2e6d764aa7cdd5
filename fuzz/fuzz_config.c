/*
 * fuzz_config.c - server_config_load on arbitrary file contents.
 *
 * The input is written to a temporary file (the loader reads a path). Invariant: a
 * loaded config keeps its required settings set.
 */
#include "fuzz.h"

#include <unistd.h>

#include "err.h"
#include "server.h"

static char path[64];

static void remove_file(void)
{
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!*path) {
        snprintf(path, sizeof(path), "/tmp/muster-fuzz-config-%d.yaml", (int)getpid());
        atexit(remove_file);
    }
    FILE *f = fopen(path, "wb");
    FUZZ_CHECK(f != NULL, "cannot write '%s'", path);
    FUZZ_CHECK(fwrite(data, 1, size, f) == size && fclose(f) == 0, "short write");

    struct server_config c;
    struct err err = ERR_INIT;
    server_config_init(&c);
    if (server_config_load(&c, path, &err) == 0) {
        FUZZ_CHECK(c.listen && *c.listen && c.data_dir && *c.data_dir, "listen/data_dir unset");
        FUZZ_CHECK(c.threads >= 1 && c.threads <= 256, "threads %d", c.threads);
        FUZZ_CHECK(c.body_limit > 0, "body_limit 0");
    } else {
        FUZZ_CHECK(*err.msg, "failure without a message");
    }
    server_config_release(&c);
    return 0;
}
