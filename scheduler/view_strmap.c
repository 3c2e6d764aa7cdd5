/*
 * view_strmap.c - open-addressing string -> int map (linear probing, FNV-1a).
 *
 * Keys are owned copies. Deletion uses tombstones so probe chains stay intact;
 * a rehash (on growth) drops them.
 */
#include <stdlib.h>
#include <string.h>

#include "view.h"

#define TOMB ((char *)1)

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

void sched__strmap_init(struct sched_strmap *m)
{
    memset(m, 0, sizeof(*m));
}

void sched__strmap_free(struct sched_strmap *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i] && m->keys[i] != TOMB)
            free(m->keys[i]);
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

static void strmap_grow(struct sched_strmap *m)
{
    size_t ocap = m->cap;
    char **okeys = m->keys;
    int *ovals = m->vals;

    m->cap = ocap ? ocap * 2 : 64;
    m->keys = xcalloc(m->cap, sizeof(*m->keys));
    m->vals = xcalloc(m->cap, sizeof(*m->vals));
    m->used = 0;
    for (size_t i = 0; i < ocap; i++) {
        if (!okeys[i] || okeys[i] == TOMB)
            continue;
        size_t j = hash_str(okeys[i]) & (m->cap - 1);
        while (m->keys[j])
            j = (j + 1) & (m->cap - 1);
        m->keys[j] = okeys[i];
        m->vals[j] = ovals[i];
        m->used++;
    }
    free(okeys);
    free(ovals);
}

int sched__strmap_get(const struct sched_strmap *m, const char *key)
{
    if (!m->cap)
        return -1;
    size_t j = hash_str(key) & (m->cap - 1);
    while (m->keys[j]) {
        if (m->keys[j] != TOMB && strcmp(m->keys[j], key) == 0)
            return m->vals[j];
        j = (j + 1) & (m->cap - 1);
    }
    return -1;
}

void sched__strmap_put(struct sched_strmap *m, const char *key, int val)
{
    if ((m->used + 1) * 4 >= m->cap * 3)
        strmap_grow(m);
    size_t j = hash_str(key) & (m->cap - 1);
    size_t tomb = (size_t)-1;
    while (m->keys[j]) {
        if (m->keys[j] == TOMB) {
            if (tomb == (size_t)-1)
                tomb = j;
        } else if (strcmp(m->keys[j], key) == 0) {
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
    m->keys[j] = xstrdup(key);
    m->vals[j] = val;
    m->count++;
}

void sched__strmap_del(struct sched_strmap *m, const char *key)
{
    if (!m->cap)
        return;
    size_t j = hash_str(key) & (m->cap - 1);
    while (m->keys[j]) {
        if (m->keys[j] != TOMB && strcmp(m->keys[j], key) == 0) {
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
