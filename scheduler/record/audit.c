/*
 * audit.c - the audit records of a cycle's decisions that are not preemptions (those are
 * ledger_plan.c's): placed, running, discarded, gang-timed-out, the cycle's own, and the
 * parts every writer shares (the caller, an object's record).
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "outbox.h"
#include "view_base.h"
#include "view_queue.h"
#include "why.h"

json_t *sched__caller_json(const struct sched_caller *by)
{
    if (!by)
        return NULL;
    json_t *o = json_object();
    const char *names[] = {"name", "role", "address", "source"};
    const char *vals[] = {by->name, by->role, by->address, by->source};
    for (size_t i = 0; i < 4; i++)
        if (vals[i])
            json_object_set_new(o, names[i], json_string(vals[i]));
    return o;
}

char *sched__caller_text(const struct sched_caller *by)
{
    json_t *o = sched__caller_json(by);
    char *text = o ? store_json_text(o, JSON_SORT_KEYS) : NULL;
    json_decref(o);
    return text;
}

void sched__audit_applied_text(struct store_jw *w, uint64_t cycle, enum model_kind kind,
                               const char *key, const char *job, const struct sched_applied *a)
{
    /* the members in sorted order, as the canonical dump puts them */
    store_jw_lit(w, "{\"action\":");
    store_jw_str(w, a->action);
    if (a->by) {
        store_jw_lit(w, ",\"by\":");
        store_jw_raw(w, a->by, strlen(a->by));
    }
    store_jw_lit(w, ",\"cycle\":");
    store_jw_int(w, (int64_t)cycle);
    store_jw_lit(w, ",\"document\":");
    store_jw_int(w, a->document);
    if (job) {
        store_jw_lit(w, ",\"job\":");
        store_jw_str(w, job);
    }
    store_jw_lit(w, ",\"kind\":");
    store_jw_str(w, store_audit_kind_name(STORE_AUDIT_APPLIED));
    store_jw_lit(w, ",\"object\":{\"kind\":");
    store_jw_str(w, model_kind_name(kind));
    store_jw_lit(w, ",\"name\":");
    store_jw_str(w, key);
    store_jw_lit(w, "}");
    if (a->status)
        store_jw_lit(w, ",\"subresource\":\"status\"");
    store_jw_lit(w, "}");
}

/* One member of an object's record (object_record): an extra's value, or a string, a
 * number, or the {"kind", "name"} of "object". */
struct member {
    const char *key;
    enum { M_VAL, M_STR, M_NUM, M_OBJECT } type;
    json_t *val;
    const char *str;
    int64_t num;
};

static void member_put(struct member *m, size_t *n, struct member add)
{
    size_t i = (*n)++;
    for (; i > 0 && strcmp(m[i - 1].key, add.key) > 0; i--)
        m[i] = m[i - 1];
    m[i] = add;
}

/* The record as canonical text (the store's sorted dump, without seq, ts and hash, which
 * store_audit_append_text puts in): written, not built as a tree to be dumped, for the
 * records an apply of 150,000 objects writes. Returns 0, or 1 when extra holds more
 * members than it takes or a member the store writes itself (then the tree is built). */
