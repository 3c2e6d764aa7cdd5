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
#include "strpool.h"

/* ---- a job's row: read under the view's lock, made into JSON after it ----
 *
 * Listing 50,000 jobs held the scheduler back for 0.23 s while their JSON was built under
 * the lock. A row copies what the JSON says (its strings into one strpool) in a
 * few microseconds; the objects, the sort and the why documents come after the lock. */

struct job_row {
    size_t id, queue;
    size_t groups, ngroups;   /* ngroups strings from offset groups */
    size_t members, nmembers; /* nmembers x (name, node, phase, nominatedNode): their
                                 offsets from rows.offs[members] */
    int gang, placed, pending, min, untried;
    enum sched_job_state state;
    int32_t priority;
    int64_t created, lim, end, start; /* start: INT64_MIN without a reservation */
};

struct rows {
    struct strpool a;
    size_t *offs; /* the members' and groups' string offsets in a */
    size_t noffs, capoffs;
};

static void rows_off(struct rows *r, size_t off)
{
    XGROW(r->offs, r->noffs + 1, r->capoffs);
    r->offs[r->noffs++] = off;
}

/* Under the view's lock. */
static void row_capture(struct sched_view *v, const struct sv_job *j, struct rows *r,
                        struct job_row *row)
{
    memset(row, 0, sizeof(*row));
    row->id = strpool_add(&r->a, j->id);
    row->members = r->noffs;
    row->nmembers = j->npods;
    for (size_t i = 0; i < j->npods; i++) {
        const struct sv_pod *p = &v->pods[j->pods[i]];
        row->placed += p->m.node_name != NULL;
        row->pending += sched__pod_pending(p);
        rows_off(r, strpool_add(&r->a, p->m.name));
        rows_off(r, strpool_add(&r->a, p->m.node_name));
        rows_off(r, strpool_add(&r->a, p->m.phase ? p->m.phase : "Pending"));
        rows_off(r, strpool_add(&r->a, p->m.nominated_node));
    }
    row->groups = r->noffs;
    if (j->has_pg)
        for (size_t i = 0; i < j->pg.ngroups; i++, row->ngroups++)
            rows_off(r, strpool_add(&r->a, j->pg.groups[i]));
    row->gang = j->gang;
    row->state = sched__job_state(v, j);
    row->priority = sched__job_priority(v, j);
    row->min = sched__job_min(j);
    row->untried = sched__why_untried_code(j, row->state); /* the state, once */
    row->created = sched__job_creation(v, j);
    /* the queue it asks for, even one that does not exist (its why says QueueNotFound) */
    row->queue = strpool_add(&r->a, sched__job_queue_name(v, j));
    row->lim = sched__job_limit_ms(v, j);
    row->end = sched__job_end_ms(v, j, clock_now_ms());
    int ri = sched__view_resv_find(v, j->id);
    row->start = ri >= 0 ? v->resv[ri].start_ms : INT64_MIN;
}

/* The time ms as RFC 3339 (new), or null when absent (0) or never (INT64_MAX). */
static json_t *time_or_null(int64_t ms)
{
    char ts[64];
    if (ms <= 0 || ms == INT64_MAX)
        return json_null();
    clock_format_rfc3339(ms, ts, sizeof(ts));
    return json_string(ts);
}

/* The job's JSON (new), without "reason". */
static json_t *row_json(const struct rows *r, const struct job_row *row)
{
    const struct strpool *a = &r->a;
    char ts[64];
    json_t *members = json_array(), *group = json_array();
    for (size_t i = 0; i < row->nmembers; i++) {
        const size_t *m = &r->offs[row->members + 4 * i];
        json_array_append_new(members,
                              json_pack("{s:s,s:s?,s:s?,s:s?}", "name", strpool_get(a, m[0]),
                                        "node", strpool_get(a, m[1]), "phase", strpool_get(a, m[2]),
                                        "nominatedNode", strpool_get(a, m[3])));
    }
    for (size_t i = 0; i < row->ngroups; i++)
        json_array_append_new(group, json_string(strpool_get(a, r->offs[row->groups + i])));
    const char *id = strpool_get(a, row->id), *slash = strchr(id, '/');
    json_t *o =
        json_pack("{s:s,s:s%,s:s,s:s,s:s,s:i,s:i,s:o,s:o,s:i,s:i}", "id", id, "namespace", id,
                  slash ? (size_t)(slash - id) : strlen(id), "name", slash ? slash + 1 : id, "kind",
                  row->gang ? "gang" : "pod", "state", sched_job_state_name(row->state), "priority",
                  (int)row->priority, "minMember", row->min, "gangGroup", group, "members", members,
                  "placed", row->placed, "pending", row->pending);
    json_object_set_new(o, "creationTimestamp", time_or_null(row->created));
    json_object_set_new(o, "queue", json_string(strpool_get(a, row->queue)));
    /* time limits (docs/reservations.md): when the running job ends at the latest */
    json_object_set_new(o, "limitSeconds",
                        row->lim ? json_real((double)row->lim / 1000.0) : json_null());
    json_object_set_new(o, "expectedEnd", time_or_null(row->end));
    if (row->start != INT64_MIN) {
        clock_format_rfc3339(row->start, ts, sizeof(ts));
        json_object_set_new(o, "expectedStart",
                            row->start == INT64_MAX ? json_null() : json_string(ts));
    }
    return o;
}

