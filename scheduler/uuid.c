/*
 * uuid.c - metadata.uid of new objects: version 4 UUIDs from getrandom.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "core.h"
#include "log.h"

/* Random bytes from getrandom, taken 4 KiB at a time: one system call per 256 uids instead of
 * one per object. Per thread, no lock: an apply of many objects runs on one thread (a
 * manifests request on its own), a mirror batch on the mirror's; a forked child drops what
 * its parent had left, so the two never hand out the same bytes. */
static __thread unsigned char pool[4096];
static __thread size_t left;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void pool_drop(void)
{
    left = 0;
}

static void atfork_register(void)
{
    pthread_atfork(NULL, NULL, pool_drop);
}

static void random_bytes(unsigned char *out, size_t n)
{
    pthread_once(&atfork_once, atfork_register);
    while (n) {
        if (!left) {
            size_t got = 0;
            while (got < sizeof(pool)) {
                ssize_t r = getrandom(pool + got, sizeof(pool) - got, 0);
                if (r > 0)
                    got += (size_t)r;
                else if (errno != EINTR) { /* ENOSYS, or a seccomp filter: no uid is safe */
                    log_error("getrandom: %s", strerror(errno));
                    abort();
                }
            }
            left = sizeof(pool);
        }
        size_t k = n < left ? n : left;
        memcpy(out, pool + sizeof(pool) - left, k);
        memset(pool + sizeof(pool) - left, 0, k); /* handed out once */
        left -= k;
        out += k;
        n -= k;
    }
}

void sched__uuid_v4(char out[37])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char b[16];
    random_bytes(b, sizeof(b));
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    char *q = out;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *q++ = '-';
        *q++ = hex[b[i] >> 4];
        *q++ = hex[b[i] & 15];
    }
    *q = '\0';
}
