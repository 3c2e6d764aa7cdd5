/*
 * strmap.h - the open-addressing string map every lookup by name in the view goes through
 * (view_strmap.c). Calls nothing but base/.
 */
#ifndef MUSTER_SCHED_STRMAP_H
#define MUSTER_SCHED_STRMAP_H

#include <stddef.h>
#include <stdint.h>

/* ---- string map (view_strmap.c) ---- */
struct sched_strmap {
    char **keys;
    int *vals;
    uint32_t *hashes; /* each slot's key's hash */
    size_t cap, used, count;
    int borrowed; /* the keys are the values' owners' (sched__strmap_init_borrowed) */
};
void sched__strmap_init(struct sched_strmap *m);
/* A map whose keys belong to what its values name (a pod's key, a job's): put keeps the
 * pointer, which must live until that key is deleted or the map freed, and neither frees
 * it. For the maps with an entry a pod: a copy of each key is an allocation and a page
 * touched per pod. */
void sched__strmap_init_borrowed(struct sched_strmap *m);
void sched__strmap_free(struct sched_strmap *m);
/* Value or -1 when absent. */
int sched__strmap_get(const struct sched_strmap *m, const char *key);
void sched__strmap_put(struct sched_strmap *m, const char *key, int val);
/* key's hash, for the _h calls below: a key looked up and then put is hashed once. */
uint32_t sched__strmap_hash(const char *key);
int sched__strmap_get_h(const struct sched_strmap *m, const char *key, uint32_t h);
void sched__strmap_put_h(struct sched_strmap *m, const char *key, uint32_t h, int val);
void sched__strmap_del(struct sched_strmap *m, const char *key);
/* A hint: fetches the slot a key of hash h hashes to (its hash, key and value), so that a
 * get or put of that key soon after does not wait for memory. Changes nothing. */
void sched__strmap_prefetch_h(const struct sched_strmap *m, uint32_t h);
/* Makes room for n entries in all, so that putting them does not rehash. */
void sched__strmap_reserve(struct sched_strmap *m, size_t n);
/* The first occupied slot at or after i (m->cap when none): for (i = next(m, 0); i < m->cap;
 * i = next(m, i + 1)) visits keys[i] / vals[i] of every entry. */
size_t sched__strmap_next(const struct sched_strmap *m, size_t i);
/* "<a><sep><b>" into buf of n bytes, cut and terminated as snprintf would. */
void sched__str_join_to(char *buf, size_t n, const char *a, char sep, const char *b);
/* "<a><sep><b>", new. */
char *sched__str_join(const char *a, char sep, const char *b);

#endif
