/*
 * why_record.c - the why document written by the cycle.
 *
 * A why document is stored only when its content changes (its signature: the
 * state, the gang timeout window and the text from "primary" to "preemption",
 * which is also what is stored), and the "unschedulable" audit record is
 * written only when the primary reason changes, so a job stuck for a thousand
 * cycles costs one record. A placed job's document is stored small and
 * completed when read (record_placed, sched__why_expand); failing jobs of one
 * cycle that differ only by their own name share one (why_class.c).
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "numfmt.h"
#include "outbox.h"
#include "queue.h"
#include "why.h"
#include "why_msg.h"

#define HISTORY_MAX 50

/* The text of the documents' queue part (borrowed, valid until the queue part changes):
 * written again only when plan_epoch moved (allocations move only then). */
static const char *queue_text(struct sched_cyc *c, int q)
{
    struct sched_why_writer *ww = sched__why_w(c);
    if (!ww->queue_text.len || ww->queue_q != q || ww->queue_epoch != c->plan_epoch) {
        ww->queue_text.len = 0;
        sched__queue_why_text(c->v, q, &ww->queue_text, &ww->queue_tail);
        store_jw_raw(&ww->queue_text, "", 1);
        ww->queue_q = q;
        ww->queue_epoch = c->plan_epoch;
    }
    return ww->queue_text.buf;
}

/* The text of the "ahead" part (borrowed, valid until the next call): the jobs that fail in
 * a row share one array (cycle_attempt.c caches it per shape), so it is written once. */
static const char *ahead_text(struct sched_cyc *c, json_t *ahead)
{
    struct sched_why_writer *ww = sched__why_w(c);
    if (!ahead)
        return "[]";
    if (ahead != ww->ahead) {
        json_decref(ww->ahead); /* held, so its address is not reused while cached */
        free(ww->ahead_text);
        ww->ahead = json_incref(ahead);
        ww->ahead_text = store_json_text(ahead, 0);
    }
    return ww->ahead_text;
}

/* Job j's memory (its why_job entry). */
static struct why_job *mem(struct sched_cyc *c, const struct sv_job *j)
{
    return sched__why_job(c->why_mem, c->v, (int)(j - c->v->jobs));
}

/* The job's memory from its stored document old (taken; NULL: none). */
static void load_doc(struct sv_job *j, struct why_job *w, json_t *old)
{
    w->loaded = 1;
    if (!old)
        return;
    json_t *h = json_object_get(old, "history");
    w->history = json_is_array(h) ? json_incref(h) : NULL;
    w->has_first = 0;
    const char *since =
        json_string_value(json_object_get(json_object_get(old, "gangTimeout"), "unsatisfiedSince"));
    if (!since || clock_parse_rfc3339(since, &j->unsat_since, NULL) < 0)
        j->unsat_since = 0;
    int code = why_code_from_name(
        json_string_value(json_object_get(json_object_get(old, "primary"), "code")));
    if (code >= 0)
        w->last_code = code;
    const char *cls = sched__why_class_of(old);
    w->cls = cls ? xstrdup(cls) : NULL;
    json_decref(old);
}

static void load_previous(struct sched_cyc *c, struct sv_job *j, struct why_job *w)
{
    json_t *old = NULL;
    if (store_doc_get(c->txn, STORE_DB_WHY, j->id, &old, NULL) < 0)
        old = NULL;
    load_doc(j, w, old);
}

void sched__why_load(struct sched_cyc *c, int ji)
{
    struct why_job *w = sched__why_job(c->why_mem, c->v, ji);
    if (!w->loaded)
        load_previous(c, &c->v->jobs[ji], w);
}

/* The gang timeout part of the document of job j (it has a PodGroup), appended to w:
 * {"timeoutSeconds", "unsatisfiedSince", "deadline"} (times null outside a window). */
static void timeout_text(struct store_jw *w, const struct sv_job *j)
{
    store_jw_lit(w, "{\"timeoutSeconds\":");
    store_jw_real(w, (double)j->pg.timeout_ms / 1000.0);
    if (j->unsat_since) {
        char ts[64];
        clock_format_rfc3339(j->unsat_since, ts, sizeof(ts));
        store_jw_key(w, "unsatisfiedSince");
        store_jw_str(w, ts);
        clock_format_rfc3339(j->unsat_since + j->pg.timeout_ms, ts, sizeof(ts));
        store_jw_key(w, "deadline");
        store_jw_str(w, ts);
    } else {
        store_jw_lit(w, ",\"unsatisfiedSince\":null,\"deadline\":null");
    }
    store_jw_lit(w, "}");
}

