/*
 * why_gone.c - a job's why document goes with the job's last object.
 *
 * A job is a PodGroup with its member pods, or a lone pod (view.c). Its why document (and
 * its share of a class, why_class.c) is dropped in the transaction that removes or moves
 * the job's last stored object: an API or mirror delete of a pod or a PodGroup
 * (sched_delete.c), a pod applied into another gang (sched_apply.c), a terminating pod
 * removed by the housekeeping (cycle_housekeeping.c). Whether anything of the job is left
 * is read from the store in that transaction, not from the view, which an apply changes
 * only after its commit. A preemption victim's document stays until its retention ends
 * (record/ledger.c drops it then).
 */
#include <string.h>

#include "view.h"
#include "why.h"

static int stop_at_first(void *ctx, const char *key)
{
    (void)key;
    *(int *)ctx = 1;
    return 1;
}

/* *left 1 when the store holds an object of job id: its PodGroup, a pod of its group, or
 * the lone pod of that key. */
static int job_stored(MDB_txn *txn, const char *id, int *left, struct err *err)
{
    json_t *obj = NULL;
    *left = 0;
    int rc = store_get(txn, MODEL_PODGROUP, id, &obj, err);
    if (rc == 0)
        *left = 1;
    else if (rc == ERR_NOT_FOUND)
        rc = (err_clear(err), store_pods_of_group(txn, id, stop_at_first, left, err));
    json_decref(obj);
    obj = NULL;
    if (rc < 0 || *left)
        return rc;
    rc = store_get(txn, MODEL_POD, id, &obj, err);
    if (rc == 0)
        *left = model_pod_group_name(obj) == NULL;
    else if (rc == ERR_NOT_FOUND)
        rc = (err_clear(err), 0);
    json_decref(obj);
    return rc;
}

int sched__why_job_gone(MDB_txn *txn, struct sched_cyc *c, struct sched_view *v, const char *job,
                        struct err *err)
{
    int left = 0;
    int rc = job_stored(txn, job, &left, err);
    if (rc < 0 || left)
        return rc;
    json_t *victim = sched__ledger_victim_get(txn, job);
    if (!victim)
        rc = sched__why_doc_drop(txn, c, v, job, err);
    if (rc == 0) /* a job of that name made later starves for nothing yet */
        rc = sched__ledger_starving_drop(txn, job, err);
    json_decref(victim);
    return rc;
}
