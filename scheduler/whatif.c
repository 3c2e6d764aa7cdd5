/*
 * whatif.c - what the next cycle would do (docs/whatif.md): the real apply, delete and
 * cycle, run in a dry store session (store.h) on a scheduler of their own whose view is
 * loaded from the session's snapshot. Nothing is written, the live scheduler's lock is
 * never taken (its cycle goes on meanwhile), and the answer is read back from the session
 * with the same calls the API uses (sched_job, sched_why, sched_preemptions, the audit
 * records the cycle would have appended).
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "core.h"

/* At most this many what-ifs run at once; others wait their turn. Each costs a view load
 * and a cycle, so one at a time keeps them to one core whatever the rate asked: the live
 * cycle keeps the other. */
#define WHATIF_MAX 1

static pthread_mutex_t slots_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slots_cv = PTHREAD_COND_INITIALIZER;
static int slots_used;

static void slot_take(void)
{
    pthread_mutex_lock(&slots_mu);
    while (slots_used >= WHATIF_MAX)
        pthread_cond_wait(&slots_cv, &slots_mu);
    slots_used++;
    pthread_mutex_unlock(&slots_mu);
}

static void slot_give(void)
{
    pthread_mutex_lock(&slots_mu);
    slots_used--;
    pthread_cond_signal(&slots_cv);
    pthread_mutex_unlock(&slots_mu);
}

/* The nodes of in->cordon as one manifest of themselves with spec.unschedulable set, read
 * in the session. ERR_INVALID naming a node that does not exist. */
static int cordon_manifest(struct sched *w, const struct sched_whatif *in, struct model_manifest *m,
                           struct err *err)
{
    MDB_txn *txn = NULL;
    json_t *list = json_array();
    int rc = store_txn_begin(w->st, STORE_READ, &txn, err);
    for (size_t i = 0; rc == 0 && i < in->ncordon; i++) {
        json_t *node = NULL;
        rc = store_get(txn, MODEL_NODE, in->cordon[i], &node, err);
        if (rc == ERR_NOT_FOUND) {
            rc = err_setf(err, ERR_INVALID, "cordon", "cordon: node '%s' not found", in->cordon[i]);
            break;
        }
        if (rc < 0)
            break;
        json_t *spec = json_object_get(node, "spec");
        if (!json_is_object(spec))
            json_object_set_new(node, "spec", spec = json_object());
        json_object_set_new(spec, "unschedulable", json_true());
        json_array_append_new(list, node);
    }
    store_txn_abort(&txn);
    if (rc == 0 && json_array_size(list)) {
        char *text = json_dumps(list, JSON_COMPACT);
        rc = model_manifest_parse(text, strlen(text), MODEL_FMT_JSON, m, err);
        free(text);
    }
    json_decref(list);
    return rc;
}

/* The id of the job each document of m belongs to, once each, in order. New array. */
static json_t *manifest_jobs(const struct model_manifest *m)
{
    json_t *ids = json_array(), *seen = json_object();
    for (size_t i = 0; m && i < m->n; i++) {
        json_t *obj = m->docs[i].obj;
        enum model_kind k;
        if (model_doc_kind(&m->docs[i], &k, NULL) < 0 || (k != MODEL_POD && k != MODEL_PODGROUP))
            continue;
        char *id = sched__object_job(k, obj);
        if (id && !json_object_get(seen, id)) {
            json_object_set_new(seen, id, json_true());
            json_array_append_new(ids, json_string(id));
        }
        free(id);
    }
    json_decref(seen);
    return ids;
}

static int collect_rec(void *ctx, uint64_t seq, const char *json, size_t len)
{
    (void)seq;
    json_t *rec = json_loadb(json, len, 0, NULL);
    if (rec)
        json_array_append_new(ctx, rec);
    return 0;
}

/* The audit records appended after seq `after` in the session: *out new array. */
static int records_since(struct sched *w, uint64_t after, json_t **out, struct err *err)
{
    MDB_txn *txn = NULL;
    *out = json_array();
    int rc = store_txn_begin(w->st, STORE_READ, &txn, err);
    if (rc == 0)
        rc = store_audit_scan(txn, after + 1, 0, collect_rec, *out, err);
    store_txn_abort(&txn);
    return rc;
}

static int placed_state(enum sched_job_state s)
{
    return s == SCHED_JOB_SCHEDULED || s == SCHED_JOB_RUNNING;
}

/* Not placed, not nominated, no victim: a job that waits. A waiting job that still waits
 * is no change: the what-if's cycle tries a Pending job for the first time as the live one
 * would, and a gang's timeout comes and goes between attempts. */
static int waiting_state(enum sched_job_state s)
{
    return s == SCHED_JOB_PENDING || s == SCHED_JOB_UNSCHEDULABLE || s == SCHED_JOB_TIMED_OUT;
}

/* A job's state before the what-if's changes; serial tells its view slot's job. */
struct job_before {
    uint64_t serial;
    enum sched_job_state state;
};

/* What the changes and the cycle did to the jobs that were in the view before them, the
 * manifest's left out: "displaced" (placed before, not after: preempted), "placed" (not placed
 * before, placed after) and "changed" (any other change of state: nominated, starving; a job that
 * waits before and after is left out, waiting_state). */