/* The gang timeout part as JSON (timeout_text's), NULL for a job without a PodGroup. New. */
static json_t *timeout_json(const struct sv_job *j)
{
    if (!j->has_pg)
        return NULL;
    struct store_jw w = {0};
    timeout_text(&w, j);
    json_t *o = json_loadb(w.buf, w.len, 0, NULL);
    store_jw_release(&w);
    return o;
}

/* {"pod name":"node",...}: what p placed, in placement order. */
static void placement_nodes(struct store_jw *w, const struct sched_view *v,
                            const struct sched_placement *p)
{
    store_jw_lit(w, "{");
    for (size_t i = 0; i < p->n; i++) {
        store_jw_key(w, v->pods[p->ops[i].pod].m.name);
        store_jw_str(w, v->nodes[p->ops[i].node].name);
    }
    store_jw_lit(w, "}");
}

/* [{"cycle","ts","code"}: a history entry as history_add makes it, the array opened. */
static void entry_text(struct store_jw *w, uint64_t cycle, const char *ts, const char *code)
{
    store_jw_lit(w, "[{\"cycle\":");
    store_jw_int(w, (int64_t)cycle);
    store_jw_key(w, "ts");
    store_jw_str(w, ts);
    store_jw_key(w, "code");
    store_jw_str(w, code);
    store_jw_lit(w, "}");
}

/* w's history as the document writes it. */
static void history_text(struct store_jw *o, const struct why_job *w)
{
    if (w->has_first) {
        entry_text(o, w->first_cycle, w->first_ts, w->first_code);
        store_jw_lit(o, "]");
    } else {
        store_jw_value(o, w->history, 0);
    }
}

/* A history entry {"cycle","ts","code"} (new), without json_pack's parsing. */
static json_t *entry_json(uint64_t cycle, const char *ts, const char *code)
{
    json_t *e = json_object();
    json_object_set_new_nocheck(e, "cycle", json_integer((json_int_t)cycle));
    json_object_set_new_nocheck(e, "ts", json_string(ts));
    json_object_set_new_nocheck(e, "code", json_string(code));
    return e;
}

/* w's history as a tree (NULL: none), made from its one entry when it has only that. */
static json_t *history_tree(struct why_job *w)
{
    if (w->has_first) {
        w->history = json_array();
        json_array_append_new(w->history, entry_json(w->first_cycle, w->first_ts, w->first_code));
        w->has_first = 0;
    }
    return w->history;
}

/* A placed job's document is stored small (PLACED_MARK): what only the attempt knew (its
 * cycle, gang counts, topology, preemption, jobs ahead, placement, the queue's shares then)
 * and the history; the parts every placed job shares or the view knows (primary, blockers,
 * the defaults, the gang timeout) are filled in when it is read (sched__why_expand). */
#define PLACED_MARK "placedRecord"

/* Returns 0, 1 when add_only and the job has a stored document (*old, new: nothing was
 * written), or ERR_*. */
static int record_placed(struct sched_cyc *c, struct sv_job *j, const struct sched_why_input *in,
                         json_t *topology, uint64_t seq, const char *ts, int add_only, json_t **old,
                         struct err *err)
{
    const char *queue = queue_text(c, j->queue);
    struct store_jw *w = sched__why_text(c);
    store_jw_lit(w, "{\"job\":");
    store_jw_str(w, j->id);
    store_jw_key(w, "cycle");
    store_jw_int(w, (int64_t)c->cycle);
    store_jw_key(w, "auditSeq");
    store_jw_int(w, (int64_t)seq);
    store_jw_lit(w, ",\"" PLACED_MARK "\":true");
    json_t *opt[] = {in->gang, in->nf, topology, in->preemption,
                     json_array_size(in->ahead) ? in->ahead : NULL};
    const char *name[] = {"gang", "nodeFilter", "topology", "preemption", "ahead"};
    for (size_t i = 0; i < sizeof(opt) / sizeof(opt[0]); i++)
        if (opt[i]) {
            store_jw_key(w, name[i]);
            store_jw_value(w, opt[i], 0);
        }
    store_jw_key(w, "history");
    struct why_job *m = mem(c, j);
    if (m->history || m->has_first) {
        history_text(w, m);
    } else { /* its first entry, as history_add makes it; the memory of the job reads it back
                from the document when it needs it (sched__why_load) */
        entry_text(w, c->cycle, ts, "Placed");
        store_jw_lit(w, "]");
        m->loaded = 0;
    }
    if (in->backfill) {
        store_jw_key(w, "backfill");
        store_jw_value(w, in->backfill, 0);
    }
    store_jw_key(w, "placement");
    store_jw_lit(w, "{\"cycle\":");
    store_jw_int(w, (int64_t)c->cycle);
    store_jw_key(w, "ts");
    store_jw_str(w, ts);
    store_jw_key(w, "nodes");
    placement_nodes(w, c->v, in->placement);
    store_jw_lit(w, "}");
    /* the queue as this cycle left it: a restarted view knows its shares only after a cycle */
    store_jw_key(w, "queue");
    store_jw_raw(w, queue, strlen(queue));
    store_jw_lit(w, "}");
    sched__why_class_leave(c, j);
    if (add_only)
        return store_doc_add_text(c->txn, STORE_DB_WHY, j->id, w->buf, w->len, old, err);
    return store_doc_put_text(c->txn, STORE_DB_WHY, j->id, w->buf, w->len, err);
}

