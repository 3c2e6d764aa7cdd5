/*
 * audit.c - parts of the audit records every writer shares.
 */
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
