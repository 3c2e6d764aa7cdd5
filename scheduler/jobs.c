/*
 * jobs.c - job states and the jobs API (sched_jobs / sched_job).
 *
 * States are derived from the pods on demand, plus the result of the last
 * attempt (Unschedulable) kept in the view:
 *   Finished       every pod terminal (Succeeded / Failed)
 *   Running        at least "needed" pods bound and Running
 *   Scheduled      at least "needed" pods bound
 *   Unschedulable  the last attempt failed
 *   Pending        not tried yet
 *   Pipelined      pods nominated (preemption under way, waiting for victims)
 *   TimedOut       a gang unsatisfied past its timeout at the last attempt (cycle_timeout.c)
 *   Starving       preempted for, its nominations cleared by a higher-priority
 *                  preemptor, not placed yet
 *   Preempted      a victim: pods terminating because of a preemption, or pods gone
 *                  (sched__job_preempted); a job whose pods are all gone is answered
 *                  from the ledger's victim record until its retention ends
 *
 * Every job of the API carries "reason": the primary code of its why document ("" when
 * nothing blocks it), read from the stored documents after the view's lock is released
 * (sched__why_untried_code for a job no cycle has tried).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "core.h"
#include "why.h"
#include "names.h"
#include "preempt.h"

json_t *sched__job_json(struct sched *s, const struct sv_job *j)
{
    struct sched_view *v = s->v;
    json_t *members = json_array(), *group = json_array();
    int placed = 0, pending = 0;
    for (size_t i = 0; i < j->npods; i++) {
        const struct sv_pod *p = &v->pods[j->pods[i]];
        placed += p->m.node_name != NULL;
        pending += sched__pod_pending(p);
        json_array_append_new(members, json_pack("{s:s,s:s?,s:s?,s:s?}", "name", p->m.name, "node",
                                                 p->m.node_name, "phase",
                                                 p->m.phase ? p->m.phase : "Pending",
                                                 "nominatedNode", p->m.nominated_node));
    }
    if (j->has_pg)
        for (size_t i = 0; i < j->pg.ngroups; i++)
            json_array_append_new(group, json_string(j->pg.groups[i]));
    char ts[64] = "";
    int64_t created = sched__job_creation(v, j);
    if (created)
        clock_format_rfc3339(created, ts, sizeof(ts));
    const char *slash = strchr(j->id, '/');
    json_t *o = json_pack(
        "{s:s,s:s%,s:s,s:s,s:s,s:i,s:i,s:o,s:o,s:i,s:i}", "id", j->id, "namespace", j->id,
        slash ? (size_t)(slash - j->id) : strlen(j->id), "name", slash ? slash + 1 : j->id, "kind",
        j->gang ? "gang" : "pod", "state", sched_job_state_name(sched__job_state(s->v, j)),
        "priority", (int)sched__job_priority(v, j), "minMember", sched__job_min(j), "gangGroup",
        group, "members", members, "placed", placed, "pending", pending);
    json_object_set_new(o, "creationTimestamp", created ? json_string(ts) : json_null());
    /* the queue it asks for, even one that does not exist (its why says QueueNotFound) */
    json_object_set_new(o, "queue", json_string(sched__job_queue_name(v, j)));
    /* time limits (docs/reservations.md): when the running job ends at the latest */
    int64_t lim = sched__job_limit_ms(v, j), end = sched__job_end_ms(v, j, clock_now_ms());
    json_object_set_new(o, "limitSeconds", lim ? json_real((double)lim / 1000.0) : json_null());
    if (end > 0 && end != INT64_MAX)
        clock_format_rfc3339(end, ts, sizeof(ts));
    json_object_set_new(o, "expectedEnd",
                        end > 0 && end != INT64_MAX ? json_string(ts) : json_null());
    int ri = sched__view_resv_find(v, j->id);
    if (ri >= 0) {
        int64_t st = v->resv[ri].start_ms;
        if (st != INT64_MAX)
            clock_format_rfc3339(st, ts, sizeof(ts));
        json_object_set_new(o, "expectedStart", st != INT64_MAX ? json_string(ts) : json_null());
    }
    return o;
}

/* A victim whose pods are all gone and whose job left the view, from its ledger record
 * (borrowed). New. */
