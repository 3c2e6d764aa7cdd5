/*
 * ledger.c - the preemption ledger (DESIGN.md section 5), STORE_DB_PREEMPTIONS.
 *
 * Keys:
 *   e:<id, 16 digits>   one entry per preemption: preemptor, trigger pod, victims
 *                       [{pod, job, node, priority}], nominatedNodes, cost {pods,
 *                       gangsBroken, resourceSeconds}, and once known bound / boundAt /
 *                       latencyMs (the preemptor bound after the victims went)
 *   j:<preemptor job>   {"id"}: the entry still waiting for its preemptor to bind
 *   v:<victim job>      the victim's record, kept after its pods are gone (below)
 *   p:<victim pod>      {"id"}: the entry that evicted the pod, until the pod is gone
 *   s:<job>             {"clearedBy"}: the job starves (a plan for it or its GangGroup, not
 *                       bound yet), and who cleared its nominations since: what the view
 *                       keeps in sv_job, given back to a view rebuilt (cycle/cycle.c)
 * Everything is written in the cycle's transaction, so a crash leaves no victim
 * without its entry.
 *
 * The victim record answers "who preempted my job?" for as long as the job is
 * answerable: {"job", "kind", "minMember", "creationTimestamp", "priority" (the job's
 * priority when it was first preempted), "id" / "preemptor" / "cycle" / "ts" (the latest
 * preemption), "preemptors": [{"preemptor", "ledger", "link", "cycle", "ts", "pods"}] (every
 * preemption that took pods of the job, in order), "terminating": [victim pods not gone
 * yet], "goneAt" / "retainedUntil" (RFC 3339, null while pods terminate) and their
 * "...Ms" twins}. When the last victim pod is gone the retention clock starts; the
 * cycle's housekeeping drops the record (and the why document of a job that has no
 * pods left) at retainedUntil (sched__ledger_expire). The view keeps the set of
 * recorded victims with their priorities (sched__view_victim).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "plan.h"
#include "view.h"
#include "why.h"

static void entry_key(uint64_t id, char *buf, size_t n)
{
    snprintf(buf, n, "e:%016llu", (unsigned long long)id);
}

json_t *sched__ledger_victim_get(MDB_txn *txn, const char *job)
{
    json_t *rec = NULL;
    char *k = xasprintf("v:%s", job);
    if (store_doc_get(txn, STORE_DB_PREEMPTIONS, k, &rec, NULL) < 0)
        rec = NULL;
    free(k);
    return rec;
}

static int victim_put(MDB_txn *txn, const char *job, json_t *rec, struct err *err)
{
    char *k = xasprintf("v:%s", job);
    int rc = store_doc_put(txn, STORE_DB_PREEMPTIONS, k, rec, err);
    free(k);
    return rc;
}

static int str_in(json_t *arr, const char *s)
{
    size_t i;
    json_t *x;
    json_array_foreach(arr, i, x) if (!strcmp(json_string_value(x), s)) return 1;
    return 0;
}

/* The victim record of job ji (new): the stored one, or a fresh one. */
static json_t *victim_record(struct sched_cyc *c, int ji)
{
    const struct sv_job *j = &c->v->jobs[ji];
    json_t *rec = sched__ledger_victim_get(c->txn, j->id);
    if (rec && !json_is_array(json_object_get(rec, "preemptors"))) {
        json_decref(rec); /* written before victims were kept: start afresh */
        rec = NULL;
    }
    if (!rec) {
        char ts[64];
        int64_t created = sched__job_creation(c->v, j);
        if (created)
            clock_format_rfc3339(created, ts, sizeof(ts));
        rec =
            json_pack("{s:s,s:s,s:i,s:i,s:o,s:[]}", "job", j->id, "kind", j->gang ? "gang" : "pod",
                      "minMember", sched__job_min(j), "priority", (int)sched__job_priority(c->v, j),
                      "creationTimestamp", created ? json_string(ts) : json_null(), "preemptors");
    }
    if (!json_is_array(json_object_get(rec, "terminating")))
        json_object_set_new(rec, "terminating", json_array());
    return rec;
}