static json_t *others(struct sched *w, const struct job_before *before, size_t nbefore,
                      json_t *mine)
{
    json_t *o = json_pack("{s:[],s:[],s:[]}", "displaced", "placed", "changed"), *id;
    json_t *skip = json_object();
    size_t i;
    json_array_foreach(mine, i, id) json_object_set_new(skip, json_string_value(id), json_true());
    for (size_t j = 0; j < nbefore && j < w->v->njobs; j++) {
        const struct sv_job *job = &w->v->jobs[j];
        /* a job the changes deleted, or a slot a new job took, is none of the others */
        if (!job->alive || job->serial != before[j].serial || json_object_get(skip, job->id))
            continue;
        enum sched_job_state was = before[j].state, now = sched__job_state(w->v, job);
        if (now == was || (waiting_state(now) && waiting_state(was)))
            continue;
        const char *list = placed_state(was) && !placed_state(now)   ? "displaced"
                           : !placed_state(was) && placed_state(now) ? "placed"
                                                                     : "changed";
        json_array_append_new(json_object_get(o, list),
                              json_pack("{s:s,s:s,s:s}", "id", job->id, "before",
                                        sched_job_state_name(was), "after",
                                        sched_job_state_name(now)));
    }
    json_decref(skip);
    return o;
}

/* Each job of the manifest: its job document (members and nodes) with "why" and
 * "placed". */
static json_t *mine_json(struct sched *w, json_t *mine)
{
    json_t *a = json_array(), *id;
    size_t i;
    json_array_foreach(mine, i, id)
    {
        struct err e = ERR_INIT;
        json_t *job = NULL, *why = NULL;
        const char *jid = json_string_value(id);
        if (sched_job(w, jid, &job, &e) < 0) /* a PodGroup without pods yet */
            job = json_pack("{s:s,s:n}", "id", jid, "state");
        if (sched_why(w, jid, &why, &e) == 0)
            json_object_set_new(job, "why", why);
        const char *st = json_string_value(json_object_get(job, "state"));
        enum sched_job_state s;
        json_object_set_new(
            job, "wouldPlace",
            json_boolean(st && sched_job_state_parse(st, &s, &e) == 0 && placed_state(s)));
        json_array_append_new(a, job);
    }
    return a;
}

/* The what-if on w, in the session. */
static int run(struct sched *w, const struct sched_whatif *in, int64_t now_ms, json_t **out,
               struct err *err)
{
    struct model_manifest cm = {0};
    json_t *applied = json_array(), *mine = NULL, *summary = NULL, *records = NULL,
           *preemptions = NULL, *res = NULL;
    struct job_before *before = NULL;
    MDB_txn *txn = NULL;
    uint64_t seq0 = 0, cycle0 = w->cycle;
    int rc = store_txn_begin(w->st, STORE_READ, &txn, err);
    if (rc == 0)
        rc = store_audit_last_seq(txn, &seq0, err);
    store_txn_abort(&txn);
    if (rc == 0) /* waiting jobs wait, as in the live view (fresh.c) */
        sched__park_tried(w, now_ms);
    size_t nbefore = w->v->njobs;
    before = xcalloc(nbefore + 1, sizeof(*before));
    for (size_t j = 0; j < nbefore; j++)
        before[j] =
            (struct job_before){w->v->jobs[j].serial, sched__job_state(w->v, &w->v->jobs[j])};
    if (rc == 0 && in->m && in->m->n)
        rc = sched_apply(w, in->m, now_ms, &res, err);
    if (res)
        json_array_extend(applied, res);
    json_decref(res);
    res = NULL;
    if (rc == 0 && in->ncordon && (rc = cordon_manifest(w, in, &cm, err)) == 0)
        rc = sched_apply(w, &cm, now_ms, &res, err);
    if (res)
        json_array_extend(applied, res);
    for (size_t i = 0; rc == 0 && i < in->ndrop; i++) {
        rc = sched_delete(w, in->drop[i].kind, in->drop[i].key, now_ms, err);
        if (rc == ERR_NOT_FOUND) {
            char msg[sizeof(err->msg)];
            snprintf(msg, sizeof(msg), "%s", err->msg);
            rc = err_setf(err, ERR_INVALID, "delete", "delete: %s", msg);
        } else if (rc == 0)
            json_array_append_new(applied, json_pack("{s:s,s:s,s:s}", "kind",
                                                     model_kind_name(in->drop[i].kind), "name",
                                                     in->drop[i].key, "action", "deleted"));
    }
    if (rc < 0)
        goto out;
    if ((rc = sched_cycle(w, now_ms, &summary, err)) < 0)
        goto out;
    mine = manifest_jobs(in->m);
    char since[32];
    snprintf(since, sizeof(since), "%llu", (unsigned long long)(cycle0 + 1));
    if ((rc = records_since(w, seq0, &records, err)) < 0 ||
        (rc = sched_preemptions(w, NULL, NULL, since, &preemptions, err)) < 0)
        goto out;
    char ts[64];
    clock_format_rfc3339(now_ms, ts, sizeof(ts));
    *out =
        json_pack("{s:{s:I,s:I,s:s},s:o,s:o,s:o,s:o,s:o,s:o}", "basedOn", "cycle",
                  (json_int_t)cycle0, "auditSeq", (json_int_t)seq0, "time", ts, "changes", applied,
                  "cycle", summary, "jobs", mine_json(w, mine), "others",
                  others(w, before, nbefore, mine), "preemptions", preemptions, "records", records);
    applied = summary = preemptions = records = NULL;
out:
    model_manifest_free(&cm);
    json_decref(res);
    json_decref(applied);
    json_decref(mine);
    json_decref(summary);
    json_decref(records);
    json_decref(preemptions);
    free(before);
    return rc;
}

int sched_whatif(struct sched *s, const struct sched_whatif *in, int64_t now_ms, json_t **out,
                 struct err *err)
{
    struct sched *w = NULL;
    *out = NULL;
    slot_take();
    int rc = store_dry_begin(s->st, err);
    if (rc == 0)
        rc = sched_open(s->st, &s->opts, &w, err); /* the view, from the snapshot */
    if (rc == 0)
        rc = run(w, in, now_ms, out, err);
    sched_close(w);
    store_dry_end(s->st);
    slot_give();
    return rc;
}