static int object_record(MDB_txn *txn, uint64_t cycle, enum store_audit_kind what,
                         enum model_kind kind, const char *key, const char *job, json_t *extra,
                         int *rc, struct err *err)
{
    struct member m[16];
    size_t n = 0;
    const char *k;
    json_t *v;
    if (json_object_size(extra) > 12)
        return 1;
    json_object_foreach(extra, k, v)
    {
        if (!strcmp(k, "seq") || !strcmp(k, "ts") || !strcmp(k, "hash"))
            return 1;
        member_put(m, &n, (struct member){.key = k, .type = M_VAL, .val = v});
    }
    /* extra's members replace these, as json_object_update does */
    if (!json_object_get(extra, "kind"))
        member_put(
            m, &n,
            (struct member){.key = "kind", .type = M_STR, .str = store_audit_kind_name(what)});
    if (!json_object_get(extra, "cycle"))
        member_put(m, &n, (struct member){.key = "cycle", .type = M_NUM, .num = (int64_t)cycle});
    if (!json_object_get(extra, "object"))
        member_put(m, &n, (struct member){.key = "object", .type = M_OBJECT});
    if (job && !json_object_get(extra, "job"))
        member_put(m, &n, (struct member){.key = "job", .type = M_STR, .str = job});
    struct store_jw w = STORE_JW_INIT;
    store_jw_lit(&w, "{");
    for (size_t i = 0; i < n; i++) {
        store_jw_key(&w, m[i].key);
        if (m[i].type == M_VAL) {
            store_jw_value(&w, m[i].val, JSON_SORT_KEYS);
        } else if (m[i].type == M_STR) {
            store_jw_str(&w, m[i].str);
        } else if (m[i].type == M_NUM) {
            store_jw_int(&w, m[i].num);
        } else {
            store_jw_lit(&w, "{\"kind\":");
            store_jw_str(&w, model_kind_name(kind));
            store_jw_lit(&w, ",\"name\":");
            store_jw_str(&w, key);
            store_jw_lit(&w, "}");
        }
    }
    store_jw_lit(&w, "}");
    *rc = store_audit_append_text(txn, what, w.buf, w.len, NULL, NULL, err);
    store_jw_release(&w);
    return 0;
}

int sched__audit_object(MDB_txn *txn, uint64_t cycle, enum store_audit_kind what,
                        enum model_kind kind, const char *key, json_t *obj, json_t *extra,
                        struct err *err)
{
    char *job = obj ? sched__object_job(kind, obj) : NULL;
    int rc = 0;
    if (object_record(txn, cycle, what, kind, key, job, extra, &rc, err) == 0) {
        free(job);
        return rc;
    }
    json_t *rec = json_object(), *o = json_object();
    json_object_set_new(rec, "kind", json_string(store_audit_kind_name(what)));
    json_object_set_new(rec, "cycle", json_integer((json_int_t)cycle));
    json_object_set_new(o, "kind", json_string(model_kind_name(kind)));
    json_object_set_new(o, "name", json_string(key));
    json_object_set_new(rec, "object", o);
    if (job)
        json_object_set_new(rec, "job", json_string(job));
    if (extra)
        json_object_update(rec, extra);
    rc = store_audit_append(txn, rec, NULL, err);
    json_decref(rec);
    free(job);
    return rc;
}

/* The open statement's pods (pods 1) or nodes, in order. New. */
static json_t *ops_field(const struct sched_cyc *c, int pods)
{
    json_t *a = json_array();
    for (size_t i = 0; i < c->nops; i++) {
        const struct sched_op *op = &c->ops[i];
        json_array_append_new(
            a, json_string(pods ? c->v->pods[op->pod].key : c->v->nodes[op->node].name));
    }
    return a;
}

int sched__audit_discarded(struct sched_cyc *c, const char *job, int code, const char *msg,
                           struct err *err)
{
    int rc = 0, ji = sched__view_job(c->v, job);
    char *sig = xasprintf("%s|%s", why_code_name(code), msg);
    struct why_job *w = ji >= 0 ? sched__why_job(c->why_mem, c->v, ji) : NULL;
    if (!w || !w->last_discard || strcmp(w->last_discard, sig)) {
        json_t *rec = json_pack("{s:s,s:s,s:I,s:s,s:s,s:o,s:o}", "kind",
                                store_audit_kind_name(STORE_AUDIT_DISCARDED), "job", job, "cycle",
                                (json_int_t)c->cycle, "reason", why_code_name(code), "message", msg,
                                "pods", ops_field(c, 1), "nodes", ops_field(c, 0));
        rc = sched__audit_append(c, rec, NULL, err);
    }
    if (w) {
        free(w->last_discard);
        w->last_discard = sig;
    } else {
        free(sig);
    }
    return rc;
}

void sched__audit_discard_forget(struct sched_cyc *c, int ji)
{
    struct why_job *w = sched__why_job(c->why_mem, c->v, ji);
    free(w->last_discard);
    w->last_discard = NULL;
}

