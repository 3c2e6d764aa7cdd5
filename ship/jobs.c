/*
 * jobs.c - one row per job in muster_jobs, and one row per bound interval of a pod in
 * muster_pod_usage, derived from the audit records as they ship (docs/accounting.md
 * "How each column is computed" is the specification; this file implements it).
 *
 * A job row is open (end_time NULL) from the first record that names the job until the
 * record that removes its last pod; a job of that name seen again later gets a new row.
 * What a row needs between batches (its live pods with their bound time and requests,
 * the resource-seconds of closed intervals) is kept in its "acct" column, so the batch's
 * transaction is the only state: a crash before its commit changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "internal.h"

struct job {
    int64_t id; /* 0: not inserted yet */
    char *ns, *name;
    char *queue;
    int has_prio;
    int32_t prio;
    int64_t submit, first_placed, end;
    const char *state; /* static: the CHECK of muster_jobs.state */
    int pods;
    json_t *requested, *allocated;
    /* {"live": {pod: {"node", "since", "req"}}, "rs": {res: closed resource-seconds},
     *  "seen": {pod: true}, "placedOnce": {pod: true}}; a live pod chosen as a victim also
     *  has "victim": true */
    json_t *acct;
    int suffered, caused;
    char *last_reason;
    uint64_t first_seq, last_seq;
};

struct ship_jobs {
    PGconn *c;
    const char *cluster;
    struct job **v;
    size_t n, cap;
    json_t *ix; /* "ns/name" -> index into v of the open row */
};

/* cpu is counted in thousandths by the scheduler; rows carry cores */
static double natural(const char *res, json_int_t v)
{
    return strcmp(res, "cpu") ? (double)v : (double)v / 1000.0;
}

/* A whole number as an integer (4, not 4.0), anything else as a real. */
static json_t *num(double v)
{
    if (v == (double)(json_int_t)v && v > -9007199254740992.0 && v < 9007199254740992.0)
        return json_integer((json_int_t)v);
    return json_real(v);
}

struct ship_jobs *ship__jobs_new(PGconn *c, const char *cluster)
{
    struct ship_jobs *j = xcalloc(1, sizeof(*j));
    j->c = c;
    j->cluster = cluster;
    j->ix = json_object();
    return j;
}

static void job_free(struct job *x)
{
    if (!x)
        return;
    free(x->ns);
    free(x->name);
    free(x->queue);
    free(x->last_reason);
    json_decref(x->requested);
    json_decref(x->allocated);
    json_decref(x->acct);
    free(x);
}

static int64_t ms_or_0(PGresult *r, int col)
{
    return PQgetisnull(r, 0, col) ? 0 : strtoll(PQgetvalue(r, 0, col), NULL, 10);
}

static json_t *json_col(PGresult *r, int col)
{
    json_t *v = json_loads(PQgetvalue(r, 0, col), 0, NULL);
    return json_is_object(v) ? v : (json_decref(v), json_object());
}

static json_t *acct_member(json_t *acct, const char *name)
{
    json_t *v = json_object_get(acct, name);
    if (!json_is_object(v)) {
        v = json_object();
        json_object_set_new(acct, name, v);
    }
    return v;
}

/* The open row of job "ns/name": from this batch, else from the table (locked), else a new
 * one when create is set. *out NULL when there is none and create is 0. */
static int job_get(struct ship_jobs *j, const char *id, uint64_t seq, int64_t ts, int create,
                   struct job **out, struct err *err)
{
    json_t *at = json_object_get(j->ix, id);
    const char *slash = strchr(id, '/');
    PGresult *r = NULL;
    int rc;

