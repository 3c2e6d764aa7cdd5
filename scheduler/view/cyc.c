/*
 * cyc.c - the cycle's time and the open statement's undo log over the view (cyc.h).
 */
#include "clock.h"
#include "cyc.h"

const char *sched__cyc_ts(struct sched_cyc *c)
{
    if (!c->ts[0])
        clock_format_rfc3339(c->now_ms, c->ts, sizeof(c->ts));
    return c->ts;
}

void sched__stmt_alloc(struct sched_cyc *c, int pi, int ni)
{
    XGROW(c->ops, c->nops + 1, c->capops);
    c->ops[c->nops++] = (struct sched_op){pi, ni};
    sched__view_bind(c->v, pi, ni);
}

void sched__stmt_undo(struct sched_cyc *c)
{
    for (size_t i = c->nops; i-- > 0;)
        sched__view_unbind(c->v, c->ops[i].pod);
    c->nops = 0;
}
