/*
 * limits.c - token buckets by key (an identity's name, a client address).
 *
 * A small fixed table under one mutex: a request touches it once, and the keys that
 * matter (identities, attacking addresses) are few. When the table is full, the bucket
 * touched least recently is reused: a forgotten key starts with a full bucket, which can
 * only let a client through early, never refuse one wrongly.
 */
#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "alloc.h"

#define KEY_MAX 256

struct bucket {
    char key[KEY_MAX]; /* "" when free */
    double tokens;
    int64_t at_ns; /* when tokens was last brought up to date */
};

struct api_limits {
    pthread_mutex_t mu;
    size_t n;
    struct bucket *b;
};

struct api_limits *api__limits_new(size_t slots)
{
    struct api_limits *l = xcalloc(1, sizeof(*l));

    pthread_mutex_init(&l->mu, NULL);
    l->n = slots ? slots : 1;
    l->b = xcalloc(l->n, sizeof(*l->b));
    return l;
}

void api__limits_free(struct api_limits *l)
{
    if (!l)
        return;
    pthread_mutex_destroy(&l->mu);
    free(l->b);
    free(l);
}

static double burst_of(struct api_rate rate)
{
    return rate.burst > 0 ? rate.burst : fmax(1.0, rate.per_second);
}

/* key's bucket, refilled up to now; a new or reused one starts full. Under l->mu. */
static struct bucket *bucket_at(struct api_limits *l, const char *key, struct api_rate rate,
                                int64_t now_ns)
{
    struct bucket *found = NULL, *oldest = &l->b[0];

    for (size_t i = 0; i < l->n && !found; i++) {
        if (!strncmp(l->b[i].key, key, KEY_MAX - 1) && l->b[i].key[0])
            found = &l->b[i];
        else if (!l->b[i].key[0] || (oldest->key[0] && l->b[i].at_ns < oldest->at_ns))
            oldest = &l->b[i];
    }
    if (!found) {
        found = oldest;
        snprintf(found->key, sizeof(found->key), "%s", key);
        found->tokens = burst_of(rate);
        found->at_ns = now_ns;
    }
    double add = (double)(now_ns - found->at_ns) / 1e9 * rate.per_second;
    if (add > 0)
        found->tokens = fmin(burst_of(rate), found->tokens + add);
    found->at_ns = now_ns > found->at_ns ? now_ns : found->at_ns;
    return found;
}

static int wait_seconds(const struct bucket *b, struct api_rate rate)
{
    if (b->tokens >= 1.0)
        return 0;
    double s = ceil((1.0 - b->tokens) / rate.per_second);
    return s < 1 ? 1 : s > 86400 ? 86400 : (int)s;
}

static int take_or_peek(struct api_limits *l, const char *key, struct api_rate rate, int64_t now_ns,
                        int take)
{
    if (!(rate.per_second > 0))
        return 0;
    pthread_mutex_lock(&l->mu);
    struct bucket *b = bucket_at(l, key, rate, now_ns);
    int wait = wait_seconds(b, rate);
    if (!wait && take)
        b->tokens -= 1.0;
    pthread_mutex_unlock(&l->mu);
    return wait;
}

int api__limits_take(struct api_limits *l, const char *key, struct api_rate rate, int64_t now_ns)
{
    return take_or_peek(l, key, rate, now_ns, 1);
}

int api__limits_peek(struct api_limits *l, const char *key, struct api_rate rate, int64_t now_ns)
{
    return take_or_peek(l, key, rate, now_ns, 0);
}