    *out = NULL;
    if (at) {
        *out = j->v[json_integer_value(at)];
        return 0;
    }
    if (!slash)
        return 0; /* not a job id: nothing to account */
    char *ns = xstrndup(id, (size_t)(slash - id));
    const char *params[] = {j->cluster, ns, slash + 1};
    rc = ship__exec(j->c, "reading a job row",
                    "SELECT id, queue, priority, (extract(epoch FROM submit_time) * 1000)::bigint,"
                    " (extract(epoch FROM first_placed) * 1000)::bigint, state, pods,"
                    " requested, allocated, preemptions_suffered, preemptions_caused,"
                    " last_reason, first_seq, acct FROM muster_jobs"
                    " WHERE cluster = $1 AND namespace = $2 AND name = $3 AND end_time IS NULL"
                    " FOR UPDATE",
                    3, params, &r, err);
    if (rc < 0 || (!PQntuples(r) && !create)) {
        free(ns);
        PQclear(r);
        return rc;
    }
    struct job *x = xcalloc(1, sizeof(*x));
    x->ns = ns;
    x->name = xstrdup(slash + 1);
    x->last_seq = seq;
    if (PQntuples(r)) {
        static const char *const states[] = {"pending", "running", "completed", "preempted",
                                             "cancelled"};
        x->id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
        x->queue = PQgetisnull(r, 0, 1) ? NULL : xstrdup(PQgetvalue(r, 0, 1));
        x->has_prio = !PQgetisnull(r, 0, 2);
        x->prio = (int32_t)atoi(PQgetvalue(r, 0, 2));
        x->submit = ms_or_0(r, 3);
        x->first_placed = ms_or_0(r, 4);
        x->state = states[0];
        for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
            if (!strcmp(PQgetvalue(r, 0, 5), states[i]))
                x->state = states[i];
        x->pods = atoi(PQgetvalue(r, 0, 6));
        x->requested = json_col(r, 7);
        x->allocated = json_col(r, 8);
        x->suffered = atoi(PQgetvalue(r, 0, 9));
        x->caused = atoi(PQgetvalue(r, 0, 10));
        x->last_reason = PQgetisnull(r, 0, 11) ? NULL : xstrdup(PQgetvalue(r, 0, 11));
        x->first_seq = strtoull(PQgetvalue(r, 0, 12), NULL, 10);
        x->acct = json_col(r, 13);
    } else {
        x->submit = ts;
        x->state = "pending";
        x->requested = json_object();
        x->allocated = json_object();
        x->acct = json_object();
        x->first_seq = seq;
    }
    PQclear(r);
    XGROW(j->v, j->n + 1, j->cap);
    json_object_set_new(j->ix, id, json_integer((json_int_t)j->n));
    j->v[j->n++] = x;
    *out = x;
    return 0;
}

/* resource-seconds: the closed intervals, plus the open ones counted up to `to` */
static json_t *resource_seconds(const struct job *x, int64_t to)
{
    json_t *out = json_deep_copy(acct_member(x->acct, "rs")), *p, *v;
    const char *pod, *res;
    json_object_foreach(acct_member(x->acct, "live"), pod, p)
    {
        json_t *since = json_object_get(p, "since");
        if (!json_is_integer(since))
            continue;
        double secs = (double)(to - json_integer_value(since)) / 1000.0;
        json_object_foreach(json_object_get(p, "req"), res, v)
        {
            double have = json_number_value(json_object_get(out, res));
            json_object_set_new(out, res, num(have + json_number_value(v) * secs));
        }
    }
    return out;
}

static char *text_of(json_t *v)
{
    return json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
}

