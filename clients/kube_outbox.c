/*
 * kube_outbox.c - the write-back thread: the audit log is the outbox.
 *
 * The thread reads audit records after the ones it has read (in memory), each through
 * sched_outbox_decode (scheduler/record/outbox.h: the typed contract with the scheduler's
 * writers), and turns each pod of a "placed", "nominated", "preempted", "evicted" or
 * "deadline-exceeded" record into an item that kube_bind.c tries once per pass. A pod whose call
 * fails (transport error, 5xx) is retried with capped exponential backoff and jitter while every
 * other pod goes on; the records of that pod wait behind it, so each pod's decisions reach the API
 * server in order. A pod failing for writeback_giveup_ms is given up: a "writeback-abandoned"
 * record, a history entry in its job's why
 * ("WritebackAbandoned"), the counter writebackAbandoned, and for a binding the
 * store's pod loses its node so the next cycle places it again.
 *
 * Crash safety: STORE_DB_MIRROR "writeback" is {"ackSeq": n, "done": {"seq": [pod,
 * ...]}}: every record up to ackSeq is finished, and of the records after it the
 * listed pods are (an empty list: a record whose Events were written). Outcome
 * records and that document are committed in one transaction, so after a restart
 * nothing committed is redone and nothing else is lost; a call made but not yet
 * committed is redone, which the API server answers as done (409 same node, 404).
 *
 * With leader election the thread works only while this replica leads, and a new term
 * starts it over after the last audit record (new_term).
 *
 * Besides, records tell which PodGroups to bring up to date (kube_pgstatus.c) and
 * which Events to write: FailedScheduling / GangUnschedulable ("unschedulable"),
 * GangScheduled (a "placed" record whose pods were all bound).
 *
 * Calls for different pods go out in parallel, up to WORKERS at once, each worker with
 * its own connection (kube-scheduler binds each pod in its own goroutine): a pass takes
 * the first unfinished item of every pod whose turn it is, makes those calls, then settles
 * their outcomes one by one in record order on this thread, and goes round again while a
 * call finished (a pod's next item may now be due).
 *
 * Layering: this file is the top of write-back. It drives kube_bind.c, kube_events.c and
 * kube_pgstatus.c, which share kube_call.c below them and never call back here.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "clock.h"
#include "err.h"
#include "kube_writeback.h"
#include "log.h"
#include "outbox.h"
#include "scheduler.h"
#include "store.h"

#define MAX_ITEMS 4096 /* pods in flight: scanning pauses beyond */
#define SCAN_BATCH 256
#define WORKERS 16 /* write-back calls in flight at once */

struct item {
    const struct sched_outbox_pod *p; /* borrowed from its record */
    int done, ok;
    int64_t first_fail, next_ms, backoff;
    uint64_t tried; /* the pass that last tried it */
};

struct orec {
    uint64_t seq;
    struct sched_outbox_rec rec;
    struct item *items;
    size_t nitems, pending;
};

struct outbox {
    struct kube *k;
    struct kube_http *h;
    struct kube_http *hw[WORKERS]; /* the workers' connections, made when first needed */
    uint64_t passes;
    struct orec *recs;
    size_t nrecs, caprecs;
    size_t inflight; /* items not done */
    uint64_t ack, cursor, persisted;
    json_t *done;     /* persisted: {"seq": [pods]} of records after ack */
    json_t *outcomes; /* records to append at the next commit */
    json_t *dirty;    /* PodGroup keys to bring up to date: {key: true} */
    json_t *written;  /* last status written per PodGroup */
    int changed;      /* something to commit */
};

static void set_ack_counter(struct kube *k, uint64_t ack)
{
    pthread_mutex_lock(&k->mu);
    k->c.ack_seq = ack;
    pthread_mutex_unlock(&k->mu);
}