/* The victim record of job ji with this preemption (ledger id, at the cycle's time) added:
 * one "preemptors" item per job and entry, its retention restarted. New. */
static json_t *victim_record_add(struct sched_cyc *c, int ji, const char *pre, uint64_t id)
{
    json_t *rec = victim_record(c, ji);
    char *link = xasprintf("/api/v1/preemptions/%llu", (unsigned long long)id);
    json_array_append_new(json_object_get(rec, "preemptors"),
                          json_pack("{s:s,s:I,s:s,s:I,s:s,s:[]}", "preemptor", pre, "ledger",
                                    (json_int_t)id, "link", link, "cycle", (json_int_t)c->cycle,
                                    "ts", sched__cyc_ts(c), "pods"));
    free(link);
    json_object_set_new(rec, "id", json_integer((json_int_t)id));
    json_object_set_new(rec, "preemptor", json_string(pre));
    json_object_set_new(rec, "cycle", json_integer((json_int_t)c->cycle));
    json_object_set_new(rec, "ts", json_string(sched__cyc_ts(c)));
    static const char *const clock[] = {"goneAt", "goneAtMs", "retainedUntil", "retainedUntilMs"};
    for (size_t k = 0; k < 4; k++)
        json_object_set_new(rec, clock[k], json_null());
    return rec;
}

/* Adds preemption id of plan p to the record of every victim job, and writes their why
 * documents. */
static int victims_record(struct sched_cyc *c, const struct preempt_plan *p, uint64_t id,
                          struct err *err)
{
    struct sched_view *v = c->v;
    json_t *recs = json_object();
    const char *pre = v->jobs[p->job].id;
    int rc = 0;
    for (size_t i = 0; i < p->nvictims; i++) {
        const struct sv_pod *pod = &v->pods[p->victims[i].pod];
        const char *job = v->jobs[pod->job].id;
        json_t *rec = json_object_get(recs, job);
        if (!rec)
            json_object_set_new(recs, job, rec = victim_record_add(c, pod->job, pre, id));
        json_t *items = json_object_get(rec, "preemptors");
        json_t *item = json_array_get(items, json_array_size(items) - 1);
        json_array_append_new(json_object_get(item, "pods"), json_string(pod->key));
        const char *budget = p->victims[i].pdb;
        if (budget) { /* the PodDisruptionBudgets its eviction violated */
            json_t *l = json_object_get(item, "pdbsViolated");
            if (!l)
                json_object_set_new(item, "pdbsViolated", l = json_array());
            if (!str_in(l, budget))
                json_array_append_new(l, json_string(budget));
        }
        if (!str_in(json_object_get(rec, "terminating"), pod->key))
            json_array_append_new(json_object_get(rec, "terminating"), json_string(pod->key));
    }
    const char *job;
    json_t *rec;
    json_object_foreach(recs, job, rec)
    {
        if (rc < 0)
            break;
        int ji = sched__view_job(v, job);
        rc = victim_put(c->txn, job, rec, err);
        if (rc == 0 && ji >= 0)
            rc = sched__why_preempted(c, ji, rec, err);
        if (rc == 0)
            sched__view_victim_put(v, job,
                                   (int32_t)json_integer_value(json_object_get(rec, "priority")));
    }
    json_decref(recs);
    return rc;
}

static int max_id(void *ctx, const char *key, json_t *entry)
{
    (void)entry;
    uint64_t id = strtoull(key + 2, NULL, 10), *max = ctx;
    if (id > *max)
        *max = id;
    return 0;
}

int sched__ledger_seq_from_entries(MDB_txn *txn, struct err *err)
{
    uint64_t max = 0;
    int rc = store_doc_each(txn, STORE_DB_PREEMPTIONS, "e:", max_id, &max, err);
    return rc < 0 ? rc : store_meta_put_u64(txn, "preemption_seq", max, err);
}

