/*
 * place_tasks.c - Volcano's per-task minimum (a PodGroup's spec.minTaskMember): a gang is
 * ready only when every task it names has at least that many of its pods placed, the pods
 * of a task being those whose volcano.sh/task-spec names it (model_pod.task). Volcano's
 * gang plugin checks the same twice: a job with too few pods of a task cannot start
 * (JobInfo.CheckTaskValid: here MembersMissing), and an allocation without enough pods of
 * a task is not ready (CheckTaskReady: here GangShortfall).
 */
#include <stdio.h>
#include <string.h>

#include "place.h"
#include "why_msg.h"

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
                     pending ? WHY_MSG_TASK_MEMBER : WHY_MSG_TASK_PLACEABLE, (int)tm->min);
        return 1;
    }
    return 0;
}
