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
    json_t *o = json_pack("{s:b,s:s,s:s}", "attempted", v->attempted, "code",
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

int sched_why(struct sched *s, const char *id, json_t **out, struct err *err)
{
    MDB_txn *txn = NULL;
    json_t *doc = NULL;
    int32_t prio;
    pthread_mutex_lock(&s->mu);
    int ji = sched__view_job(s->v, id);
    const char *state = ji >= 0 ? sched_job_state_name(sched__job_state(s, &s->v->jobs[ji]))
                        : sched__view_victim(s->v, id, &prio)
                            ? sched_job_state_name(SCHED_JOB_PREEMPTED)
                            : NULL;
    uint64_t cycle = s->cycle;
    int64_t retention_ms = s->opts.retention_ms;
    pthread_mutex_unlock(&s->mu);
    if (!state)
        return err_set(err, ERR_NOT_FOUND, "job '%s' not found", id);
    int rc = store_txn_begin(s->st, STORE_READ, &txn, err);
    if (rc < 0)
        goto out;
    rc = store_doc_get(txn, STORE_DB_WHY, id, &doc, err);
    if (rc == ERR_NOT_FOUND && ji < 0) {
        rc = err_set(err, ERR_NOT_FOUND, "job '%s' not found", id);
    } else if (rc == ERR_NOT_FOUND) {
        err_clear(err);
        doc = json_pack("{s:s,s:s,s:I,s:{s:s,s:s,s:s},s:[],s:[],s:n,s:n,s:{s:b,s:s},s:[],s:[]}",
                        "job", id, "state", state, "cycle", (json_int_t)cycle, "primary", "code",
                        why_code_name(WHY_NOT_TRIED), "class",
                        why_class_name(why_code_class(WHY_NOT_TRIED)), "message",
                        "the job has not been tried by a scheduling cycle yet", "blockers", "gang",
                        "nodeFilter", "topology", "preemption", "attempted", 0, "reason",
                        "not tried yet", "ahead", "history");
        rc = 0;
    } else if (rc == 0) {
        /* The state may have moved on (e.g. Running) since the document was stored. */
        json_object_set_new(doc, "state", json_string(state));
    }
    json_t *rec = rc == 0 ? sched__ledger_victim_get(txn, id) : NULL;
    if (rec) {
        json_object_set(doc, "preemptedBy", json_object_get(rec, "preemptors"));
        json_t *gone = json_object_get(rec, "goneAt"),
               *until = json_object_get(rec, "retainedUntil");
        json_object_set_new(doc, "retention",
                            json_pack("{s:O,s:O,s:f}", "goneAt", gone ? gone : json_null(),
                                      "retainedUntil", until ? until : json_null(),
                                      "retentionSeconds", (double)retention_ms / 1000.0));
        json_decref(rec);
    }
    if (rc == 0) {
        *out = doc;
        doc = NULL;
    }
out:
    store_txn_abort(&txn);
    json_decref(doc);
    return rc;
}