/* The member of the small document, or a new `dflt` (stolen) when it has none. */
static json_t *part(json_t *doc, const char *key, json_t *dflt)
{
    json_t *v = json_object_get(doc, key);
    if (!v)
        return dflt;
    json_decref(dflt);
    return json_incref(v);
}

int sched__why_stored_state(MDB_txn *txn, const char *job, enum sched_job_state *out)
{
    json_t *doc = NULL;
    if (store_doc_get(txn, STORE_DB_WHY, job, &doc, NULL) < 0)
        return -1;
    struct err err = ERR_INIT;
    int rc = 0;
    if (json_is_true(json_object_get(doc, PLACED_MARK)))
        *out = SCHED_JOB_SCHEDULED;
    else if (sched_job_state_parse(json_string_value(json_object_get(doc, "state")), out, &err) < 0)
        rc = -1;
    json_decref(doc);
    return rc;
}

json_t *sched__why_expand(const struct sched_view *v, int ji, json_t *doc, const char *state)
{
    if (!json_is_true(json_object_get(doc, PLACED_MARK)))
        return json_incref(doc);
    const struct sv_job *j = &v->jobs[ji];
    json_t *out = json_pack(
        "{s:O,s:s,s:O,s:O,s:n,s:[],s:o,s:o,s:o,s:o,s:o,s:O,s:O}", "job",
        json_object_get(doc, "job"), "state", state, "cycle", json_object_get(doc, "cycle"),
        "auditSeq", json_object_get(doc, "auditSeq"), "primary", "blockers", "gang",
        part(doc, "gang", json_null()), "nodeFilter", part(doc, "nodeFilter", json_null()),
        "topology", part(doc, "topology", json_null()), "preemption",
        part(doc, "preemption",
             json_pack("{s:b,s:b,s:s}", "attempted", 0, "relevant", 0, "reason",
                       WHY_MSG_PREEMPT_PLACED)),
        "ahead", part(doc, "ahead", json_array()), "history", json_object_get(doc, "history"),
        "placement", json_object_get(doc, "placement"));
    json_t *gt = timeout_json(j);
    if (gt)
        json_object_set_new(out, "gangTimeout", gt);
    json_object_set(out, "queue", json_object_get(doc, "queue"));
    if (json_object_get(doc, "backfill"))
        json_object_set(out, "backfill", json_object_get(doc, "backfill"));
    return out;
}

/* The head of a stored document's signature (with its mid text: what it says apart from its
 * history, cycle and audit sequence), into buf: "state|unsatisfiedSince|placement cycle|"
 * (the timeout window is durable only if a change of it rewrites the document; a placement
 * always changes it), or "placed@<cycle>" for a placed job's small record (no mid). */
static void signature_head(char *buf, size_t n, const struct sched_why_input *in, int small,
                           uint64_t cycle, int64_t unsat_since)
{
    char num[2 * NUMFMT_INT64_LEN + 8], *end = num + sizeof(num), *p = end;
    const char *state = small ? "placed@" : sched_job_state_name(in->state);
    if (!small) {
        *--p = '|';
        p = numfmt_u64(p, in->placement ? cycle : 0);
        *--p = '|';
        p = numfmt_i64(p, unsat_since);
        *--p = '|';
    } else {
        p = numfmt_u64(p, cycle);
    }
    size_t sl = strlen(state), hl = (size_t)(end - p);
    if (sl + hl >= n)
        sl = hl = 0;
    memcpy(buf, state, sl);
    memcpy(buf + sl, p, hl);
    buf[sl + hl] = '\0';
}

