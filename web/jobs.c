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

    if (api__query_str_or_reply(r, "state", &state) < 0 || api__page_or_reply(r, "Job", &page) < 0)
        goto out;
    if (state && sched_job_state_parse(state, &st, &err) < 0) {
        err_prefix(&err, "query parameter 'state'");
        api__reply_error(r, &err);
    } else if (sched_jobs_page(r->api->sched, state, page.after, page.limit, &jobs, &more, &err) <
               0) {
        api__reply_error(r, &err);
    } else {
        struct api_list out;
        size_t i;
        json_t *job;
        api__list_begin(&out, r, NULL, "JobList");
        json_array_foreach(jobs, i, job)
        {
            api__page_take(&page, json_string_value(json_object_get(job, "id")));
            if (api__list_item(&out, job) < 0)
                break;
        }
        page.more = more;
        api__list_end(&out, page.on ? api__page_meta(&page) : NULL);
        json_decref(jobs);
    }
out:
    api__page_release(&page);
    free(state);
}

static void reply_job(struct req *r,
                      int (*fn)(struct sched *, const char *, json_t **, struct err *))
{
    struct err err = ERR_INIT;
    char *id = api__ns_key(r);
    json_t *doc = NULL;

    if (fn(r->api->sched, id, &doc, &err) < 0)
        api__reply_error(r, &err);
    else
        api__reply_json(r, 200, doc);
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
