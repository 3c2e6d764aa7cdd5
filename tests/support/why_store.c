/*
 * why_store.c - the why DB checked against the view (why_store.h).
 */
#include "why_store.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "err.h"
#include "preempt.h"
#include "store.h"
#include "view.h"

#define CLASS_PREFIX "~class/"
#define COUNT_SUFFIX "/members"

struct why_scan {
    json_t *jobs;    /* job id -> its document */
    json_t *classes; /* class key -> its document */
    json_t *counts;  /* class key -> its stored count */
};

static int is_count_key(const char *key)
{
    size_t n = strlen(key), s = strlen(COUNT_SUFFIX);
    return n > s && !strcmp(key + n - s, COUNT_SUFFIX);
}

static int each_doc(void *ctx, const char *key, json_t *doc)
{
    struct why_scan *w = ctx;
    if (strncmp(key, CLASS_PREFIX, strlen(CLASS_PREFIX)) != 0) {
        json_object_set(w->jobs, key, doc);
    } else if (is_count_key(key)) {
        char *cls = strndup(key, strlen(key) - strlen(COUNT_SUFFIX));
        json_object_set(w->counts, cls, json_object_get(doc, "members"));
        free(cls);
    } else {
        json_object_set(w->classes, key, doc);
    }
    return 0;
}

static int fail(char *msg, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* The checks of why_store.h over the scanned documents; MDB txn for the ledger. */
static int check(struct sched *s, MDB_txn *txn, struct why_scan *w, char *msg, size_t n)
{
    struct sched_view *v = s->v;
    json_t *named = json_object(), *doc;
    const char *id;
    int rc = 0;
    json_object_foreach(w->jobs, id, doc)
    {
        json_t *victim = sched__ledger_victim_get(txn, id);
        int ji = sched__view_job(v, id);
        json_decref(victim);
        if (ji < 0 && !victim) {
            rc = fail(msg, n, "why document of '%s': no such job, nor a retained victim", id);
            goto out;
        }
        const char *cls = sched__why_class_of(doc);
        if (cls)
            json_object_set_new(named, cls,
                                json_integer(json_integer_value(json_object_get(named, cls)) + 1));
        const struct why_job *wj = ji >= 0 ? sched__why_job_peek(s->why_mem, v, ji) : NULL;
        if (wj && wj->loaded && strcmp(wj->cls ? wj->cls : "", cls ? cls : "")) {
            rc = fail(msg, n, "job '%s': the why memory names class '%s', its record '%s'", id,
                      wj->cls ? wj->cls : "(none)", cls ? cls : "(none)");
            goto out;
        }
    }
    json_t *cnt;
    json_object_foreach(named, id, cnt)
    {
        json_t *stored = json_object_get(w->counts, id);
        if (!json_object_get(w->classes, id))
            rc = fail(msg, n, "class '%s' of %lld records is missing", id,
                      (long long)json_integer_value(cnt));
        else if (json_integer_value(stored) != json_integer_value(cnt))
            rc = fail(msg, n, "class '%s': %lld records name it, its count says %lld", id,
                      (long long)json_integer_value(cnt), (long long)json_integer_value(stored));
        if (rc < 0)
            goto out;
    }
    json_object_foreach(w->classes, id, doc)
    {
        if (!json_object_get(named, id)) {
            rc = fail(msg, n, "class document '%s' is named by no record", id);
            goto out;
        }
    }
    json_object_foreach(w->counts, id, cnt)
    {
        if (!json_object_get(named, id)) {
            rc = fail(msg, n, "count of class '%s' (%lld) is left, no record names it", id,
                      (long long)json_integer_value(cnt));
            goto out;
        }
    }
out:
    json_decref(named);
    return rc;
}

int why_store_check(struct sched *s, struct store *st, char *msg, size_t n)
{
    struct why_scan w = {json_object(), json_object(), json_object()};
    struct err err = ERR_INIT;
    MDB_txn *txn = NULL;
    pthread_mutex_lock(&s->mu);
    int rc = store_txn_begin(st, STORE_READ, &txn, &err);
    if (rc == 0)
        rc = store_doc_each(txn, STORE_DB_WHY, "", each_doc, &w, &err);
    if (rc < 0)
        snprintf(msg, n, "%s", err.msg);
    else
        rc = check(s, txn, &w, msg, n);
    store_txn_abort(&txn);
    pthread_mutex_unlock(&s->mu);
    json_decref(w.jobs);
    json_decref(w.classes);
    json_decref(w.counts);
    return rc;
}

static int collect(void *ctx, const char *key, json_t *obj)
{
    json_object_set(ctx, key, obj);
    return 0;
}

json_t *why_store_all(struct store *st)
{
    MDB_txn *txn = NULL;
    json_t *all = json_object();
    struct err err = ERR_INIT;
    if (store_txn_begin(st, STORE_READ, &txn, &err) < 0 ||
        store_doc_each(txn, STORE_DB_WHY, "", collect, all, &err) < 0) {
        fprintf(stderr, "why_store_all: %s\n", err.msg);
        abort(); /* a test helper: the test fails */
    }
    store_txn_abort(&txn);
    return all;
}
