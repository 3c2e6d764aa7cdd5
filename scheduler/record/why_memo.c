/*
 * why_memo.c - a failing job whose outcome is the last failing job's but for its own id
 * writes that job's texts under its id instead of writing its parts again.
 *
 * Hundreds of jobs of one shape fail in a row once the cluster is full (the Slurm shapes:
 * 872 gangs of 8 nodes); each attempt still runs (its checks, placement, preemption check,
 * timeout window: what it decides and changes stays its own), but writing the document's
 * parts as JSON and then as text was most of its cost. The memo keeps, of the last failing
 * one-job attempt written from its parts (A), the typed outcome those parts are written from
 * and the texts with A's id replaced by a marker (why_class.c's marker: JSON text never
 * holds it raw). A later failing one-job attempt (C) is answered from it when:
 *
 *   - every string of C's outcome (the blockers' messages and extra members, the
 *     preemption verdict's reason and detail, why preemption is moot, the topology's
 *     summary and domain names), with C's id marked, is the same as A's with A's id marked,
 *     and every number, code and flag is the same;
 *   - the node filter is the same (cached per shape and view epoch: mostly the same object)
 *     and its text holds neither id;
 *   - the marked text holds no occurrence of C's id.
 *
 * The texts are written from those parts only, piece by piece (an id cannot span two
 * pieces: it holds no '"'), so C's text marked with C's id is A's marked with A's: C's text
 * is the marked one with C's id put back (why_class.c's identity), the bytes its parts
 * would have given. The last condition makes the marked text C's class template too
 * (why_class.c marks every occurrence of the id). test_why_memo compares every stored
 * document and audit record with the memo on and off.
 */
#include <stdlib.h>
#include <string.h>

#include "place.h"
#include "plan.h"
#include "why.h"
#include "why_msg.h"

struct memo_blocker {
    int code;
    char *message;
    json_t *extra; /* held */
};

struct sched_why_memo {
    char *id; /* A's */
    int state, primary;
    struct memo_blocker *b;
    size_t nb;
    int gang, min, members, bound, placeable;
    json_t *nf; /* held */
    int has_topo;
    struct place_topology topo; /* names copied (tried: an array of its own) */
    int pcode, pattempted;
    char *preason, *moot;
    json_t *pdetail;     /* held */
    struct why_mid *mid; /* the mid text, A's id marked */
    char *tmpl;          /* its members (without the braces) */
    char *blockers;      /* the blockers' text, A's id marked */
};

/* 1 when the text needs no escaping in JSON and holds no marker: its occurrences in a
 * document's text are its occurrences in the strings written. */
static int plain_id(const char *id)
{
    for (const char *p = id; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == '"' || *p == '\\')
            return 0;
    return *id != '\0';
}

/* a with every ida marked equals b with every idb marked (both left to right, as
 * why_class.c marks). */
static int eq_marked(const char *a, const char *ida, const char *b, const char *idb)
{
    if (!a || !b)
        return a == b;
    size_t la = strlen(ida), lb = strlen(idb);
    for (;;) { /* the texts between the occurrences are the same, and so is their number */
        const char *pa = strstr(a, ida), *pb = strstr(b, idb);
        if (!pa || !pb)
            return !pa && !pb && !strcmp(a, b);
        if (pa - a != pb - b || memcmp(a, b, (size_t)(pa - a)))
            return 0;
        a = pa + la;
        b = pb + lb;
    }
}

/* The same JSON value up to the ids (object members in order: the order they are
 * written in). */
static int json_eq_marked(json_t *a, const char *ida, json_t *b, const char *idb)
{
    if (!a || !b)
        return a == b;
    if (json_typeof(a) != json_typeof(b))
        return 0;
    if (json_is_string(a))
        return json_string_length(a) == strlen(json_string_value(a)) &&
               json_string_length(b) == strlen(json_string_value(b)) &&
               eq_marked(json_string_value(a), ida, json_string_value(b), idb);
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b))
            return 0;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!json_eq_marked(json_array_get(a, i), ida, json_array_get(b, i), idb))
                return 0;
        return 1;
    }
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b))
            return 0;
        void *ia = json_object_iter(a), *ib = json_object_iter(b);
        for (; ia && ib; ia = json_object_iter_next(a, ia), ib = json_object_iter_next(b, ib))
            if (!eq_marked(json_object_iter_key(ia), ida, json_object_iter_key(ib), idb) ||
                !json_eq_marked(json_object_iter_value(ia), ida, json_object_iter_value(ib), idb))
                return 0;
        return !ia && !ib;
    }
    return json_equal(a, b);
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static void memo_clear(struct sched_why_memo *m)
{
    free(m->id);
    for (size_t i = 0; i < m->nb; i++) {
        free(m->b[i].message);
        json_decref(m->b[i].extra);
    }
    free(m->b);
    json_decref(m->nf);
    for (size_t i = 0; m->has_topo && i < m->topo.nbest; i++) {
        free((char *)m->topo.best[i].name);
        free((char *)m->topo.best[i].limit);
    }
    for (size_t i = 0; m->has_topo && i < m->topo.ntried; i++)
        free((char *)m->topo.tried[i].name);
    free(m->topo.tried);
    free(m->topo.mult);
    free(m->preason);
    free(m->moot);
    json_decref(m->pdetail);
    sched__why_mid_unref(m->mid);
    free(m->tmpl);
    free(m->blockers);
    memset(m, 0, sizeof(*m));
}

