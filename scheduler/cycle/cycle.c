/*
 * cycle.c - one scheduling cycle: one write transaction, one durable commit; and the
 * scheduler's lock as the entry points that hold it long take it (sched__lock_long).
 *
 * Pending jobs are taken in the queues' order (queue_order.c: queues by dominant share,
 * jobs by priority, DRF, creation, id), with deserved shares computed first
 * (queue_share.c); a gang's GangGroup is attempted as one unit (cycle_attempt.c). Each
 * attempt is a statement (cycle_stmt.c): its allocations are applied to the view
 * with an undo log; commit writes them into the cycle's transaction, discard
 * undoes them in reverse order. Statements do not use nested LMDB transactions: the cycle
 * transaction only ever sees committed statements, and a failed cycle aborts it and rebuilds the
 * view.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cycle.h"
#include "log.h"
#include "queue.h"
#include "thread.h"

/* ---- pending jobs ---- */

/* A PodGroup with no pending pods whose members are missing: none applied yet, all deleted
 * or preempted, or fewer than minMember alive because members Failed or Succeeded (they never
 * count toward minMember). It is tried, so that its why says MembersMissing instead of "not
 * tried" or a placement that no longer holds. A nominated member is held, not missing. */
static int waits_for_members(const struct sched_view *v, const struct sv_job *j)
{
    size_t terminal = 0, alive = 0;
    if (!j->has_pg)
        return 0;
    for (size_t i = 0; i < j->npods; i++) {
        const struct sv_pod *p = &v->pods[j->pods[i]];
        if (model_pod_terminal(&p->m))
            terminal++;
        else if (p->m.node_name)
            alive++;
        else if (p->m.nominated_node)
            return 0;
    }
    if (j->npods == 0)
        return 1;
    if (terminal == j->npods)
        return 0; /* finished */
    /* members deleted after placement leave min(minMember, members) to hold */
    size_t need = (size_t)sched__job_min(j) < j->npods ? (size_t)sched__job_min(j) : j->npods;
    return alive == 0 || (terminal > 0 && alive < need);
}

int sched__job_has_work(const struct sched_view *v, const struct sv_job *j)
{
    size_t p = 0;
    if (!j->alive)
        return 0;
    while (p < j->npods && !sched__pod_pending(&v->pods[j->pods[p]]))
        p++;
    /* a victim's members are not missing: its why says who preempted it */
    return p < j->npods || (waits_for_members(v, j) && !sched__job_preempted(v, j));
}

static int passes_static(const struct sv_node *n, const struct sv_shape *sh)
{
    return sched__fit_static(n, sh) == SCHED_FIT_OK;
}

/* The jobs a cycle attempts (unordered: queue_order.c orders them), parked jobs that are
 * not due at now_ms left out and counted in *waiting. New. Only the jobs in v->todo are
 * looked at, and those with nothing to do leave it: a cycle costs what changed, not every
 * job the cluster ever ran (sched__view_todo puts a job back when that may change). */
static int *pending_jobs(struct sched_view *v, int64_t now_ms, size_t *n, long *waiting)
{
    sched__wait_sync(v, passes_static); /* room freed since the last cycle, onto shapes */
    int *k = xcalloc(v->ntodo + 1, sizeof(*k));
    size_t keep = 0;
    *n = 0;
    for (size_t t = 0; t < v->ntodo; t++) {
        int i = v->todo[t];
        const struct sv_job *j = &v->jobs[i];
        if (!sched__job_has_work(v, j)) {
            v->in_todo[i] = 0;
            continue;
        }
        v->todo[keep++] = i;
        if (!sched__wait_due(v, j, now_ms)) {
            (*waiting)++;
            continue;
        }
        k[(*n)++] = i;
    }
    v->ntodo = keep;
    return k;
}

/* ---- the cycle ---- */

/* What the live view kept beside the store, given back to a view loaded from it: each
 * waiting job's last result, from the state its stored why document recorded, and whether
 * it starves and who cleared its nominations (the ledger's s:<job>), so that its state is
 * the one the API showed before. */
