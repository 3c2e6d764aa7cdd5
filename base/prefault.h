/*
 * prefault.h - memory made present on a thread of its own, ahead of the one that fills it.
 *
 * A big array allocated fresh (the view's pods and jobs on a restart: 300 MiB for the
 * 500,000 pods of the 50,000-node benchmark) costs its filler a page fault every 4 KiB:
 * a third of the restart's loading thread went to them. Here another thread asks the
 * kernel for those pages first (madvise MADV_POPULATE_WRITE, Linux 5.14): the contents
 * are untouched, so it runs beside the writes to the same pages, and the filler finds
 * them present. A kernel without it refuses (EINVAL) and the filler faults them in as
 * before; so does every page the helper has not reached yet.
 */
#ifndef MUSTER_PREFAULT_H
#define MUSTER_PREFAULT_H

#include <stddef.h>

#define PREFAULT_MAX 8 /* ranges of one prefault_start */

struct prefault;

/* Starts making the n (at most PREFAULT_MAX) ranges [p[i], p[i] + len[i]) present, a slice
 * of each in turn so that every range's start comes early (fillers write from the start, or
 * anywhere at once for a hash table). Only the whole pages inside each range are touched.
 * A range freed before prefault_join is harmless: madvise then fails on it, or makes
 * present memory the allocator kept. NULL when no thread could start (nothing is done). */
struct prefault *prefault_start(void *const *p, const size_t *len, size_t n);
/* Waits for the helper and frees it. NULL-safe. */
void prefault_join(struct prefault *pf);

#endif