static void load(struct outbox *o)
{
    MDB_txn *txn = NULL;
    json_t *doc = NULL;
    o->done = NULL;
    if (store_txn_begin(o->k->store, STORE_READ, &txn, NULL) == 0) {
        if (store_doc_get(txn, STORE_DB_MIRROR, "writeback", &doc, NULL) == 0) {
            o->ack = (uint64_t)json_integer_value(json_object_get(doc, "ackSeq"));
            json_t *d = json_object_get(doc, "done");
            o->done = json_is_object(d) ? json_incref(d) : NULL;
        } else { /* first start in bind mode: decisions from before are not ours to replay,
                  * those after kube_start are, even when this thread starts later */
            o->ack = o->k->start_seq;
        }
    }
    store_txn_abort(&txn);
    json_decref(doc);
    if (!o->done)
        o->done = json_object();
    o->cursor = o->persisted = o->ack;
}

static json_t *done_list(struct outbox *o, uint64_t seq, int create)
{
    char key[32];
    snprintf(key, sizeof(key), "%llu", (unsigned long long)seq);
    json_t *l = json_object_get(o->done, key);
    if (!l && create) {
        l = json_array();
        json_object_set_new(o->done, key, l);
    }
    return l;
}

static int listed(json_t *list, const char *pod)
{
    size_t i;
    json_t *v;
    json_array_foreach(list, i, v) if (!strcmp(json_string_value(v), pod)) return 1;
    return 0;
}

static void mark_dirty(struct outbox *o, const struct sched_outbox_rec *rec)
{
    if (rec->job)
        json_object_set_new(o->dirty, rec->job, json_true());
    if (rec->preemptor)
        json_object_set_new(o->dirty, rec->preemptor, json_true());
}

/* Keeps a record write-back reads (sched_outbox_decode's kinds): its Events, its
 * PodGroups to bring up to date, and an item for each pod it calls the API server for.
 * Takes ownership of *rec. */
static void add_record(struct outbox *o, uint64_t seq, struct sched_outbox_rec *rec)
{
    json_t *done = done_list(o, seq, 0);
    size_t n = 0;
    mark_dirty(o, rec);
    if (rec->kind == STORE_AUDIT_UNSCHEDULABLE && !done) { /* once, also across a restart */
        kube__events_unschedulable(o->k, o->h, seq, rec);
        done_list(o, seq, 1);
        o->changed = 1;
    }
    char *acted = xcalloc(rec->npods + 1, 1);
    for (size_t i = 0; i < rec->npods; i++)
        n += acted[i] = (char)kube__pod_acted(o->k, rec, i);
    if (n == 0) {
        free(acted);
        sched_outbox_rec_release(rec);
        return;
    }
    XGROW(o->recs, o->nrecs + 1, o->caprecs);
    struct orec *r = &o->recs[o->nrecs++];
    memset(r, 0, sizeof(*r));
    r->seq = seq;
    r->rec = *rec;
    r->items = xcalloc(n, sizeof(struct item));
    for (size_t i = 0; i < r->rec.npods; i++) {
        if (!acted[i])
            continue;
        struct item *it = &r->items[r->nitems++];
        it->p = &r->rec.pods[i];
        it->backoff = o->k->opts.backoff_min_ms;
        if (done && listed(done, it->p->pod)) {
            it->done = 1; /* committed before a restart */
            continue;
        }
        r->pending++;
        o->inflight++;
    }
    free(acted);
}

struct scan {
    struct outbox *o;
    size_t n;
};

static int scan_fn(void *ctx, uint64_t seq, const char *json, size_t len)
{
    struct scan *s = ctx;
    struct sched_outbox_rec r;
    struct err err = ERR_INIT;
    json_t *doc = json_loadb(json, len, 0, NULL);
    s->o->cursor = seq;
    int rc = sched_outbox_decode(doc, &r, &err);
    if (rc == 1) {
        add_record(s->o, seq, &r); /* takes r */
        s->n++;
    } else if (rc < 0) { /* malformed: nothing write-back could act on */
        log_warn("kube: write-back skips audit record %llu: %s", (unsigned long long)seq, err.msg);
        sched_outbox_rec_release(&r);
    }
    json_decref(doc);
    return s->n >= SCAN_BATCH || s->o->inflight >= MAX_ITEMS ? 1 : 0;
}