/* ---- the cycle's records ---- */

int sched__audit_append(struct sched_cyc *c, json_t *rec, uint64_t *seq, struct err *err)
{
    int rc = store_audit_append(c->txn, rec, seq, err);
    json_decref(rec);
    return rc;
}

/* A placed record, as its canonical text (keys sorted): the outbox's members (kind, job,
 * cycle, pods, nodes) and what accounting needs of a placement that the store may no longer
 * hold when the record is read (docs/accounting.md): the job's queue, priority and
 * creation; "backfill" when the placement took nodes reserved for others. */
static int placed_record(struct sched_cyc *c, const struct sched_placement *p, struct err *err)
{
    const struct sched_view *v = c->v;
    const struct sv_job *j = &v->jobs[p->job];
    int32_t prio = 0;
    for (size_t i = 0; i < j->npods; i++)
        if (v->pods[j->pods[i]].alive) {
            prio = v->pods[j->pods[i]].prio;
            break;
        }
    struct store_jw *w = sched__why_text(c);
    store_jw_lit(w, "{");
    if (c->backfill) { /* cycle_reserve.c */
        store_jw_key(w, "backfill");
        store_jw_value(w, c->backfill, JSON_SORT_KEYS);
    }
    store_jw_key(w, SCHED_OUTBOX_M_CYCLE);
    store_jw_int(w, (int64_t)c->cycle);
    store_jw_key(w, SCHED_OUTBOX_M_JOB);
    store_jw_str(w, j->id);
    store_jw_key(w, SCHED_OUTBOX_M_KIND);
    store_jw_str(w, store_audit_kind_name(STORE_AUDIT_PLACED));
    store_jw_key(w, SCHED_OUTBOX_M_NODES);
    for (size_t i = 0; i < p->n; i++) {
        store_jw_raw(w, i ? "," : "[", 1);
        store_jw_str(w, v->nodes[p->ops[i].node].name);
    }
    store_jw_lit(w, "]");
    store_jw_key(w, SCHED_OUTBOX_M_PODS);
    for (size_t i = 0; i < p->n; i++) {
        store_jw_raw(w, i ? "," : "[", 1);
        store_jw_str(w, v->pods[p->ops[i].pod].key);
    }
    store_jw_lit(w, "]");
    store_jw_key(w, "priority");
    store_jw_int(w, prio);
    store_jw_key(w, "queue");
    store_jw_str(w, sched__job_queue_name(v, j));
    store_jw_key(w, "submitted");
    int64_t created = sched__job_creation(v, j);
    if (created) { /* jobs placed in a row were mostly created together */
        struct sched_why_writer *ww = sched__why_w(c);
        if (!ww->submitted[0] || ww->submitted_ms != created) {
            clock_format_rfc3339_ms(created, ww->submitted, sizeof(ww->submitted));
            ww->submitted_ms = created;
        }
        store_jw_str(w, ww->submitted);
    } else {
        store_jw_lit(w, "null");
    }
    store_jw_lit(w, "}");
    return store_audit_append_text(c->txn, STORE_AUDIT_PLACED, w->buf, w->len, NULL, NULL, err);
}

int sched__audit_placed(struct sched_cyc *c, struct err *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c->nplaced_jobs; i++) /* first placed first */
        rc = placed_record(c, &c->placed_jobs[i], err);
    return rc;
}

int sched__audit_running(struct sched_cyc *c, int job, const int *pods, size_t n, struct err *err)
{
    json_t *keys = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(keys, json_string(c->v->pods[pods[i]].key));
    return sched__audit_append(
        c,
        json_pack("{s:s,s:s,s:I,s:o}", "kind", store_audit_kind_name(STORE_AUDIT_RUNNING), "job",
                  c->v->jobs[job].id, "cycle", (json_int_t)c->cycle, "pods", keys),
        NULL, err);
}

