/*
 * why_mem.c - what the records part remembers between cycles of each job's why document
 * (struct why_job, why.h), beside the view rather than in it: an array indexed like the
 * view's jobs, each entry tagged with the serial of the job it belongs to, so a view slot
 * reused by another job starts from nothing. The memory goes with the view: the scheduler
 * resets it when it rebuilds the view (and frees it with the view).
 *
 * And the cycle's why writer (struct sched_why_writer): created on first use, freed with
 * every part of it at the cycle's end; its node filters, one per pod shape (why.h,
 * sched__why_nf), are this file's, its shared documents why_class.c's and its memo
 * why_memo.c's, freed through the destructors those files set, so this file calls nothing above it.
 */
#include <stdlib.h>
#include <string.h>

#include "why.h"

static void job_clear(struct why_job *w)
{
    free(w->last_sig);
    sched__why_mid_unref(w->last_mid);
    free(w->cls);
    free(w->last_discard);
    json_decref(w->history);
    json_decref(w->plan_topology);
    memset(w, 0, sizeof(*w));
    w->last_code = -1;
}

struct sched_why_memory *sched__why_memory_new(void)
{
    return xcalloc(1, sizeof(struct sched_why_memory));
}

void sched__why_memory_reset(struct sched_why_memory *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        job_clear(&m->jobs[i]);
    free(m->jobs);
    memset(m, 0, sizeof(*m));
}

void sched__why_memory_free(struct sched_why_memory *m)
{
    sched__why_memory_reset(m);
    free(m);
}

struct why_job *sched__why_job(struct sched_why_memory *m, const struct sched_view *v, int ji)
{
    if ((size_t)ji >= m->n) { /* entries of no job yet: serial 0 is nobody's */
        XGROW(m->jobs, (size_t)ji + 1, m->cap);
        memset(m->jobs + m->n, 0, (m->cap - m->n) * sizeof(*m->jobs));
        m->n = m->cap;
    }
    struct why_job *w = &m->jobs[ji];
    if (w->serial != v->jobs[ji].serial) { /* another job's, or nobody's yet */
        job_clear(w);
        w->serial = v->jobs[ji].serial;
    }
    return w;
}

const struct why_job *sched__why_job_peek(const struct sched_why_memory *m,
                                          const struct sched_view *v, int ji)
{
    if (!m || ji < 0 || (size_t)ji >= m->n || m->jobs[ji].serial != v->jobs[ji].serial)
        return NULL;
    return &m->jobs[ji];
}

/* ---- the cycle's node filters ---- */

const struct sched_nf *sched__why_nf(struct sched_cyc *c, int pi)
{
    struct sched_why_writer *ww = sched__why_w(c);
    int shape = c->v->pods[pi].shape;
    if ((size_t)shape >= ww->nnf) {
        size_t n = ww->nnf;
        XGROW(ww->nf_shape, (size_t)shape + 1, ww->capnf);
        memset(ww->nf_shape + n, 0, (ww->capnf - n) * sizeof(*ww->nf_shape));
        ww->nnf = (size_t)shape + 1;
    }
    struct sched_nf *f = &ww->nf_shape[shape];
    /* a bind does not move the epoch (the placers re-score the nodes it logs): the node
     * filter counts what is free, so one made before it no longer holds */
    size_t nbinds = c->v->log_epoch == c->v->epoch ? c->v->nbinds : 0;
    if (!f->nf || f->epoch != c->v->epoch || f->nbinds != nbinds) {
        int own;
        json_decref(f->nf);
        json_decref(f->ahead);
        f->nf = sched__node_filter(c->v, pi, &f->code, &own);
        f->ahead = f->code == WHY_INSUFFICIENT || f->code == WHY_CAPACITY_RESERVED || f->code < 0
                       ? sched__ahead(c, pi)
                       : json_array();
        f->epoch = own ? 0 : c->v->epoch; /* a pod's own rules: not for its shape */
        f->nbinds = nbinds;
    }
    return f;
}

int sched__why_nf_code(const struct sched_cyc *c, int shape)
{
    const struct sched_why_writer *ww = c->why;
    if (!ww || shape < 0 || (size_t)shape >= ww->nnf || !ww->nf_shape[shape].nf)
        return -2;
    return ww->nf_shape[shape].code;
}

static void nf_free(struct sched_why_writer *ww)
{
    for (size_t i = 0; i < ww->nnf; i++) {
        json_decref(ww->nf_shape[i].nf);
        json_decref(ww->nf_shape[i].ahead);
    }
    free(ww->nf_shape);
    ww->nf_shape = NULL;
    ww->nnf = ww->capnf = 0;
}

/* ---- the cycle's why writer ---- */

struct sched_why_writer *sched__why_w(struct sched_cyc *c)
{
    if (!c->why) {
        c->why = xcalloc(1, sizeof(*c->why));
        c->why->queue_tail.q = -1;
    }
    return c->why;
}

struct store_jw *sched__why_text(struct sched_cyc *c)
{
    struct sched_why_writer *w = sched__why_w(c);
    w->text.len = 0;
    return &w->text;
}

void sched__why_writer_free(struct sched_cyc *c)
{
    struct sched_why_writer *w = c->why;
    if (!w)
        return;
    if (w->classes)
        w->classes_free(w->classes);
    if (w->memo)
        w->memo_free(w->memo);
    json_decref(w->ahead);
    free(w->ahead_text);
    store_jw_release(&w->queue_text);
    sched__queue_tail_release(&w->queue_tail);
    json_decref(w->nf);
    free(w->nf_text);
    nf_free(w);
    store_jw_release(&w->text);
    json_decref(w->blockers);
    store_jw_release(&w->blockers_text);
    free(w);
    c->why = NULL;
}
