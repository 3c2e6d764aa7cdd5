/*
 * queue_api.c - queue documents (scheduler.h: sched_queues, sched_queue; core.h:
 * sched__queues_json; queue.h: the why document's queue part).
 *
 * Deserved shares, request and realcap are the last cycle's; allocation is the view's
 * now. Reclaim counts come from the ledger, read in its own transaction before the
 * scheduler's lock is taken.
 */
#include <string.h>

#include "core.h"
#include "queue.h"
#include "why.h"

/* Per resource: borrowed (allocated above deserved) and lent (deserved it leaves unused
 * that its siblings borrow), [nres] each. */
static void borrow_lend(const struct sched_view *v, int qi, int64_t *borrowed, int64_t *lent)
{
    const struct sv_queue *q = &v->queues[qi];
    for (size_t r = 0; r < v->nres; r++) {
        int64_t others = 0;
        for (size_t o = 0; o < v->nqueues; o++) {
            const struct sv_queue *s = &v->queues[o];
            if ((int)o != qi && s->alive && s->parent == q->parent && s->alloc[r] > s->deserved[r])
                others += s->alloc[r] - s->deserved[r];
        }
        int64_t unused = q->deserved[r] > q->alloc[r] ? q->deserved[r] - q->alloc[r] : 0;
        borrowed[r] = q->alloc[r] > q->deserved[r] ? q->alloc[r] - q->deserved[r] : 0;
        lent[r] = unused < others ? unused : others;
    }
}

/* Every live job's state, once: jobs[2 * q] / [2 * q + 1] count queue q's pending and
 * running jobs; with only >= 0, the ids of that queue's go into pending and running. New
 * array [2 * nqueues]. */
static long *count_jobs(struct sched *s, int only, json_t *pending, json_t *running)
{
    const struct sched_view *v = s->v;
    long *n = xcalloc(2 * v->nqueues + 1, sizeof(long));
    for (size_t ji = 0; ji < v->njobs; ji++) {
        const struct sv_job *j = &v->jobs[ji];
        if (!j->alive || j->queue < 0 || (only >= 0 && j->queue != only))
            continue;
        enum sched_job_state st = sched__job_state(s->v, j);
        int is_run = st == SCHED_JOB_SCHEDULED || st == SCHED_JOB_RUNNING;
        int is_pend = st != SCHED_JOB_FINISHED && st != SCHED_JOB_PREEMPTED && !is_run;
        n[2 * j->queue] += is_pend;
        n[2 * j->queue + 1] += is_run;
        if (is_pend && pending)
            json_array_append_new(pending, json_string(j->id));
        if (is_run && running)
            json_array_append_new(running, json_string(j->id));
    }
    return n;
}

