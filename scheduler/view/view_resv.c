/*
 * view_resv.c - reservations in the view, the attempt's gate, jobs' time limits
 * (view_resv.h).
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "view_base.h"
#include "view_resv.h"

int sched__view_resv_find(const struct sched_view *v, const char *job)
{
    for (size_t i = 0; i < v->nresv; i++)
        if (v->resv[i].job && !strcmp(v->resv[i].job, job))
            return (int)i;
    return -1;
}

static void release(struct sv_resv *r)
{
    free(r->job);
    free(r->nodes);
    for (size_t i = 0; i < r->nwaits; i++)
        free(r->waits[i]);
    free(r->waits);
    memset(r, 0, sizeof(*r));
}

static void unhold(struct sched_view *v, int i)
{
    struct sv_resv *r = &v->resv[i];
    for (size_t k = 0; k < r->nnodes; k++) {
        int ni = r->nodes[k];
        if ((size_t)ni < v->nnodes && v->nodes[ni].resv == i + 1)
            v->nodes[ni].resv = 0;
    }
}

void sched__view_resv_del(struct sched_view *v, int i)
{
    if (i < 0 || (size_t)i >= v->nresv || !v->resv[i].job)
        return;
    unhold(v, i);
    if (v->resv[i].blocks)
        v->epoch++;
    release(&v->resv[i]);
    v->nresv_live--;
    v->epoch++; /* capacity may be free for jobs the reservation blocked */
}

int sched__view_resv_put(struct sched_view *v, struct sv_resv *r)
{
    int i = sched__view_resv_find(v, r->job);
    if (i >= 0) {
        unhold(v, i);
        release(&v->resv[i]);
        v->nresv_live--;
    } else {
        for (size_t k = 0; k < v->nresv && i < 0; k++)
            if (!v->resv[k].job)
                i = (int)k;
        if (i < 0) {
            XGROW(v->resv, v->nresv + 1, v->capresv);
            i = (int)v->nresv++;
        }
    }
    v->resv[i] = *r;
    v->resv[i].blocks = 0;
    memset(r, 0, sizeof(*r));
    for (size_t k = 0; k < v->resv[i].nnodes; k++) {
        struct sv_node *n = &v->nodes[v->resv[i].nodes[k]];
        if (n->resv && n->resv != i + 1) { /* taken from another: it no longer holds it */
            struct sv_resv *o = &v->resv[n->resv - 1];
            for (size_t m = 0; m < o->nnodes; m++)
                if (o->nodes[m] == v->resv[i].nodes[k])
                    o->nodes[m] = o->nodes[--o->nnodes];
        }
        n->resv = i + 1;
    }
    v->nresv_live++;
    v->epoch++;
    return i;
}

void sched__view_resv_free(struct sched_view *v)
{
    for (size_t i = 0; i < v->nresv; i++)
        release(&v->resv[i]);
    free(v->resv);
    v->resv = NULL;
    v->nresv = v->capresv = v->nresv_live = 0;
}

static int among(int ji, const int *jobs, size_t njobs, const struct sched_view *v, const char *id)
{
    for (size_t k = 0; k < njobs; k++)
        if (jobs[k] == ji || !strcmp(v->jobs[jobs[k]].id, id))
            return 1;
    return 0;
}

void sched__view_resv_gate(struct sched_view *v, const int *jobs, size_t njobs, int32_t prio,
                           int64_t end_ms)
{
    int changed = 0;
    for (size_t i = 0; i < v->nresv; i++) {
        struct sv_resv *r = &v->resv[i];
        if (!r->job)
            continue;
        int b = !among(-1, jobs, njobs, v, r->job) && r->prio >= prio &&
                (end_ms == INT64_MAX || end_ms > r->start_ms);
        changed |= b != r->blocks;
        r->blocks = b;
    }
    if (changed)
        v->epoch++;
}

void sched__view_resv_gate_off(struct sched_view *v)
{
    int changed = 0;
    for (size_t i = 0; i < v->nresv; i++) {
        changed |= v->resv[i].blocks;
        v->resv[i].blocks = 0;
    }
    if (changed)
        v->epoch++;
}

int sched__view_resv_blocked(const struct sched_view *v, const struct sv_node *n)
{
    return n->resv && v->resv[n->resv - 1].blocks;
}

int sched__view_resv_load(struct sched_view *v, json_t *doc)
{
    const char *job = json_string_value(json_object_get(doc, SV_RESV_M_JOB));
    json_t *nodes = json_object_get(doc, SV_RESV_M_NODES), *waits, *x;
    json_t *start = json_object_get(doc, SV_RESV_M_START_MS);
    size_t i;
    if (!job || !json_is_array(nodes) || sched__view_resv_find(v, job) >= 0)
        return 0;
    struct sv_resv r = {.job = xstrdup(job),
                        .prio =
                            (int32_t)json_integer_value(json_object_get(doc, SV_RESV_M_PRIORITY)),
                        .start_ms = json_is_integer(start) ? json_integer_value(start) : INT64_MAX,
                        .since_ms = json_integer_value(json_object_get(doc, SV_RESV_M_SINCE_MS))};
    const char *reason = json_string_value(json_object_get(doc, SV_RESV_M_REASON));
    r.strict = reason && !strcmp(reason, "strict-fifo");
    r.nodes = xcalloc(json_array_size(nodes) + 1, sizeof(int));
    json_array_foreach(nodes, i, x)
    {
        int ni = json_is_string(x) ? sched__view_node(v, json_string_value(x)) : -1;
        if (ni >= 0 && !v->nodes[ni].resv)
            r.nodes[r.nnodes++] = ni;
    }
    waits = json_object_get(doc, SV_RESV_M_WAITS);
    r.waits = xcalloc(json_array_size(waits) + 1, sizeof(char *));
    json_array_foreach(waits, i, x)
    {
        if (json_is_string(x))
            r.waits[r.nwaits++] = xstrdup(json_string_value(x));
    }
    sched__view_resv_put(v, &r);
    return 0;
}

json_t *sched__view_resv_dump(const struct sched_view *v)
{
    json_t *out = json_object();
    for (size_t i = 0; i < v->nresv; i++) {
        const struct sv_resv *r = &v->resv[i];
        if (!r->job)
            continue;
        json_t *nodes = json_array();
        for (size_t k = 0; k < r->nnodes; k++)
            json_array_append_new(nodes, json_string(v->nodes[r->nodes[k]].name));
        json_object_set_new(out, r->job,
                            json_pack("{s:o,s:I,s:i}", "nodes", nodes, "expectedStartMs",
                                      (json_int_t)r->start_ms, "priority", (int)r->prio));
    }
    return out;
}

int64_t sched__job_limit_ms(const struct sched_view *v, const struct sv_job *j)
{
    int64_t lim = 0;
    for (size_t i = 0; i < j->npods; i++) {
        int64_t l = model_pod_limit_ms(&v->pods[j->pods[i]].m);
        lim = l > lim ? l : lim;
    }
    return lim;
}

int64_t sched__job_end_ms(const struct sched_view *v, const struct sv_job *j, int64_t now_ms)
{
    int64_t start = -1;
    for (size_t i = 0; i < j->npods; i++) {
        const struct sv_pod *p = &v->pods[j->pods[i]];
        if (!p->alive || !p->m.node_name || model_pod_terminal(&p->m))
            continue;
        int64_t s = p->m.start_ms ? p->m.start_ms : now_ms;
        start = s > start ? s : start;
    }
    if (start < 0)
        return 0;
    int64_t lim = sched__job_limit_ms(v, j);
    return lim > 0 ? start + lim : INT64_MAX;
}
