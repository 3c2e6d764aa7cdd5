/* jobs.c - GET /api/v1/jobs?state=, /api/v1/jobs/{ns}/{name} and .../why. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void api__jobs_list(struct req *r)
{
    struct err err = ERR_INIT;
    struct api_page page = {0};
    char *state = NULL;
    json_t *jobs = NULL;
    enum sched_job_state st;
    int more = 0;
    uint64_t txn = api__readcache_txn(r->api);

    if (api__readcache_reply(r, txn))
        return;
    if (api__query_str_or_reply(r, "state", &state) < 0 || api__page_or_reply(r, "Job", &page) < 0)
        goto out;
    if (state && sched_job_state_parse(state, &st, &err) < 0) {
        err_prefix(&err, "query parameter 'state'");
        api__reply_error(r, &err);
    } else if (sched_jobs_page(r->api->sched, state, page.after, page.limit, &jobs, &more, &err) <
               0) {
        api__reply_error(r, &err);
    } else {
        json_t *last = json_array_get(jobs, json_array_size(jobs) - 1);
        if (last)
            api__page_take(&page, json_string_value(json_object_get(last, "id")));
        page.more = more;
        json_t *list = json_pack("{s:s, s:o}", "kind", "JobList", "items", jobs);
        if (page.on)
            json_object_set_new(list, "metadata", api__page_meta(&page));
        api__readcache_put_reply(r, txn, list);
    }
out:
    api__page_release(&page);
    free(state);
}

static void reply_job(struct req *r,
                      int (*fn)(struct sched *, const char *, json_t **, struct err *))
{
    struct err err = ERR_INIT;
    json_t *doc = NULL;
    uint64_t txn = api__readcache_txn(r->api);

    if (api__readcache_reply(r, txn))
        return;
    char *id = api__ns_key(r);
    if (fn(r->api->sched, id, &doc, &err) < 0)
        api__reply_error(r, &err);
    else
        api__readcache_put_reply(r, txn, doc);
    free(id);
}

void api__job_get(struct req *r)
{
    reply_job(r, sched_job);
}

void api__job_why(struct req *r)
{
    reply_job(r, sched_why);
}
