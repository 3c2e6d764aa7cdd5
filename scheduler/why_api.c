/*
 * why_api.c - the why API: sched_why, sched_why_note and the jobs never tried.
 *
 * The why document of a job is computed by the cycle (why_record.c) and stored
 * in STORE_DB_WHY whenever it changes; sched_why reads it back, or describes a
 * job that was never tried. A preemption victim's document is written by the
 * preemption (sched__why_preempted) and stays answerable, with the ledger's victim
 * record ("preemptedBy", "retention"), until its retention ends, also after the job
 * left the view.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "core.h"
#include "preempt.h"
#include "why.h"
#include "why_msg.h"

/* The gang part as the view has it now: {"podGroup", "minMember", "members", "bound",
 * "placeable"} for job ji (a synthesized document's; bound is also its placeable). New. */
static json_t *gang_now(struct sched_view *v, int ji)
{
    const struct sv_job *j = &v->jobs[ji];
    int bound = 0;
    for (size_t i = 0; i < j->npods; i++)
        bound += model_pod_gang_bound(&v->pods[j->pods[i]].m);
    return json_pack("{s:s,s:i,s:i,s:i,s:i}", "podGroup", j->id, "minMember", sched__job_min(j),
                     "members", (int)j->npods, "bound", bound, "placeable", bound);
}

/* A stored document's state and gang counts as of now: the document was computed at its
 * cycle, but a gang placed then is bound (and Running) by the time it is asked. */
static void refresh(struct sched *s, json_t *doc)
{
    size_t i;
    json_t *g;
    json_array_foreach(json_object_get(doc, "gang"), i, g)
    {
        int gj = sched__view_gang_job(s->v, json_string_value(json_object_get(g, "podGroup")));
        if (gj < 0)
            continue;
        json_t *now = gang_now(s->v, gj);
        json_object_set(g, "members", json_object_get(now, "members"));
        json_object_set(g, "bound", json_object_get(now, "bound"));
        json_decref(now);
    }
}

int sched__why_untried_code(const struct sv_job *j, enum sched_job_state st)
{
    if (j->gang && !j->has_pg)
        return WHY_PODGROUP_MISSING;
    if (st == SCHED_JOB_RUNNING || st == SCHED_JOB_SCHEDULED || st == SCHED_JOB_FINISHED)
        return -1;
    return WHY_NOT_TRIED;
}

/* The document of a job no cycle has tried: NotTried, or what is already known without a
 * cycle (PodGroup missing; nothing blocks a job that is bound). New. */
static json_t *untried(struct sched *s, int ji, const char *state, uint64_t cycle)
{
    const struct sv_job *j = &s->v->jobs[ji];
    int code = sched__why_untried_code(j, sched__job_state(s->v, j));
    json_t *primary;
    if (code == WHY_PODGROUP_MISSING) {
        char *msg = xasprintf(WHY_MSG_PODGROUP_MISSING, j->id);
        primary = json_pack("{s:s,s:s,s:s}", "code", why_code_name(WHY_PODGROUP_MISSING), "class",
                            why_class_name(why_code_class(WHY_PODGROUP_MISSING)), "message", msg);
        free(msg);
    } else if (code < 0)
        primary = json_null();
    else
        primary =
            json_pack("{s:s,s:s,s:s}", "code", why_code_name(WHY_NOT_TRIED), "class",
                      why_class_name(why_code_class(WHY_NOT_TRIED)), "message", WHY_MSG_NOT_TRIED);
    json_t *gang = json_array();
    if (j->gang && j->has_pg)
        json_array_append_new(gang, gang_now(s->v, ji));
    return json_pack("{s:s,s:s,s:I,s:o,s:[],s:o,s:n,s:n,s:{s:b,s:b,s:s},s:[],s:[]}", "job", j->id,
                     "state", state, "cycle", (json_int_t)cycle, "primary", primary, "blockers",
                     "gang", gang, "nodeFilter", "topology", "preemption", "attempted", 0,
                     "relevant", 0, "reason", WHY_MSG_PREEMPT_UNTRIED, "ahead", "history");
}

