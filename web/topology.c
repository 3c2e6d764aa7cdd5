/* topology.c - GET /api/v1/topology?pod_cpu=&pod_memory=&pod_gpu= | ?like=ns/job, &jobs=N:
 * the domain tree with capacity, usage, jobs (at most N per domain) and the largest gang of
 * a pod shape per domain. */
#include <stdlib.h>

#include "cached_reads.h"
#include "handlers.h"
#include "http.h"
#include "model.h"
#include "scheduler.h"

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

/* ?jobs=N: each domain lists at most N of its jobs; -1 after a 400. */
static int jobs_or_reply(struct req *r, struct sched_topo_query *q)
{
    uint64_t n = UINT64_MAX;
    if (api__query_u64_or_reply(r, "jobs", &n) < 0)
        return -1;
    if (n != UINT64_MAX) {
        q->jobs_capped = 1;
        q->jobs_max = (size_t)n;
    }
    return 0;
}

void api__topology_tree(struct req *r)
{
    struct api_read q = {.kind = API_READ_TOPOLOGY};

    if (quantity_or_reply(r, "pod_cpu", 1, &q.topo.cpu) < 0 ||
        quantity_or_reply(r, "pod_memory", 0, &q.topo.memory) < 0 ||
        quantity_or_reply(r, "pod_gpu", 0, &q.topo.gpu) < 0 ||
        api__query_str_or_reply(r, "like", &q.like) < 0 || jobs_or_reply(r, &q.topo) < 0)
        goto out;
    q.topo.like = q.like;
    api__read_reply(r, &q); /* reads.c */
out:
    free(q.like);
}
