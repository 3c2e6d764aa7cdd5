/*
 * hold.c - sched_hold: the scheduler's lock held by another thread until released, as a
 * long cycle or apply holds it. For tests of the reads that must not wait for it.
 *
 * A mutex must be unlocked by the thread that locked it, so the lock is taken and given
 * back by a thread of its own, which waits in between for the release.
 */
#include <stdlib.h>

#include "alloc.h"
#include "core.h"

struct sched_hold {
    struct sched *s;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    int held, release;
};

static void *hold_main(void *arg)
{
    struct sched_hold *h = arg;
    pthread_mutex_lock(&h->s->mu);
    pthread_mutex_lock(&h->mu);
    h->held = 1;
    pthread_cond_broadcast(&h->cond);
    while (!h->release)
        pthread_cond_wait(&h->cond, &h->mu);
    pthread_mutex_unlock(&h->mu);
    pthread_mutex_unlock(&h->s->mu);
    return NULL;
}

struct sched_hold *sched_hold(struct sched *s)
{
    struct sched_hold *h = xcalloc(1, sizeof(*h));
    h->s = s;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cond, NULL);
    if (pthread_create(&h->thread, NULL, hold_main, h) != 0)
        abort(); /* a test hook: no thread, no test */
    pthread_mutex_lock(&h->mu);
    while (!h->held)
        pthread_cond_wait(&h->cond, &h->mu);
    pthread_mutex_unlock(&h->mu);
    return h;
}

void sched_hold_release(struct sched_hold *h)
{
    if (!h)
        return;
    pthread_mutex_lock(&h->mu);
    h->release = 1;
    pthread_cond_broadcast(&h->cond);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->thread, NULL);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cond);
    free(h);
}
