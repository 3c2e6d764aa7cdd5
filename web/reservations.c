/* reservations.c - GET /api/v1/reservations: the reservations of starving jobs
 * (docs/reservations.md). */
#include "handlers.h"
#include "http.h"
#include "scheduler.h"

void api__reservations_list(struct req *r)
{
    struct err err = ERR_INIT;
    json_t *items = NULL;
    if (sched_reservations(r->api->sched, &items, &err) < 0)
        api__reply_error(r, &err);
    else
        api__reply_json(r, 200, json_pack("{s:s,s:o}", "kind", "ReservationList", "items", items));
}
