/* cycles.c - POST /api/v1/cycles: run one scheduling cycle now and return its summary. */
#include "access.h"
#include "clock.h"
#include "handlers.h"
#include "http.h"
#include "scheduler.h"

void api__cycles_run(struct req *r)
{
    struct err err = ERR_INIT;
    json_t *summary = NULL;
    struct sched_caller by = api__caller(r);

    if (sched_cycle_by(r->api->sched, clock_now_ms(), &by, &summary, &err) < 0) {
        api__reply_error(r, &err);
        return;
    }
    api__reply_json(r, 200, summary ? summary : json_object());
}
