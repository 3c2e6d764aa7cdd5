/* queues.c - GET /api/v1/queues, GET and DELETE /api/v1/queues/{name}.
 *
 * A queue is answered with the scheduler's document (sched_queues in scheduler.h: weight,
 * parent, fair share as the last cycle computed it, allocation as it is now), not the
 * stored Queue object: the built-in "default" queue has no stored object, and every
 * number a client wants is the scheduler's. Queues are created and changed by applying
 * manifests (POST /api/v1/manifests); DELETE goes through sched_delete, which refuses a
 * queue that has jobs or child queues (409). */
#include "handlers.h"
#include "http.h"
#include "lists.h"
#include "model.h"
#include "scheduler.h"

void api__queues_list(struct req *r)
{
    struct err err = ERR_INIT;
    json_t *items = NULL;

    if (sched_queues(r->api->sched, &items, &err) < 0)
        api__reply_error(r, &err);
    else
        api__reply_json(r, 200, json_pack("{s:s, s:o}", "kind", "QueueList", "items", items));
}

void api__queue_get(struct req *r)
{
    struct err err = ERR_INIT;
    json_t *q = NULL;

    if (sched_queue(r->api->sched, r->params[0], &q, &err) < 0)
        api__reply_error(r, &err);
    else
        api__reply_json(r, 200, q);
}

void api__queue_delete(struct req *r)
{
    api__object_delete(r, MODEL_QUEUE, r->params[0]);
}