static void memo_free(struct sched_why_memo *m)
{
    memo_clear(m);
    free(m);
}

/* The gang counts the document's "gang" part writes for the attempt's one member. */
static void gang_counts(const struct sched_view *v, const struct sched_why_outcome *o, int *gang,
                        int *min, int *members, int *bound, int *placeable)
{
    const struct sv_job *j = &v->jobs[o->rq->jobs[0]];
    *gang = j->gang;
    *min = sched__job_min(j);
    *members = (int)j->npods;
    *bound = o->rq->m[0].bound;
    *placeable = o->rq->m[0].base + o->res->placed[0];
}

static int topo_eq(const struct sched_why_memo *m, const struct place_topology *t, const char *id)
{
    const struct place_topology *k = &m->topo;
    if (!t || !m->has_topo)
        return !t && !m->has_topo;
    if (k->tree != t->tree || k->must != t->must || k->depth != t->depth ||
        k->job_pods != t->job_pods || k->needed != t->needed || k->candidates != t->candidates ||
        k->holding != t->holding || k->nbest != t->nbest || k->ntried != t->ntried ||
        k->nmult != t->nmult || !k->mult != !t->mult ||
        (t->mult && memcmp(k->mult, t->mult, t->nmult * sizeof(*t->mult))) ||
        !eq_marked(k->summary, m->id, t->summary, id))
        return 0;
    for (size_t i = 0; i < t->nbest; i++)
        if (k->best[i].holds != t->best[i].holds ||
            !eq_marked(k->best[i].name, m->id, t->best[i].name, id) ||
            !eq_marked(k->best[i].limit, m->id, t->best[i].limit, id))
            return 0;
    for (size_t i = 0; i < t->ntried; i++)
        if (k->tried[i].depth != t->tried[i].depth || k->tried[i].offer != t->tried[i].offer ||
            k->tried[i].placed != t->tried[i].placed || k->tried[i].ok != t->tried[i].ok ||
            !eq_marked(k->tried[i].name, m->id, t->tried[i].name, id))
            return 0;
    return 1;
}

static void topo_copy(struct sched_why_memo *m, const struct place_topology *t)
{
    m->has_topo = t != NULL;
    if (!t)
        return;
    m->topo = *t;
    for (size_t i = 0; i < t->nbest; i++) {
        m->topo.best[i].name = dup_or_null(t->best[i].name);
        m->topo.best[i].limit = dup_or_null(t->best[i].limit);
    }
    m->topo.tried = t->ntried ? xcalloc(t->ntried, sizeof(*t->tried)) : NULL;
    for (size_t i = 0; i < t->ntried; i++) {
        m->topo.tried[i] = t->tried[i];
        m->topo.tried[i].name = dup_or_null(t->tried[i].name);
    }
    m->topo.mult = t->mult ? xcalloc(t->nmult + 1, sizeof(*t->mult)) : NULL;
    if (t->mult)
        memcpy(m->topo.mult, t->mult, t->nmult * sizeof(*t->mult));
}

