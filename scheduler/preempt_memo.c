/*
 * preempt_memo.c - failed preemptions remembered within a cycle (preempt.h).
 *
 * While nothing is placed, no plan executed and no nomination changed, a search that found nothing
 * to do for a job fails the same way for every later job that is no easier: the same queue and
 * capability queue, the same priority, all its pods of one shape, that same shape, and
 * asking at least as much of every resource with at least as many pods. An overloaded
 * cycle tries thousands of such jobs; each remembered failure saves a scan of every
 * candidate node's pods and a dry run with every potential victim removed.
 *
 * PodDisruptionBudgets never make a search fail (they order victims, preempt_pdb.c), and they
 * change only between cycles (an apply or a mirrored event waits for the cycle's lock), so a
 * remembered failure holds whatever the budgets; an entry also records the budgets'
 * generation (view.pdbs.gen) and holds only while it is unchanged, so that stays true if
 * budgets ever change within a cycle.
 */
#include <stdlib.h>
#include <string.h>

#include "preempt.h"

struct sched_memo {
    int queue, cap_queue, shape;
    int32_t prio;
    size_t npods;
    int64_t *asked;   /* [nres] */
    uint64_t epoch;   /* c->plan_epoch when recorded */
    uint64_t pdb_gen; /* v->pdbs.gen when recorded */
    struct sched_preempt_verdict verdict;
};

/* The one shape of the job's pods, -1 when it has several (or is a GangGroup, or gathers:
 * its verdict names its layer). */
static int memo_shape(const struct preempt *pr)
{
    const struct sched_view *v = pr->c->v;
    const struct sched_preempt_job *pj = pr->pj;
    if (pj->njobs != 1 || pj->must_layer || !pj->npods)
        return -1;
    int sh = v->pods[pj->pods[0]].shape;
    for (size_t i = 1; i < pj->npods; i++)
        if (v->pods[pj->pods[i]].shape != sh)
            return -1;
    return sh;
}

static int no_easier(const struct preempt *pr, const struct sched_memo *m, int shape)
{
    const struct sched_view *v = pr->c->v;
    if (m->epoch != pr->c->plan_epoch || m->pdb_gen != v->pdbs.gen || m->shape != shape ||
        m->queue != pr->queue || m->cap_queue != pr->pj->cap_queue || m->prio != pr->prio ||
        pr->pj->npods < m->npods)
        return 0;
    for (size_t r = 0; r < v->nres; r++)
        if (pr->asked[r] < m->asked[r])
            return 0;
    return 1;
}

int sched__memo_find(const struct preempt *pr, struct sched_preempt_verdict *out)
{
    const struct sched_cyc *c = pr->c;
    int shape = memo_shape(pr);
    for (size_t i = 0; shape >= 0 && i < c->nmemo; i++) {
        const struct sched_memo *m = &c->memo[i];
        if (!no_easier(pr, m, shape))
            continue;
        *out = m->verdict;
        out->detail = m->verdict.detail ? json_deep_copy(m->verdict.detail) : NULL;
        return 1;
    }
    return 0;
}

void sched__memo_put(const struct preempt *pr, const struct sched_preempt_verdict *verdict)
{
    struct sched_cyc *c = pr->c;
    const struct sched_view *v = c->v;
    int shape = memo_shape(pr);
    if (shape < 0)
        return;
    size_t at = 0; /* replace an entry of an older epoch, else append */
    while (at < c->nmemo && c->memo[at].epoch == c->plan_epoch)
        at++;
    if (at == c->nmemo) {
        XGROW(c->memo, c->nmemo + 1, c->capmemo);
        memset(&c->memo[c->nmemo++], 0, sizeof(c->memo[0]));
    }
    struct sched_memo *m = &c->memo[at];
    free(m->asked);
    json_decref(m->verdict.detail);
    *m =
        (struct sched_memo){pr->queue,     pr->pj->cap_queue, shape,
                            pr->prio,      pr->pj->npods,     xcalloc(v->nres + 1, sizeof(int64_t)),
                            c->plan_epoch, v->pdbs.gen,       *verdict};
    memcpy(m->asked, pr->asked, v->nres * sizeof(int64_t));
    m->verdict.detail = verdict->detail ? json_deep_copy(verdict->detail) : NULL;
}

void sched__memo_free(struct sched_cyc *c)
{
    for (size_t i = 0; i < c->nmemo; i++) {
        free(c->memo[i].asked);
        json_decref(c->memo[i].verdict.detail);
    }
    free(c->memo);
}
