/*
 * preemptions.c - the preemption ledger's entry points (scheduler.h): each read in its own
 * transaction; the ledger itself is record/ledger.c.
 */
#include "core.h"

int sched_preemptions(struct sched *s, const char *job, const char *victim, const char *since,
                      json_t **out, struct err *err)
{
    MDB_txn *txn = NULL;
    int rc = store_txn_begin(s->st, STORE_READ, &txn, err);
    if (rc < 0)
        return rc;
    rc = sched__ledger_list(txn, job, victim, since, out, err);
    store_txn_abort(&txn);
    return rc;
}

int sched_preemption(struct sched *s, const char *id, json_t **out, struct err *err)
{
    MDB_txn *txn = NULL;
    int rc = store_txn_begin(s->st, STORE_READ, &txn, err);
    if (rc < 0)
        return rc;
    rc = sched__ledger_entry(txn, id, out, err);
    store_txn_abort(&txn);
    return rc;
}

json_t *sched__ledger_preempted_by(struct sched *s, const char *job)
{
    MDB_txn *txn = NULL;
    if (store_txn_begin(s->st, STORE_READ, &txn, NULL) < 0)
        return NULL;
    json_t *doc = sched__ledger_victim_get(txn, job);
    store_txn_abort(&txn);
    return doc;
}
