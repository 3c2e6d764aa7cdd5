/*
 * cycle_timeout.c - the gang timeout: Koordinator's spec.scheduleTimeoutSeconds (and its
 * waiting-time annotation, default 600 s; model_podgroup.timeout_ms).
 *
 * Koordinator holds a gang's assumed pods in Permit for at most its wait time; when it runs
 * out the whole GangGroup is rejected and retried on its next schedule attempt with a new
 * wait. muster holds nothing between cycles except nominations (a preemptor waiting for its
 * victims), so the timeout is a window over failed attempts: it opens at the first attempt
 * that leaves a gang unsatisfied, closes when the job is placed, and when an attempt finds it
 * older than the timeout the gang times out: its pods stop holding nominations, the job is
 * TimedOut with the primary GangTimedOut, one "gang-timed-out" audit record is written, and
 * the window closes, so the next attempt (the next cycle) tries again with a new one. The
 * window's start lives in the why document (durable: a restart does not reset it).
 */
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"
#include "cycle.h"
#include "why_msg.h"

/* A member whose gang the attempt left unsatisfied (a gang with a PodGroup only). */
static int unsatisfied(const struct sched_view *v, const struct sched_attempt *a, size_t m)
{
    const struct sv_job *j = &v->jobs[a->rq.jobs[m]];
    return j->has_pg && !a->rq.m[m].satisfied;
}

/* Drops the nominations of the members' pods; appends them to pods[*n] (room for every
 * member's pods). */
static int drop_nominations(struct sched_cyc *c, struct sched_attempt *a, int *pods, size_t *n,
                            struct err *err)
{
    int rc = 0;
    for (size_t m = 0; rc == 0 && m < a->rq.njobs; m++) {
        const struct sv_job *j = &c->v->jobs[a->rq.jobs[m]];
        for (size_t i = 0; rc == 0 && i < j->npods; i++) {
            int pi = j->pods[i];
            if (!c->v->pods[pi].m.nominated_node)
                continue;
            pods[(*n)++] = pi;
            rc = sched__pod_nominate(c, pi, -1, err);
        }
    }
    return rc;
}

int sched__timeout(struct sched_cyc *c, struct sched_attempt *a, int ok, int *timed_out,
                   struct err *err)
{
    struct sched_view *v = c->v;
    int expired = -1; /* the first member whose window ran out */
    *timed_out = 0;
    for (size_t m = 0; m < a->rq.njobs; m++) {
        struct sv_job *j = &v->jobs[a->rq.jobs[m]];
        if (j->has_pg) /* the window's start is in the why document; without a PodGroup
                          there is none (the why record reads the document itself) */
            sched__why_load(c, a->rq.jobs[m]);
        if (ok || !unsatisfied(v, a, m))
            j->unsat_since = 0;
        else if (!j->unsat_since)
            j->unsat_since = c->now_ms;
        else if (c->now_ms - j->unsat_since >= j->pg.timeout_ms && expired < 0)
            expired = (int)m;
    }
    if (expired < 0)
        return 0;
    const struct sv_job *e = &v->jobs[a->rq.jobs[expired]];
    char since[64];
    clock_format_rfc3339(e->unsat_since, since, sizeof(since));
    double secs = (double)e->pg.timeout_ms / 1000.0;
    size_t room = 1, npods = 0;
    for (size_t m = 0; m < a->rq.njobs; m++)
        room += v->jobs[a->rq.jobs[m]].npods;
    int *pods = xcalloc(room, sizeof(int));
    int rc = drop_nominations(c, a, pods, &npods, err);
    for (size_t m = 0; m < a->rq.njobs; m++)
        v->jobs[a->rq.jobs[m]].unsat_since = 0;
    if (rc == 0)
        rc = sched__audit_gang_timed_out(c, a->rq.jobs, a->rq.njobs, pods, npods, secs, since, err);
    if (rc == 0 && npods) /* write-back removes the nominations on the API server too */
        rc = sched__audit_nominations_cleared(c->txn, c->cycle, v, pods, npods, err);
    if (rc == 0) {
        sched__blocker_add(&a->blockers, WHY_GANG_TIMED_OUT,
                           json_pack("{s:s,s:f,s:s,s:i}", "podGroup", e->id, "timeoutSeconds", secs,
                                     "unsatisfiedSince", since, "nominationsDropped", (int)npods),
                           WHY_MSG_GANG_TIMED_OUT, e->id, since, secs, (int)npods);
        *timed_out = 1;
    }
    free(pods);
    return rc;
}
