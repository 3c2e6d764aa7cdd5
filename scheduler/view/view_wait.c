/*
 * view_wait.c - waiting jobs: what kube-scheduler's unschedulable pool and queueing hints
 * do, in the view.
 *
 * An attempt that leaves a job unplaced parks it (cycle_attempt.c). A parked job is left
 * out of the cycle's pending jobs (cycle.c) until an event of a kind it waits on happens
 * (SV_EVENT_MAP in view_part_types.h: the view's put/del functions and the cycle's commits raise
 * them; room freed on a node wakes only the jobs whose pending pods' shapes pass that node's
 * static filters), its own PodGroup or pods change, or its backoff runs out. The backoff is the
 * backstop for what no event announces (time itself: a gang's timeout window, which also
 * sets the retry time): 1 s after the first failure, doubling up to 60 s, reset when the
 * job is placed. kube-scheduler backs a pod off even after a hint says it may fit; here an
 * event makes the job due at once, so a change is answered by the next cycle.
 */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "view_base.h"
#include "view_wait.h"

static const char *const ev_names[] = {
#define SV_EV_NAME(id, name, doc) name,
    SV_EVENT_MAP(SV_EV_NAME)
#undef SV_EV_NAME
};

void sched__wait_event(struct sched_view *v, enum sv_event e)
{
    v->ev_gen[e] = ++v->ev_clock;
}

void sched__wait_wake(struct sched_view *v, int ji)
{
    if (ji >= 0 && (size_t)ji < v->njobs)
        v->jobs[ji].wait.parked = 0;
    sched__view_todo(v, ji);
}

void sched__wait_victim_gone(struct sched_view *v, const struct sv_pod *p)
{
    if (!p->counted || !p->m.deletion_ms || p->node < 0)
        return;
    const struct sv_node *n = &v->nodes[p->node];
    for (size_t i = 0; i < n->nnom; i++)
        sched__wait_wake(v, v->pods[n->nominated[i]].job);
}

void sched__view_todo(struct sched_view *v, int ji)
{
    if (ji < 0 || (size_t)ji >= v->njobs)
        return;
    if ((size_t)ji >= v->capin_todo) {
        size_t old = v->capin_todo;
        XGROW(v->in_todo, (size_t)ji + 1, v->capin_todo);
        memset(v->in_todo + old, 0, v->capin_todo - old);
    }
    if (v->in_todo[ji])
        return;
    v->in_todo[ji] = 1;
    XGROW(v->todo, v->ntodo + 1, v->captodo);
    v->todo[v->ntodo++] = ji;
}

/* The log is bounded: past this many entries a freed node wakes every capacity waiter. */
#define FREED_MAX 4096

void sched__wait_freed(struct sched_view *v, int ni)
{
    if (ni < 0 || v->nfreed >= FREED_MAX) {
        sched__wait_event(v, SV_EV_CAPACITY);
        return;
    }
    XGROW(v->freed, v->nfreed + 1, v->capfreed);
    v->freed[v->nfreed++] = (struct sv_freed){++v->ev_clock, ni};
    v->freed_any = v->ev_clock;
}

void sched__wait_sync(struct sched_view *v, sv_static_fit fit)
{
    for (size_t i = 0; i < v->nfreed; i++) {
        const struct sv_node *n = &v->nodes[v->freed[i].node];
        if (!n->alive)
            continue; /* deleted since: sched__view_del_node woke every capacity waiter */
        for (size_t s = 0; s < v->nshapes; s++)
            if (v->shapes[s].freed_at < v->freed[i].at && fit(n, &v->shapes[s]))
                v->shapes[s].freed_at = v->freed[i].at;
    }
    v->nfreed = 0;
}

/* Room freed since the job was parked where one of its pending pods could use it: on a node
 * its shape passes the static filters of (narrow), or anywhere (a job with pod rules: a pod
 * gone from a node it cannot use may still free its anti-affinity or spread). */
static int freed_for(const struct sched_view *v, const struct sv_job *j)
{
    const struct sv_wait *w = &j->wait;
    if (!(w->on & (1u << SV_EV_CAPACITY)) || v->freed_any <= w->since)
        return 0;
    if (!w->narrow)
        return 1;
    for (size_t i = 0; i < j->npods; i++) {
        const struct sv_pod *p = &v->pods[j->pods[i]];
        if (sched__pod_pending(p) && v->shapes[p->shape].freed_at > w->since)
            return 1;
    }
    return 0;
}

static int woken(const struct sched_view *v, const struct sv_job *j)
{
    const struct sv_wait *w = &j->wait;
    for (int e = 0; e < SV_EV_COUNT; e++)
        if ((w->on & (1u << e)) && v->ev_gen[e] > w->since)
            return 1;
    return freed_for(v, j);
}

int sched__wait_due(const struct sched_view *v, const struct sv_job *j, int64_t now_ms)
{
    const struct sv_wait *w = &j->wait;
    return !w->parked || now_ms >= w->retry_ms || woken(v, j);
}

void sched__wait_park(struct sched_view *v, int ji, unsigned on, int64_t now_ms)
{
    struct sv_job *j = &v->jobs[ji];
    struct sv_wait *w = &j->wait;
    w->backoff_ms = w->backoff_ms ? w->backoff_ms * 2 : SV_WAIT_BACKOFF_MIN_MS;
    if (w->backoff_ms > SV_WAIT_BACKOFF_MAX_MS)
        w->backoff_ms = SV_WAIT_BACKOFF_MAX_MS;
    w->parked = 1;
    w->on = on;
    w->narrow = !(on & (1u << SV_EV_PLACED)); /* no pod rules */
    w->since = v->ev_clock;
    w->retry_ms = now_ms + w->backoff_ms;
    /* a gang timeout window runs out on its own: the attempt that finds it must happen */
    if (j->has_pg && j->unsat_since && j->unsat_since + j->pg.timeout_ms < w->retry_ms)
        w->retry_ms = j->unsat_since + j->pg.timeout_ms;
}

void sched__wait_clear(struct sched_view *v, int ji)
{
    v->jobs[ji].wait = (struct sv_wait){0};
}

unsigned sched__wait_kinds(const struct sched_view *v, int ji, int preempted)
{
    const struct sv_job *j = &v->jobs[ji];
    unsigned on =
        1u << SV_EV_CAPACITY | 1u << SV_EV_QUEUE | 1u << SV_EV_TOPOLOGY | 1u << SV_EV_PRIORITY;
    if (preempted)
        on |= 1u << SV_EV_PDB;
    if ((j->has_pg && j->pg.ngroups) || (j->gang && !j->has_pg))
        on |= 1u << SV_EV_GROUP;
    for (size_t i = 0; i < j->npods; i++)
        if (v->pods[j->pods[i]].m.aff)
            on |= 1u << SV_EV_PLACED;
    return on;
}

json_t *sched__wait_json(const struct sched_view *v, const struct sv_job *j)
{
    if (!j->wait.parked || woken(v, j))
        return NULL;
    json_t *on = json_array();
    for (int e = 0; e < SV_EV_COUNT; e++)
        if (j->wait.on & (1u << e))
            json_array_append_new(on, json_string(ev_names[e]));
    json_array_append_new(on, json_string("job")); /* its own pods or PodGroup */
    char ts[64];
    clock_format_rfc3339(j->wait.retry_ms, ts, sizeof(ts));
    return json_pack("{s:o,s:s,s:f}", "retriedOn", on, "nextRetry", ts, "backoffSeconds",
                     (double)j->wait.backoff_ms / 1000.0);
}
