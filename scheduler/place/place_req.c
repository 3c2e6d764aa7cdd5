/*
 * place_req.c - a placer's result, the members of its request, and when their gangs are
 * met (place_req.h).
 *
 * Volcano's per-task minimum (a PodGroup's spec.minTaskMember): a gang is ready only when
 * every task it names has at least that many of its pods placed, the pods of a task being
 * those whose volcano.sh/task-spec names it (model_pod.task). Volcano's gang plugin checks
 * the same twice: a job with too few pods of a task cannot start (JobInfo.CheckTaskValid:
 * here MembersMissing), and an allocation without enough pods of a task is not ready
 * (CheckTaskReady: here GangShortfall).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place_req.h"
#include "why_msg.h"

void sched__place_result_init(struct place_result *r, size_t njobs)
{
    memset(r, 0, sizeof(*r));
    r->placed = xcalloc(2 * (njobs + 1), sizeof(int)); /* one allocation for both */
    r->fail_pod = r->placed + njobs + 1;
    for (size_t m = 0; m < njobs; m++)
        r->fail_pod[m] = -1;
}

void sched__place_result_release(struct place_result *r)
{
    free(r->placed); /* fail_pod with it */
    sched__place_topology_free(r->topology);
    sched__blockers_release(&r->blockers);
    memset(r, 0, sizeof(*r));
}

int sched__place_member(const struct place_req *rq, int ji)
{
    for (size_t i = 0; i < rq->njobs; i++)
        if (rq->jobs[i] == ji)
            return (int)i;
    return -1;
}

int sched__place_members_met(const struct sched_view *v, const struct place_req *rq,
                             const struct place_result *res)
{
    for (size_t m = 0; m < rq->njobs; m++) {
        const struct sv_job *j = &v->jobs[rq->jobs[m]];
        if (!rq->m[m].satisfied && (rq->m[m].base + res->placed[m] < sched__job_min(j) ||
                                    sched__job_tasks_short(v, j, 0, NULL, 0)))
            return 0;
    }
    return 1;
}

/* Pods of task t in job j: *placed those bound or placed (counted, not terminal), *alive
 * those too plus the pending ones. */
static void count_task(const struct sched_view *v, const struct sv_job *j, const char *t,
                       int *placed, int *alive)
{
    *placed = *alive = 0;
    for (size_t i = 0; i < j->npods; i++) {
        const struct sv_pod *p = &v->pods[j->pods[i]];
        if (!p->m.task || strcmp(p->m.task, t) || model_pod_terminal(&p->m))
            continue;
        int in = p->node >= 0 && p->counted;
        *placed += in;
        *alive += in || sched__pod_pending(p);
    }
}

int sched__job_tasks_short(const struct sched_view *v, const struct sv_job *j, int pending,
                           char *msg, size_t n)
{
    for (size_t k = 0; j->has_pg && k < j->pg.nmin_tasks; k++) {
        const struct model_task_min *tm = &j->pg.min_tasks[k];
        int placed, alive;
        count_task(v, j, tm->task, &placed, &alive);
        int have = pending ? alive : placed;
        if (have >= tm->min)
            continue;
        if (msg)
            snprintf(msg, n, WHY_MSG_TASK_SHORT, j->id, tm->task, have,
                     pending ? WHY_MSG_TASK_MEMBER : WHY_MSG_TASK_PLACEABLE, WHY_PLURAL(have),
                     (int)tm->min);
        return 1;
    }
    return 0;
}

void sched__place_topology_free(struct place_topology *t)
{
    if (!t)
        return;
    free(t->tried);
    free(t->mult);
    free(t);
}
