/*
 * view_class.c - the PriorityClasses in the view, and the priority of pods and jobs.
 *
 * Pods get their priority from a class once, when they are admitted (sched_apply.c
 * writes spec.priority). A PodGroup's spec.priorityClassName is resolved here instead,
 * on every change, because its class may arrive after it (mirror mode) or go away:
 * the pods of such a job take the class's value and preemption policy
 * (sv_pod.prio / never), as preemptor and as victim, and the job's priority is the
 * class's value. A PodGroup naming a class that does not exist keeps its pods' own
 * priorities and waits (the attempt reports PriorityClassMissing).
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "strmap.h"
#include "view_base.h"
#include "view_class.h"
#include "view_shape.h"
#include "view_wait.h"

static struct model_priorityclass *stored(const struct sv_classes *cs, const char *name)
{
    for (size_t i = 0; name && i < cs->n; i++)
        if (!strcmp(cs->c[i].name, name))
            return &cs->c[i];
    return NULL;
}

const struct model_priorityclass *sched__class_find(const struct sv_classes *cs, const char *name)
{
    const struct model_priorityclass *pc = stored(cs, name);
    return pc ? pc : model_priorityclass_builtin(name);
}

const struct model_priorityclass *sched__class_default(const struct sv_classes *cs)
{
    const struct model_priorityclass *d = NULL;
    for (size_t i = 0; i < cs->n; i++)
        if (cs->c[i].global_default && (!d || cs->c[i].value < d->value))
            d = &cs->c[i];
    return d;
}

void sched__class_put(struct sv_classes *cs, struct model_priorityclass *pc)
{
    struct model_priorityclass *at = stored(cs, pc->name);
    if (at) {
        model_priorityclass_release(at);
    } else {
        XGROW(cs->c, cs->n + 1, cs->cap);
        at = &cs->c[cs->n++];
    }
    *at = *pc;
    memset(pc, 0, sizeof(*pc));
}

void sched__class_del(struct sv_classes *cs, const char *name)
{
    struct model_priorityclass *at = stored(cs, name);
    if (!at)
        return;
    model_priorityclass_release(at);
    *at = cs->c[--cs->n];
}

void sched__classes_copy(struct sv_classes *out, const struct sv_classes *cs)
{
    for (size_t i = 0; i < cs->n; i++) {
        struct model_priorityclass pc = cs->c[i];
        pc.name = xstrdup(pc.name);
        sched__class_put(out, &pc);
    }
}

void sched__classes_free(struct sv_classes *cs)
{
    for (size_t i = 0; i < cs->n; i++)
        model_priorityclass_release(&cs->c[i]);
    free(cs->c);
    memset(cs, 0, sizeof(*cs));
}

void sched__view_prio_sync(struct sched_view *v, int ji)
{
    struct sv_job *j = &v->jobs[ji];
    const struct model_priorityclass *cls = sched__job_class(v, j);
    for (size_t i = 0; i < j->npods; i++) {
        struct sv_pod *p = &v->pods[j->pods[i]];
        int32_t prio = cls ? cls->value : p->m.priority;
        p->never = cls ? cls->preempt_never : p->m.preempt_never;
        if (prio == p->prio)
            continue;
        p->prio = prio;
        /* the shape holds the priority its reservations use */
        p->shape = sched__view_shape_of(v, p);
        v->epoch++;
    }
}

/* The jobs whose PodGroup names this class take its (new) value. */
static void resync_class(struct sched_view *v, const char *name)
{
    for (size_t i = 0; i < v->njobs; i++) {
        const struct sv_job *j = &v->jobs[i];
        if (j->alive && j->has_pg && j->pg.priority_class && !strcmp(j->pg.priority_class, name))
            sched__view_prio_sync(v, (int)i);
    }
}

void sched__view_put_class(struct sched_view *v, struct model_priorityclass *pc)
{
    sched__wait_event(v, SV_EV_PRIORITY);
    char *name = xstrdup(pc->name);
    sched__class_put(&v->classes, pc);
    resync_class(v, name);
    free(name);
}

void sched__view_del_class(struct sched_view *v, const char *name)
{
    sched__wait_event(v, SV_EV_PRIORITY);
    sched__class_del(&v->classes, name);
    resync_class(v, name);
}

const struct model_priorityclass *sched__job_class(const struct sched_view *v,
                                                   const struct sv_job *j)
{
    if (!j->has_pg || !j->pg.priority_class)
        return NULL;
    return sched__class_find(&v->classes, j->pg.priority_class);
}

int sched__job_class_missing(const struct sched_view *v, const struct sv_job *j)
{
    return j->has_pg && j->pg.priority_class && !sched__job_class(v, j);
}

int32_t sched__job_priority(const struct sched_view *v, const struct sv_job *j)
{
    const struct model_priorityclass *cls = sched__job_class(v, j);
    if (cls)
        return cls->value;
    int32_t pr = INT32_MIN;
    for (size_t i = 0; i < j->npods; i++)
        if (v->pods[j->pods[i]].prio > pr)
            pr = v->pods[j->pods[i]].prio;
    if (j->npods)
        return pr;
    /* A victim whose pods are gone keeps the priority it was preempted at. */
    return sched__view_victim(v, j->id, &pr) ? pr : 0;
}

void sched__view_victim_put(struct sched_view *v, const char *id, int32_t prio)
{
    int k = sched__strmap_get(&v->victims, id);
    if (k < 0) {
        XGROW(v->victim_prio, v->nvictim_prio + 1, v->capvictim_prio);
        k = (int)v->nvictim_prio++;
        sched__strmap_put(&v->victims, id, k);
    }
    v->victim_prio[k] = prio;
    sched__view_todo(v, sched__view_job(v, id));
}

void sched__view_victim_del(struct sched_view *v, const char *id)
{
    sched__strmap_del(&v->victims, id);          /* its victim_prio slot is dropped with the view */
    sched__view_todo(v, sched__view_job(v, id)); /* Preempted no more: it may miss members */
}

int sched__view_victim(const struct sched_view *v, const char *id, int32_t *prio)
{
    int k = sched__strmap_get(&v->victims, id);
    if (k < 0)
        return 0;
    *prio = v->victim_prio[k];
    return 1;
}
