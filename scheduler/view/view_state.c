/*
 * view_state.c - a job's state (scheduler.h's SCHED_JOB_STATE_MAP) from the view: one rule
 * for the API, the why documents, the queues and the metrics.
 */
#include <string.h>

#include "alloc.h"
#include "names.h"
#include "view_base.h"
#include "view_class.h"
#include "view_state.h"

static const char *const state_names[] = {
#define SCHED__STATE_NAME(name, str, meaning) str,
    SCHED_JOB_STATE_MAP(SCHED__STATE_NAME)
#undef SCHED__STATE_NAME
};

const char *sched_job_state_name(enum sched_job_state state)
{
    return (unsigned)state < SCHED_JOB_STATE_COUNT ? state_names[state] : "Unknown";
}

int sched_job_state_parse(const char *name, enum sched_job_state *out, struct err *err)
{
    int k = names_parse(state_names, SCHED_JOB_STATE_COUNT, name, "job state", "state", err);
    if (k < 0)
        return k;
    *out = (enum sched_job_state)k;
    return 0;
}

int sched__job_preempted(const struct sched_view *v, const struct sv_job *j)
{
    int held = 0, pending = 0;
    int32_t prio;
    for (size_t i = 0; i < j->npods; i++) {
        const struct sv_pod *p = &v->pods[j->pods[i]];
        if (model_pod_terminal(&p->m))
            continue;
        if (p->m.deletion_ms && p->m.preempted)
            return 1;
        if (p->m.node_name || p->m.nominated_node)
            held++;
        else
            pending++;
    }
    /* a recorded victim stays Preempted until new pods of it come (a controller
     * recreating them) or enough of it still runs */
    return sched__view_victim(v, j->id, &prio) && pending == 0 && held < sched__job_min(j);
}

int sched__result_of_state(enum sched_job_state st)
{
    switch (st) {
    case SCHED_JOB_TIMED_OUT:
        return SV_RESULT_TIMED_OUT;
    case SCHED_JOB_UNSCHEDULABLE:
    case SCHED_JOB_STARVING:
    case SCHED_JOB_PIPELINED: /* nominated: the attempt did not place it */
        return SV_RESULT_FAILED;
    case SCHED_JOB_SCHEDULED:
    case SCHED_JOB_RUNNING:
        return SV_RESULT_PLACED;
    default: /* Pending, Preempted (a victim's document), Finished */
        return SV_RESULT_NONE;
    }
}

enum sched_job_state sched__job_state(const struct sched_view *v, const struct sv_job *j)
{
    int bound = 0, running = 0, terminal = 0, nominated = 0;
    for (size_t i = 0; i < j->npods; i++) {
        const struct sv_pod *p = &v->pods[j->pods[i]];
        if (model_pod_terminal(&p->m)) {
            terminal++;
            continue;
        }
        if (p->m.node_name) {
            bound++;
            running += p->m.phase && !strcmp(p->m.phase, "Running");
        } else if (p->m.nominated_node) {
            nominated++;
        }
    }
    int need = sched__job_min(j);
    /* Members deleted after the gang was placed: what is left of it runs and is not
     * pending (the gang rule of DESIGN.md section 3 counts min(minMember, members)). */
    if (bound > 0 && (size_t)need > j->npods)
        need = (int)j->npods;
    if (j->npods && (size_t)terminal == j->npods)
        return SCHED_JOB_FINISHED;
    if (sched__job_preempted(v, j))
        return SCHED_JOB_PREEMPTED;
    /* Failed and Succeeded members never count toward minMember (model_pod_gang_bound) */
    if (running >= need && running > 0 && bound == running)
        return SCHED_JOB_RUNNING;
    if (bound >= need && bound > 0)
        return SCHED_JOB_SCHEDULED;
    if (nominated)
        return SCHED_JOB_PIPELINED;
    if (j->result == SV_RESULT_TIMED_OUT)
        return SCHED_JOB_TIMED_OUT;
    /* preempted for, and a higher-priority preemptor cleared its nominations (not a
     * deleted node: tried afresh, as kube-scheduler does) */
    if (j->starving && j->cleared_by && j->result == SV_RESULT_FAILED)
        return SCHED_JOB_STARVING;
    if (j->result == SV_RESULT_FAILED)
        return SCHED_JOB_UNSCHEDULABLE;
    return SCHED_JOB_PENDING;
}

char *sched__object_job(enum model_kind kind, json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    if (kind == MODEL_PODGROUP)
        return xasprintf("%s/%s", ns ? ns : "default", name ? name : "");
    if (kind != MODEL_POD)
        return NULL;
    const char *g = model_pod_group_name(obj);
    return xasprintf("%s/%s", ns ? ns : "default", g ? g : (name ? name : ""));
}