/* The last stored document of w (job id) had this signature. */
static int same_signature(const struct why_job *w, const char *head, const struct why_mid *mid,
                          const char *id)
{
    return w->last_sig && !strcmp(w->last_sig, head) && sched__why_mid_eq(w->last_mid, mid, id);
}

/* The document's tail as text (new): {"history"[,"placement"][,"gangTimeout"]}. */
static char *tail_text(const struct sched_cyc *c, const struct sv_job *j, const struct why_job *m,
                       const struct sched_placement *placement, const char *ts)
{
    struct store_jw w = {0};
    store_jw_lit(&w, "{\"history\":");
    history_text(&w, m);
    if (placement) {
        store_jw_lit(&w, ",\"placement\":{\"cycle\":");
        store_jw_int(&w, (int64_t)c->cycle);
        store_jw_key(&w, "ts");
        store_jw_str(&w, ts);
        store_jw_key(&w, "nodes");
        placement_nodes(&w, c->v, placement);
        store_jw_lit(&w, "}");
    }
    if (j->has_pg) {
        store_jw_key(&w, "gangTimeout");
        timeout_text(&w, j);
    }
    store_jw_raw(&w, "}", 2);
    return w.buf;
}

/* The topology part of the document: a preemptor waiting for its victims is placed on its
 * nominated nodes, which has no topology part: the why keeps the one of the attempt that
 * chose them. Borrowed. */
static json_t *topology_part(struct why_job *w, const struct sched_why_input *in, int primary)
{
    json_t *topology = in->topology;
    if (topology && (primary == WHY_PREEMPTING || primary == WHY_RECLAIMING)) {
        json_decref(w->plan_topology);
        w->plan_topology = json_incref(topology);
    } else if (!topology && primary == WHY_PREEMPTION_WAITING) {
        topology = w->plan_topology;
    } else if (in->placement) {
        json_decref(w->plan_topology);
        w->plan_topology = NULL;
    }
    return topology;
}

/* Appends the history entry of code (a static name) when it is not the last one. */
static void history_add(struct why_job *w, uint64_t cycle, const char *ts, const char *code)
{
    size_t tl = strlen(ts);
    if (!w->history && !w->has_first && tl < sizeof(w->first_ts)) { /* kept typed */
        w->has_first = 1;
        w->first_cycle = cycle;
        w->first_code = code;
        memcpy(w->first_ts, ts, tl + 1);
        return;
    }
    if (w->has_first && !strcmp(w->first_code, code))
        return;
    if (!history_tree(w))
        w->history = json_array();
    size_t nh = json_array_size(w->history);
    const char *last =
        nh ? json_string_value(json_object_get(json_array_get(w->history, nh - 1), "code")) : NULL;
    if (!last || strcmp(last, code)) {
        json_array_append_new(w->history, entry_json(cycle, ts, code));
        if (json_array_size(w->history) > HISTORY_MAX)
            json_array_remove(w->history, 0);
    }
}

/* The "unschedulable" audit record of a change of primary reason, written as its canonical
 * text (keys sorted): a job of a full cluster fails once with thousands of others. */
static int audit_unschedulable(struct sched_cyc *c, struct sv_job *j,
                               const struct sched_why_input *in, int primary, struct err *err)
{
    struct store_jw *w = sched__why_text(c);
    store_jw_lit(w, "{");
    store_jw_key(w, "blockers");
    const char *blockers =
        in->blockers_text ? in->blockers_text : sched__why_blockers_text(c, in->blockers);
    store_jw_raw(w, blockers, strlen(blockers));
    store_jw_key(w, SCHED_OUTBOX_M_CYCLE);
    store_jw_int(w, (int64_t)c->cycle);
    store_jw_key(w, SCHED_OUTBOX_M_JOB);
    store_jw_str(w, j->id);
    store_jw_key(w, SCHED_OUTBOX_M_KIND);
    store_jw_str(w, store_audit_kind_name(STORE_AUDIT_UNSCHEDULABLE));
    /* the primary message: bind mode's FailedScheduling Events say it */
    if (in->primary && in->primary->message) {
        store_jw_key(w, SCHED_OUTBOX_M_MESSAGE);
        store_jw_str(w, in->primary->message);
    }
    store_jw_key(w, SCHED_OUTBOX_M_REASON);
    store_jw_str(w, why_code_name(primary));
    store_jw_lit(w, "}");
    return store_audit_append_text(c->txn, STORE_AUDIT_UNSCHEDULABLE, w->buf, w->len, NULL, NULL,
                                   err);
}

