/*
 * resv_record.c - the records of reservations (resv_record.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "clock.h"
#include "place_fit.h"
#include "resv_record.h"
#include "why_msg.h"

/* "14:02:10" of ms (UTC), or WHY_MSG_RESERVED_UNKNOWN's text when unknown. */
static void clock_text(int64_t ms, char *buf, size_t n)
{
    char ts[64];
    if (ms == INT64_MAX) {
        snprintf(buf, n, "%s", WHY_MSG_RESERVED_UNKNOWN);
        return;
    }
    clock_format_rfc3339(ms, ts, sizeof(ts));
    const char *t = strchr(ts, 'T');
    snprintf(buf, n, "%.8s", t ? t + 1 : ts);
}

static json_t *time_or_null(int64_t ms)
{
    char ts[64];
    if (ms == INT64_MAX)
        return json_null();
    clock_format_rfc3339(ms, ts, sizeof(ts));
    return json_string(ts);
}

json_t *sched__resv_json(const struct sched_view *v, const struct sv_resv *r, uint64_t cycle)
{
    json_t *nodes = json_array(), *waits = json_array();
    for (size_t k = 0; k < r->nnodes; k++)
        json_array_append_new(nodes, json_string(v->nodes[r->nodes[k]].name));
    for (size_t k = 0; k < r->nwaits; k++)
        json_array_append_new(waits, json_string(r->waits[k]));
    return json_pack("{s:s,s:i,s:o,s:o,s:o,s:o,s:I,s:o,s:s,s:I}", SV_RESV_M_JOB, r->job,
                     SV_RESV_M_PRIORITY, (int)r->prio, SV_RESV_M_NODES, nodes, SV_RESV_M_START,
                     time_or_null(r->start_ms), SV_RESV_M_START_MS,
                     r->start_ms == INT64_MAX ? json_null() : json_integer(r->start_ms),
                     SV_RESV_M_SINCE, time_or_null(r->since_ms), SV_RESV_M_SINCE_MS,
                     (json_int_t)r->since_ms, SV_RESV_M_WAITS, waits, SV_RESV_M_REASON,
                     r->strict ? "strict-fifo" : "max-wait", "cycle", (json_int_t)cycle);
}

int sched__record_reserved(struct sched_cyc *c, int i, int moved, struct err *err)
{
    const struct sv_resv *r = &c->v->resv[i];
    json_t *doc = sched__resv_json(c->v, r, c->cycle);
    int rc = store_doc_put(c->txn, STORE_DB_RESERVATIONS, r->job, doc, err);
    if (rc == 0) {
        json_t *rec =
            json_pack("{s:s,s:s,s:I,s:O,s:O,s:O,s:O,s:b}", "kind",
                      store_audit_kind_name(STORE_AUDIT_RESERVED), "job", r->job, "cycle",
                      (json_int_t)c->cycle, SV_RESV_M_NODES, json_object_get(doc, SV_RESV_M_NODES),
                      SV_RESV_M_START, json_object_get(doc, SV_RESV_M_START), SV_RESV_M_WAITS,
                      json_object_get(doc, SV_RESV_M_WAITS), SV_RESV_M_REASON,
                      json_object_get(doc, SV_RESV_M_REASON), "moved", moved);
        rc = sched__audit_append(c, rec, NULL, err);
    }
    json_decref(doc);
    return rc;
}

int sched__record_unreserved(struct sched_cyc *c, const char *job, const char *why, struct err *err)
{
    int rc = store_doc_delete(c->txn, STORE_DB_RESERVATIONS, job, err);
    if (rc == ERR_NOT_FOUND) {
        err_clear(err);
        rc = 0;
    }
    if (rc < 0)
        return rc;
    return sched__audit_append(c,
                               json_pack("{s:s,s:s,s:I,s:s}", "kind",
                                         store_audit_kind_name(STORE_AUDIT_UNRESERVED), "job", job,
                                         "cycle", (json_int_t)c->cycle, "reason", why),
                               NULL, err);
}

void sched__resv_blocker(const struct sched_view *v, const struct sv_resv *r,
                         struct sched_blockers *b)
{
    char start[128];
    clock_text(r->start_ms, start, sizeof(start));
    json_t *nodes = json_array(), *waits = json_array();
    for (size_t k = 0; k < r->nnodes; k++)
        json_array_append_new(nodes, json_string(v->nodes[r->nodes[k]].name));
    for (size_t k = 0; k < r->nwaits; k++)
        json_array_append_new(waits, json_string(r->waits[k]));
    sched__blocker_add(b, WHY_RESERVED,
                       json_pack("{s:o,s:o,s:o}", "nodes", nodes, "expectedStart",
                                 time_or_null(r->start_ms), "waitingFor", waits),
                       WHY_MSG_RESERVED, r->nwaits, r->nnodes, start);
}

void sched__resv_blocked_blocker(const struct sched_view *v, const struct sv_shape *sh,
                                 int64_t end_ms, struct sched_blockers *b)
{
    for (size_t i = 0; i < v->nresv; i++) {
        const struct sv_resv *r = &v->resv[i];
        size_t usable = 0;
        if (!r->job || !r->blocks)
            continue;
        for (size_t k = 0; k < r->nnodes; k++)
            usable += !sh || sched__fit_static(&v->nodes[r->nodes[k]], sh) == SCHED_FIT_OK;
        if (!usable)
            continue;
        char start[128], ends[128], when[64];
        clock_text(r->start_ms, start, sizeof(start));
        if (end_ms == INT64_MAX) {
            snprintf(ends, sizeof(ends), "%s", WHY_MSG_NO_LIMIT);
        } else {
            clock_text(end_ms, when, sizeof(when));
            snprintf(ends, sizeof(ends), WHY_MSG_ENDS_AT, when);
        }
        sched__blocker_add(b, WHY_RESERVED_FOR_OTHERS,
                           json_pack("{s:s,s:i,s:o,s:o}", "reservation", r->job, "nodes",
                                     (int)usable, "expectedStart", time_or_null(r->start_ms),
                                     "ends", time_or_null(end_ms)),
                           WHY_MSG_RESERVED_FOR_OTHERS, usable, r->job, start, ends);
        return;
    }
}