int sched__audit_deadline(struct sched_cyc *c, int job, const int *pods, size_t n, struct err *err)
{
    struct sched_outbox_pod *op = xcalloc(n + 1, sizeof(*op));
    for (size_t i = 0; i < n; i++)
        op[i] = (struct sched_outbox_pod){c->v->pods[pods[i]].key, c->v->pods[pods[i]].m.node_name};
    struct sched_outbox_rec r = {.kind = STORE_AUDIT_DEADLINE_EXCEEDED,
                                 .job = c->v->jobs[job].id,
                                 .cycle = (int64_t)c->cycle,
                                 .pods = op,
                                 .npods = n};
    json_t *rec = sched_outbox_encode(&r);
    free(op);
    json_object_set_new(rec, "reason", json_string(MODEL_REASON_DEADLINE_EXCEEDED));
    return sched__audit_append(c, rec, NULL, err);
}

int sched__audit_gang_timed_out(struct sched_cyc *c, const int *jobs, size_t njobs, const int *pods,
                                size_t npods, double secs, const char *since, struct err *err)
{
    const struct sched_view *v = c->v;
    json_t *keys = json_array(), *groups = json_array();
    for (size_t i = 0; i < npods; i++)
        json_array_append_new(keys, json_string(v->pods[pods[i]].key));
    for (size_t m = 0; m < njobs; m++)
        if (v->jobs[jobs[m]].has_pg)
            json_array_append_new(groups, json_string(v->jobs[jobs[m]].id));
    return sched__audit_append(c,
                               json_pack("{s:s,s:s,s:I,s:s,s:o,s:o,s:f,s:s}", "kind",
                                         store_audit_kind_name(STORE_AUDIT_GANG_TIMED_OUT), "job",
                                         v->jobs[jobs[0]].id, "cycle", (json_int_t)c->cycle,
                                         "reason", why_code_name(WHY_GANG_TIMED_OUT), "pods", keys,
                                         "podGroups", groups, "timeoutSeconds", secs,
                                         "unsatisfiedSince", since),
                               NULL, err);
}

int sched__audit_cycle(struct sched_cyc *c, size_t pending, double ms,
                       const struct sched_caller *by, uint64_t *seq, struct err *err)
{
    json_t *rec =
        json_pack("{s:s,s:I,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:f}", "kind",
                  store_audit_kind_name(STORE_AUDIT_CYCLE), "cycle", (json_int_t)c->cycle, "placed",
                  (int)c->placed, "jobsPlaced", (int)c->jobs_placed, "discarded", (int)c->discarded,
                  "unschedulable", (int)c->unschedulable, "pendingJobs", (int)pending, "attempted",
                  (int)c->attempted, "waiting", (int)c->waiting, "durationMs", ms);
    /* the cycle's clock (its decisions' now), which the replay check runs it at again */
    json_object_set_new(rec, "clockMs", json_integer((json_int_t)c->now_ms));
    if (by)
        json_object_set_new(rec, "by", sched__caller_json(by));
    return sched__audit_append(c, rec, seq, err);
}

int sched__audit_nominations_cleared(MDB_txn *txn, uint64_t cycle, const struct sched_view *v,
                                     const int *pods, size_t n, struct err *err)
{
    struct sched_outbox_pod *op = xcalloc(n + 1, sizeof(*op));
    char *done = xcalloc(n + 1, 1);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int job = v->pods[pods[i]].job;
        size_t k = 0;
        if (done[i])
            continue;
        for (size_t j = i; j < n; j++)
            if (!done[j] && v->pods[pods[j]].job == job) {
                done[j] = 1;
                op[k++] = (struct sched_outbox_pod){v->pods[pods[j]].key, NULL};
            }
        struct sched_outbox_rec r = {.kind = STORE_AUDIT_NOMINATED,
                                     .job = v->jobs[job].id,
                                     .cycle = (int64_t)cycle,
                                     .pods = op,
                                     .npods = k};
        json_t *rec = sched_outbox_encode(&r);
        rc = store_audit_append(txn, rec, NULL, err);
        json_decref(rec);
    }
    free(done);
    free(op);
    return rc;
}
