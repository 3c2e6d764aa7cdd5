/* jobs.c - GET /api/v1/jobs?state=, /api/v1/jobs/{ns}/{name} and .../why. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void api__jobs_list(struct req *r)
{
    struct err err = ERR_INIT;
    char *state = NULL;
    json_t *jobs = NULL;
    enum sched_job_state st;

    if (api__query_str_or_reply(r, "state", &state) < 0)
        return;
    if (state && sched_job_state_parse(state, &st, &err) < 0) {
        err_prefix(&err, "query parameter 'state'");
        api__reply_error(r, &err);
    } else if (sched_jobs(r->api->sched, state, &jobs, &err) < 0) {
        api__reply_error(r, &err);
    } else {
        api__reply_json(r, 200, json_pack("{s:s, s:o}", "kind", "JobList", "items", jobs));
    }
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
