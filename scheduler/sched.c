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

int sched_open(struct store *st, const struct sched_options *opts, struct sched **out,
               struct err *err)
{
    struct sched *s = xcalloc(1, sizeof(*s));
    s->st = st;
    if (opts)
        s->opts = *opts;
    s->opts.bind_scheduler = s->opts.bind_scheduler ? xstrdup(s->opts.bind_scheduler) : NULL;
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

struct started_ctx {
    struct sched *s;
    int64_t now_ms;
};

static int started_fn(MDB_txn *txn, void *ctx, struct err *err)
{
    struct started_ctx *c = ctx;
    json_t *rec = json_pack("{s:s,s:I,s:I}", "kind", store_audit_kind_name(STORE_AUDIT_STARTED),
                            "cycle", (json_int_t)c->s->cycle, "clockMs", (json_int_t)c->now_ms);
    int rc = store_audit_append(txn, rec, NULL, err);
    json_decref(rec);
    return rc;
}

int sched_started(struct sched *s, int64_t now_ms, struct err *err)
{
    struct started_ctx c = {s, now_ms};
    pthread_mutex_lock(&s->mu);
    int rc = store_write(s->st, started_fn, &c, err);
    pthread_mutex_unlock(&s->mu);
    return rc;
}

void sched_close(struct sched *s)
{
    if (!s)
        return;
    sched__view_free(s->v);
    free((char *)s->opts.bind_scheduler);
    sched__why_memory_free(s->why_mem);
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
