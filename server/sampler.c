/*
 * sampler.c - the time series sampler: a thread that calls sched_sample every
 * timeseries_interval seconds (docs/api.md "GET /api/v1/timeseries"), outside any cycle.
 * A failed sample is logged and the next one tried on time; a read-only musterd (broken
 * audit chain) stores none.
 */
#include <stdlib.h>
#include <threads.h>
#include <time.h>

#include "alloc.h"

#include "clock.h"
#include "err.h"
#include "internal.h"
#include "log.h"
#include "scheduler.h"

struct server__sampler {
    struct sched *sched;
    double interval;
    int64_t retention_ms;
    struct server__audit *guard;
    mtx_t mu;
    cnd_t cv;
    int stop;
    thrd_t thread;
};

static int sampler_main(void *arg)
{
    struct server__sampler *sp = arg;
    struct timespec deadline;
    mtx_lock(&sp->mu);
    while (!sp->stop) {
        timespec_get(&deadline, TIME_UTC);
        double s = (double)deadline.tv_nsec / 1e9 + sp->interval;
        deadline.tv_sec += (time_t)s;
        deadline.tv_nsec = (long)((s - (double)(time_t)s) * 1e9);
        while (!sp->stop && cnd_timedwait(&sp->cv, &sp->mu, &deadline) == thrd_success)
            ;
        if (sp->stop)
            break;
        mtx_unlock(&sp->mu);
        struct err err = ERR_INIT;
        int64_t t0 = clock_mono_ns();
        if (server__audit_read_only(sp->guard))
            ; /* nothing may change */
        else if (sched_sample(sp->sched, clock_now_ms(), sp->retention_ms, &err) < 0)
            log_warn("time series sample failed: %s", err.msg);
        else
            log_debug("time series sample stored in %.2f ms", (double)(clock_mono_ns() - t0) / 1e6);
        mtx_lock(&sp->mu);
    }
    mtx_unlock(&sp->mu);
    return 0;
}

int server__sampler_start(struct sched *s, const struct server_config *c,
                          struct server__audit *guard, struct server__sampler **out,
                          struct err *err)
{
    *out = NULL;
    if (c->timeseries_interval <= 0)
        return 0;
    struct server__sampler *sp = xcalloc(1, sizeof(*sp));
    sp->sched = s;
    sp->interval = c->timeseries_interval;
    sp->retention_ms = c->timeseries_retention_ms;
    sp->guard = guard;
    mtx_init(&sp->mu, mtx_plain);
    cnd_init(&sp->cv);
    if (thrd_create(&sp->thread, sampler_main, sp) != thrd_success) {
        mtx_destroy(&sp->mu);
        cnd_destroy(&sp->cv);
        free(sp);
        return err_set(err, ERR_INTERNAL, "cannot start the time series thread");
    }
    *out = sp;
    return 0;
}

void server__sampler_stop(struct server__sampler *sp)
{
    if (!sp)
        return;
    mtx_lock(&sp->mu);
    sp->stop = 1;
    cnd_signal(&sp->cv);
    mtx_unlock(&sp->mu);
    thrd_join(sp->thread, NULL);
    mtx_destroy(&sp->mu);
    cnd_destroy(&sp->cv);
    free(sp);
}
