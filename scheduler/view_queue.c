/*
 * view_queue.c - the queues of the view: which queue a job is in.
 */
#include "view.h"

const char *sched__job_queue_name(const struct sched_view *v, const struct sv_job *j)
{
    if (j->has_pg && j->pg.queue)
        return j->pg.queue;
    for (size_t i = 0; i < j->npods; i++)
        if (v->pods[j->pods[i]].m.queue)
            return v->pods[j->pods[i]].m.queue;
    return MODEL_QUEUE_DEFAULT;
}