int sched__ledger_add(struct sched_cyc *c, const struct preempt_plan *p, json_t *entry,
                      uint64_t *out_id, struct err *err)
{
    uint64_t id = 0;
    int rc = store_meta_get_u64(c->txn, "preemption_seq", &id, err);
    if (rc < 0 || (rc = store_meta_put_u64(c->txn, "preemption_seq", ++id, err)) < 0)
        return rc;
    *out_id = id;
    json_object_set_new(entry, "id", json_integer((json_int_t)id));
    char key[64];
    entry_key(id, key, sizeof(key));
    if ((rc = store_doc_put(c->txn, STORE_DB_PREEMPTIONS, key, entry, err)) < 0)
        return rc;
    json_t *idx = json_pack("{s:I}", "id", (json_int_t)id);
    char *k = xasprintf("j:%s", c->v->jobs[p->job].id);
    rc = store_doc_put(c->txn, STORE_DB_PREEMPTIONS, k, idx, err);
    free(k);
    for (size_t i = 0; rc == 0 && i < p->nvictims; i++) {
        k = xasprintf("p:%s", c->v->pods[p->victims[i].pod].key);
        rc = store_doc_put(c->txn, STORE_DB_PREEMPTIONS, k, idx, err);
        free(k);
    }
    json_decref(idx);
    if (rc == 0) /* v:<victim job>, once per job */
        rc = victims_record(c, p, id, err);
    return rc;
}

/* s:<job>: the job starves (scheduler/view/view_types.h's sv_job.starving) */
static char *starving_key(const char *job)
{
    return xasprintf("s:%s", job);
}

/* s:<job> {"clearedBy": by (NULL: null)}. */
static int starving_put(MDB_txn *txn, const char *job, const char *by, struct err *err)
{
    char *k = starving_key(job);
    json_t *doc = json_pack("{s:s?}", "clearedBy", by);
    int rc = store_doc_put(txn, STORE_DB_PREEMPTIONS, k, doc, err);
    json_decref(doc);
    free(k);
    return rc;
}

int sched__ledger_cleared(struct sched_cyc *c, const char *job, const char *by, uint64_t by_ledger,
                          struct err *err)
{
    char *k = NULL, key[64], ts[64];
    json_t *idx = NULL, *entry = NULL;
    int rc = 0;
    if (sched__ledger_starving_get(c->txn, job, &k)) /* it starves: cleared by by now */
        rc = starving_put(c->txn, job, by, err);
    free(k);
    k = xasprintf("j:%s", job);
    if (rc < 0 || store_doc_get(c->txn, STORE_DB_PREEMPTIONS, k, &idx, NULL) < 0)
        goto out; /* not a preemptor with an open entry */
    entry_key((uint64_t)json_integer_value(json_object_get(idx, "id")), key, sizeof(key));
    if (store_doc_get(c->txn, STORE_DB_PREEMPTIONS, key, &entry, NULL) < 0)
        goto out;
    clock_format_rfc3339(c->now_ms, ts, sizeof(ts));
    json_object_set_new(entry, "nominationsCleared",
                        json_pack("{s:s,s:I,s:I,s:s}", "by", by, "byLedger", (json_int_t)by_ledger,
                                  "cycle", (json_int_t)c->cycle, "ts", ts));
    rc = store_doc_put(c->txn, STORE_DB_PREEMPTIONS, key, entry, err);
out:
    json_decref(idx);
    json_decref(entry);
    free(k);
    return rc;
}

int sched__ledger_starving(struct sched_cyc *c, const char *job, struct err *err)
{
    return starving_put(c->txn, job, NULL, err);
}

int sched__ledger_starving_get(MDB_txn *txn, const char *job, char **cleared_by)
{
    char *k = starving_key(job);
    json_t *doc = NULL;
    int starving = store_doc_get(txn, STORE_DB_PREEMPTIONS, k, &doc, NULL) == 0;
    const char *by = json_string_value(json_object_get(doc, "clearedBy"));
    *cleared_by = by ? xstrdup(by) : NULL;
    json_decref(doc);
    free(k);
    return starving;
}