static size_t scan(struct outbox *o)
{
    struct scan s = {o, 0};
    MDB_txn *txn = NULL;
    uint64_t before = o->cursor;
    if (o->inflight >= MAX_ITEMS)
        return 0;
    if (store_txn_begin(o->k->store, STORE_READ, &txn, NULL) == 0)
        store_audit_scan(txn, o->cursor + 1, 0, scan_fn, &s, NULL);
    store_txn_abort(&txn);
    return o->cursor > before;
}

static void give_up(struct outbox *o, struct orec *r, struct item *it, const char *why)
{
    struct kube *k = o->k;
    struct err err = ERR_INIT;
    int64_t secs = (clock_mono_ms() - it->first_fail) / 1000;
    const char *job = r->rec.job, *pod = it->p->pod;
    char *reason = xasprintf("write-back of '%s' given up after %llds of failures: %s",
                             store_audit_kind_name(r->rec.kind), (long long)secs, why);
    json_t *rec = json_pack("{s:s,s:s?,s:[s],s:s,s:{s:I,s:s}}", "kind",
                            store_audit_kind_name(STORE_AUDIT_WRITEBACK_ABANDONED), "job", job,
                            "pods", pod, "reason", reason, "details", "ackOf", (json_int_t)r->seq,
                            "of", store_audit_kind_name(r->rec.kind));
    /* the node of a binding or nomination; an eviction's record names none */
    if (it->p->node && (r->rec.kind == STORE_AUDIT_PLACED || r->rec.kind == STORE_AUDIT_NOMINATED))
        json_object_set_new(rec, "nodes", json_pack("[s]", it->p->node));
    json_array_append_new(o->outcomes, rec);
    log_warn("kube: %s (pod '%s')", reason, pod);
    kube__count(k, &k->c.writeback_abandoned);
    /* the store claims a binding the API server never got: place the pod again */
    if (r->rec.kind == STORE_AUDIT_PLACED && kube__unbind_local(k, pod, &err) < 0)
        log_warn("kube: pod '%s' after an abandoned binding: %s", pod, err.msg);
    if (job) {
        json_t *entry = json_pack("{s:s,s:s,s:s,s:I}", "code", "WritebackAbandoned", "pod", pod,
                                  "message", reason, "auditSeq", (json_int_t)r->seq);
        err_clear(&err);
        if (sched_why_note(k->sched, job, entry, clock_now_ms(), &err) < 0 &&
            err.code != ERR_NOT_FOUND)
            log_warn("kube: why of job '%s': %s", job, err.msg);
        json_decref(entry);
    }
    free(reason);
}

static void finish(struct outbox *o, struct orec *r, struct item *it, int ok)
{
    it->done = 1;
    it->ok = ok;
    r->pending--;
    o->inflight--;
    json_array_append_new(done_list(o, r->seq, 1), json_string(it->p->pod));
    o->changed = 1;
    if (r->pending == 0) {
        int all = 1;
        for (size_t i = 0; i < r->nitems; i++)
            all = all && r->items[i].ok;
        if (all && r->rec.kind == STORE_AUDIT_PLACED)
            kube__event_gang_scheduled(o->k, o->h, r->seq, &r->rec);
    }
}

/* One call of a pass: made on a worker, settled on the write-back thread. */
struct call {
    struct orec *r;
    struct item *it;
    json_t *outcomes; /* what kube__bind_pod added */
    struct err err;
    int rc;
};

struct crew {
    struct outbox *o;
    struct call *calls;
    size_t n;
    atomic_size_t next; /* the next call to take */
};

