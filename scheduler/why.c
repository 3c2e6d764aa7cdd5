/*
 * why.c - reason codes and the why API.
 *
 * The why document of a job is computed by the cycle (why_record.c) and stored
 * in STORE_DB_WHY whenever it changes; sched_why reads it back, or describes a
 * job that was never tried. A preemption victim's document is written by the
 * preemption (sched__why_preempted) and stays answerable, with the ledger's victim
 * record ("preemptedBy", "retention"), until its retention ends, also after the job
 * left the view.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "preempt.h"
#include "why.h"

static const struct {
    const char *name;
    enum why_class cls;
} codes[] = {
#define WHY__ROW(name, str, cls) {str, WHY_CLASS_##cls},
    WHY_MAP(WHY__ROW)
#undef WHY__ROW
};

const char *why_code_name(int code)
{
    return code >= 0 && code < WHY_CODE_COUNT ? codes[code].name : "Unknown";
}

int why_code_from_name(const char *name)
{
    for (int k = 0; name && k < WHY_CODE_COUNT; k++)
        if (!strcmp(codes[k].name, name))
            return k;
    return -1;
}

enum why_class why_code_class(int code)
{
    return code >= 0 && code < WHY_CODE_COUNT ? codes[code].cls : WHY_CLASS_WAITING;
}

const char *why_class_name(enum why_class cls)
{
    static const char *const names[] = {"NEVER",    "POLICY", "ORDER",      "CAPACITY",
                                        "TOPOLOGY", "GANG",   "PREEMPTION", "WAITING"};
    return (unsigned)cls < sizeof(names) / sizeof(names[0]) ? names[cls] : "WAITING";
}

/* ---- blockers ---- */

void sched__blocker_add(struct sched_blockers *bs, enum why_code code, json_t *extra,
                        const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    XGROW(bs->b, bs->n + 1, bs->cap);
    bs->b[bs->n++] = (struct sched_blocker){code, xstrdup(msg), extra};
}

void sched__blockers_truncate(struct sched_blockers *bs, size_t n)
{
    while (bs->n > n) {
        struct sched_blocker *b = &bs->b[--bs->n];
        free(b->message);
        json_decref(b->extra);
    }
}

void sched__blockers_release(struct sched_blockers *bs)
{
    sched__blockers_truncate(bs, 0);
    free(bs->b);
    memset(bs, 0, sizeof(*bs));
}

const struct sched_blocker *sched__blockers_primary(const struct sched_blockers *bs)
{
    const struct sched_blocker *best = NULL;
    for (size_t i = 0; i < bs->n; i++)
        if (!best || bs->b[i].code < best->code)
            best = &bs->b[i];
    return best;
}

json_t *sched__blockers_json(const struct sched_blockers *bs)
{
    json_t *out = json_array();
    for (size_t i = 0; i < bs->n; i++) {
        const struct sched_blocker *b = &bs->b[i];
        json_t *o = json_pack("{s:s,s:s,s:s}", "class", why_class_name(why_code_class(b->code)),
                              "code", why_code_name(b->code), "message", b->message);
        if (b->extra)
            json_object_update(o, b->extra);
        json_array_append_new(out, o);
    }
    return out;
}

/* ---- the preemption verdict ---- */

json_t *sched__preempt_verdict_json(const struct sched_preempt_verdict *v)
{
    json_t *o = json_pack("{s:b,s:b,s:s,s:s}", "attempted", v->attempted, "relevant", 1, "code",
                          why_code_name(v->code), "reason", v->reason);
    if (v->detail)
        json_object_update(o, v->detail);
    return o;
}

void sched__preempt_verdict_release(struct sched_preempt_verdict *v)
{
    json_decref(v->detail);
    memset(v, 0, sizeof(*v));
    v->code = -1;
}

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