static void restore_attempts(struct sched_view *v, MDB_txn *txn)
{
    for (size_t ji = 0; ji < v->njobs; ji++) {
        struct sv_job *j = &v->jobs[ji];
        enum sched_job_state st;
        if (!sched__job_has_work(v, j) || sched__why_stored_state(txn, j->id, &st) < 0)
            continue;
        j->result = sched__result_of_state(st);
        free(j->cleared_by);
        j->starving = sched__ledger_starving_get(txn, j->id, &j->cleared_by);
    }
}

int sched__rebuild(struct sched *s, struct err *err)
{
    MDB_txn *txn = NULL;
    struct sched_view *v = sched__view_new();
    uint64_t cycle = 0;
    int rc = store_txn_begin(s->st, STORE_READ, &txn, err);
    if (rc < 0)
        goto out;
    if ((rc = sched__view_load(v, txn, err)) < 0)
        goto out;
    restore_attempts(v, txn);
    if ((rc = store_meta_get_u64(txn, "cycle", &cycle, err)) < 0)
        goto out;
    sched__view_free(s->v);
    s->v = v;
    v = NULL;
    if (!s->why_mem)
        s->why_mem = sched__why_memory_new();
    sched__why_memory_reset(s->why_mem); /* indexed by the old view's jobs */
    s->cl_epoch = 0;                     /* a new view: its epochs start again */
    s->cycle = cycle;
    s->retain_scan_ms = 0;
out:
    store_txn_abort(&txn);
    sched__view_free(v);
    return rc;
}

const double sched__hist_bounds[SCHED_HIST_N] = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                 0.25,  0.5,   1,    2.5,   5,    10};

static void metrics_cycle(struct sched *s, double seconds)
{
    s->met.cycles++;
    s->met.duration_sum += seconds;
    for (size_t i = 0; i < SCHED_HIST_N; i++)
        if (seconds <= sched__hist_bounds[i])
            s->met.hist[i]++;
}

static void cycle_reset(struct sched_cyc *c)
{
    for (size_t i = 0; i < c->ntouched; i++)
        c->v->nodes[c->touched[i]].ncyc = 0;
    c->ntouched = 0;
}

/* A cycle with nothing to do: no job due, the housekeeping changed nothing, nobody asked
 * for it (the timer, the wake-up after an apply). Its transaction
 * is dropped (no audit record, no commit, no fsync) and the cycle number does not advance:
 * the summary names the last cycle that wrote. */
static int idle(struct sched_cyc *c, int64_t t0, json_t **summary)
{
    struct sched *s = c->s;
    s->met.idle_cycles++;
    if (c->v->nqueues > 1) /* GET /queues shows shares as of now (a pod may have gone) */
        sched__queue_shares(c->v, sched__cyc_cluster(c), s->cycle);
    if (summary)
        *summary = json_pack("{s:I,s:i,s:i,s:i,s:i,s:i,s:i,s:b,s:f}", "cycle", (json_int_t)s->cycle,
                             "placed", 0, "jobsPlaced", 0, "discarded", 0, "unschedulable", 0,
                             "attempted", 0, "waiting", (int)c->waiting, "idle", 1, "durationMs",
                             (double)(clock_mono_ns() - t0) / 1e6);
    return 0;
}