struct worker {
    struct crew *c;
    struct kube_http *h;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct crew *c = w->c;
    struct kube *k = c->o->k;
    size_t i;
    while ((i = atomic_fetch_add(&c->next, 1)) < c->n && !k->stop) {
        struct call *x = &c->calls[i];
        err_clear(&x->err);
        x->rc = kube__bind_pod(k, w->h, x->r->seq, &x->r->rec, x->it->p, x->outcomes, &x->err);
    }
    return NULL;
}

/* Makes the calls, up to WORKERS at once (this thread is one of them). A call not made
 * (stopping, or no connection for a worker) keeps its rc of ERR_UNAVAILABLE. */
static void make_calls(struct outbox *o, struct call *calls, size_t n)
{
    struct crew c = {.o = o, .calls = calls, .n = n};
    struct worker w[WORKERS];
    pthread_t tid[WORKERS];
    int started[WORKERS] = {0};
    size_t nw = n < WORKERS ? n : WORKERS;

    atomic_init(&c.next, 0);
    for (size_t i = 1; i < nw; i++) {
        if (!o->hw[i])
            o->hw[i] = kube__http_new(o->k->conn, &o->k->stop);
        w[i] = (struct worker){&c, o->hw[i]};
        started[i] = o->hw[i] && pthread_create(&tid[i], NULL, worker_main, &w[i]) == 0;
    }
    w[0] = (struct worker){&c, o->h};
    worker_main(&w[0]);
    for (size_t i = 1; i < nw; i++)
        if (started[i])
            pthread_join(tid[i], NULL);
}

/* The outcome of a call: finished, or retried later with backoff, or given up. */
static void settle(struct outbox *o, struct call *x, int64_t now)
{
    struct kube *k = o->k;
    struct orec *r = x->r;
    struct item *it = x->it;
    if (x->rc == 0) {
        int ok = 0;
        size_t i;
        json_t *e;
        json_array_foreach(x->outcomes, i, e)
        {
            ok = ok || !strcmp(json_string_value(json_object_get(e, "kind")),
                               store_audit_kind_name(STORE_AUDIT_BOUND));
            json_array_append(o->outcomes, e);
        }
        finish(o, r, it, ok);
        return;
    }
    /* a half-done attempt is redone whole: its outcomes are dropped */
    if (k->stop)
        return;
    if (x->err.code == ERR_UNAVAILABLE) { /* not ours to write now: no give-up clock */
        it->next_ms = now + k->opts.backoff_min_ms;
        return;
    }
    if (!it->first_fail) {
        it->first_fail = now;
        log_warn("kube: write-back of pod '%s' (audit record %llu): %s; retrying", it->p->pod,
                 (unsigned long long)r->seq, x->err.msg);
    }
    if (now - it->first_fail >= k->opts.writeback_giveup_ms) {
        give_up(o, r, it, x->err.msg);
        finish(o, r, it, 0);
        return;
    }
    it->next_ms = now + it->backoff / 2 + random() % (it->backoff / 2 + 1);
    it->backoff =
        it->backoff * 2 > k->opts.backoff_max_ms ? k->opts.backoff_max_ms : it->backoff * 2;
}

/* The calls due now: the first unfinished item of each pod (a pod's later items wait
 * behind it), not yet tried in this pass, whose retry time has come. *next: the earliest
 * retry time of the items left waiting (0: none). */
static size_t due(struct outbox *o, int64_t now, struct call **calls, int64_t *next)
{
    json_t *blocked = json_object();
    size_t n = 0, cap = 0;
    *next = 0;
    for (size_t i = 0; i < o->nrecs; i++) {
        struct orec *r = &o->recs[i];
        for (size_t j = 0; j < r->nitems; j++) {
            struct item *it = &r->items[j];
            if (it->done || json_object_get(blocked, it->p->pod))
                continue;
            json_object_set_new(blocked, it->p->pod, json_true());
            if (it->next_ms <= now && it->tried != o->passes) {
                it->tried = o->passes;
                XGROW(*calls, n + 1, cap);
                (*calls)[n++] = (struct call){.r = r, .it = it, .rc = ERR_UNAVAILABLE};
            } else if (!*next || it->next_ms < *next) {
                *next = it->next_ms > now ? it->next_ms : now;
            }
        }
    }
    json_decref(blocked);
    return n;
}