int sched__why_record(struct sched_cyc *c, int ji, const struct sched_why_input *in,
                      struct err *err)
{
    struct sv_job *j = &c->v->jobs[ji];
    int rc = 0;
    struct why_job *w = sched__why_job(c->why_mem, c->v, ji);
    /* A placed job's small record: a placement always changes the document */
    int small = in->placement && !in->primary && !json_array_size(in->blockers);
    /* Placed with nothing in memory (mostly a new job): its record is written only if it
     * has no stored document, one lookup for both; if it has one, that is loaded and the
     * record made again below. */
    int speculate = small && !w->loaded;
    if (!speculate)
        sched__why_load(c, ji);
    int primary = in->primary ? (int)in->primary->code : -1;
    json_t *topology = topology_part(w, in, primary);
    struct why_mid *mid = in->mid; /* taken */
    if (!small && !mid) {
        mid = sched__why_mid_new(sched__why_mid_text(c, in, primary, topology), 0);
        if (in->outcome)
            sched__why_memo_keep(c, in, j->id, mid->text,
                                 sched__why_blockers_text(c, in->blockers));
    }
    char head[128];
    signature_head(head, sizeof(head), in, small, c->cycle, j->unsat_since);
    if (same_signature(w, head, mid, j->id)) {
        sched__why_mid_unref(mid);
        return 0;
    }
    free(w->last_sig);
    sched__why_mid_unref(w->last_mid);
    w->last_sig = xstrdup(head);
    w->last_mid = mid; /* kept: the signature's */
    const char *ts = sched__cyc_ts(c);
    if (!small || w->history || w->has_first) /* placed at its first try: record_placed's */
        history_add(w, c->cycle, ts,
                    in->placement  ? "Placed"
                    : primary >= 0 ? why_code_name(primary)
                                   : sched_job_state_name(in->state));
    int failed = in->state == SCHED_JOB_UNSCHEDULABLE;
    if (failed && primary != w->last_code && (rc = audit_unschedulable(c, j, in, primary, err)) < 0)
        goto out;
    w->last_code = failed ? primary : -1;
    uint64_t seq = 0;
    if ((rc = store_audit_last_seq(c->txn, &seq, err)) < 0)
        goto out;
    if (small) {
        json_t *old = NULL;
        rc = record_placed(c, j, in, topology, seq, ts, speculate, &old, err);
        if (rc == 1) { /* it had a document: its memory from it, then the record again */
            free(w->last_sig);
            sched__why_mid_unref(w->last_mid);
            w->last_sig = NULL;
            w->last_mid = NULL;
            load_doc(j, w, old);
            return sched__why_record(c, ji, in, err);
        }
        goto out;
    }
    struct sched_why_text t = {
        .idh = sched__why_id_head(j->id, sched_job_state_name(in->state), c->cycle, seq),
        .mid = mid,
        .ahead = ahead_text(c, in->ahead),
        .tail = tail_text(c, j, w, in->placement, ts),
        .queue = queue_text(c, j->queue),
        .primary_code = why_code_name(primary),
        .shareable = failed && primary >= 0 && !in->placement,
        .tmpl = in->tmpl,
    };
    rc = sched__why_class_put(c, j, &t, err);
    free(t.idh);
    free(t.tail);
out:
    return rc;
}

/* "preempted by prod/a (ledger entry 3) and prod/b (ledger entry 4); 8 pods evicted", and
 * "; violating PodDisruptionBudget prod/db (no plan violated fewer)" when an eviction did. */
static char *preempted_message(json_t *preemptors)
{
    size_t n = json_array_size(preemptors), i, pods = 0;
    json_t *x;
    const char *budget = NULL;
    char *msg = xstrdup(WHY_MSG_PREEMPTED_BY);
    json_array_foreach(preemptors, i, x)
    {
        const char *sep = i == 0 ? " " : i + 1 == n ? " and " : ", ";
        char *next = xasprintf(WHY_MSG_PREEMPTED_BY_ONE, msg, sep,
                               json_string_value(json_object_get(x, "preemptor")),
                               (long long)json_integer_value(json_object_get(x, "ledger")));
        free(msg);
        msg = next;
        pods += json_array_size(json_object_get(x, "pods"));
        json_t *b = json_array_get(json_object_get(x, "pdbsViolated"), 0);
        if (b && !budget)
            budget = json_string_value(b);
    }
    char *out = xasprintf(WHY_MSG_PREEMPTED_EVICTED, msg, pods, pods == 1 ? "" : "s",
                          budget ? WHY_MSG_PREEMPTED_PDB : "", budget ? budget : "",
                          budget ? WHY_MSG_PREEMPTED_PDB_FEWEST : "");
    free(msg);
    return out;
}