static int cycle_once(struct sched *s, int64_t now_ms, const struct sched_caller *by,
                      json_t **summary, struct err *err)
{
    struct sched_cyc c = {.s = s,
                          .opts = &s->opts,
                          .retain_scan_ms = &s->retain_scan_ms,
                          .v = s->v,
                          .why_mem = s->why_mem,
                          .now_ms = now_ms,
                          .cycle = s->cycle + 1};
    int64_t t0 = clock_mono_ns();
    int *pending = NULL;
    struct sched_qorder *order = NULL;
    size_t n = 0;
    uint64_t seq = 0;
    int rc = store_txn_begin(s->st, STORE_WRITE, &c.txn, err);
    if (rc < 0)
        goto out;
    if ((rc = sched__housekeeping(&c, err)) < 0)
        goto out;
    if ((rc = sched__reserve_begin(&c, err)) < 0)
        goto out;
    pending = pending_jobs(c.v, now_ms, &n, &c.waiting);
    /* Nothing to do: nothing written, no cycle number. A cycle someone asked for (by) is
     * written all the same: every requested cycle is audited with its caller. */
    if (n == 0 && c.changes == 0 && !by) {
        rc = idle(&c, t0, summary);
        goto out;
    }
    const int64_t *total = sched__cyc_cluster(&c);
    sched__queue_shares(c.v, total, c.cycle);
    order = sched__qorder_new(c.v, pending, n, total);
    for (int ji; rc == 0 && (ji = sched__qorder_next(order)) >= 0;)
        if (c.v->jobs[ji].cycle_seen != c.cycle) {
            c.attempted++;
            rc = sched__attempt(&c, ji, err);
        }
    if (rc < 0)
        goto out;
    double ms = (double)(clock_mono_ns() - t0) / 1e6;
    rc = sched__why_class_flush(&c, err);
    if (rc == 0)
        rc = sched__audit_cycle(&c, n, ms, by, &seq, err);
    if (rc == 0)
        rc = store_meta_put_u64(c.txn, "cycle", c.cycle, err);
    if (rc == 0)
        rc = store_txn_commit(&c.txn, err);
    if (rc < 0)
        goto out;
    s->cycle = c.cycle;
    ms = (double)(clock_mono_ns() - t0) / 1e6;
    metrics_cycle(s, ms / 1000.0);
    s->met.preemptions += (uint64_t)c.preemptions;
    if (summary)
        *summary = json_pack(
            "{s:I,s:i,s:i,s:i,s:i,s:i,s:i,s:b,s:f,s:I}", "cycle", (json_int_t)c.cycle, "placed",
            (int)c.placed, "jobsPlaced", (int)c.jobs_placed, "discarded", (int)c.discarded,
            "unschedulable", (int)c.unschedulable, "attempted", (int)c.attempted, "waiting",
            (int)c.waiting, "idle", 0, "durationMs", ms, "auditSeq", (json_int_t)seq);
out:
    store_txn_abort(&c.txn);
    cycle_reset(&c);
    sched__qorder_free(order);
    free(pending);
    free(c.ops);
    free(c.grouped);
    free(c.placed_jobs);
    free(c.touched);
    free(c.cluster_alloc);
    free(c.q_seen);
    json_decref(c.backfill);
    sched__preempt_cache_free(&c);
    sched__why_writer_free(&c);
    return rc;
}

int sched_cycle(struct sched *s, int64_t now_ms, json_t **summary, struct err *err)
{
    return sched_cycle_by(s, now_ms, NULL, summary, err);
}

int sched_cycle_by(struct sched *s, int64_t now_ms, const struct sched_caller *by, json_t **summary,
                   struct err *err)
{
    int rc;
    sched__lock_long(s);
    for (int attempt = 0;; attempt++) {
        rc = cycle_once(s, now_ms, by, summary, err);
        if (rc == 0)
            break;
        /* The view took this cycle's changes; bring it back to the store. */
        struct err e2 = ERR_INIT;
        if (sched__rebuild(s, &e2) < 0) {
            rc = err_set(err, e2.code, "rebuilding the view: %s", e2.msg);
            break;
        }
        if (rc != ERR_MAP_FULL || attempt >= 4)
            break;
        log_info("cycle %llu hit the store's map limit; retrying on a rebuilt view",
                 (unsigned long long)(s->cycle + 1));
        err_clear(err);
    }
    sched__unlock_long(s);
    return rc;
}

void sched__lock_long(struct sched *s)
{
    thread_boost();
    pthread_mutex_lock(&s->mu);
}

void sched__unlock_long(struct sched *s)
{
    pthread_mutex_unlock(&s->mu);
    thread_unboost();
}