int sched__why_untried_code(struct sched *s, const struct sv_job *j)
{
    enum sched_job_state st = sched__job_state(s, j);
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
    int code = sched__why_untried_code(s, j);
    json_t *primary;
    if (code == WHY_PODGROUP_MISSING) {
        char *msg = xasprintf("PodGroup '%s' does not exist", j->id);
        primary = json_pack("{s:s,s:s,s:s}", "code", why_code_name(WHY_PODGROUP_MISSING), "class",
                            why_class_name(why_code_class(WHY_PODGROUP_MISSING)), "message", msg);
        free(msg);
    } else if (code < 0)
        primary = json_null();
    else
        primary = json_pack("{s:s,s:s,s:s}", "code", why_code_name(WHY_NOT_TRIED), "class",
                            why_class_name(why_code_class(WHY_NOT_TRIED)), "message",
                            "the job has not been tried by a scheduling cycle yet");
    json_t *gang = json_array();
    if (j->gang && j->has_pg)
        json_array_append_new(gang, gang_now(s->v, ji));
    return json_pack("{s:s,s:s,s:I,s:o,s:[],s:o,s:n,s:n,s:{s:b,s:b,s:s},s:[],s:[]}", "job", j->id,
                     "state", state, "cycle", (json_int_t)cycle, "primary", primary, "blockers",
                     "gang", gang, "nodeFilter", "topology", "preemption", "attempted", 0,
                     "relevant", 0, "reason", "not tried yet", "ahead", "history");
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

int sched_why(struct sched *s, const char *id, json_t **out, struct err *err)
{
    MDB_txn *txn = NULL;
    json_t *doc = NULL;
    int pod = 0, victim = 0;
    int32_t prio;
    pthread_mutex_lock(&s->mu);
    int ji = job_of_id(s->v, id, &pod);
    /* a victim whose job left the view is answered from its stored document */
    victim = ji < 0 && sched__view_victim(s->v, id, &prio);
    char *jid = ji >= 0 ? xstrdup(s->v->jobs[ji].id) : victim ? xstrdup(id) : NULL;
    int64_t retention_ms = s->opts.retention_ms;
    pthread_mutex_unlock(&s->mu);
    if (!jid)
        return err_set(err, ERR_NOT_FOUND, "job '%s' not found (nor a pod of a job)", id);
    /* The stored document and the victim record are read in a transaction that ends
     * before the view's lock is taken: holding a read transaction while waiting for the
     * lock deadlocks with an apply that grows the map under the lock (store.h). */
    json_t *rec = NULL;
    int rc = store_txn_begin(s->st, STORE_READ, &txn, err);
    if (rc < 0)
        goto out;
    rc = store_doc_get(txn, STORE_DB_WHY, jid, &doc, err);
    if (rc == ERR_NOT_FOUND)
        err_clear(err);
    if (rc == 0 || rc == ERR_NOT_FOUND)
        rec = sched__ledger_victim_get(txn, jid);
    store_txn_abort(&txn);
    if (rc == 0 || rc == ERR_NOT_FOUND) {
        pthread_mutex_lock(&s->mu);
        ji = sched__view_job(s->v, jid); /* the view may have changed meanwhile */
        if (ji < 0 && rc == 0 && sched__view_victim(s->v, jid, &prio)) {
            json_object_set_new(doc, "state",
                                json_string(sched_job_state_name(SCHED_JOB_PREEMPTED)));
        } else if (ji < 0) {
            rc = err_set(err, ERR_NOT_FOUND, "job '%s' not found", jid);
        } else {
            const char *state = sched_job_state_name(sched__job_state(s, &s->v->jobs[ji]));
            if (rc == ERR_NOT_FOUND) {
                doc = untried(s, ji, state, s->cycle);
            } else {
                /* The state may have moved on (e.g. Running) since the document was stored. */
                json_t *full = sched__why_expand(s->v, ji, doc, state);
                json_decref(doc);
                doc = full;
                json_object_set_new(doc, "state", json_string(state));
                refresh(s, doc);
            }
            /* parked (view_wait.c): what retries it, computed here, never stored */
            json_t *wait = sched__wait_json(s->v, &s->v->jobs[ji]);
            if (wait)
                json_object_set_new(doc, "waiting", wait);
            rc = 0;
        }
        pthread_mutex_unlock(&s->mu);
    }
    if (rec && rc == 0) {
        json_object_set(doc, "preemptedBy", json_object_get(rec, "preemptors"));
        json_t *gone = json_object_get(rec, "goneAt"),
               *until = json_object_get(rec, "retainedUntil");
        json_object_set_new(doc, "retention",
                            json_pack("{s:O,s:O,s:f}", "goneAt", gone ? gone : json_null(),
                                      "retainedUntil", until ? until : json_null(),
                                      "retentionSeconds", (double)retention_ms / 1000.0));
    }
    json_decref(rec);
    if (rc == 0 && pod)
        json_object_set_new(doc, "pod", json_pack("{s:s,s:s}", "name", id, "job", jid));
    if (rc == 0) {
        *out = doc;
        doc = NULL;
    }
out:
    store_txn_abort(&txn);
    json_decref(doc);
    free(jid);
    return rc;
}
