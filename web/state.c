/* state.c - GET /api/v1/state?at=|seq=: the cluster as it was at an audit record; and
 * GET /api/v1/jobs/{ns}/{name}/why?at=|seq=, the why as it was (jobs.c hands it here).
 * The answers are the scheduler's (sched_state_at, sched_why_at, history_api.c). */
#include <stdlib.h>

#include "clock.h"
#include "handlers.h"
#include "http.h"
#include "lists.h"
#include "scheduler.h"

/* ?at= and ?seq= into *at (strings new, released by at_release), or replies 400. */
static int at_or_reply(struct req *r, struct sched_at *at, char **a, char **s)
{
    *a = *s = NULL;
    if (api__query_str_or_reply(r, "at", a) < 0 || api__query_str_or_reply(r, "seq", s) < 0)
        return -1;
    *at = (struct sched_at){.at = *a, .seq = *s, .now_ms = clock_now_ms()};
    return 0;
}

void api__state_get(struct req *r)
{
    struct err err = ERR_INIT;
    struct sched_at at;
    char *a = NULL, *s = NULL;
    json_t *doc = NULL;

    if (at_or_reply(r, &at, &a, &s) == 0) {
        if (sched_state_at(r->api->sched, &at, &doc, &err) < 0)
            api__reply_error(r, &err);
        else
            api__reply_json(r, 200, doc);
    }
    free(a);
    free(s);
}

int api__why_at(struct req *r)
{
    struct err err = ERR_INIT;
    struct sched_at at;
    char *a = NULL, *s = NULL, *id = NULL;
    json_t *doc = NULL;

    if (at_or_reply(r, &at, &a, &s) < 0)
        goto out;
    if (!a && !s) {
        free(a);
        free(s);
        return 0;
    }
    id = api__ns_key(r);
    if (sched_why_at(r->api->sched, id, &at, &doc, &err) < 0)
        api__reply_error(r, &err);
    else
        api__reply_json(r, 200, doc);
out:
    free(id);
    free(a);
    free(s);
    return 1;
}
