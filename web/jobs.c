/* jobs.c - GET /api/v1/jobs?state=, /api/v1/jobs/{ns}/{name} and .../why: their parameters;
 * the answers are made and served by reads.c. GET /api/v1/jobstates: the states a job can
 * be in, from the scheduler's one table (SCHED_JOB_STATE_MAP). */
#include <stdlib.h>
#include <string.h>

#include "cached_reads.h"
#include "handlers.h"
#include "http.h"
#include "lists.h"
#include "scheduler.h"

void api__jobs_list(struct req *r)
{
    struct err err = ERR_INIT;
    struct api_page page = {0};
    struct api_read q = {.kind = API_READ_JOBS};
    enum sched_job_state st;

    if (api__query_str_or_reply(r, "state", &q.state) < 0 ||
        api__page_or_reply(r, "Job", &page) < 0)
        goto out;
    if (q.state && sched_job_state_parse(q.state, &st, &err) < 0) {
        err_prefix(&err, "query parameter 'state'");
        api__reply_error(r, &err);
        goto out;
    }
    q.after = page.after;
    q.limit = page.limit;
    q.paged = page.on;
    api__read_reply(r, &q);
    q.after = NULL; /* the page's */
out:
    api__page_release(&page);
    free(q.state);
}

static void reply_job(struct req *r, enum api_read_kind kind)
{
    struct api_read q = {.kind = kind, .id = api__ns_key(r)};
    api__read_reply(r, &q);
    free(q.id);
}

void api__job_get(struct req *r)
{
    reply_job(r, API_READ_JOB);
}

void api__job_why(struct req *r)
{
    if (api__why_at(r))
        return;
    reply_job(r, API_READ_WHY);
}

void api__job_states(struct req *r)
{
    json_t *items = json_array();

    for (int i = 0; i < SCHED_JOB_STATE_COUNT; i++)
        json_array_append_new(
            items, json_pack("{s:s}", "name", sched_job_state_name((enum sched_job_state)i)));
    api__reply_json(r, 200, json_pack("{s:s, s:o}", "kind", "JobStateList", "items", items));
}
