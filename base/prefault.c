/* prefault.c - memory made present ahead of its filler (prefault.h). */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "alloc.h"
#include "log.h"
#include "prefault.h"
#include "thread.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define SLICE ((size_t)2 << 20) /* of each range in turn */

struct prefault {
    pthread_t th;
    uintptr_t at[PREFAULT_MAX], end[PREFAULT_MAX]; /* page-aligned, what is left */
    size_t n;
};

static void *run(void *arg)
{
    struct prefault *pf = arg;
    thread_background("muster-prefault");
    for (int left = 1; left;) {
        left = 0;
        for (size_t i = 0; i < pf->n; i++) {
            if (pf->at[i] >= pf->end[i])
                continue;
            size_t len = pf->end[i] - pf->at[i] < SLICE ? pf->end[i] - pf->at[i] : SLICE;
            if (madvise((void *)pf->at[i], len, MADV_POPULATE_WRITE) != 0 && errno == EINVAL) {
                log_debug("prefault: the kernel does not populate ahead: %s", strerror(errno));
                return NULL;
            }
            pf->at[i] += len;
            left |= pf->at[i] < pf->end[i];
        }
    }
    return NULL;
}

struct prefault *prefault_start(void *const *p, const size_t *len, size_t n)
{
    struct prefault *pf = xmalloc(sizeof(*pf));
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    pf->n = 0;
    for (size_t i = 0; i < n && i < PREFAULT_MAX; i++) {
        uintptr_t a = ((uintptr_t)p[i] + page - 1) & ~(page - 1);
        uintptr_t e = ((uintptr_t)p[i] + len[i]) & ~(page - 1);
        if (p[i] && e > a) {
            pf->at[pf->n] = a;
            pf->end[pf->n++] = e;
        }
    }
    if (pf->n && pthread_create(&pf->th, NULL, run, pf) == 0)
        return pf;
    free(pf);
    return NULL;
}

void prefault_join(struct prefault *pf)
{
    if (!pf)
        return;
    pthread_join(pf->th, NULL);
    free(pf);
}
