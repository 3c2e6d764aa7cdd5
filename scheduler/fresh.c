/*
 * fresh.c - a view loaded afresh made to wait as the live one did: what a what-if
 * (whatif.c) and the replay check (audit_replay.c) do to the scheduler they open, so that their
 * cycles try what the live cycle would.
 */
#include "core.h"

void sched__park_tried(struct sched *w, int64_t now_ms)
{
    MDB_txn *txn = NULL;
    if (store_txn_begin(w->st, STORE_READ, &txn, NULL) < 0)
        return;
    for (size_t ji = 0; ji < w->v->njobs; ji++) {
        const struct sv_job *j = &w->v->jobs[ji];
        if (!j->alive || !sched__job_has_work(w->v, j) ||
            !store_doc_exists(txn, STORE_DB_WHY, j->id))
            continue;
        w->v->jobs[ji].result = SV_RESULT_FAILED; /* tried, left unplaced: its state as live */
        sched__wait_park(w->v, (int)ji, sched__wait_kinds(w->v, (int)ji, 1), now_ms);
    }
    store_txn_abort(&txn);
}
