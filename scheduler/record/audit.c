/*
 * audit.c - parts of the audit records every writer shares, and the "discarded" record of a
 * statement rolled back.
 */
#include <stdlib.h>
#include <string.h>

#include "why.h"

json_t *sched__caller_json(const struct sched_caller *by)
{
    if (!by)
        return NULL;
    json_t *o = json_object();
    const char *names[] = {"name", "role", "address", "source"};
    const char *vals[] = {by->name, by->role, by->address, by->source};
    for (size_t i = 0; i < 4; i++)
        if (vals[i])
            json_object_set_new(o, names[i], json_string(vals[i]));
    return o;
}

int sched__audit_object(MDB_txn *txn, uint64_t cycle, enum store_audit_kind what,
                        enum model_kind kind, const char *key, json_t *obj, json_t *extra,
                        struct err *err)
{
    char *job = obj ? sched__object_job(kind, obj) : NULL;
    /* built member by member: json_pack parses its format for each of the records an
     * apply of 150,000 objects writes (canonical order is the store's, not this one) */
    json_t *rec = json_object(), *o = json_object();
    json_object_set_new(rec, "kind", json_string(store_audit_kind_name(what)));
    json_object_set_new(rec, "cycle", json_integer((json_int_t)cycle));
    json_object_set_new(o, "kind", json_string(model_kind_name(kind)));
    json_object_set_new(o, "name", json_string(key));
    json_object_set_new(rec, "object", o);
    if (job)
        json_object_set_new(rec, "job", json_string(job));
    if (extra)
        json_object_update(rec, extra);
    int rc = store_audit_append(txn, rec, NULL, err);
    json_decref(rec);
    free(job);
    return rc;
}

/* The open statement's pods (pods 1) or nodes, in order. New. */
static json_t *ops_field(const struct sched_cyc *c, int pods)
{
    json_t *a = json_array();
    for (size_t i = 0; i < c->nops; i++) {
        const struct sched_op *op = &c->ops[i];
        json_array_append_new(
            a, json_string(pods ? c->v->pods[op->pod].key : c->v->nodes[op->node].name));
    }
    return a;
}

int sched__audit_discarded(struct sched_cyc *c, const char *job, int code, const char *msg,
                           struct err *err)
{
    int rc = 0, ji = sched__view_job(c->v, job);
    char *sig = xasprintf("%s|%s", why_code_name(code), msg);
    struct why_job *w = ji >= 0 ? sched__why_job(c->why_mem, c->v, ji) : NULL;
    if (!w || !w->last_discard || strcmp(w->last_discard, sig)) {
        json_t *rec = json_pack("{s:s,s:s,s:I,s:s,s:s,s:o,s:o}", "kind",
                                store_audit_kind_name(STORE_AUDIT_DISCARDED), "job", job, "cycle",
                                (json_int_t)c->cycle, "reason", why_code_name(code), "message", msg,
                                "pods", ops_field(c, 1), "nodes", ops_field(c, 0));
        rc = store_audit_append(c->txn, rec, NULL, err);
        json_decref(rec);
    }
    if (w) {
        free(w->last_discard);
        w->last_discard = sig;
    } else {
        free(sig);
    }
    return rc;
}

void sched__audit_discard_forget(struct sched_cyc *c, int ji)
{
    struct why_job *w = sched__why_job(c->why_mem, c->v, ji);
    free(w->last_discard);
    w->last_discard = NULL;
}