/* INSERT (a new row, whose id it learns) or UPDATE every column from x. */
static int job_write(struct ship_jobs *j, struct job *x, int64_t now, struct err *err)
{
    char submit[40], placed[40], end[40], id[24], prio[16], pods[16], suf[16], cau[16];
    char fseq[24], lseq[24], wait[32];
    json_t *rs = resource_seconds(x, x->end ? x->end : now);
    char *req = text_of(x->requested), *alloc = text_of(x->allocated), *rst = text_of(rs),
         *acct = text_of(x->acct);
    PGresult *r = NULL;
    int rc;

    ship__ts(x->submit, submit);
    ship__ts(x->first_placed, placed);
    ship__ts(x->end, end);
    snprintf(id, sizeof(id), "%lld", (long long)x->id);
    snprintf(prio, sizeof(prio), "%d", (int)x->prio);
    snprintf(pods, sizeof(pods), "%d", x->pods);
    snprintf(suf, sizeof(suf), "%d", x->suffered);
    snprintf(cau, sizeof(cau), "%d", x->caused);
    snprintf(fseq, sizeof(fseq), "%llu", (unsigned long long)x->first_seq);
    snprintf(lseq, sizeof(lseq), "%llu", (unsigned long long)x->last_seq);
    snprintf(wait, sizeof(wait), "%.3f", (double)(x->first_placed - x->submit) / 1000.0);
    const char *params[] = {j->cluster,
                            x->ns,
                            x->name,
                            x->queue,
                            x->has_prio ? prio : NULL,
                            submit,
                            x->first_placed ? placed : NULL,
                            x->end ? end : NULL,
                            x->first_placed ? wait : NULL,
                            x->state,
                            pods,
                            req,
                            alloc,
                            rst,
                            suf,
                            cau,
                            x->last_reason,
                            fseq,
                            lseq,
                            acct,
                            id};
    if (x->id)
        rc = ship__exec(j->c, "updating a job row",
                        "UPDATE muster_jobs SET queue = $4, priority = $5, submit_time = $6,"
                        " first_placed = $7, end_time = $8, wait_seconds = $9, state = $10,"
                        " pods = $11, requested = $12, allocated = $13, resource_seconds = $14,"
                        " preemptions_suffered = $15, preemptions_caused = $16,"
                        " last_reason = $17, first_seq = $18, last_seq = $19, acct = $20,"
                        " updated_at = now() WHERE id = $21 AND cluster = $1 AND namespace = $2"
                        " AND name = $3",
                        21, params, NULL, err);
    else
        rc = ship__exec(j->c, "inserting a job row",
                        "INSERT INTO muster_jobs (cluster, namespace, name, queue, priority,"
                        " submit_time, first_placed, end_time, wait_seconds, state, pods,"
                        " requested, allocated, resource_seconds, preemptions_suffered,"
                        " preemptions_caused, last_reason, first_seq, last_seq, acct)"
                        " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,"
                        " $15, $16, $17, $18, $19, $20) RETURNING id",
                        20, params, &r, err);
    if (rc == 0 && r)
        x->id = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
    PQclear(r);
    json_decref(rs);
    free(req);
    free(alloc);
    free(rst);
    free(acct);
    return rc;
}

/* allocated: the most of each resource the job held bound at once */
static void update_peak(struct job *x)
{
    json_t *now = json_object(), *p, *v;
    const char *pod, *res;
    json_object_foreach(acct_member(x->acct, "live"), pod, p)
    {
        if (!json_is_integer(json_object_get(p, "since")))
            continue;
        json_object_foreach(json_object_get(p, "req"), res, v)
        {
            json_object_set_new(
                now, res, num(json_number_value(json_object_get(now, res)) + json_number_value(v)));
        }
    }
    json_object_foreach(now, res, v)
    {
        if (json_number_value(v) > json_number_value(json_object_get(x->allocated, res)))
            json_object_set(x->allocated, res, v);
    }
    json_decref(now);
}

