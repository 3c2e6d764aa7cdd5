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
    struct sched_preempt_cache *pc = sched__pre_w(pr->c);
    int shape = memo_shape(pr);
    for (size_t i = 0; shape >= 0 && i < pc->nmemo; i++) {
        const struct sched_memo *m = &pc->memo[i];
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
    struct sched_preempt_cache *pc = sched__pre_w(c);
    const struct sched_view *v = c->v;
    int shape = memo_shape(pr);
    if (shape < 0)
        return;
    size_t at = 0; /* replace an entry of an older epoch, else append */
    while (at < pc->nmemo && pc->memo[at].epoch == c->plan_epoch)
        at++;
    if (at == pc->nmemo) {
        XGROW(pc->memo, pc->nmemo + 1, pc->capmemo);
        memset(&pc->memo[pc->nmemo++], 0, sizeof(pc->memo[0]));
    }
    struct sched_memo *m = &pc->memo[at];
    free(m->asked);
    json_decref(m->verdict.detail);
    *m =
        (struct sched_memo){pr->queue,     pr->pj->cap_queue, shape,
                            pr->prio,      pr->pj->npods,     xcalloc(v->nres + 1, sizeof(int64_t)),
                            c->plan_epoch, v->pdbs.gen,       *verdict};
    memcpy(m->asked, pr->asked, v->nres * sizeof(int64_t));
    m->verdict.detail = verdict->detail ? json_deep_copy(verdict->detail) : NULL;
}
