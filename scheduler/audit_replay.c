/*
 * audit_replay.c - the replay check (docs/api.md, "GET /api/v1/audit/replay"): the scheduler run
 * again from the store as it was at one audit record over the inputs the log recorded after it,
 * each cycle's decisions after record `from` compared with the ones the log holds.
 *
 * It runs from where the live scheduler's waiting jobs are known, which nothing stores: the
 * last "started" record at or before `from` (a restart's view waits for nothing), else the
 * log's first record; only a pruned log without either runs from `from`, the jobs a cycle
 * tried parked anew (not exact). The store there (its objects and why documents, from the
 * object history, store.h) is written into a scratch store of its own, and a scheduler is
 * opened on it. Then the
 * records up to `to` are read in order. An input (an "applied" record: the object as it
 * was after that record, from the history; a "deleted" record made outside a cycle) is
 * applied or deleted again; a "started" record (musterd restarted) rebuilds the view, as
 * the restart did. A "cycle" record runs one cycle at that cycle's clock, and
 * the decisions it appends (placed, preempted, nominated, evicted, running, deleted,
 * gang-timed-out, reserved, unreserved, deadline-exceeded) are compared with the records of that
 * cycle in the log: the same kind, job, object, pods, nodes and preemptor, as multisets. Reason
 * records (unschedulable, discarded) and what names the ledger (its entry ids) are left out of the
 * comparison: the first are written on a change against the stored why, the second count from the
 * scratch store's own ledger.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "core.h"

/* Record kinds that are a cycle's decisions, compared. */
static int decision_kind(const char *k)
{
    static const char *const kinds[] = {
        "placed",  "preempted",      "nominated", "evicted",    "running",
        "deleted", "gang-timed-out", "reserved",  "unreserved", "deadline-exceeded"};
    for (size_t i = 0; k && i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (!strcmp(k, kinds[i]))
            return 1;
    return 0;
}

/* The part of a decision record the comparison reads: kind, job, object, sorted pods and
 * nodes, preemptor. New. */
static json_t *essence(json_t *rec)
{
    static const char *const keep[] = {"kind", "job", "object", "preemptor"};
    json_t *e = json_object();
    for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
        json_t *v = json_object_get(rec, keep[i]);
        if (v)
            json_object_set(e, keep[i], v);
    }
    static const char *const lists[] = {"pods", "nodes"};
    for (size_t i = 0; i < 2; i++) {
        json_t *a = json_object_get(rec, lists[i]);
        if (!json_is_array(a))
            continue;
        char *s[json_array_size(a) + 1];
        size_t n = 0, k;
        json_t *x;
        json_array_foreach(a, k, x) s[n++] = json_dumps(x, JSON_ENCODE_ANY | JSON_COMPACT);
        for (size_t p = 1; p < n; p++) /* insertion sort: a few names */
            for (size_t q = p; q > 0 && strcmp(s[q - 1], s[q]) > 0; q--) {
                char *t = s[q];
                s[q] = s[q - 1];
                s[q - 1] = t;
            }
        json_t *sorted = json_array();
        for (k = 0; k < n; k++) {
            json_array_append_new(sorted, json_loads(s[k], JSON_DECODE_ANY, NULL));
            free(s[k]);
        }
        json_object_set_new(e, lists[i], sorted);
    }
    return e;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The essences of recs as a sorted array of canonical strings. New. */
static json_t *canon_set(json_t *recs)
{
    size_t i, n = json_array_size(recs);
    char **s = xcalloc(n + 1, sizeof(*s));
    json_t *r;
    json_array_foreach(recs, i, r)
    {
        json_t *e = essence(r);
        s[i] = store_json_text(e, JSON_SORT_KEYS); /* json_dumps's bytes */
        json_decref(e);
    }
    qsort(s, n, sizeof(*s), cmp_str);
    json_t *out = json_array();
    for (i = 0; i < n; i++) {
        json_array_append_new(out, json_string(s[i]));
        free(s[i]);
    }
    free(s);
    return out;
}

struct scan_ctx {
    json_t *recs;
};

static int collect(void *ctx, uint64_t seq, const char *json, size_t len)
{
    (void)seq;
    json_t *rec = model_json_load(json, len, NULL);
    if (rec)
        json_array_append_new(((struct scan_ctx *)ctx)->recs, rec);
    return 0;
}

/* The decisions in the scratch store's log after seq `after`: *out new array. */
static int replayed_since(struct store *st, uint64_t after, json_t **out, struct err *err)
{
    MDB_txn *txn = NULL;
    struct scan_ctx sc = {json_array()};
    int rc = store_txn_begin(st, STORE_READ, &txn, err);
    if (rc == 0)
        rc = store_audit_scan(txn, after + 1, 0, collect, &sc, err);
    store_txn_abort(&txn);
    json_t *keep = json_array(), *r;
    size_t i;
    json_array_foreach(sc.recs, i,
                       r) if (decision_kind(json_string_value(json_object_get(r, "kind"))))
        json_array_append(keep, r);
    json_decref(sc.recs);
    *out = keep;
    return rc;
}

/* ---- the scratch store at `from` ---- */

struct seed {
    MDB_txn *dst;
    int rc;
    struct err *err;
};

static int seed_obj(void *ctx, enum model_kind kind, const char *key, json_t *obj)
{
    struct seed *s = ctx;
    (void)key;
    s->rc = store_put(s->dst, kind, obj, NULL, s->err);
    return s->rc < 0 ? s->rc : 0;
}

struct doc_seed {
    MDB_txn *dst;
    enum store_db db;
    struct err *err;
};

static int seed_doc(void *ctx, const char *key, json_t *doc)
{
    struct doc_seed *d = ctx;
    return store_doc_put(d->dst, d->db, key, doc, d->err);
}

/* Writes the objects, why documents and ledger of src at record from into dst, the ledger's
 * entry counter past the entries seeded (a new entry must not take one's id), and the cycle
 * number of that record. */
static int seed_store(MDB_txn *src, uint64_t from, uint64_t cycle, struct store *dst,
                      struct err *err)
{
    MDB_txn *w = NULL;
    struct seed s = {.err = err};
    int rc = store_txn_begin(dst, STORE_WRITE, &w, err);
    s.dst = w;
    if (rc == 0)
        rc = store_history_each_at(src, from, STORE_KINDS_ALL, seed_obj, &s, err);
    /* the why documents (reasons, gang timeouts) and the ledger (victims, nominations) */
    struct doc_seed dw = {w, STORE_DB_WHY, err}, dl = {w, STORE_DB_PREEMPTIONS, err};
    if (rc == 0)
        rc = store_history_docs_at(src, STORE_DB_WHY, from, seed_doc, &dw, err);
    if (rc == 0)
        rc = store_history_docs_at(src, STORE_DB_PREEMPTIONS, from, seed_doc, &dl, err);
    if (rc == 0)
        rc = sched__ledger_seq_from_entries(w, err);
    if (rc == 0)
        rc = store_meta_put_u64(w, "cycle", cycle, err);
    if (rc == 0)
        rc = store_txn_commit(&w, err);
    store_txn_abort(&w);
    return rc;
}

/* ---- walking the log ---- */

struct walk {
    struct sched *s;  /* the live scheduler (its store, its options) */
    struct sched *r;  /* the replaying one, on the scratch store */
    struct store *rs; /* the scratch store */
    MDB_txn *src;     /* a read transaction of the live store */
    uint64_t last_cycle;
    int64_t clock_ms;       /* the last cycle's clock: inputs are applied at it */
    json_t *logged;         /* the log's decisions of the cycle under way */
    json_t *diffs;          /* the cycles whose decisions differ */
    uint64_t compare_after; /* the cycles and inputs recorded after it are compared, counted */
    long cycles, decisions, inputs;
    int rc;
    int prefixed; /* *err already names the record it is about */
    struct err *err;
    struct run {              /* inputs not applied yet (run_add) */
        struct store_jw text; /* "[" the objects, "," between them */
        struct run_obj {
            size_t at, end; /* its bytes in text */
            uint64_t seq;   /* its record */
        } * obj;
        size_t n, cap;
    } run;
};

static int64_t rec_clock(json_t *rec)
{
    json_t *c = json_object_get(rec, "clockMs");
    if (json_is_integer(c))
        return json_integer_value(c);
    int64_t ms = 0;
    const char *ts = json_string_value(json_object_get(rec, "ts"));
    return ts && clock_parse_rfc3339(ts, &ms, NULL) == 0 ? ms : 0;
}

/* The objects of the JSON text (one object, or an array of them) applied at the clock. */
static int apply_text(struct walk *w, const char *text, size_t len)
{
    struct model_manifest m = {0};
    json_t *res = NULL;
    int rc = model_manifest_parse(text, len, MODEL_FMT_JSON, &m, w->err);
    if (rc == 0)
        rc = sched_apply(w->r, &m, w->clock_ms, &res, w->err);
    json_decref(res);
    model_manifest_free(&m);
    return rc;
}

/* Inputs are applied in runs: the objects of consecutive "applied" records as one manifest
 * in one transaction, flushed before any other record that changes the store or the view (a
 * cycle, a restart, a delete) and before a PriorityClass or a Queue, which go alone (apply
 * admits a manifest's objects against its classes, applied first, and its queues as a
 * whole). So each object is applied after the ones before it, as it was (one applied twice
 * is replaced by the second); one by one, the 55,000 inputs of one big apply took 55,000
 * transactions, most of a replay's time. A run that fails is applied again record by
 * record, which fails where one by one failed, naming that record. */
static void run_add(struct walk *w, uint64_t seq, json_t *obj)
{
    struct run *r = &w->run;
    XGROW(r->obj, r->n + 1, r->cap);
    store_jw_raw(&r->text, r->n ? "," : "[", 1);
    size_t at = r->text.len;
    store_jw_value(&r->text, obj, 0);
    r->obj[r->n++] = (struct run_obj){at, r->text.len, seq};
}

static int run_flush(struct walk *w)
{
    struct run *r = &w->run;
    if (!r->n)
        return 0;
    store_jw_raw(&r->text, "]", 1);
    int rc = apply_text(w, r->text.buf, r->text.len);
    if (rc < 0) { /* nothing of the run was written: record by record */
        err_clear(w->err);
        for (size_t i = 0; i < r->n; i++) {
            const struct run_obj *o = &r->obj[i];
            if ((rc = apply_text(w, r->text.buf + o->at, o->end - o->at)) < 0) {
                err_prefix(w->err, "replaying record %llu", (unsigned long long)o->seq);
                w->prefixed = 1;
                break;
            }
        }
    }
    r->text.len = 0;
    r->n = 0;
    return rc;
}

static void run_release(struct run *r)
{
    store_jw_release(&r->text);
    free(r->obj);
}

static int replay_input(struct walk *w, uint64_t seq, json_t *rec, const char *kind)
{
    json_t *o = json_object_get(rec, "object");
    const char *kname = json_string_value(json_object_get(o, "kind"));
    const char *key = json_string_value(json_object_get(o, "name"));
    enum model_kind k;
    if (!kname || !key || model_kind_from_resource(kname, &k) < 0)
        return 0;
    w->inputs += seq > w->compare_after;
    int rc;
    if (!strcmp(kind, "deleted")) {
        if ((rc = run_flush(w)) < 0)
            return rc;
        rc = sched_delete(w->r, k, key, w->clock_ms, w->err);
        return rc == ERR_NOT_FOUND ? (err_clear(w->err), 0) : rc;
    }
    json_t *obj = NULL;
    rc = store_history_get_at(w->src, k, key, seq, &obj, w->err);
    if (rc == ERR_NOT_FOUND) /* deleted again in the same transaction */
        return err_clear(w->err), 0;
    if (rc < 0)
        return rc;
    if (k != MODEL_PRIORITYCLASS && k != MODEL_QUEUE) {
        run_add(w, seq, obj);
    } else if ((rc = run_flush(w)) == 0) {
        char *text = store_json_text(obj, 0);
        rc = apply_text(w, text, strlen(text));
        free(text);
    }
    json_decref(obj);
    return rc;
}

static int replay_cycle(struct walk *w, json_t *rec)
{
    MDB_txn *txn = NULL;
    uint64_t before = 0;
    int rc = store_txn_begin(w->rs, STORE_READ, &txn, w->err);
    if (rc == 0)
        rc = store_audit_last_seq(txn, &before, w->err);
    store_txn_abort(&txn);
    int64_t clock = rec_clock(rec);
    if (clock)
        w->clock_ms = clock;
    json_t *sum = NULL, *mine = NULL;
    if (rc == 0) /* a cycle with a caller is always written, as the logged one was */
        rc = sched_cycle_by(w->r, w->clock_ms, &(struct sched_caller){.name = "replay"}, &sum,
                            w->err);
    if (rc == 0)
        rc = replayed_since(w->rs, before, &mine, w->err);
    uint64_t seq = (uint64_t)json_integer_value(json_object_get(rec, "seq"));
    if (rc == 0 && seq > w->compare_after) {
        json_t *a = canon_set(w->logged), *b = canon_set(mine);
        w->cycles++;
        w->decisions += (long)json_array_size(a);
        if (!json_equal(a, b))
            json_array_append_new(w->diffs, json_pack("{s:O,s:O,s:o,s:o}", "cycle",
                                                      json_object_get(rec, "cycle"), "seq",
                                                      json_object_get(rec, "seq"), "logged", a,
                                                      "replayed", b));
        else {
            json_decref(a);
            json_decref(b);
        }
    }
    json_decref(sum);
    json_decref(mine);
    json_array_clear(w->logged);
    w->last_cycle = (uint64_t)json_integer_value(json_object_get(rec, "cycle"));
    return rc;
}

static int walk_rec(void *ctx, uint64_t seq, const char *json, size_t len)
{
    struct walk *w = ctx;
    json_t *rec = model_json_load(json, len, NULL);
    if (!rec)
        return 0;
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    uint64_t cyc = (uint64_t)json_integer_value(json_object_get(rec, "cycle"));
    int cycle = kind && !strcmp(kind, "cycle"), started = kind && !strcmp(kind, "started");
    int rc = cycle || started ? run_flush(w) : 0; /* the inputs before it, first */
    if (rc == 0 && cycle)
        rc = replay_cycle(w, rec);
    else if (rc == 0 && started) /* musterd restarted: a fresh view, as then */
        rc = sched__rebuild(w->r, w->err);
    else if (rc == 0 && kind && cyc == w->last_cycle + 1 && decision_kind(kind))
        json_array_append(w->logged, rec); /* in the next cycle's transaction */
    else if (rc == 0 && kind && (!strcmp(kind, "applied") || !strcmp(kind, "deleted")))
        rc = replay_input(w, seq, rec, kind);
    json_decref(rec);
    if (rc < 0) {
        w->rc = rc;
        if (!w->prefixed)
            err_prefix(w->err, "replaying record %llu", (unsigned long long)seq);
        return rc;
    }
    return 0;
}

/* ---- the entry point ---- */

/* The record at seq: its kind and cycle. */
static int rec_at(MDB_txn *txn, uint64_t seq, json_t **out, struct err *err)
{
    struct scan_ctx sc = {json_array()};
    int rc = store_audit_scan(txn, seq, seq, collect, &sc, err);
    *out = json_incref(json_array_get(sc.recs, 0));
    json_decref(sc.recs);
    if (rc == 0 && !*out)
        rc = err_setf(err, ERR_INVALID, "from", "from: record %llu is not kept",
                      (unsigned long long)seq);
    return rc;
}

/* *at moved from a record inside a cycle's transaction to the cycle record that ends it
 * (not past to); *rec (new) the record there. */
static int cycle_boundary(MDB_txn *src, uint64_t *at, uint64_t to, json_t **rec, struct err *err)
{
    int rc = rec_at(src, *at, rec, err);
    const char *kind = rc == 0 ? json_string_value(json_object_get(*rec, "kind")) : NULL;
    while (kind && strcmp(kind, "cycle") && decision_kind(kind) && *at < to) {
        json_decref(*rec);
        if ((rc = rec_at(src, ++*at, rec, err)) < 0)
            return rc;
        kind = json_string_value(json_object_get(*rec, "kind"));
    }
    return rc;
}

static int note_started(void *ctx, uint64_t seq, const char *json, size_t len)
{
    static const char mark[] = "\"kind\":\"started\""; /* canonical: no spaces */
    if (memmem(json, len, mark, sizeof(mark) - 1))
        *(uint64_t *)ctx = seq;
    return 0;
}

/* Where a replay compared from record from begins so that its scheduler waits as the live
 * one did: the last "started" record at or before from (a restart: the live view was
 * fresh, its waiting jobs unparked), else the log's first record when none was pruned (the
 * live view began empty there); with search unset, from itself when it is one of those.
 * *out 0 when none: the replay then begins at from with the jobs a cycle tried parked
 * anew, which the live backoffs may not match. */
static int exact_start(MDB_txn *src, uint64_t first, uint64_t from, int search, uint64_t *out,
                       struct err *err)
{
    uint64_t started = 0;
    int rc = store_audit_scan(src, search ? first : from, from, note_started, &started, err);
    *out = started ? started : first == 1 && (search || from == 1) ? 1 : 0;
    return rc;
}

/* Checks from and to against the log (first: the first record kept; last: the last). */
static int check_range(uint64_t from, uint64_t to, uint64_t first, uint64_t last, struct err *err)
{
    if (from < first || from == 0)
        return err_setf(err, ERR_INVALID, "from",
                        "from: record %llu is before the history kept (the first is %llu)",
                        (unsigned long long)from, (unsigned long long)(first ? first : 1));
    if (to > last || from > to)
        return err_setf(err, ERR_INVALID, to > last ? "to" : "from",
                        "%s: from %llu to %llu is not a range of the log (records 1 to %llu)",
                        to > last ? "to" : "from", (unsigned long long)from, (unsigned long long)to,
                        (unsigned long long)last);
    return 0;
}

/* The last cycle committed at record seq (rec: that record): its "cycle", or for a record
 * without one (a checkpoint) the next one's that has it, less one when that one is a
 * cycle's own (a decision in its transaction, or the cycle record). */
static int cycle_at(MDB_txn *src, uint64_t seq, uint64_t to, json_t *rec, uint64_t *out,
                    struct err *err)
{
    json_t *next = json_incref(rec), *c;
    int rc = 0;
    while (!json_is_integer(c = json_object_get(next, "cycle")) && seq < to) {
        json_decref(next);
        if ((rc = rec_at(src, ++seq, &next, err)) < 0)
            return rc;
    }
    const char *kind = json_string_value(json_object_get(next, "kind"));
    uint64_t cyc = (uint64_t)json_integer_value(c);
    int own = next != rec && kind && (!strcmp(kind, "cycle") || decision_kind(kind));
    *out = own && cyc ? cyc - 1 : cyc;
    json_decref(next);
    return 0;
}

/* Opens the scratch store in dir at record begin (rec: that record; to: the last record
 * replayed) and the replaying scheduler on it, waiting as the live one did there: anew
 * after a "started" record, with the tried jobs parked elsewhere. */
static int open_at(struct walk *w, MDB_txn *src, uint64_t begin, uint64_t to, json_t *rec,
                   char *dir)
{
    struct store_options so = {.dir = dir, .sync = STORE_SYNC_NONE, .temporary = 1};
    uint64_t cyc = 0;
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    int rc = cycle_at(src, begin, to, rec, &cyc, w->err);
    if (rc == 0)
        rc = store_open(&so, &w->rs, w->err);
    if (rc == 0)
        rc = seed_store(src, begin, cyc, w->rs, w->err);
    if (rc == 0)
        rc = sched_open(w->rs, &w->s->opts, &w->r, w->err);
    if (rc < 0)
        return rc;
    w->src = src;
    w->last_cycle = cyc;
    w->clock_ms = rec_clock(rec);
    if (!kind || strcmp(kind, "started"))
        sched__park_tried(w->r, w->clock_ms);
    return 0;
}

int sched_replay(struct sched *s, uint64_t from, uint64_t to, int exact, json_t **out,
                 struct err *err)
{
    MDB_txn *src = NULL;
    struct walk w = {.s = s, .err = err, .logged = json_array(), .diffs = json_array()};
    char dir[4096];
    uint64_t first = 0, last = 0, begin = 0;
    json_t *start = NULL, *at_begin = NULL;
    *out = NULL;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof(dir), "%s/muster-replay-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int rc = store_txn_begin(s->st, STORE_READ, &src, err);
    if (rc == 0)
        rc = store_history_first_seq(src, &first, err);
    if (rc == 0)
        rc = store_audit_last_seq(src, &last, err);
    if (rc == 0 && to == 0)
        to = last;
    if (rc == 0)
        rc = check_range(from, to, first, last, err);
    if (rc == 0)
        rc = cycle_boundary(src, &from, to, &start, err);
    if (rc == 0)
        rc = exact_start(src, first, from, exact, &begin, err);
    exact = begin != 0;
    if (rc == 0 && !exact)
        begin = from;
    if (rc == 0)
        rc = cycle_boundary(src, &begin, to, &at_begin, err);
    if (rc == 0)
        rc = open_at(&w, src, begin, to, at_begin, dir);
    w.compare_after = from;
    if (rc == 0)
        rc = store_audit_scan(src, begin + 1, to, walk_rec, &w, err);
    if (rc == 0 && w.rc < 0)
        rc = w.rc;
    if (rc == 0) /* the inputs after the last cycle */
        rc = run_flush(&w);
    if (rc < 0)
        goto out;
    *out = json_pack("{s:I,s:I,s:I,s:b,s:b,s:i,s:i,s:i,s:i,s:O}", "from", (json_int_t)from, "to",
                     (json_int_t)to, "replayedFrom", (json_int_t)begin, "exact", exact, "ok",
                     json_array_size(w.diffs) == 0, "cycles", (int)w.cycles, "decisions",
                     (int)w.decisions, "inputs", (int)w.inputs, "differences",
                     (int)json_array_size(w.diffs), "cyclesDiffering", w.diffs);
out:
    run_release(&w.run);
    sched_close(w.r);
    store_close(w.rs); /* and its directory */
    store_txn_abort(&src);
    json_decref(start);
    json_decref(at_begin);
    json_decref(w.logged);
    json_decref(w.diffs);
    return rc;
}