/* 1 when outcome o of job ji, as in says it, is the memo's but for the id. */
static int same_outcome(const struct sched_cyc *c, const struct sched_why_memo *m,
                        const struct sched_why_outcome *o, const struct sched_why_input *in,
                        int primary, const char *id)
{
    const struct sched_blockers *bs = o->blockers;
    int gang, min, members, bound, placeable;
    gang_counts(c->v, o, &gang, &min, &members, &bound, &placeable);
    if (m->state != in->state || m->primary != primary || m->nb != bs->n ||
        !(m->nf == in->nf || json_equal(m->nf, in->nf)) || m->gang != gang || m->min != min ||
        m->members != members || m->bound != bound || m->placeable != placeable ||
        m->pcode != o->preempt->code)
        return 0;
    for (size_t i = 0; i < bs->n; i++)
        if (m->b[i].code != (int)bs->b[i].code ||
            !eq_marked(m->b[i].message, m->id, bs->b[i].message, id) ||
            !json_eq_marked(m->b[i].extra, m->id, bs->b[i].extra, id))
            return 0;
    if (o->preempt->code >= 0 && (m->pattempted != o->preempt->attempted ||
                                  !eq_marked(m->preason, m->id, o->preempt->reason, id) ||
                                  !json_eq_marked(m->pdetail, m->id, o->preempt->detail, id)))
        return 0;
    if (o->preempt->code < 0 && !eq_marked(m->moot, m->id, o->moot, id))
        return 0;
    return topo_eq(m, o->res->topology, id);
}

/* The attempt is one the memo may answer or keep: one job, failed, no plan of preemption,
 * nothing placed or displaced. */
static int eligible(const struct sched_why_outcome *o, const struct sched_why_input *in,
                    int primary)
{
    return o && o->rq->njobs == 1 && !in->placement && !in->backfill &&
           in->state == SCHED_JOB_UNSCHEDULABLE && primary >= 0 && !o->preempt->blocks &&
           !o->displaced->njobs && primary != WHY_PREEMPTING && primary != WHY_RECLAIMING &&
           primary != WHY_PREEMPTION_WAITING;
}

static struct sched_why_memo *memo(struct sched_cyc *c)
{
    struct sched_why_writer *ww = sched__why_w(c);
    if (!ww->memo) {
        ww->memo = xcalloc(1, sizeof(*ww->memo));
        ww->memo_free = memo_free;
    }
    return ww->memo;
}

int sched__why_memo_answer(struct sched_cyc *c, const struct sched_why_outcome *o,
                           struct sched_why_input *in, const char *id)
{
    int primary = in->primary ? (int)in->primary->code : -1;
    struct sched_why_memo *m = c->why ? c->why->memo : NULL;
    if (c->opts->why_memo_off || !m || !m->id || !eligible(o, in, primary) || !plain_id(id) ||
        !same_outcome(c, m, o, in, primary, id) || strstr(m->tmpl, id))
        return 0;
    in->mid = sched__why_mid_ref(m->mid);
    in->blockers_text = sched__why_unmark(m->blockers, id);
    in->tmpl = m->tmpl;
    return 1;
}

void sched__why_memo_keep(struct sched_cyc *c, const struct sched_why_input *in, const char *id,
                          const char *mid, const char *blockers)
{
    const struct sched_why_outcome *o = in->outcome;
    int primary = in->primary ? (int)in->primary->code : -1;
    if (c->opts->why_memo_off || !eligible(o, in, primary) || !plain_id(id))
        return;
    struct sched_why_writer *ww = sched__why_w(c);
    const char *nf =
        in->nf && !json_is_null(in->nf) ? (ww->nf == in->nf ? ww->nf_text : NULL) : "null";
    if (!nf || strstr(nf, id)) /* its text is the same for every job: it must not name one */
        return;
    struct sched_why_memo *m = memo(c);
    memo_clear(m);
    m->id = xstrdup(id);
    m->state = in->state;
    m->primary = primary;
    m->nb = o->blockers->n;
    m->b = xcalloc(m->nb + 1, sizeof(*m->b));
    for (size_t i = 0; i < m->nb; i++)
        m->b[i] =
            (struct memo_blocker){(int)o->blockers->b[i].code, xstrdup(o->blockers->b[i].message),
                                  json_incref(o->blockers->b[i].extra)};
    m->nf = json_incref(in->nf);
    gang_counts(c->v, o, &m->gang, &m->min, &m->members, &m->bound, &m->placeable);
    topo_copy(m, o->res->topology);
    m->pcode = o->preempt->code;
    m->pattempted = o->preempt->attempted;
    m->preason = o->preempt->code >= 0 ? xstrdup(o->preempt->reason) : NULL;
    m->pdetail = json_incref(o->preempt->detail);
    m->moot = xstrdup(o->moot);
    m->mid = sched__why_mid_new(sched__why_mark(mid, strlen(mid), id), 1);
    m->tmpl = xstrndup(m->mid->text + 1, strlen(m->mid->text) - 2);
    m->blockers = sched__why_mark(blockers, strlen(blockers), id);
}
