/* preemptions.c - GET /api/v1/preemptions?job=&victim=&since=: the preemption ledger;
 * GET /api/v1/preemptions/{id}: one entry (the links of victims' whys). */
#include <string.h>
#include <stdlib.h>

#include "handlers.h"
#include "http.h"
#include "scheduler.h"

void api__preemptions_list(struct req *r)
{
    struct err err = ERR_INIT;
    char *job = NULL, *victim = NULL, *since = NULL;
    json_t *items = NULL;

    if (api__query_str_or_reply(r, "job", &job) < 0 ||
        api__query_str_or_reply(r, "victim", &victim) < 0 ||
        api__query_str_or_reply(r, "since", &since) < 0)
        goto out;
    if (sched_preemptions(r->api->sched, job, victim, since, &items, &err) < 0)
        api__reply_error(r, &err);
    else
        api__reply_json(r, 200, json_pack("{s:s,s:o}", "kind", "PreemptionList", "items", items));
out:
    free(job);
    free(victim);
    free(since);
}

void api__preemption_get(struct req *r)
{
    struct err err = ERR_INIT;
    json_t *entry = NULL;
    const char *id = r->params[0];
    size_t digits = strspn(id, "0123456789");
    /* an id past uint64 would wrap in the ledger's strtoull: refuse it as sent */
    if (digits == strlen(id) && digits > 0 &&
        (digits > 20 || (digits == 20 && strcmp(id, "18446744073709551615") > 0))) {
        err_setf(&err, ERR_INVALID, "id",
                 "preemption id '%.40s%s' is out of range (at most 18446744073709551615)", id,
                 strlen(id) > 40 ? "..." : "");
        api__reply_error(r, &err);
        return;
    }
    if (sched_preemption(r->api->sched, r->params[0], &entry, &err) < 0)
        api__reply_error(r, &err);
    else
        api__reply_json(r, 200, entry);
}