int sched__why_preempted(struct sched_cyc *c, int ji, json_t *rec, struct err *err)
{
    struct sv_job *j = &c->v->jobs[ji];
    sched__why_load(c, ji);
    struct why_job *w = sched__why_job(c->why_mem, c->v, ji);
    char ts[64];
    clock_format_rfc3339(c->now_ms, ts, sizeof(ts));
    json_t *by = json_object_get(rec, "preemptors");
    if (!history_tree(w))
        w->history = json_array();
    json_array_append_new(w->history,
                          json_pack("{s:I,s:s,s:s,s:O,s:O}", "cycle", (json_int_t)c->cycle, "ts",
                                    ts, "code", why_code_name(WHY_PREEMPTED_BY), "preemptor",
                                    json_object_get(rec, "preemptor"), "ledger",
                                    json_object_get(rec, "id")));
    if (json_array_size(w->history) > HISTORY_MAX)
        json_array_remove(w->history, 0);
    sched__why_class_leave(c, j);
    /* the next attempt (new pods of the job) writes its document whatever it says */
    free(w->last_sig);
    sched__why_mid_unref(w->last_mid);
    w->last_sig = NULL;
    w->last_mid = NULL;
    w->last_code = -1;
    uint64_t seq = 0;
    int rc = store_audit_last_seq(c->txn, &seq, err);
    if (rc < 0)
        return rc;
    char *msg = preempted_message(by);
    const char *cls = why_class_name(why_code_class(WHY_PREEMPTED_BY));
    const char *code = why_code_name(WHY_PREEMPTED_BY);
    json_t *doc = json_pack(
        "{s:s,s:s,s:I,s:I,s:{s:s,s:s,s:s},s:[{s:s,s:s,s:s,s:O}],s:n,s:n,s:n,s:{s:b,s:s},s:[],"
        "s:O,s:O}",
        "job", j->id, "state", sched_job_state_name(SCHED_JOB_PREEMPTED), "cycle",
        (json_int_t)c->cycle, "auditSeq", (json_int_t)seq, "primary", "code", code, "class", cls,
        "message", msg, "blockers", "class", cls, "code", code, "message", msg, "preemptors", by,
        "gang", "nodeFilter", "topology", "preemption", "attempted", 0, "reason",
        WHY_MSG_PREEMPT_VICTIM, "ahead", "preemptedBy", by, "history", w->history);
    free(msg);
    rc = store_doc_put(c->txn, STORE_DB_WHY, j->id, doc, err);
    json_decref(doc);
    return rc;
}

int sched__why_note_add(MDB_txn *txn, struct sched_view *v, struct sched_why_memory *m,
                        const char *job, json_t *entry, struct err *err)
{
    json_t *doc = NULL;
    int rc = store_doc_get(txn, STORE_DB_WHY, job, &doc, err);
    if (rc == ERR_NOT_FOUND && sched__view_job(v, job) >= 0) {
        /* a job not tried since (a lone pod put back): the next cycle's document keeps
         * this history */
        err_clear(err);
        rc = 0;
        doc = json_pack("{s:s,s:n,s:[],s:[]}", "job", job, "primary", "blockers", "history");
    }
    if (rc < 0)
        return rc;
    int ji = sched__view_job(v, job);
    struct why_job *w = ji >= 0 ? sched__why_job(m, v, ji) : NULL;
    json_t *h = w && w->loaded ? history_tree(w) : json_object_get(doc, "history");
    if (!json_is_array(h)) {
        h = json_array();
        if (w && w->loaded)
            w->history = h;
        json_object_set_new(doc, "history", h);
    }
    /* the cycle's next document carries the loaded history, this entry included */
    json_array_append(h, entry);
    if (json_array_size(h) > HISTORY_MAX)
        json_array_remove(h, 0);
    json_object_set(doc, "history", h);
    rc = store_doc_put(txn, STORE_DB_WHY, job, doc, err);
    json_decref(doc);
    return rc;
}