/* Rounds of calls in record order until none is due. Returns the earliest retry time
 * (0: none). */
static int64_t pass(struct outbox *o)
{
    int64_t next = 0;
    o->passes++;
    while (!o->k->stop) {
        struct call *calls = NULL;
        int64_t now = clock_mono_ms();
        size_t n = due(o, now, &calls, &next);
        if (!n) {
            free(calls);
            break;
        }
        for (size_t i = 0; i < n; i++) {
            calls[i].outcomes = json_array();
            err_set(&calls[i].err, ERR_UNAVAILABLE, "not attempted");
        }
        make_calls(o, calls, n);
        now = clock_mono_ms();
        for (size_t i = 0; i < n; i++) {
            settle(o, &calls[i], now);
            json_decref(calls[i].outcomes);
        }
        free(calls);
    }
    return next;
}

/* Drops the finished records at the front; ack moves over them (and over everything
 * read when nothing is left). */
static void advance(struct outbox *o)
{
    size_t n = 0;
    while (n < o->nrecs && o->recs[n].pending == 0) {
        struct orec *r = &o->recs[n++];
        free(r->items);
        sched_outbox_rec_release(&r->rec);
    }
    if (n) {
        memmove(o->recs, o->recs + n, (o->nrecs - n) * sizeof(*o->recs));
        o->nrecs -= n;
    }
    o->ack = o->nrecs ? o->recs[0].seq - 1 : o->cursor;
    const char *key;
    void *tmp;
    json_t *v;
    json_object_foreach_safe(o->done, tmp, key, v)
    {
        if (strtoull(key, NULL, 10) <= o->ack)
            json_object_del(o->done, key);
    }
}

int kube__writeback_commit(MDB_txn *txn, json_t *outcomes, uint64_t ack, json_t *done,
                           struct err *err)
{
    size_t i;
    json_t *rec;
    json_array_foreach(outcomes, i, rec)
    {
        json_t *copy = json_deep_copy(rec); /* completed in place; a retry needs the original */
        int rc = store_audit_append(txn, copy, NULL, err);
        json_decref(copy);
        if (rc < 0)
            return rc;
    }
    json_t *doc = json_pack("{s:I,s:O}", "ackSeq", (json_int_t)ack, "done", done);
    int rc = store_doc_put(txn, STORE_DB_MIRROR, "writeback", doc, err);
    json_decref(doc);
    return rc;
}

struct ack_ctx {
    json_t *recs;
    uint64_t seq;
};

static int ack_fn(MDB_txn *txn, void *ctx, struct err *err)
{
    struct ack_ctx *a = ctx;
    json_t *none = json_object();
    int rc = kube__writeback_commit(txn, a->recs, a->seq, none, err);
    json_decref(none);
    return rc;
}

int kube__bind_record(struct kube *k, struct kube_http *h, uint64_t seq, json_t *rec,
                      struct err *err)
{
    struct sched_outbox_rec r;
    int rc = sched_outbox_decode(rec, &r, err); /* 0: a kind with nothing to do, acked */
    if (rc < 0)
        return rc;
    json_t *outcomes = json_array();
    rc = 0;
    for (size_t i = 0; rc == 0 && i < r.npods; i++)
        if (kube__pod_acted(k, &r, i))
            rc = kube__bind_pod(k, h, seq, &r, &r.pods[i], outcomes, err);
    if (rc == 0) {
        struct ack_ctx a = {outcomes, seq};
        rc = store_write(k->store, ack_fn, &a, err);
        if (rc == 0)
            set_ack_counter(k, seq);
    }
    sched_outbox_rec_release(&r);
    json_decref(outcomes);
    return rc;
}