int sched__ledger_starving_drop(MDB_txn *txn, const char *job, struct err *err)
{
    char *k = starving_key(job);
    int rc = store_doc_delete(txn, STORE_DB_PREEMPTIONS, k, err);
    free(k);
    if (rc == ERR_NOT_FOUND) {
        err_clear(err);
        rc = 0;
    }
    return rc;
}

int sched__ledger_bound(struct sched_cyc *c, int job, json_t *map, struct err *err)
{
    struct sv_job *j = &c->v->jobs[job];
    int rc = j->starving ? sched__ledger_starving_drop(c->txn, j->id, err) : 0;
    j->starving = 0;
    free(j->cleared_by);
    j->cleared_by = NULL;
    if (rc < 0 || !map)
        return rc;
    char *k = xasprintf("j:%s", j->id), key[64];
    json_t *idx = NULL, *entry = NULL;
    rc = store_doc_get(c->txn, STORE_DB_PREEMPTIONS, k, &idx, NULL);
    if (rc < 0) {
        rc = 0; /* not a preemptor */
        goto out;
    }
    entry_key((uint64_t)json_integer_value(json_object_get(idx, "id")), key, sizeof(key));
    if ((rc = store_doc_delete(c->txn, STORE_DB_PREEMPTIONS, k, err)) < 0)
        goto out;
    if (store_doc_get(c->txn, STORE_DB_PREEMPTIONS, key, &entry, NULL) < 0 ||
        json_is_true(json_object_get(entry, "bound")))
        goto out;
    /* Each nominated pod on its own nominated node (pods placed but never nominated, of a
     * satisfied gang, do not count). */
    json_t *noms = json_object_get(entry, "nominations");
    int on = 0, total = 0;
    const char *pod;
    json_t *node;
    json_object_foreach(noms, pod, node)
    {
        total++;
        on += json_equal(json_object_get(map, pod), node);
    }
    json_object_set_new(entry, "podsOnNominatedNodes", json_integer(on));
    char ts[64];
    clock_format_rfc3339(c->now_ms, ts, sizeof(ts));
    int64_t t0 = json_integer_value(json_object_get(entry, "tsMs"));
    json_object_set_new(entry, "bound", json_true());
    json_object_set_new(entry, "boundAt", json_string(ts));
    json_object_set_new(entry, "boundCycle", json_integer((json_int_t)c->cycle));
    json_object_set_new(entry, "latencyMs", json_integer(c->now_ms - t0));
    json_object_set_new(entry, "boundOnNominatedNodes", json_boolean(on == total));
    rc = store_doc_put(c->txn, STORE_DB_PREEMPTIONS, key, entry, err);
out:
    json_decref(idx);
    json_decref(entry);
    free(k);
    return rc;
}

/* Pod of job is gone: it leaves the record's "terminating"; the last one starts the
 * retention clock. */
static int victim_gone(MDB_txn *txn, int64_t retention_ms, int64_t *retain_scan_ms, const char *job,
                       const char *pod, int64_t now_ms, struct err *err)
{
    json_t *rec = sched__ledger_victim_get(txn, job);
    if (!rec)
        return 0;
    json_t *term = json_object_get(rec, "terminating"), *left = json_array();
    size_t i;
    json_t *x;
    json_array_foreach(term, i, x) if (strcmp(json_string_value(x), pod))
        json_array_append(left, x);
    json_object_set_new(rec, "terminating", left);
    if (json_array_size(left) == 0 && !json_is_integer(json_object_get(rec, "goneAtMs"))) {
        char ts[64];
        int64_t until = now_ms + retention_ms;
        clock_format_rfc3339(now_ms, ts, sizeof(ts));
        json_object_set_new(rec, "goneAt", json_string(ts));
        json_object_set_new(rec, "goneAtMs", json_integer(now_ms));
        clock_format_rfc3339(until, ts, sizeof(ts));
        json_object_set_new(rec, "retainedUntil", json_string(ts));
        json_object_set_new(rec, "retainedUntilMs", json_integer(until));
        if (until < *retain_scan_ms)
            *retain_scan_ms = until;
    }
    int rc = victim_put(txn, job, rec, err);
    json_decref(rec);
    return rc;
}

