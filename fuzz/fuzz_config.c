/*
 * fuzz_config.c - server_config_load on arbitrary file contents.
 *
 * The loader reads a path, so the input goes into a memfd opened by its /proc path (no
 * disk I/O per run). Invariant: a loaded config keeps its required settings sane, and a CPU
 * list it holds (cycle_cpus, front_cpus) names a CPU and is written back as a list that reads
 * as the same CPUs.
 */
#include "fuzz.h"

#include <sys/mman.h>
#include <unistd.h>

#include "cpus.h"
#include "err.h"
#include "server.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("muster-fuzz-config.yaml", 0);
        FUZZ_CHECK(fd >= 0, "memfd_create failed");
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    }
    FUZZ_CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size,
               "cannot write the input");

    struct server_config c;
    struct err err = ERR_INIT;
    server_config_init(&c);
    if (server_config_load(&c, path, &err) == 0) {
        FUZZ_CHECK(c.listen && *c.listen && c.data_dir && *c.data_dir, "listen/data_dir unset");
        FUZZ_CHECK(c.threads >= 1 && c.threads <= 256, "threads %d", c.threads);
        FUZZ_CHECK(c.body_limit > 0, "body_limit 0");
        FUZZ_CHECK(c.cycle_interval >= 0 && c.grace_ms >= 0, "negative durations");
        const struct cpus *lists[] = {&c.cycle_cpus, &c.front_cpus};
        for (size_t i = 0; i < 2; i++) {
            if (!lists[i]->set)
                continue;
            static char text[8192];
            struct cpus back;
            cpus_format(lists[i], text, sizeof(text));
            FUZZ_CHECK(CPU_COUNT(&lists[i]->mask) > 0, "a CPU list of no CPU");
            FUZZ_CHECK(cpus_parse(text, &back, NULL) == 0 && CPU_EQUAL(&back.mask, &lists[i]->mask),
                       "the list '%s' does not read back as itself", text);
        }
    } else {
        FUZZ_CHECK(*err.msg, "failure without a message");
    }
    server_config_release(&c);
    return 0;
}
