/*
 * ledger_room.c - whose room a preemption took (ledger.c's entries and victim records).
 *
 * A preemptor may fit on room that earlier preemptions are still freeing: its plan then
 * evicts nothing (or less) and waits for those victims ("awaited", plan.h). So that the
 * ledger tells the whole story, both sides are written in the cycle's transaction:
 *   - the new entry gets "roomFrom": [{"ledger", "preemptor", "victims": [jobs], "pods"}],
 *     one item per earlier entry whose victims' room it takes;
 *   - each such earlier entry gets "roomUsedBy": [{"ledger", "preemptor", "pods"}];
 *   - each victim job's record (v:<job>) gets "roomTakenBy": [{"preemptor", "ledger",
 *     "cycle", "ts", "pods"}], which its why document shows next to "preemptedBy".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "view.h"
#include "why.h"

/* The ledger id of the entry that evicted pod (its p:<pod> index), 0 when none. */
static uint64_t evicted_by(MDB_txn *txn, const char *pod)
{
    json_t *idx = NULL;
    char *k = xasprintf("p:%s", pod);
    uint64_t id = 0;
    if (store_doc_get(txn, STORE_DB_PREEMPTIONS, k, &idx, NULL) == 0)
        id = (uint64_t)json_integer_value(json_object_get(idx, "id"));
    json_decref(idx);
    free(k);
    return id;
}

static void add_unique(json_t *arr, const char *s)
{
    size_t i;
    json_t *x;
    json_array_foreach(arr, i, x) if (!strcmp(json_string_value(x), s)) return;
    json_array_append_new(arr, json_string(s));
}

json_t *sched__ledger_room_from(struct sched_cyc *c, const struct preempt_plan *p)
{
    const struct sched_view *v = c->v;
    json_t *out = json_array(), *by_id = json_object();
    for (size_t i = 0; i < p->nawaited; i++) {
        const struct sv_pod *pod = &v->pods[p->awaited[i]];
        uint64_t id = evicted_by(c->txn, pod->key);
        if (!id)
            continue;
        char ids[32];
        snprintf(ids, sizeof(ids), "%llu", (unsigned long long)id);
        json_t *item = json_object_get(by_id, ids);
        if (!item) {
            char key[64];
            json_t *entry = NULL;
            snprintf(key, sizeof(key), "e:%016llu", (unsigned long long)id);
            store_doc_get(c->txn, STORE_DB_PREEMPTIONS, key, &entry, NULL);
            const char *pre = json_string_value(json_object_get(entry, "preemptor"));
            item = json_pack("{s:I,s:s,s:[],s:[]}", "ledger", (json_int_t)id, "preemptor",
                             pre ? pre : "?", "victims", "pods");
            json_decref(entry);
            json_object_set_new(by_id, ids, item);
            json_array_append(out, item);
        }
        if (pod->job >= 0)
            add_unique(json_object_get(item, "victims"), v->jobs[pod->job].id);
        json_array_append_new(json_object_get(item, "pods"), json_string(pod->key));
    }
    json_decref(by_id);
    return out;
}

/* Appends item (borrowed) to doc[member] (created), and stores doc under key. */
static int append_put(MDB_txn *txn, const char *key, json_t *doc, const char *member, json_t *item,
                      struct err *err)
{
    json_t *arr = json_object_get(doc, member);
    if (!json_is_array(arr))
        json_object_set_new(doc, member, arr = json_array());
    json_array_append(arr, item);
    return store_doc_put(txn, STORE_DB_PREEMPTIONS, key, doc, err);
}

int sched__ledger_room_record(struct sched_cyc *c, const char *preemptor, uint64_t id,
                              json_t *room_from, struct err *err)
{
    size_t i;
    json_t *src;
    int rc = 0;
    json_array_foreach(room_from, i, src)
    {
        char key[64];
        json_t *entry = NULL, *pods = json_object_get(src, "pods");
        uint64_t from = (uint64_t)json_integer_value(json_object_get(src, "ledger"));
        snprintf(key, sizeof(key), "e:%016llu", (unsigned long long)from);
        if (store_doc_get(c->txn, STORE_DB_PREEMPTIONS, key, &entry, NULL) == 0) {
            json_t *used = json_pack("{s:I,s:s,s:O}", "ledger", (json_int_t)id, "preemptor",
                                     preemptor, "pods", pods);
            rc = append_put(c->txn, key, entry, "roomUsedBy", used, err);
            json_decref(used);
        }
        json_decref(entry);
        size_t k;
        json_t *job;
        json_array_foreach(json_object_get(src, "victims"), k, job)
        {
            if (rc < 0)
                break;
            /* the pods of this victim job among the awaited ones */
            json_t *mine = json_array(), *pk;
            size_t m;
            const char *jid = json_string_value(job);
            int jpi;
            json_array_foreach(pods, m, pk)
            {
                jpi = sched__view_pod(c->v, json_string_value(pk));
                if (jpi >= 0 && c->v->pods[jpi].job >= 0 &&
                    !strcmp(c->v->jobs[c->v->pods[jpi].job].id, jid))
                    json_array_append(mine, pk);
            }
            json_t *rec = sched__ledger_victim_get(c->txn, jid);
            if (rec) {
                char *vk = xasprintf("v:%s", jid);
                json_t *took = json_pack("{s:s,s:I,s:I,s:s,s:o}", "preemptor", preemptor, "ledger",
                                         (json_int_t)id, "cycle", (json_int_t)c->cycle, "ts",
                                         sched__cyc_ts(c), "pods", mine);
                mine = NULL;
                rc = append_put(c->txn, vk, rec, "roomTakenBy", took, err);
                json_decref(took);
                free(vk);
            }
            json_decref(mine);
            json_decref(rec);
        }
        if (rc < 0)
            break;
    }
    return rc;
}
