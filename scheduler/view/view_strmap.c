/*
 * view_strmap.c - open-addressing string -> int map (linear probing).
 *
 * Keys are owned copies, or borrowed from the values' owners in a map made so. Each slot keeps its
 * key's 32-bit hash beside it (never 0: 0 marks an empty slot), so a probe reads the hash array
 * alone and dereferences a key only when the hashes match, and a rehash never hashes a key again.
 * The hash is FNV-1a finished with a 64-bit mixer: keys that differ only in their last characters
 * ("bench/pod-000123") land far apart in the low bits that pick the slot. The table stays at most
 * half full (a miss then probes about 2.5 slots). Deletion uses tombstones so probe chains stay
 * intact; a rehash (on growth) drops them. Also the view's key joins ("ns/name", "p:id",
 * "key=value"), made per pod without stdio.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "strmap.h"

#define TOMB ((char *)1)
#define MIN_CAP 64

uint32_t sched__strmap_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    h ^= h >> 33; /* murmur3's fmix64 */
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return (uint32_t)h ? (uint32_t)h : 1; /* 0: empty */
}

void sched__strmap_init(struct sched_strmap *m)
{
    memset(m, 0, sizeof(*m));
}

void sched__strmap_init_borrowed(struct sched_strmap *m)
{
    sched__strmap_init(m);
    m->borrowed = 1;
}

void sched__strmap_free(struct sched_strmap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->cap && !m->borrowed; i++)
        if (m->keys[i] && m->keys[i] != TOMB)
            free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    free(m->hashes);
    int borrowed = m->borrowed;
    memset(m, 0, sizeof(*m));
    m->borrowed = borrowed;
}

/* Rehashes into a table of cap slots (a power of two above twice the entries). */
static void strmap_rehash(struct sched_strmap *m, size_t cap)
{
    size_t ocap = m->cap;
    char **okeys = m->keys;
    int *ovals = m->vals;
    uint32_t *ohashes = m->hashes;

    m->cap = cap;
    m->keys = xcalloc(m->cap, sizeof(*m->keys));
    m->vals = xcalloc(m->cap, sizeof(*m->vals));
    m->hashes = xcalloc(m->cap, sizeof(*m->hashes));
    m->used = 0;
    for (size_t i = 0; i < ocap; i++) {
        if (!okeys[i] || okeys[i] == TOMB)
            continue;
        size_t j = ohashes[i] & (m->cap - 1);
        while (m->hashes[j])
            j = (j + 1) & (m->cap - 1);
        m->keys[j] = okeys[i];
        m->vals[j] = ovals[i];
        m->hashes[j] = ohashes[i];
        m->used++;
    }
    free(okeys);
    free(ovals);
    free(ohashes);
}

void sched__strmap_reserve(struct sched_strmap *m, size_t n)
{
    size_t cap = m->cap ? m->cap : MIN_CAP;
    while ((n + 1) * 2 > cap)
        cap *= 2;
    if (cap > m->cap)
        strmap_rehash(m, cap);
}

int sched__strmap_get(const struct sched_strmap *m, const char *key)
{
    return m->cap ? sched__strmap_get_h(m, key, sched__strmap_hash(key)) : -1;
}

int sched__strmap_get_h(const struct sched_strmap *m, const char *key, uint32_t h)
{
    if (!m->cap)
        return -1;
    size_t j = h & (m->cap - 1);
    for (uint32_t hj; (hj = m->hashes[j]) != 0; j = (j + 1) & (m->cap - 1))
        if (hj == h && m->keys[j] != TOMB && strcmp(m->keys[j], key) == 0)
            return m->vals[j];
    return -1;
}

void sched__strmap_prefetch_h(const struct sched_strmap *m, uint32_t h)
{
    if (!m->cap)
        return;
    size_t j = h & (m->cap - 1);
    __builtin_prefetch(&m->hashes[j], 1);
    __builtin_prefetch(&m->keys[j], 1);
    __builtin_prefetch(&m->vals[j], 1);
}

void sched__strmap_put(struct sched_strmap *m, const char *key, int val)
{
    sched__strmap_put_h(m, key, sched__strmap_hash(key), val);
}

void sched__strmap_put_h(struct sched_strmap *m, const char *key, uint32_t h, int val)
{
    if ((m->used + 1) * 2 > m->cap) { /* full of entries: grow; of tombstones: drop them */
        size_t cap = m->cap ? m->cap : MIN_CAP;
        strmap_rehash(m, (m->count + 1) * 2 > cap ? cap * 2 : cap);
    }
    size_t j = h & (m->cap - 1);
    size_t tomb = (size_t)-1;
    int tombs = m->used > m->count; /* else no slot need be looked at for one */
    while (m->hashes[j]) {
        if (tombs && m->keys[j] == TOMB) {
            if (tomb == (size_t)-1)
                tomb = j;
        } else if (m->hashes[j] == h && strcmp(m->keys[j], key) == 0) {
            if (m->borrowed) /* the new owner's */
                m->keys[j] = (char *)key;
            m->vals[j] = val;
            return;
        }
        j = (j + 1) & (m->cap - 1);
    }
    if (tomb != (size_t)-1) {
        j = tomb;
    } else {
        m->used++;
    }
    m->keys[j] = m->borrowed ? (char *)key : xstrdup(key);
    m->vals[j] = val;
    m->hashes[j] = h;
    m->count++;
}

void sched__strmap_del(struct sched_strmap *m, const char *key)
{
    if (!m->cap)
        return;
    uint32_t h = sched__strmap_hash(key);
    size_t j = h & (m->cap - 1);
    while (m->hashes[j]) {
        if (m->hashes[j] == h && m->keys[j] != TOMB && strcmp(m->keys[j], key) == 0) {
            if (!m->borrowed)
                free(m->keys[j]);
            m->keys[j] = TOMB;
            m->count--;
            return;
        }
        j = (j + 1) & (m->cap - 1);
    }
}

size_t sched__strmap_next(const struct sched_strmap *m, size_t i)
{
    while (i < m->cap && (!m->keys[i] || m->keys[i] == TOMB))
        i++;
    return i < m->cap ? i : m->cap;
}

void sched__str_join_to(char *buf, size_t n, const char *a, char sep, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (!n)
        return;
    if (la > n - 1)
        la = n - 1;
    memcpy(buf, a, la);
    if (la < n - 1) {
        buf[la++] = sep;
        if (lb > n - 1 - la)
            lb = n - 1 - la;
        memcpy(buf + la, b, lb);
        la += lb;
    }
    buf[la] = '\0';
}

char *sched__str_join(const char *a, char sep, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = xmalloc(la + lb + 2);
    memcpy(s, a, la);
    s[la] = sep;
    memcpy(s + la + 1, b, lb + 1);
    return s;
}