static int on_placed(struct ship_jobs *j, struct job *x, int64_t ts, json_t *rec, struct err *err)
{
    json_t *pods = json_object_get(rec, "pods"), *nodes = json_object_get(rec, "nodes");
    json_t *reqs = json_object_get(rec, "requests"), *v;
    json_t *live = acct_member(x->acct, "live"), *placed = acct_member(x->acct, "placedOnce");
    const char *q = json_string_value(json_object_get(rec, "queue"));
    int64_t created;
    size_t i;
    int rc = 0;

    if (q) {
        free(x->queue);
        x->queue = xstrdup(q);
    }
    if (json_is_integer(v = json_object_get(rec, "priority"))) {
        x->has_prio = 1;
        x->prio = (int32_t)json_integer_value(v);
    }
    if (json_is_string(v = json_object_get(rec, "submitted")) &&
        clock_parse_rfc3339(json_string_value(v), &created, NULL) == 0)
        x->submit = created; /* the job's creation, not when musterd first wrote of it */
    if (!x->first_placed)
        x->first_placed = ts;
    x->state = "running";
    if (!x->id && (rc = job_write(j, x, ts, err)) < 0) /* muster_pod_usage needs its id */
        return rc;
    json_array_foreach(pods, i, v)
    {
        const char *pod = json_string_value(v), *node = json_string_value(json_array_get(nodes, i));
        json_t *req = json_object(), *q1;
        const char *res;
        char since[40], id[24];
        if (!pod)
            continue;
        json_object_foreach(json_object_get(reqs, pod), res, q1)
        {
            if (json_is_integer(q1))
                json_object_set_new(req, res, num(natural(res, json_integer_value(q1))));
        }
        if (!json_object_get(placed, pod)) { /* requested: each pod's first placement */
            json_object_set_new(placed, pod, json_true());
            json_object_foreach(req, res, q1)
            {
                json_object_set_new(x->requested, res,
                                    num(json_number_value(json_object_get(x->requested, res)) +
                                        json_number_value(q1)));
            }
        }
        json_object_set_new(
            live, pod,
            json_pack("{s:s?,s:I,s:O}", "node", node, "since", (json_int_t)ts, "req", req));
        char *rtext = text_of(req);
        ship__ts(ts, since);
        snprintf(id, sizeof(id), "%lld", (long long)x->id);
        const char *params[] = {id, j->cluster, pod, node, since, rtext};
        rc = ship__exec(j->c, "inserting a pod's usage",
                        "INSERT INTO muster_pod_usage (job_id, cluster, pod, node, start_time,"
                        " requests) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
                        6, params, NULL, err);
        free(rtext);
        json_decref(req);
        if (rc < 0)
            return rc;
    }
    update_peak(x);
    return 0;
}

/* A pod left (deleted or evicted): its bound interval closes; the job ends with its last
 * pod. */
static int on_pod_gone(struct ship_jobs *j, struct job *x, const char *pod, int64_t ts,
                       struct err *err)
{
    json_t *live = acct_member(x->acct, "live"), *p = json_object_get(live, pod);
    json_t *rs = acct_member(x->acct, "rs"), *v;
    const char *res;
    int rc = 0;

    if (!p)
        return 0;
    if (json_is_integer(json_object_get(p, "since"))) {
        double secs = (double)(ts - json_integer_value(json_object_get(p, "since"))) / 1000.0;
        json_object_foreach(json_object_get(p, "req"), res, v)
        {
            json_object_set_new(
                rs, res,
                num(json_number_value(json_object_get(rs, res)) + json_number_value(v) * secs));
        }
        char end[40], id[24];
        ship__ts(ts, end);
        snprintf(id, sizeof(id), "%lld", (long long)x->id);
        const char *params[] = {end, id, pod};
        rc = ship__exec(j->c, "closing a pod's usage",
                        "UPDATE muster_pod_usage SET end_time = $1 WHERE job_id = $2 AND pod = $3"
                        " AND end_time IS NULL",
                        3, params, NULL, err);
    }
    int victim = json_is_true(json_object_get(p, "victim"));
    json_object_del(live, pod);
    if (rc == 0 && json_object_size(live) == 0)
        x->end = ts;
    if (x->end)
        x->state = victim ? "preempted" : x->first_placed ? "completed" : "cancelled";
    return rc;
}

/* Writes a row that ended and forgets it, so a job of that name seen later is a new row. */
static int close_if_ended(struct ship_jobs *j, struct job *x, const char *id, struct err *err)
{
    if (!x->end)
        return 0;
    int rc = job_write(j, x, x->end, err);
    json_t *at = json_object_get(j->ix, id);
    j->v[json_integer_value(at)] = NULL;
    json_object_del(j->ix, id);
    job_free(x);
    return rc;
}

