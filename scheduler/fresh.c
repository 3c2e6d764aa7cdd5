/*
 * fresh.c - a view loaded afresh made to wait as the live one did: what a what-if
 * (whatif.c) and the replay check (audit_replay.c) do to the scheduler they open, so that their
 * cycles try what the live cycle would.
 */
#include "core.h"

void sched__park_tried(struct sched *w, int64_t now_ms)
{
    for (size_t ji = 0; ji < w->v->njobs; ji++) {
        const struct sv_job *j = &w->v->jobs[ji];
        /* tried and left waiting (its result from its why document, cycle.c); a gang that
         * timed out is tried again next cycle */
        if (j->result != SV_RESULT_FAILED && j->result != SV_RESULT_PLACED)
            continue;
        if (sched__job_has_work(w->v, j))
            sched__wait_park(w->v, (int)ji, sched__wait_kinds(w->v, (int)ji, 1), now_ms);
    }
}