void sched__ledger_seen_release(struct sched_ledger_seen *seen)
{
    json_decref(seen->entry);
    seen->entry = NULL;
}

/* Entry id (new reference), read or the one seen kept; NULL when there is none. */
static json_t *entry_get(MDB_txn *txn, uint64_t id, struct sched_ledger_seen *seen)
{
    char key[64];
    json_t *entry = NULL;
    if (seen && seen->entry && seen->id == id)
        return json_incref(seen->entry);
    entry_key(id, key, sizeof(key));
    if (store_doc_get(txn, STORE_DB_PREEMPTIONS, key, &entry, NULL) < 0)
        return NULL;
    if (seen) {
        sched__ledger_seen_release(seen);
        seen->id = id;
        seen->entry = json_incref(entry);
    }
    return entry;
}

int sched__ledger_victim_take(MDB_txn *txn, const struct sched_options *opts,
                              int64_t *retain_scan_ms, const char *pod, int64_t now_ms,
                              struct sched_ledger_seen *seen, int *victim, char **preemptor,
                              struct err *err)
{
    char *k = xasprintf("p:%s", pod);
    json_t *idx = NULL, *entry = NULL;
    *victim = 0;
    *preemptor = NULL;
    int rc = store_doc_get(txn, STORE_DB_PREEMPTIONS, k, &idx, NULL);
    if (rc < 0) {
        rc = 0; /* not a victim */
        goto out;
    }
    *victim = 1;
    if ((rc = store_doc_delete(txn, STORE_DB_PREEMPTIONS, k, err)) < 0)
        goto out;
    entry = entry_get(txn, (uint64_t)json_integer_value(json_object_get(idx, "id")), seen);
    if (entry) {
        const char *pre = json_string_value(json_object_get(entry, "preemptor"));
        *preemptor = pre ? xstrdup(pre) : NULL;
        size_t i;
        json_t *x;
        json_array_foreach(json_object_get(entry, "victims"), i, x)
        {
            const char *job = json_string_value(json_object_get(x, "job"));
            if (rc == 0 && job && !strcmp(json_string_value(json_object_get(x, "pod")), pod))
                rc = victim_gone(txn, opts->retention_ms, retain_scan_ms, job, pod, now_ms, err);
        }
    }
out:
    json_decref(idx);
    json_decref(entry);
    free(k);
    return rc;
}

/* ---- reading ---- */

struct list_ctx {
    const char *job, *victim;
    int64_t since_ms;
    json_int_t since_cycle;
    json_t *out;
};

static int victim_matches(json_t *entry, const char *victim)
{
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(entry, "victims"), i, x)
    {
        if (!strcmp(json_string_value(json_object_get(x, "pod")), victim) ||
            !strcmp(json_string_value(json_object_get(x, "job")), victim))
            return 1;
    }
    return 0;
}

static int list_one(void *ctx, const char *key, json_t *entry)
{
    struct list_ctx *l = ctx;
    (void)key;
    const char *pre = json_string_value(json_object_get(entry, "preemptor"));
    if (l->job && (!pre || strcmp(pre, l->job)))
        return 0;
    if (l->victim && !victim_matches(entry, l->victim))
        return 0;
    if (json_integer_value(json_object_get(entry, "tsMs")) < l->since_ms ||
        json_integer_value(json_object_get(entry, "cycle")) < l->since_cycle)
        return 0;
    json_array_append(l->out, entry);
    return 0;
}

