/*
 * history_api.c - the cluster as it was (scheduler.h, "time travel"): sched_state_at and
 * sched_why_at, read from the store's object history (store.h) in one read transaction,
 * without the scheduler lock.
 *
 * A job's state then is derived from its objects then, with the rules the live view uses
 * (model_pod_gang_bound counts a gang): Preempted when its why document said so then;
 * every pod Succeeded or Failed -> Finished; at
 * least minMember bound -> Running when that many are Running, else Scheduled; pods
 * nominated -> Pipelined; otherwise the state its why document had then (Unschedulable,
 * Starving, TimedOut, Preempted...), or Pending when it had none. The view's finer states
 * that no object records (a gang parked by view_wait.c) are not recovered.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "core.h"
#include "why.h"

/* ---- which record a question names ---- */

static int seq_param(const char *s, uint64_t *out, struct err *err)
{
    char *end = NULL;
    if (!s[0] || strspn(s, "0123456789") != strlen(s) || strlen(s) > 19)
        return err_setf(err, ERR_INVALID, "seq",
                        "query parameter 'seq': '%.40s' is not a record number", s);
    *out = strtoull(s, &end, 10);
    return 0;
}

static int resolve(MDB_txn *txn, const struct sched_at *at, uint64_t *seq, int64_t *ts_ms,
                   struct err *err)
{
    uint64_t first, last, n = 0;
    int64_t ms = 0;
    char b1[64], b2[64];
    int rc;

    if (at->at && at->seq)
        return err_setf(err, ERR_INVALID, "at",
                        "query parameters 'at' and 'seq' name the same thing: give one");
    if ((rc = store_history_first_seq(txn, &first, err)) < 0 ||
        (rc = store_audit_last_seq(txn, &last, err)) < 0)
        return rc;
    if (!first)
        first = 1;
    if (at->seq) {
        if ((rc = seq_param(at->seq, &n, err)) < 0)
            return rc;
        if (n > last)
            return err_setf(err, ERR_INVALID, "seq",
                            "query parameter 'seq': record %" PRIu64
                            " is in the future (the last record is %" PRIu64 ")",
                            n, last);
        if (n < first)
            return err_setf(err, ERR_INVALID, "seq",
                            "query parameter 'seq': record %" PRIu64
                            " is before the first record kept (%" PRIu64 ")",
                            n, first);
    } else if (at->at) {
        if (clock_parse_rfc3339(at->at, &ms, err) < 0)
            return err_setf(err, ERR_INVALID, "at",
                            "query parameter 'at': '%.60s' is not an RFC 3339 time (such as "
                            "2026-11-27T14:02:00Z)",
                            at->at);
        if (ms > at->now_ms) {
            clock_format_rfc3339(at->now_ms, b1, sizeof(b1));
            return err_setf(err, ERR_INVALID, "at",
                            "query parameter 'at': %.60s is in the future (now is %s)", at->at, b1);
        }
        if ((rc = store_audit_seq_at(txn, ms, &n, err)) < 0)
            return rc;
        if (n < first) {
            int64_t fms = 0;
            if (last && store_audit_record_ms(txn, first, &fms, err) < 0)
                fms = 0;
            clock_format_rfc3339_ms(fms, b2, sizeof(b2));
            return err_setf(err, ERR_INVALID, "at",
                            last ? "query parameter 'at': %.60s is before the first record kept "
                                   "(record %" PRIu64 " at %s)"
                                 : "query parameter 'at': %.60s: the audit log is empty",
                            at->at, first, b2);
        }
    } else {
        if (!last)
            return err_setf(err, ERR_INVALID, "seq", "the audit log is empty: no record to name");
        n = last;
    }
    *seq = n;
    return store_audit_record_ms(txn, n, ts_ms, err);
}

/* {"seq", "ts", "requested"?}: the record a document is as of. New. */
static json_t *as_of(const struct sched_at *at, uint64_t seq, int64_t ms)
{
    char ts[64];
    clock_format_rfc3339_ms(ms, ts, sizeof(ts));
    json_t *o = json_pack("{s:I,s:s}", "seq", (json_int_t)seq, "ts", ts);
    if (at->at)
        json_object_set_new(o, "requested", json_string(at->at));
    return o;
}

/* ---- the state document ---- */

struct state_build {
    MDB_txn *txn;
    uint64_t seq;
    json_t *nodes, *pods, *groups; /* groups: "ns/name" -> PodGroup */
    json_t *node_ix;               /* node name -> its entry in nodes */
    json_t *jobs;                  /* job id -> {pods:[...], ...} while building */
};

static const char *str2(json_t *o, const char *a, const char *b)
{
    return json_string_value(json_object_get(json_object_get(o, a), b));
}