/* The job id names (borrowed), or the job of the pod it names (*pod 1): a pod of a gang
 * is answered by its gang. -1 when neither. */
static int job_of_id(struct sched_view *v, const char *id, int *pod)
{
    int ji = sched__view_job(v, id);
    *pod = 0;
    if (ji >= 0)
        return ji;
    int pi = sched__view_pod(v, id);
    if (pi < 0 || !v->pods[pi].alive || v->pods[pi].job < 0)
        return -1;
    *pod = 1;
    return v->pods[pi].job;
}

/* One why read in its three steps: where the id is in the view (under the lock), the
 * stored document and victim record (a store read, outside the lock), what the view says
 * now (under the lock again). sched_whys runs each step for many ids at once, so that
 * they take the lock twice in all. */
struct why_read {
    const char *id;
    int pod, rc;
    char *jid;
    json_t *doc, *rec;
    struct err err;
};

static void why_locate(struct sched *s, struct why_read *w)
{
    int32_t prio;
    int ji = job_of_id(s->v, w->id, &w->pod);
    /* a victim whose job left the view is answered from its stored document */
    int victim = ji < 0 && sched__view_victim(s->v, w->id, &prio);
    w->jid = ji >= 0 ? xstrdup(s->v->jobs[ji].id) : victim ? xstrdup(w->id) : NULL;
    if (!w->jid)
        w->rc = err_set(&w->err, ERR_NOT_FOUND, "job '%s' not found (nor a pod of a job)", w->id);
}

/* The stored document and the victim record, in txn; ERR_NOT_FOUND (no document) is kept
 * in w->rc for why_now. */
static void why_stored(MDB_txn *txn, struct why_read *w, struct sched_why_class_cache *k)
{
    w->rc = store_doc_get(txn, STORE_DB_WHY, w->jid, &w->doc, &w->err);
    if (w->rc == ERR_NOT_FOUND)
        err_clear(&w->err);
    if (w->rc == 0) /* a record of a class of failures: the job's whole document */
        w->rc = sched__why_class_complete(txn, &w->doc, k, &w->err);
    if (w->rc == 0 || w->rc == ERR_NOT_FOUND)
        w->rec = sched__ledger_victim_get(txn, w->jid);
}

static void why_now(struct sched *s, struct why_read *w)
{
    int32_t prio;
    int ji = sched__view_job(s->v, w->jid); /* the view may have changed meanwhile */
    if (ji < 0 && w->rc == 0 && sched__view_victim(s->v, w->jid, &prio)) {
        json_object_set_new(w->doc, "state",
                            json_string(sched_job_state_name(SCHED_JOB_PREEMPTED)));
    } else if (ji < 0) {
        w->rc = err_set(&w->err, ERR_NOT_FOUND, "job '%s' not found", w->jid);
    } else {
        const char *state = sched_job_state_name(sched__job_state(s->v, &s->v->jobs[ji]));
        if (w->rc == ERR_NOT_FOUND) {
            w->doc = untried(s, ji, state, s->cycle);
        } else {
            /* The state may have moved on (e.g. Running) since the document was stored; a
             * placed job's small record is completed (why_record.c). */
            json_t *full = sched__why_expand(s->v, ji, w->doc, state);
            json_decref(w->doc);
            w->doc = full;
            json_object_set_new(w->doc, "state", json_string(state));
            refresh(s, w->doc);
        }
        /* parked (view_wait.c): what retries it, computed here, never stored */
        json_t *wait = sched__wait_json(s->v, &s->v->jobs[ji]);
        if (wait)
            json_object_set_new(w->doc, "waiting", wait);
        w->rc = 0;
    }
}

