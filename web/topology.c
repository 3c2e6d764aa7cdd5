/* topology.c - GET /api/v1/topology?pod_cpu=&pod_memory=&pod_gpu= | ?like=ns/job: the domain
 * tree with capacity, usage, jobs and the largest gang of a pod shape per domain. */
#include <stdlib.h>

#include "internal.h"

/* Parses quantity parameter name into *out (unchanged when absent); -1 after a 400. */
static int quantity_or_reply(struct req *r, const char *name, int milli, int64_t *out)
{
    char *s = NULL;
    struct err err = ERR_INIT;
    int rc = api__query_str_or_reply(r, name, &s);
    if (rc < 0 || !s)
        return rc < 0 ? -1 : 0;
    if (model_quantity_parse(s, milli, out, &err) < 0 || *out < 0) {
        err_setf(&err, ERR_INVALID, name, "query parameter '%s': invalid quantity '%s'", name, s);
        api__reply_error(r, &err);
        rc = -1;
    }
    free(s);
    return rc;
}

void api__topology_tree(struct req *r)
{
    struct sched_topo_query q = {0};
    struct err err = ERR_INIT;
    char *like = NULL;
    json_t *tree = NULL;
    uint64_t txn = api__readcache_txn(r->api);

    if (api__readcache_reply(r, txn))
        return;
    if (quantity_or_reply(r, "pod_cpu", 1, &q.cpu) < 0 ||
        quantity_or_reply(r, "pod_memory", 0, &q.memory) < 0 ||
        quantity_or_reply(r, "pod_gpu", 0, &q.gpu) < 0 ||
        api__query_str_or_reply(r, "like", &like) < 0)
        goto out;
    q.like = like;
    if (sched_topology(r->api->sched, &q, &tree, &err) < 0)
        api__reply_error(r, &err);
    else
        api__readcache_put_reply(r, txn, tree);
out:
    free(like);
}
