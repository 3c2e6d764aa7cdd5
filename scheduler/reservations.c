/*
 * reservations.c - the reservations' entry point (scheduler.h): the stored reservations,
 * read in their own transaction (record/resv_record.c writes them in the cycle's).
 */
#include "core.h"

static int add(void *ctx, const char *key, json_t *doc)
{
    (void)key;
    json_array_append(ctx, doc);
    return 0;
}

int sched_reservations(struct sched *s, json_t **out, struct err *err)
{
    MDB_txn *txn = NULL;
    json_t *list = json_array();
    int rc = store_txn_begin(s->st, STORE_READ, &txn, err);
    if (rc == 0)
        rc = store_doc_each(txn, STORE_DB_RESERVATIONS, NULL, add, list, err);
    store_txn_abort(&txn);
    if (rc < 0) {
        json_decref(list);
        return rc;
    }
    *out = list;
    return 0;
}
