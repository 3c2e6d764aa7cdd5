/* read_make.c - the scheduler's read routes as queries (struct api_read): their answers
 * made from the scheduler's view, and copies the read cache keeps to make them again. */
#include <stdlib.h>

#include "alloc.h"
#include "cached_reads.h"
#include "lists.h"
#include "scheduler.h"

struct api_read *api__read_copy(const struct api_read *q)
{
    struct api_read *c = xmalloc(sizeof(*c));
    *c = *q;
    c->id = q->id ? xstrdup(q->id) : NULL;
    c->state = q->state ? xstrdup(q->state) : NULL;
    c->after = q->after ? xstrdup(q->after) : NULL;
    c->like = q->like ? xstrdup(q->like) : NULL;
    c->topo.like = c->like;
    return c;
}

void api__read_free(struct api_read *q)
{
    if (!q)
        return;
    free(q->id);
    free(q->state);
    free(q->after);
    free(q->like);
    free(q);
}

static int make_jobs(struct api *api, const struct api_read *q, json_t **out, struct err *err)
{
    json_t *jobs = NULL;
    int more = 0;
    int rc = sched_jobs_page(api->sched, q->state, q->after, q->limit, &jobs, &more, err);
    if (rc < 0)
        return rc;
    json_t *list = json_pack("{s:s, s:o}", "kind", "JobList", "items", jobs);
    if (q->paged) {
        struct api_page page = {.list = "Job", .limit = q->limit, .more = more};
        json_t *last = json_array_get(jobs, json_array_size(jobs) - 1);
        if (last)
            page.last = (char *)json_string_value(json_object_get(last, "id"));
        json_object_set_new(list, "metadata", api__page_meta(&page));
    }
    *out = list;
    return 0;
}

int api__read_make(struct api *api, const struct api_read *q, json_t **out, struct err *err)
{
    switch (q->kind) {
    case API_READ_JOBS:
        return make_jobs(api, q, out, err);
    case API_READ_JOB:
        return sched_job(api->sched, q->id, out, err);
    case API_READ_WHY:
        return sched_why(api->sched, q->id, out, err);
    case API_READ_TOPOLOGY:
        return sched_topology(api->sched, &q->topo, out, err);
    case API_READ_NODEMAP:
        return sched_node_map(api->sched, out, err);
    }
    return err_set(err, ERR_INTERNAL, "unknown read");
}

void api__read_make_many(struct api *api, size_t n, const struct api_read *const *q, json_t **out)
{
    const char **ids = xcalloc(n + 1, sizeof(*ids));
    size_t *at = xcalloc(n + 1, sizeof(*at)), m = 0;
    json_t **docs = xcalloc(n + 1, sizeof(*docs));
    for (size_t i = 0; i < n; i++) {
        struct err err = ERR_INIT;
        out[i] = NULL;
        if (q[i]->kind == API_READ_WHY) {
            ids[m] = q[i]->id;
            at[m++] = i;
        } else if (api__read_make(api, q[i], &out[i], &err) < 0) {
            out[i] = NULL;
        }
    }
    sched_whys(api->sched, m, ids, docs);
    for (size_t k = 0; k < m; k++)
        out[at[k]] = docs[k];
    free(ids);
    free(at);
    free(docs);
}
