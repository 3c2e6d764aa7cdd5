/*
 * sched.c - open/close, rebuilding the view from the store, the view dumps, and
 * the audit helpers the writers share. The writers are in sched_apply.c and sched_delete.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "core.h"

/* ---- open / close / rebuild ---- */

int sched__rebuild(struct sched *s, struct err *err)
{
    MDB_txn *txn = NULL;
    struct sched_view *v = sched__view_new();
    uint64_t cycle = 0;
    int rc = store_txn_begin(s->st, STORE_READ, &txn, err);
    if (rc < 0)
        goto out;
    if ((rc = sched__view_load(v, txn, err)) < 0)
        goto out;
    if ((rc = store_meta_get_u64(txn, "cycle", &cycle, err)) < 0)
        goto out;
    sched__view_free(s->v);
    s->v = v;
    v = NULL;
    s->cl_epoch = 0; /* a new view: its epochs start again */
    s->cycle = cycle;
    s->retain_scan_ms = 0;
out:
    store_txn_abort(&txn);
    sched__view_free(v);
    return rc;
}

int sched_open(struct store *st, const struct sched_options *opts, struct sched **out,
               struct err *err)
{
    struct sched *s = xcalloc(1, sizeof(*s));
    s->st = st;
    if (opts)
        s->opts = *opts;
    if (s->opts.grace_ms <= 0)
        s->opts.grace_ms = 30000;
    if (s->opts.retention_ms <= 0)
        s->opts.retention_ms = SCHED_RETENTION_DEFAULT_MS;
    pthread_mutex_init(&s->mu, NULL);
    int rc = sched__rebuild(s, err);
    if (rc < 0) {
        sched_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

void sched_close(struct sched *s)
{
    if (!s)
        return;
    sched__view_free(s->v);
    free(s->cl_alloc);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

json_t *sched_view_dump(struct sched *s)
{
    pthread_mutex_lock(&s->mu);
    json_t *d = sched__view_dump(s->v);
    pthread_mutex_unlock(&s->mu);
    return d;
}

int sched_view_dump_store(struct sched *s, json_t **out, struct err *err)
{
    MDB_txn *txn = NULL;
    struct sched_view *v = sched__view_new();
    int rc = store_txn_begin(s->st, STORE_READ, &txn, err);
    if (rc == 0)
        rc = sched__view_load(v, txn, err);
    store_txn_abort(&txn);
    if (rc == 0)
        *out = sched__view_dump(v);
    sched__view_free(v);
    return rc;
}

/* ---- audit helpers ---- */

/* The job an object belongs to, for audit records; NULL for nodes/topology. New. */
char *sched__object_job(enum model_kind kind, json_t *obj)
{
    json_t *meta = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    if (kind == MODEL_PODGROUP)
        return xasprintf("%s/%s", ns ? ns : "default", name ? name : "");
    if (kind != MODEL_POD)
        return NULL;
    const char *g = model_pod_group_name(obj);
    return xasprintf("%s/%s", ns ? ns : "default", g ? g : (name ? name : ""));
}

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