int sched__ledger_list(MDB_txn *txn, const char *job, const char *victim, const char *since,
                       json_t **out, struct err *err)
{
    struct list_ctx l = {job && *job ? job : NULL, victim && *victim ? victim : NULL, 0, 0, NULL};
    if (since && *since) {
        char *end = NULL;
        long long cyc = strtoll(since, &end, 10);
        if (end && !*end && cyc >= 0)
            l.since_cycle = cyc;
        else if (clock_parse_rfc3339(since, &l.since_ms, NULL) < 0)
            return err_setf(err, ERR_INVALID, "since",
                            "'since' must be an RFC 3339 time or a cycle number, got '%s'", since);
    }
    l.out = json_array();
    int rc = store_doc_each(txn, STORE_DB_PREEMPTIONS, "e:", list_one, &l, err);
    if (rc < 0) {
        json_decref(l.out);
        return rc;
    }
    *out = l.out;
    return 0;
}

int sched__ledger_entry(MDB_txn *txn, const char *id, json_t **out, struct err *err)
{
    char *end = NULL, key[64];
    unsigned long long n = strtoull(id ? id : "", &end, 10);
    if (!id || !*id || *end || *id == '-' || *id == '+')
        return err_setf(err, ERR_INVALID, "id", "ledger entry id must be a number, got '%s'",
                        id ? id : "");
    entry_key((uint64_t)n, key, sizeof(key));
    int rc = store_doc_get(txn, STORE_DB_PREEMPTIONS, key, out, NULL);
    if (rc == ERR_NOT_FOUND)
        return err_set(err, ERR_NOT_FOUND, "preemption %llu not found", n);
    return rc < 0 ? err_set(err, rc, "reading preemption %llu", n) : 0;
}

/* ---- retention ---- */

struct expire_ctx {
    int64_t now_ms, next_ms;
    json_t *expired; /* job ids */
};

static int expire_one(void *ctx, const char *key, json_t *rec)
{
    struct expire_ctx *x = ctx;
    json_t *until = json_object_get(rec, "retainedUntilMs");
    if (!json_is_integer(until))
        return 0; /* pods still terminating */
    if (json_integer_value(until) <= x->now_ms)
        json_array_append_new(x->expired, json_string(key + 2));
    else if (json_integer_value(until) < x->next_ms)
        x->next_ms = json_integer_value(until);
    return 0;
}

int sched__ledger_expire(struct sched_cyc *c, struct err *err)
{
    if (c->now_ms < *c->retain_scan_ms)
        return 0;
    struct expire_ctx x = {c->now_ms, INT64_MAX, json_array()};
    int rc = store_doc_each(c->txn, STORE_DB_PREEMPTIONS, "v:", expire_one, &x, err);
    size_t i;
    json_t *id;
    json_array_foreach(x.expired, i, id)
    {
        if (rc < 0)
            break;
        const char *job = json_string_value(id);
        char *k = xasprintf("v:%s", job);
        rc = store_doc_delete(c->txn, STORE_DB_PREEMPTIONS, k, err);
        free(k);
        int ji = sched__view_job(c->v, job);
        /* A job that has pods again keeps its why document; one that is gone loses it. */
        if (rc == 0 && (ji < 0 || c->v->jobs[ji].npods == 0)) {
            rc = sched__why_doc_drop(c->txn, c, c->v, job, err);
            if (ji >= 0) { /* nothing to remember: the document is gone */
                struct why_job *w = sched__why_job(c->why_mem, c->v, ji);
                json_decref(w->history);
                w->history = NULL;
                w->has_first = 0;
                w->loaded = 1;
                free(w->last_sig);
                sched__why_mid_unref(w->last_mid);
                w->last_sig = NULL;
                w->last_mid = NULL;
            }
        }
        if (rc == 0)
            sched__view_victim_del(c->v, job);
    }
    c->changes += (long)json_array_size(x.expired);
    json_decref(x.expired);
    if (rc == 0)
        *c->retain_scan_ms = x.next_ms;
    return rc;
}