static void rows_release(struct rows *r)
{
    strpool_release(&r->a);
    free(r->offs);
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

/* An item of a list: its JSON, its id (borrowed from it) and the code of its reason when
 * no why document is stored (-1: none). */
struct item {
    json_t *o;
    const char *id;
    int untried;
};

static void item_add(struct item *items, size_t *n, json_t *o, int untried)
{
    items[(*n)++] = (struct item){o, json_string_value(json_object_get(o, "id")), untried};
}

static int item_cmp(const void *a, const void *b)
{
    return strcmp(((const struct item *)a)->id, ((const struct item *)b)->id);
}

/* Appends to items the jobs of ids (retained victims) read from the store. */
static int add_retained(struct sched *s, json_t *ids, struct item *items, size_t *n,
                        struct err *err)
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
            item_add(items, n, o, -1);
        json_decref(rec);
    }
    store_txn_abort(&txn);
    return rc;
}

/* Sets "reason" of items[0..n): the primary code of the job's why document, or the item's
 * untried code without one. Reads the documents in one read transaction, outside the
 * view's lock. */
static int add_reasons(struct sched *s, struct item *items, size_t n, struct err *err)
{
    MDB_txn *txn = NULL;
    int rc = store_txn_begin(s->st, STORE_READ, &txn, err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_t *doc = NULL;
        rc = store_doc_get(txn, STORE_DB_WHY, items[i].id, &doc, err);
        const char *code = NULL;
        if (rc == ERR_NOT_FOUND) {
            err_clear(err);
            rc = 0;
            code = items[i].untried >= 0 ? why_code_name(items[i].untried) : "";
        } else if (rc == 0) {
            code = json_string_value(json_object_get(json_object_get(doc, "primary"), "code"));
        }
        if (rc == 0)
            json_object_set_new(items[i].o, "reason", json_string(code ? code : ""));
        json_decref(doc);
    }
    store_txn_abort(&txn);
    return rc;
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
        if (limit)
            heap_offer(c, &n, cap, (struct cand){j->id, (int)i});
        else
            c[n++] = (struct cand){j->id, (int)i}; /* sorted after the lock, as items */
    }
    size_t gi;
    json_t *g;
    json_array_foreach(gone, gi, g)
    {
        const char *id = json_string_value(g);
        if (after && strcmp(id, after) <= 0)
            continue;
        if (limit)
            heap_offer(c, &n, cap, (struct cand){id, -1});
        else
            c[n++] = (struct cand){id, -1};
    }
    if (limit) {
        qsort(c, n, sizeof(*c), cand_cmp); /* at most limit + 1 */
        if (n > limit) {
            n = limit;
            if (more)
                *more = 1;
        }
    }
    struct rows r = {0};
    struct job_row *rows = xcalloc(n + 1, sizeof(*rows));
    json_t *retained_ids = json_array();
    size_t nrows = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].ji < 0)
            json_array_append_new(retained_ids, json_string(c[i].id));
        else
            row_capture(v, &v->jobs[c[i].ji], &r, &rows[nrows++]);
    }
    pthread_mutex_unlock(&s->mu);
    free(c);
    struct item *items = xcalloc(n + 1, sizeof(*items));
    size_t m = 0;
    for (size_t i = 0; i < nrows; i++)
        item_add(items, &m, row_json(&r, &rows[i]), rows[i].untried);
    free(rows);
    rows_release(&r);
    int rc = add_retained(s, retained_ids, items, &m, err);
    json_decref(retained_ids);
    json_decref(gone);
    if (rc == 0)
        rc = add_reasons(s, items, m, err);
    qsort(items, m, sizeof(*items), item_cmp);
    *out = rc < 0 ? NULL : json_array();
    for (size_t i = 0; i < m; i++)
        if (*out)
            json_array_append_new(*out, items[i].o);
        else
            json_decref(items[i].o);
    free(items);
    return rc;
}

int sched_job(struct sched *s, const char *id, json_t **out, struct err *err)
{
    int rc = 0;
    int32_t prio;
    struct rows r = {0};
    struct job_row row;
    struct item item = {NULL, id, -1};
    pthread_mutex_lock(&s->mu);
    int ji = sched__view_job(s->v, id);
    json_t *by = sched__ledger_preempted_by(s, id);
    if (ji >= 0)
        row_capture(s->v, &s->v->jobs[ji], &r, &row);
    else if (!by || !sched__view_victim(s->v, id, &prio) || !(item.o = retained_job_json(by)))
        rc = err_set(err, ERR_NOT_FOUND, "job '%s' not found", id);
    pthread_mutex_unlock(&s->mu);
    if (ji >= 0) {
        item.o = row_json(&r, &row);
        item.untried = row.untried;
        json_object_set_new(item.o, "preemptedBy", by ? by : json_null());
    } else {
        json_decref(by);
    }
    rows_release(&r);
    if (rc == 0 && (rc = add_reasons(s, &item, 1, err)) < 0) {
        json_decref(item.o);
        item.o = NULL;
    }
    *out = item.o;
    return rc;
}