/* o's a.b, or {} (new reference). */
static json_t *obj_or_empty(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(json_object_get(o, a), b);
    return json_is_object(v) ? json_incref(v) : json_object();
}

static int state_obj(void *ctx, enum model_kind kind, const char *key, json_t *obj)
{
    struct state_build *b = ctx;
    if (kind == MODEL_NODE) {
        json_t *n =
            json_pack("{s:s,s:o,s:b,s:o,s:[]}", "name", key, "labels",
                      obj_or_empty(obj, "metadata", "labels"), "unschedulable",
                      json_is_true(json_object_get(json_object_get(obj, "spec"), "unschedulable")),
                      "allocatable", obj_or_empty(obj, "status", "allocatable"), "pods");
        json_object_set(b->node_ix, key, n);
        json_array_append_new(b->nodes, n);
    } else if (kind == MODEL_PODGROUP) {
        json_object_set(b->groups, key, obj);
    } else if (kind == MODEL_POD) {
        const char *ns = str2(obj, "metadata", "namespace"), *group = model_pod_group_name(obj);
        const char *node = str2(obj, "spec", "nodeName"),
                   *nom = str2(obj, "status", "nominatedNodeName");
        char *job = group ? xasprintf("%s/%s", ns && *ns ? ns : "default", group) : xstrdup(key);
        json_t *p = json_pack(
            "{s:s,s:s,s:s,s:s,s:s*,s:s*,s:b}", "namespace", ns && *ns ? ns : "default", "name",
            str2(obj, "metadata", "name"), "job", job, "phase", model_pod_phase(obj), "node",
            node && *node ? node : NULL, "nominatedNodeName", nom && *nom ? nom : NULL, "deleting",
            json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp") != NULL);
        json_array_append_new(b->pods, p);
        json_t *n = node && *node ? json_object_get(b->node_ix, node) : NULL;
        if (n)
            json_array_append_new(json_object_get(n, "pods"), json_string(key));
        json_t *j = json_object_get(b->jobs, job);
        if (!j)
            json_object_set_new(b->jobs, job, j = json_pack("{s:[]}", "pods"));
        json_array_append(json_object_get(j, "pods"), p);
        free(job);
    }
    return 0;
}

/* The state job id's why document had at the record (a state name of the table), or NULL. */
static const char *why_state(struct state_build *b, const char *id)
{
    json_t *why = NULL;
    struct err ignored = ERR_INIT;
    const char *st = NULL;
    enum sched_job_state s;
    if (store_history_doc_at(b->txn, STORE_DB_WHY, id, b->seq, &why, &ignored) == 0) {
        st = json_string_value(json_object_get(why, "state"));
        st = st && sched_job_state_parse(st, &s, &ignored) == 0 ? sched_job_state_name(s) : NULL;
    }
    json_decref(why);
    return st;
}

/* The state of job id (pods: its pod entries) at the record, per the rules above. */
static const char *job_state(struct state_build *b, const char *id, json_t *pods, int min)
{
    const char *said = why_state(b, id);
    if (said && !strcmp(said, sched_job_state_name(SCHED_JOB_PREEMPTED)))
        return said; /* its pods terminate or are gone */
    int n = (int)json_array_size(pods), done = 0, bound = 0, running = 0, nominated = 0;
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
    {
        const char *phase = json_string_value(json_object_get(p, "phase"));
        int terminal = model_pod_phase_terminal(phase);
        done += terminal;
        if (json_object_get(p, "node") && !terminal) {
            bound++;
            running += phase && !strcmp(phase, "Running");
        }
        nominated += json_object_get(p, "nominatedNodeName") != NULL;
    }
    if (n && done == n)
        return sched_job_state_name(SCHED_JOB_FINISHED);
    if (n && bound >= (min > 0 ? min : n))
        return sched_job_state_name(running >= (min > 0 ? min : n) ? SCHED_JOB_RUNNING
                                                                   : SCHED_JOB_SCHEDULED);
    if (nominated)
        return sched_job_state_name(SCHED_JOB_PIPELINED);
    return said ? said : sched_job_state_name(SCHED_JOB_PENDING);
}

static json_t *jobs_part(struct state_build *b)
{
    json_t *out = json_array(), *j;
    const char *id;
    json_object_foreach(b->jobs, id, j)
    {
        json_t *pg = json_object_get(b->groups, id), *pods = json_object_get(j, "pods");
        json_t *spec = json_object_get(pg, "spec");
        int min = pg ? (int)json_integer_value(json_object_get(spec, "minMember")) : 0;
        const char *queue = json_string_value(json_object_get(spec, "queue"));
        json_t *names = json_array(), *p;
        int bound = 0;
        size_t i;
        json_array_foreach(pods, i, p)
        {
            json_array_append(names, json_object_get(p, "name"));
            bound += json_object_get(p, "node") != NULL &&
                     !model_pod_phase_terminal(json_string_value(json_object_get(p, "phase")));
        }
        json_t *e =
            json_pack("{s:s,s:s,s:s,s:o,s:i,s:i}", "id", id, "state", job_state(b, id, pods, min),
                      "queue", queue && *queue ? queue : MODEL_QUEUE_DEFAULT, "pods", names,
                      "bound", bound, "minMember", pg ? min : 1);
        json_array_append_new(out, e);
    }
    return out;
}

int sched_state_at(struct sched *s, const struct sched_at *at, json_t **out, struct err *err)
{
    MDB_txn *txn = NULL;
    struct state_build b = {0};
    int64_t ms = 0;
    int rc;

    *out = NULL;
    if ((rc = store_txn_begin(s->st, STORE_READ, &txn, err)) < 0)
        return rc;
    if ((rc = resolve(txn, at, &b.seq, &ms, err)) < 0)
        goto out;
    b.txn = txn;
    b.nodes = json_array();
    b.pods = json_array();
    b.groups = json_object();
    b.node_ix = json_object();
    b.jobs = json_object();
    rc = store_history_each_at(txn, b.seq,
                               STORE_KIND_BIT(MODEL_NODE) | STORE_KIND_BIT(MODEL_POD) |
                                   STORE_KIND_BIT(MODEL_PODGROUP),
                               state_obj, &b, err);
    if (rc == 0) {
        /* a PodGroup without pods is a job too (MembersMissing) */
        const char *id;
        json_t *pg;
        json_object_foreach(b.groups, id, pg) if (!json_object_get(b.jobs, id))
            json_object_set_new(b.jobs, id, json_pack("{s:[]}", "pods"));
        *out =
            json_pack("{s:s,s:o,s:O,s:O,s:o}", "kind", "ClusterState", "asOf", as_of(at, b.seq, ms),
                      "nodes", b.nodes, "pods", b.pods, "jobs", jobs_part(&b));
    }
out:
    store_txn_abort(&txn);
    json_decref(b.nodes);
    json_decref(b.pods);
    json_decref(b.groups);
    json_decref(b.node_ix);
    json_decref(b.jobs);
    return rc;
}

int sched_why_at(struct sched *s, const char *id, const struct sched_at *at, json_t **out,
                 struct err *err)
{
    MDB_txn *txn = NULL;
    struct sched_why_class_cache k = {0};
    json_t *doc = NULL;
    uint64_t seq = 0;
    int64_t ms = 0;
    int rc;

    *out = NULL;
    if ((rc = store_txn_begin(s->st, STORE_READ, &txn, err)) < 0)
        return rc;
    if ((rc = resolve(txn, at, &seq, &ms, err)) < 0)
        goto out;
    k.at = seq;
    rc = store_history_doc_at(txn, STORE_DB_WHY, id, seq, &doc, err);
    json_t *obj = NULL;
    struct err ignored = ERR_INIT;
    if (rc == ERR_NOT_FOUND &&
        (store_history_get_at(txn, MODEL_PODGROUP, id, seq, &obj, &ignored) == 0 ||
         store_history_get_at(txn, MODEL_POD, id, seq, &obj, &ignored) == 0)) {
        /* the job existed, no cycle had written its why yet (bound when applied, or
         * not tried): what the live why calls NotTried or nothing blocking */
        json_decref(obj);
        err_clear(err);
        doc = json_pack("{s:s,s:n,s:[],s:[],s:s}", "job", id, "primary", "blockers", "history",
                        "note",
                        "no why document was stored for this job by then: no cycle had tried "
                        "it (bound when applied, or not tried yet)");
        rc = 0;
    } else if (rc == ERR_NOT_FOUND) {
        char ts[64];
        clock_format_rfc3339_ms(ms, ts, sizeof(ts));
        rc = err_set(err, ERR_NOT_FOUND, "job '%s' did not exist at record %" PRIu64 " (%s)", id,
                     seq, ts);
        goto out;
    }
    if (rc == 0 && !json_object_get(doc, "note"))
        rc = sched__why_class_complete(txn, &doc, &k, err);
    if (rc == 0) {
        json_object_set_new(doc, "asOf", as_of(at, seq, ms));
        *out = doc;
        doc = NULL;
    }
out:
    sched__why_class_cache_release(&k);
    json_decref(doc);
    store_txn_abort(&txn);
    return rc;
}