static int commit_fn(MDB_txn *txn, void *ctx, struct err *err)
{
    struct outbox *o = ctx;
    return kube__writeback_commit(txn, o->outcomes, o->ack, o->done, err);
}

/* Commits outcomes, ack and done when something happened. The audit records this appends
 * are read by the next scan (and skipped: outcome kinds are not wanted). */
static void commit(struct outbox *o)
{
    struct err err = ERR_INIT;
    if (!o->changed && json_array_size(o->outcomes) == 0)
        return;
    if (store_write(o->k->store, commit_fn, o, &err) < 0) {
        log_warn("kube: write-back commit: %s", err.msg);
        return; /* kept: the next pass commits it */
    }
    json_array_clear(o->outcomes);
    o->changed = 0;
    o->persisted = o->ack;
}

static void sync_groups(struct outbox *o)
{
    const char *key;
    void *tmp;
    json_t *v;
    json_object_foreach_safe(o->dirty, tmp, key, v)
    {
        struct err err = ERR_INIT;
        if (o->k->stop)
            return;
        int rc = kube__pg_status_sync(o->k, o->h, o->written, key, &err);
        if (rc == ERR_NETWORK || rc == ERR_UNAVAILABLE)
            continue; /* stays dirty: the next pass tries again */
        if (rc < 0)
            log_warn("kube: %s", err.msg);
        json_object_del(o->dirty, key);
    }
}

/* Leader election (kube_lease.c): a new term drops everything an earlier one left in
 * flight (those decisions are abandoned: the store is relisted and the new term decides
 * again) and goes on after from. Outcomes already received are still committed: they are
 * the API server's answers. What this process wrote to PodGroups is forgotten: another
 * leader may have written since. */
static void new_term(struct outbox *o, uint64_t from)
{
    o->inflight = 0;
    for (size_t i = 0; i < o->nrecs; i++)
        o->recs[i].pending = 0;
    o->cursor = from;
    advance(o); /* frees every record; ack = cursor */
    json_object_clear(o->done);
    json_object_clear(o->written);
    o->changed = 1;
    set_ack_counter(o->k, o->ack);
}

void *kube__bind_main(void *arg)
{
    struct outbox o = {.k = arg};
    o.h = kube__http_new(o.k->conn, &o.k->stop);
    o.outcomes = json_array();
    o.dirty = json_object();
    o.written = json_object();
    load(&o);
    set_ack_counter(o.k, o.ack);
    uint64_t term = 0, from = 0;
    while (o.h && !o.k->stop) {
        int turn = kube__writeback_turn(o.k, &term, &from);
        if (turn == 0) { /* a follower writes nothing */
            kube__sleep(o.k, 50);
            continue;
        }
        if (turn == 2)
            new_term(&o, from);
        int read = scan(&o) > 0;
        int64_t next = pass(&o);
        advance(&o);
        commit(&o);
        sync_groups(&o);
        if (json_array_size(o.outcomes) == 0 && !o.changed)
            set_ack_counter(o.k, o.ack);
        if (read && o.inflight < MAX_ITEMS)
            continue;
        int64_t wait = 50;
        if (next) {
            int64_t until = next - clock_mono_ms();
            wait = until < 1 ? 1 : until < 50 ? until : 50;
        }
        if (json_object_size(o.dirty))
            wait = o.k->opts.backoff_min_ms;
        kube__sleep(o.k, wait);
    }
    o.cursor = o.ack;
    o.inflight = 0;
    for (size_t i = 0; i < o.nrecs; i++)
        o.recs[i].pending = 0;
    advance(&o);
    free(o.recs);
    json_decref(o.done);
    json_decref(o.outcomes);
    json_decref(o.dirty);
    json_decref(o.written);
    for (size_t i = 1; i < WORKERS; i++)
        kube__http_free(o.hw[i]);
    kube__http_free(o.h);
    return NULL;
}