static json_t *retained_job_json(json_t *rec)
{
    const char *id = json_string_value(json_object_get(rec, "job"));
    const char *slash = id ? strchr(id, '/') : NULL;
    if (!slash)
        return NULL;
    json_t *created = json_object_get(rec, "creationTimestamp");
    json_t *o = json_pack(
        "{s:s,s:s%,s:s,s:O,s:s,s:O,s:O,s:[],s:[],s:i,s:i,s:O,s:O}", "id", id, "namespace", id,
        (size_t)(slash - id), "name", slash + 1, "kind", json_object_get(rec, "kind"), "state",
        sched_job_state_name(SCHED_JOB_PREEMPTED), "priority", json_object_get(rec, "priority"),
        "minMember", json_object_get(rec, "minMember"), "gangGroup", "members", "placed", 0,
        "pending", 0, "creationTimestamp", created ? created : json_null(), "preemptedBy", rec);
    json_object_set_new(o, "retained", json_true());
    return o;
}

/* Ids (new array) of the recorded victims that have no job in the view. */
static json_t *gone_victims(struct sched_view *v)
{
    json_t *ids = json_array();
    for (size_t i = sched__strmap_next(&v->victims, 0); i < v->victims.cap;
         i = sched__strmap_next(&v->victims, i + 1))
        if (sched__view_job(v, v->victims.keys[i]) < 0)
            json_array_append_new(ids, json_string(v->victims.keys[i]));
    return ids;
}

/* Appends to items the jobs of ids (retained victims) read from the store. */
static int add_retained(struct sched *s, json_t *ids, json_t *items, struct err *err)
{
    MDB_txn *txn = NULL;
    int rc = store_txn_begin(s->st, STORE_READ, &txn, err);
    size_t i;
    json_t *id;
    json_array_foreach(ids, i, id)
    {
        if (rc < 0)
            break;
        json_t *rec = sched__ledger_victim_get(txn, json_string_value(id));
        json_t *o = rec ? retained_job_json(rec) : NULL;
        if (o)
            json_array_append_new(items, o);
        json_decref(rec);
    }
    store_txn_abort(&txn);
    return rc;
}

/* Sets "reason" of items[0..n) (ids in "id"); untried[i]: the code for a job without a
 * why document. Reads the documents in one read transaction, outside the view's lock. */
static int add_reasons(struct sched *s, json_t **items, const int *untried, size_t n,
                       struct err *err)
{
    MDB_txn *txn = NULL;
    int rc = store_txn_begin(s->st, STORE_READ, &txn, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_t *doc = NULL;
        const char *id = json_string_value(json_object_get(items[i], "id"));
        rc = store_doc_get(txn, STORE_DB_WHY, id, &doc, err);
        const char *code = NULL;
        if (rc == ERR_NOT_FOUND) {
            err_clear(err);
            rc = 0;
            code = untried[i] >= 0 ? why_code_name(untried[i]) : "";
        } else if (rc == 0) {
            code = json_string_value(json_object_get(json_object_get(doc, "primary"), "code"));
        }
        if (rc == 0)
            json_object_set_new(items[i], "reason", json_string(code ? code : ""));
        json_decref(doc);
    }
    store_txn_abort(&txn);
    return rc;
}

static int cmp_json_id(const void *a, const void *b)
{
    return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "id")),
                  json_string_value(json_object_get(*(json_t *const *)b, "id")));
}

/* A job the page may hold: id borrowed from the view (valid under s->mu) or from the
 * gone-victims array; ji -1 for a victim that left the view. */
struct cand {
    const char *id;
    int ji;
};

static int cand_cmp(const void *a, const void *b)
{
    return strcmp(((const struct cand *)a)->id, ((const struct cand *)b)->id);
}

/* Keeps the `cap` smallest ids seen in h[0..*n) as a max-heap: O(log cap) per offer, so a
 * page of 100 out of 50,000 jobs costs no sort of all of them under the lock. */
static void heap_offer(struct cand *h, size_t *n, size_t cap, struct cand c)
{
    size_t i;
    if (*n < cap) {
        for (i = (*n)++; i > 0 && strcmp(h[(i - 1) / 2].id, c.id) < 0; i = (i - 1) / 2)
            h[i] = h[(i - 1) / 2];
        h[i] = c;
        return;
    }
    if (strcmp(c.id, h[0].id) >= 0)
        return;
    for (i = 0;;) {
        size_t k = 2 * i + 1;
        if (k >= *n)
            break;
        if (k + 1 < *n && strcmp(h[k + 1].id, h[k].id) > 0)
            k++;
        if (strcmp(h[k].id, c.id) <= 0)
            break;
        h[i] = h[k];
        i = k;
    }
    h[i] = c;
}

