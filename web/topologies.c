/* topologies.c - GET /api/v1/clusternetworktopologies[/{name}] and DELETE by name. */
#include "handlers.h"
#include "http.h"
#include "lists.h"
#include "model.h"

void api__topologies_list(struct req *r)
{
    api__object_list(r, MODEL_TOPOLOGY, NULL, NULL, NULL);
}

void api__topology_get(struct req *r)
{
    json_t *obj = api__object_or_reply(r, MODEL_TOPOLOGY, r->params[0]);

    if (obj)
        api__reply_json(r, 200, obj);
}

void api__topology_delete(struct req *r)
{
    api__object_delete(r, MODEL_TOPOLOGY, r->params[0]);
}