/* jobs: its pending and running counts (count_jobs). */
static json_t *queue_json(struct sched *s, int qi, json_t *ledger, const long *jobs)
{
    const struct sched_view *v = s->v;
    const struct sv_queue *q = &v->queues[qi];
    int64_t *borrowed = xcalloc(v->nres + 1, sizeof(int64_t));
    int64_t *lent = xcalloc(v->nres + 1, sizeof(int64_t));
    borrow_lend(v, qi, borrowed, lent);
    json_t *res = json_object(), *kids = json_array();
    for (size_t r = 1; r < v->nres; r++) {
        if (!q->alloc[r] && !q->deserved[r] && !q->request[r] && !q->guar[r] && q->cap[r] < 0)
            continue;
        json_object_set_new(
            res, v->res[r],
            json_pack("{s:I,s:I,s:I,s:I,s:o,s:I,s:I}", "allocated", (json_int_t)q->alloc[r],
                      "deserved", (json_int_t)q->deserved[r], "request", (json_int_t)q->request[r],
                      "guarantee", (json_int_t)q->guar[r], "capability",
                      q->realcap[r] >= 0 ? json_integer(q->realcap[r]) : json_null(), "borrowed",
                      (json_int_t)borrowed[r], "lent", (json_int_t)lent[r]));
    }
    for (size_t i = 0; i < v->nqueues; i++)
        if (v->queues[i].alive && v->queues[i].parent == qi)
            json_array_append_new(kids, json_string(v->queues[i].m.name));
    long npend = jobs[0], nrun = jobs[1];
    long by = 0, from = 0;
    size_t i;
    json_t *e;
    json_array_foreach(ledger, i, e)
    {
        const char *kind = json_string_value(json_object_get(e, "kind"));
        if (!kind || strcmp(kind, "reclaim"))
            continue;
        const char *mine = json_string_value(json_object_get(json_object_get(e, "queue"), "name"));
        by += mine && !strcmp(mine, q->m.name);
        size_t k;
        json_t *vq;
        json_array_foreach(json_object_get(e, "victimQueues"), k, vq)
        {
            const char *n = json_string_value(json_object_get(vq, "name"));
            from += n && !strcmp(n, q->m.name);
        }
    }
    int dom;
    double share = sched__queue_share(v, qi, &dom);
    json_t *o = json_pack(
        "{s:s,s:s?,s:o,s:i,s:b,s:b,s:f,s:s?,s:i,s:{s:i,s:i},s:{s:i,s:i},s:o,s:o,s:o,s:o,s:o,s:o,"
        "s:o}",
        "name", q->m.name, "parent", q->parent >= 0 ? v->queues[q->parent].m.name : NULL,
        "children", kids, "weight", (int)q->m.weight, "reclaimable", q->m.reclaimable, "builtin",
        !q->stored, "share", share, "dominantResource", dom >= 0 ? v->res[dom] : NULL, "rank",
        q->rank, "jobs", "pending", (int)npend, "running", (int)nrun, "reclaims", "by", (int)by,
        "from", (int)from, "resources", res, "allocated", sched__queue_quantities(v, q->alloc, 0),
        "deserved", sched__queue_quantities(v, q->deserved, 0), "capability",
        sched__queue_quantities(v, q->realcap, 1), "guarantee",
        sched__queue_quantities(v, q->guar, 0), "borrowed", sched__queue_quantities(v, borrowed, 0),
        "lent", sched__queue_quantities(v, lent, 0));
    free(borrowed);
    free(lent);
    return o;
}

static int cmp_name(const void *a, const void *b, void *ctx)
{
    const struct sched_view *v = ctx;
    return strcmp(v->queues[*(const int *)a].m.name, v->queues[*(const int *)b].m.name);
}

static json_t *all_queues(struct sched *s, json_t *ledger)
{
    const struct sched_view *v = s->v;
    int *ix = xcalloc(v->nqueues + 1, sizeof(int));
    size_t n = 0;
    for (size_t i = 0; i < v->nqueues; i++)
        if (v->queues[i].alive)
            ix[n++] = (int)i;
    qsort_r(ix, n, sizeof(int), cmp_name, (void *)v);
    json_t *out = json_array();
    long *jobs = count_jobs(s, -1, NULL, NULL);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(out, queue_json(s, ix[i], ledger, jobs + 2 * ix[i]));
    free(jobs);
    free(ix);
    return out;
}

json_t *sched__queues_json(struct sched *s)
{
    return all_queues(s, NULL);
}

int sched_queues(struct sched *s, json_t **out, struct err *err)
{
    json_t *ledger = NULL;
    int rc = sched_preemptions(s, NULL, NULL, NULL, &ledger, err);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&s->mu);
    *out = all_queues(s, ledger);
    pthread_mutex_unlock(&s->mu);
    json_decref(ledger);
    return 0;
}

int sched_queue(struct sched *s, const char *name, json_t **out, struct err *err)
{
    json_t *ledger = NULL;
    int rc = sched_preemptions(s, NULL, NULL, NULL, &ledger, err);
    if (rc < 0)
        return rc;
    pthread_mutex_lock(&s->mu);
    int qi = name ? sched__view_queue(s->v, name) : -1;
    if (qi < 0) {
        rc = err_setf(err, ERR_NOT_FOUND, "name", "queue '%s' not found", name ? name : "");
    } else {
        json_t *pending = json_array(), *running = json_array();
        long *jobs = count_jobs(s, qi, pending, running);
        *out = queue_json(s, qi, ledger, jobs + 2 * qi);
        free(jobs);
        json_object_set_new(*out, "pendingJobs", pending);
        json_object_set_new(*out, "runningJobs", running);
    }
    pthread_mutex_unlock(&s->mu);
    json_decref(ledger);
    return rc;
}