int sched_jobs(struct sched *s, const char *state, json_t **out, struct err *err)
{
    return sched_jobs_page(s, state, NULL, 0, out, NULL, err);
}

int sched_jobs_page(struct sched *s, const char *state, const char *after, size_t limit,
                    json_t **out, int *more, struct err *err)
{
    enum sched_job_state want = SCHED_JOB_PENDING;
    *out = NULL;
    if (more)
        *more = 0;
    if (state && sched_job_state_parse(state, &want, err) < 0)
        return err->code;
    pthread_mutex_lock(&s->mu);
    struct sched_view *v = s->v;
    json_t *gone = !state || want == SCHED_JOB_PREEMPTED ? gone_victims(v) : json_array();
    size_t total = v->njobs + json_array_size(gone), cap = limit ? limit + 1 : total, n = 0;
    struct cand *c = xcalloc(cap + 1, sizeof(*c));
    for (size_t i = 0; i < v->njobs; i++) {
        const struct sv_job *j = &v->jobs[i];
        if (!j->alive || (after && strcmp(j->id, after) <= 0) ||
            (state && sched__job_state(s->v, j) != want))
            continue;
        heap_offer(c, &n, cap, (struct cand){j->id, (int)i});
    }
    size_t gi;
    json_t *g;
    json_array_foreach(gone, gi, g)
    {
        const char *id = json_string_value(g);
        if (!after || strcmp(id, after) > 0)
            heap_offer(c, &n, cap, (struct cand){id, -1});
    }
    qsort(c, n, sizeof(*c), cand_cmp);
    if (limit && n > limit) {
        n = limit;
        if (more)
            *more = 1;
    }
    json_t **items = xcalloc(n + 1, sizeof(*items));
    int *untried = xcalloc(n + 1, sizeof(int));
    json_t *retained_ids = json_array();
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].ji < 0) {
            json_array_append_new(retained_ids, json_string(c[i].id));
            continue;
        }
        const struct sv_job *j = &v->jobs[c[i].ji];
        untried[m] = sched__why_untried_code(s, j);
        items[m++] = sched__job_json(s, j);
    }
    pthread_mutex_unlock(&s->mu);
    free(c);
    json_t *retained = json_array();
    int rc = add_retained(s, retained_ids, retained, err);
    size_t i;
    json_t *o;
    json_array_foreach(retained, i, o)
    {
        untried[m] = -1;
        items[m++] = json_incref(o);
    }
    json_decref(retained);
    json_decref(retained_ids);
    json_decref(gone);
    if (rc == 0)
        rc = add_reasons(s, items, untried, m, err);
    free(untried);
    qsort(items, m, sizeof(*items), cmp_json_id);
    *out = rc < 0 ? NULL : json_array();
    for (i = 0; i < m; i++)
        if (*out)
            json_array_append_new(*out, items[i]);
        else
            json_decref(items[i]);
    free(items);
    return rc;
}

int sched_job(struct sched *s, const char *id, json_t **out, struct err *err)
{
    int rc = 0, untried = -1;
    int32_t prio;
    pthread_mutex_lock(&s->mu);
    int ji = sched__view_job(s->v, id);
    json_t *by = sched__ledger_preempted_by(s, id);
    if (ji >= 0) {
        *out = sched__job_json(s, &s->v->jobs[ji]);
        untried = sched__why_untried_code(s, &s->v->jobs[ji]);
        json_object_set_new(*out, "preemptedBy", by ? by : json_null());
    } else if (by && sched__view_victim(s->v, id, &prio) && (*out = retained_job_json(by))) {
        json_decref(by);
    } else {
        json_decref(by);
        rc = err_set(err, ERR_NOT_FOUND, "job '%s' not found", id);
    }
    pthread_mutex_unlock(&s->mu);
    if (rc == 0 && (rc = add_reasons(s, out, &untried, 1, err)) < 0) {
        json_decref(*out);
        *out = NULL;
    }
    return rc;
}