int ship__jobs_apply(struct ship_jobs *j, uint64_t seq, int64_t ts, json_t *rec, struct err *err)
{
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    const char *id = json_string_value(json_object_get(rec, "job"));
    json_t *obj = json_object_get(rec, "object"), *v;
    const char *okind = json_string_value(json_object_get(obj, "kind"));
    const char *oname = json_string_value(json_object_get(obj, "name"));
    /* a row opens with a member pod or a placement; records of a job with no open row
     * (an empty gang's "members missing", a PodGroup re-applied after its pods left) are
     * about no work */
    int opens =
        (!strcmp(kind, "applied") && okind && !strcmp(okind, "Pod")) || !strcmp(kind, "placed");
    struct job *x = NULL;
    size_t i;
    int rc;

    if (!id || !kind)
        return 0;
    if ((rc = job_get(j, id, seq, ts, opens, &x, err)) < 0 || !x)
        return rc;
    x->last_seq = seq;
    if (!strcmp(kind, "applied") && okind && !strcmp(okind, "Pod") && oname) {
        json_t *seen = acct_member(x->acct, "seen"), *live = acct_member(x->acct, "live");
        if (!json_object_get(seen, oname)) {
            json_object_set_new(seen, oname, json_true());
            x->pods++;
        }
        if (!json_object_get(live, oname))
            json_object_set_new(live, oname, json_object());
    } else if (!strcmp(kind, "placed")) {
        rc = on_placed(j, x, ts, rec, err);
    } else if (!strcmp(kind, "unschedulable") || !strcmp(kind, "discarded") ||
               !strcmp(kind, "gang-timed-out")) {
        if (json_is_string(v = json_object_get(rec, "reason"))) {
            free(x->last_reason);
            x->last_reason = xstrdup(json_string_value(v));
        }
    } else if (!strcmp(kind, "preempted")) {
        struct job *by = NULL;
        json_t *live = acct_member(x->acct, "live"), *lp;
        x->suffered++;
        json_array_foreach(json_object_get(rec, "pods"), i, v)
        {
            if ((lp = json_object_get(live, json_string_value(v))) != NULL)
                json_object_set_new(lp, "victim",
                                    json_true()); /* its removal is the preemption's */
        }
        const char *pid = json_string_value(json_object_get(rec, "preemptor"));
        if (pid && (rc = job_get(j, pid, seq, ts, 0, &by, err)) == 0 && by) {
            by->caused++;
            by->last_seq = seq;
        }
    } else if (!strcmp(kind, "deleted") && okind && !strcmp(okind, "Pod") && oname) {
        rc = on_pod_gone(j, x, oname, ts, err);
    } else if (!strcmp(kind, "evicted")) {
        json_array_foreach(json_object_get(rec, "pods"), i, v)
        {
            if (rc == 0 && json_is_string(v))
                rc = on_pod_gone(j, x, json_string_value(v), ts, err);
        }
    } else if (!strcmp(kind, "deleted") && okind && !strcmp(okind, "PodGroup") &&
               json_object_size(acct_member(x->acct, "live")) == 0) {
        x->end = ts; /* a gang whose pods are all gone, or never came */
        x->state = x->first_placed ? "completed" : "cancelled";
    }
    if (rc == 0)
        rc = close_if_ended(j, x, id, err);
    return rc;
}

int ship__jobs_finish(struct ship_jobs *j, int64_t now, struct err *err)
{
    int rc = 0;

    if (!j)
        return 0;
    for (size_t i = 0; i < j->n; i++) {
        if (err && rc == 0 && j->v[i])
            rc = job_write(j, j->v[i], now, err);
        job_free(j->v[i]);
    }
    free(j->v);
    json_decref(j->ix);
    free(j);
    return rc;
}