/* The document of w (new) or NULL; releases what w holds. */
static json_t *why_finish(struct why_read *w, int64_t retention_ms)
{
    if (w->rec && w->rc == 0) {
        json_object_set(w->doc, "preemptedBy", json_object_get(w->rec, "preemptors"));
        if (json_object_get(w->rec, "roomTakenBy")) /* ledger_room.c */
            json_object_set(w->doc, "roomTakenBy", json_object_get(w->rec, "roomTakenBy"));
        json_t *gone = json_object_get(w->rec, "goneAt"),
               *until = json_object_get(w->rec, "retainedUntil");
        json_object_set_new(w->doc, "retention",
                            json_pack("{s:O,s:O,s:f}", "goneAt", gone ? gone : json_null(),
                                      "retainedUntil", until ? until : json_null(),
                                      "retentionSeconds", (double)retention_ms / 1000.0));
    }
    if (w->rc == 0 && w->pod)
        json_object_set_new(w->doc, "pod", json_pack("{s:s,s:s}", "name", w->id, "job", w->jid));
    json_t *doc = w->rc == 0 ? w->doc : NULL;
    if (w->rc < 0)
        json_decref(w->doc);
    json_decref(w->rec);
    free(w->jid);
    w->doc = w->rec = NULL;
    w->jid = NULL;
    return doc;
}

/* The steps of n reads: the lock, one store read transaction (ended before the lock is
 * taken again: holding one while waiting for the lock deadlocks with an apply that grows
 * the map under the lock, store.h), the lock. */
static void why_run(struct sched *s, struct why_read *w, size_t n, int64_t *retention_ms)
{
    MDB_txn *txn = NULL;
    struct err err = ERR_INIT;
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < n; i++)
        why_locate(s, &w[i]);
    *retention_ms = s->opts.retention_ms;
    pthread_mutex_unlock(&s->mu);
    struct sched_why_class_cache k = {0}; /* the ids' class documents, each read once */
    int rc = store_txn_begin(s->st, STORE_READ, &txn, &err);
    for (size_t i = 0; i < n; i++)
        if (w[i].jid) {
            if (rc < 0) {
                w[i].rc = rc;
                w[i].err = err;
            } else {
                why_stored(txn, &w[i], &k);
            }
        }
    sched__why_class_cache_release(&k);
    store_txn_abort(&txn);
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < n; i++)
        if (w[i].jid && (w[i].rc == 0 || w[i].rc == ERR_NOT_FOUND))
            why_now(s, &w[i]);
    pthread_mutex_unlock(&s->mu);
}

int sched_why(struct sched *s, const char *id, json_t **out, struct err *err)
{
    struct why_read w = {.id = id, .err = ERR_INIT};
    int64_t retention_ms;
    why_run(s, &w, 1, &retention_ms);
    int rc = w.rc;
    if (rc < 0)
        *err = w.err;
    json_t *doc = why_finish(&w, retention_ms);
    if (rc == 0)
        *out = doc;
    return rc;
}

void sched_whys(struct sched *s, size_t n, const char *const *ids, json_t **out)
{
    struct why_read *w = xcalloc(n ? n : 1, sizeof(*w));
    int64_t retention_ms;
    for (size_t i = 0; i < n; i++)
        w[i] = (struct why_read){.id = ids[i], .err = ERR_INIT};
    why_run(s, w, n, &retention_ms);
    for (size_t i = 0; i < n; i++)
        out[i] = why_finish(&w[i], retention_ms);
    free(w);
}

struct note_ctx {
    struct sched *s;
    const char *job;
    json_t *entry;
};

static int note_fn(MDB_txn *txn, void *ctx, struct err *err)
{
    struct note_ctx *n = ctx;
    return sched__why_note_add(txn, n->s->v, n->s->why_mem, n->job, n->entry, err);
}

int sched_why_note(struct sched *s, const char *job, json_t *entry, int64_t now_ms, struct err *err)
{
    char ts[64];
    clock_format_rfc3339(now_ms, ts, sizeof(ts));
    json_t *e = json_deep_copy(entry);
    json_object_set_new(e, "ts", json_string(ts));
    pthread_mutex_lock(&s->mu);
    json_object_set_new(e, "cycle", json_integer((json_int_t)s->cycle));
    struct note_ctx n = {s, job, e};
    int rc = store_write(s->st, note_fn, &n, err);
    pthread_mutex_unlock(&s->mu);
    json_decref(e);
    if (rc == ERR_NOT_FOUND)
        err_prefix(err, "why of job '%s'", job);
    return rc;
}
