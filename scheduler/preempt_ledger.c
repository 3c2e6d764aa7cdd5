/*
 * preempt_ledger.c - the preemption ledger (DESIGN.md section 5), STORE_DB_PREEMPTIONS.
 *
 * Keys:
 *   e:<id, 16 digits>   one entry per preemption: preemptor, trigger pod, victims
 *                       [{pod, job, node, priority}], nominatedNodes, cost {pods,
 *                       gangsBroken, resourceSeconds}, and once known bound / boundAt /
 *                       latencyMs (the preemptor bound after the victims went)
 *   j:<preemptor job>   {"id"}: the entry still waiting for its preemptor to bind
 *   v:<victim job>      {"id", "preemptor", "cycle", "ts"}: victim -> preemptor
 *   p:<victim pod>      {"id"}: the entry that evicted the pod, until the pod is gone
 * Everything is written in the cycle's transaction, so a crash leaves no victim
 * without its entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "preempt.h"

static void entry_key(uint64_t id, char *buf, size_t n)
{
    snprintf(buf, n, "e:%016llu", (unsigned long long)id);
}

int sched__ledger_add(struct sched_cyc *c, json_t *entry, struct err *err)
{
    uint64_t id = 0;
    int rc = store_meta_get_u64(c->txn, "preemption_seq", &id, err);
    if (rc < 0 || (rc = store_meta_put_u64(c->txn, "preemption_seq", ++id, err)) < 0)
        return rc;
    json_object_set_new(entry, "id", json_integer((json_int_t)id));
    char key[64];
    entry_key(id, key, sizeof(key));
    if ((rc = store_doc_put(c->txn, STORE_DB_PREEMPTIONS, key, entry, err)) < 0)
        return rc;
    const char *pre = json_string_value(json_object_get(entry, "preemptor"));
    json_t *idx = json_pack("{s:I}", "id", (json_int_t)id);
    char *k = xasprintf("j:%s", pre);
    rc = store_doc_put(c->txn, STORE_DB_PREEMPTIONS, k, idx, err);
    free(k);
    json_decref(idx);
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(entry, "victims"), i, x)
    {
        if (rc < 0)
            break;
        const char *vj = json_string_value(json_object_get(x, "job"));
        json_t *pod = json_pack("{s:I}", "id", (json_int_t)id);
        k = xasprintf("p:%s", json_string_value(json_object_get(x, "pod")));
        rc = store_doc_put(c->txn, STORE_DB_PREEMPTIONS, k, pod, err);
        free(k);
        json_decref(pod);
        if (rc < 0)
            break;
        json_t *back =
            json_pack("{s:I,s:s,s:O,s:O}", "id", (json_int_t)id, "preemptor", pre, "cycle",
                      json_object_get(entry, "cycle"), "ts", json_object_get(entry, "ts"));
        k = xasprintf("v:%s", vj);
        rc = store_doc_put(c->txn, STORE_DB_PREEMPTIONS, k, back, err);
        free(k);
        json_decref(back);
    }
    return rc;
}

int sched__ledger_cleared(struct sched_cyc *c, const char *job, const char *by, uint64_t by_ledger,
                          struct err *err)
{
    char *k = xasprintf("j:%s", job), key[64], ts[64];
    json_t *idx = NULL, *entry = NULL;
    int rc = 0;
    if (store_doc_get(c->txn, STORE_DB_PREEMPTIONS, k, &idx, NULL) < 0)
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

int sched__ledger_bound(struct sched_cyc *c, int job, json_t *map, struct err *err)
{
    struct sv_job *j = &c->v->jobs[job];
    j->starving = 0;
    free(j->cleared_by);
    j->cleared_by = NULL;
    if (!map)
        return 0;
    char *k = xasprintf("j:%s", j->id), key[64];
    json_t *idx = NULL, *entry = NULL;
    int rc = store_doc_get(c->txn, STORE_DB_PREEMPTIONS, k, &idx, NULL);
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

int sched__ledger_victim_take(MDB_txn *txn, const char *pod, int *victim, char **preemptor,
                              struct err *err)
{
    char *k = xasprintf("p:%s", pod), key[64];
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
    entry_key((uint64_t)json_integer_value(json_object_get(idx, "id")), key, sizeof(key));
    if (store_doc_get(txn, STORE_DB_PREEMPTIONS, key, &entry, NULL) == 0) {
        const char *pre = json_string_value(json_object_get(entry, "preemptor"));
        *preemptor = pre ? xstrdup(pre) : NULL;
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

int sched_preemptions(struct sched *s, const char *job, const char *victim, const char *since,
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
    MDB_txn *txn = NULL;
    int rc = store_txn_begin(s->st, STORE_READ, &txn, err);
    if (rc < 0)
        return rc;
    l.out = json_array();
    rc = store_doc_each(txn, STORE_DB_PREEMPTIONS, "e:", list_one, &l, err);
    store_txn_abort(&txn);
    if (rc < 0) {
        json_decref(l.out);
        return rc;
    }
    *out = l.out;
    return 0;
}

json_t *sched__ledger_preempted_by(struct sched *s, const char *job)
{
    MDB_txn *txn = NULL;
    json_t *doc = NULL;
    if (store_txn_begin(s->st, STORE_READ, &txn, NULL) < 0)
        return NULL;
    char *k = xasprintf("v:%s", job);
    if (store_doc_get(txn, STORE_DB_PREEMPTIONS, k, &doc, NULL) < 0)
        doc = NULL;
    store_txn_abort(&txn);
    free(k);
    return doc;
}
