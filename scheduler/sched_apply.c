/*
 * sched_apply.c - the user-facing apply (sched_apply; delete is sched_delete.c).
 *
 * It writes LMDB in one transaction (store_write_beside, which retries after map growth),
 * and hands the decoded objects to the view (staged.h) once it commits, under the lock
 * throughout, so nobody sees the view hold what the store does not: a big manifest's beside
 * the commit's fsync, a view that took them from a commit that failed rebuilt from the
 * store. A big manifest's documents are made into the objects they create by a second
 * thread ahead of the transaction's pass (apply.h).
 *
 * Apply admits each object (admit.c) against the PriorityClasses as they will be:
 * the view's, updated by the manifest's own classes, which are applied first so that
 * one manifest can hold a class and the pods that name it; and the manifest's Queues
 * against the queue tree as it will be (admit_queue.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "clock.h"
#include "core.h"
#include "numfmt.h"
#include "staged.h"
#include "topo.h"
#include "view.h"
#include "why.h"

struct apply_ctx {
    struct sched *s;
    struct model_manifest *m;
    int64_t now_ms;
    char *by;   /* "by" of every audit record as text, or NULL */
    int status; /* sched_apply_status: each document's status replaces the stored pod's */
    struct sched_apply_lines *lines; /* the results */
    struct sched_staged *staged;
    size_t nstaged, capstaged;
    struct sv_classes classes;        /* the view's, with the manifest's applied so far */
    struct sched_strmap node_keys;    /* label keys of the manifest's nodes */
    size_t *order;                    /* the documents' numbers in the order applied */
    size_t nclasses;                  /* the PriorityClasses among them, first */
    struct apply_prep_in ahead_in;    /* what the documents prepared ahead share (apply.h) */
    size_t prepared_used;             /* how many the pass took */
    int64_t written_ns;               /* when the last run of apply_fn ended (clock_mono_ns) */
    int64_t committed_ns;             /* when the last commit ended */
    struct sched_take_beside *beside; /* the view's take beside the commit, while it runs */
    int took;                         /* the view took the staged objects */
    struct err rebuild;               /* a failed commit's rebuild of the view, if it failed */
};

/* Objects a and b equal but for their member skip (NULL: none); at the top (top set) their
 * "metadata" are compared the same way, without resourceVersion. No copies: re-applied and
 * mirrored objects are compared on every event. */
static int same_but(json_t *a, json_t *b, const char *skip, int top)
{
    const char *k;
    json_t *va;
    size_t na = 0, nb = json_object_size(b);
    if (!json_is_object(a) || !json_is_object(b))
        return json_equal(a, b);
    json_object_foreach(a, k, va)
    {
        if (skip && !strcmp(k, skip))
            continue;
        json_t *vb = json_object_get(b, k);
        na++;
        int meta = top && !strcmp(k, "metadata");
        if (!vb || !(meta ? same_but(va, vb, "resourceVersion", 0) : json_equal(va, vb)))
            return 0;
    }
    return na == nb - (skip && json_object_get(b, skip) ? 1 : 0);
}

/* a and b equal but for metadata.resourceVersion (and status, when without_status). */
static int same_ignoring(json_t *a, json_t *b, int without_status)
{
    return same_but(a, b, without_status ? "status" : NULL, 1);
}

/* The status subresource: *out (new, writable as sched__apply_writable_copy's) is the stored pod
 * old with the document's status, validated whole. Everything else in the document is ignored, as
 * Kubernetes' pods/status does. */
static int status_merge(const struct model_doc *doc, enum model_kind kind, const char *key,
                        json_t *old, json_t **out, struct err *err)
{
    json_t *status = json_object_get(doc->obj, "status");
    const char *name = json_string_value(json_object_get(doc->obj, "kind"));

    *out = NULL;
    if (kind != MODEL_POD)
        return err_setf(err, ERR_INVALID, "kind",
                        "document %d: a status update is a Pod's, not a%s '%s'", doc->index,
                        strchr("AEIOU", name[0]) ? "n" : "", name);
    if (!json_is_object(status))
        return err_setf(err, ERR_INVALID, "status", "document %d (Pod %s): no 'status' object",
                        doc->index, key);
    if (!old)
        return err_set(err, ERR_NOT_FOUND, "document %d: pod '%s' not found", doc->index, key);
    struct model_doc merged = {.index = doc->index, .obj = sched__apply_writable_copy(old)};
    json_object_set(merged.obj, "status", status);
    json_t *errors = json_array();
    int rc = 0;
    if (model_validate(&merged, errors) > 0) {
        const char *msg = json_string_value(json_object_get(json_array_get(errors, 0), "message"));
        rc = err_set(err, ERR_INVALID, "%s", msg ? msg : "invalid status");
        json_decref(merged.obj);
    } else {
        *out = merged.obj;
    }
    json_decref(errors);
    return rc;
}

/* A pod applied into another gang (or out of its gang) may have been its old job's last. */
static int left_job(MDB_txn *txn, struct apply_ctx *c, json_t *old, json_t *obj, struct err *err)
{
    char *was = sched__object_job(MODEL_POD, old), *is = sched__object_job(MODEL_POD, obj);
    int rc = strcmp(was, is) ? sched__why_job_gone(txn, NULL, c->s->v, was, err) : 0;
    free(was);
    free(is);
    return rc;
}

/* The results line of document doc. */
static void add_result(struct apply_ctx *c, const struct model_doc *doc, enum model_kind kind,
                       const char *key, const char *action)
{
    struct sched_apply_lines *l = c->lines;
    XGROW(l->v, l->n + 1, l->cap);
    l->v[l->n++] = (struct sched_apply_line){doc->index, kind, action, xstrdup(key)};
}

/* The "applied" audit record of one document and its line of the reply. */
static int record_applied(MDB_txn *txn, struct apply_ctx *c, const struct model_doc *doc,
                          enum model_kind kind, const char *key, json_t *obj, const char *action,
                          struct err *err)
{
    struct store_jw w = STORE_JW_INIT;
    char *job = sched__object_job(kind, obj);
    sched__audit_applied_text(&w, c->s->cycle, kind, key, job,
                              &(struct sched_applied){action, doc->index, c->by, c->status});
    free(job);
    int rc = store_audit_append_text(txn, STORE_AUDIT_APPLIED, w.buf, w.len, NULL, NULL, err);
    store_jw_release(&w);
    if (rc < 0)
        return rc;
    add_result(c, doc, kind, key, action);
    return 0;
}

/* Document doc, prepared (apply.h), creates its object: apply_one's part that is the
 * transaction's. */
static int apply_created(MDB_txn *txn, struct apply_ctx *c, const struct model_doc *doc,
                         struct apply_prep *p, uint64_t *rv, struct err *err)
{
    int rc;
    if (p->obj && !c->s->opts.mirrored &&
        (rc = sched__admit_topology_keys(c->s->v, &c->node_keys, p->obj, err)) < 0) {
        err_prefix(err, "document %d (%s %s)", doc->index, model_kind_name(p->kind), p->ready.key);
        return rc;
    }
    char buf[NUMFMT_INT64_LEN], *end = buf + sizeof(buf), *version = numfmt_u64(end, ++*rv);
    XGROW(c->staged, c->nstaged + 1, c->capstaged);
    c->staged[c->nstaged++] = p->st;
    p->staged = 0;
    if ((rc = store_put_ready(txn, &p->ready, version, (size_t)(end - version), err)) < 0 ||
        (rc = store_audit_append_text(txn, STORE_AUDIT_APPLIED, p->rec.buf, p->rec.len, NULL, NULL,
                                      err)) < 0)
        return rc;
    add_result(c, doc, p->kind, p->ready.key, "created");
    c->prepared_used++;
    return 0;
}

/* Document doc applied; p: what was prepared of it (apply.h), or NULL. */
static int apply_one(MDB_txn *txn, struct apply_ctx *c, struct model_doc *doc, struct apply_prep *p,
                     uint64_t *rv, struct err *err)
{
    if (p && p->ok) { /* the prepared object, unless one is stored (before, or by this manifest) */
        int exists = store_exists(txn, p->kind, p->ready.key, err);
        if (exists <= 0)
            return exists < 0 ? exists : apply_created(txn, c, doc, p, rv, err);
    }
    json_t *obj = NULL, *old = NULL;
    char *key = NULL;
    const char *action = "created";
    struct sched_staged st = {0};
    int rc = model_doc_kind(doc, &st.kind, err);
    if (rc < 0)
        goto out;
    key = model_object_key(st.kind, doc->obj);
    rc = store_get(txn, st.kind, key, &old, err);
    if (rc < 0 && rc != ERR_NOT_FOUND)
        goto out;
    if (c->status && (rc = status_merge(doc, st.kind, key, old, &obj, err)) < 0)
        goto out;
    if (!obj)
        obj = sched__apply_writable_copy(doc->obj);
    sched__apply_server_fields(st.kind, obj, old, c->now_ms);
    rc = sched__admit(&c->classes, st.kind, obj, old, c->s->opts.mirrored, err);
    if (rc == 0 && st.kind == MODEL_POD && !c->s->opts.mirrored)
        rc = sched__admit_topology_keys(c->s->v, &c->node_keys, obj, err);
    if (rc < 0) {
        err_prefix(err, "document %d (%s %s)", doc->index, model_kind_name(st.kind), key);
        goto out;
    }
    if (old)
        action = same_ignoring(old, obj, 0) ? "unchanged" : "configured";
    /* A PodGroup's status is written by its controller (bind mode: by muster itself) and
     * never read by the scheduler: a change of it alone is stored, not staged, so the
     * echo of a status write-back neither requeues the job nor changes the view. */
    int status_only = old && st.kind == MODEL_PODGROUP && strcmp(action, "unchanged") != 0 &&
                      same_ignoring(old, obj, 1);
    if (strcmp(action, "unchanged") != 0)
        sched__apply_version(obj, ++*rv);
    if (strcmp(action, "unchanged") != 0 && !status_only) {
        /* A new object of a manifest whose fields were checked (model_validate_all, the
         * API's, refuses unsupported ones; neither sched_apply's own model_validate nor
         * the mirror's looks) holds none: what apply adds (uid, creationTimestamp,
         * priority) is supported. A replaced one may keep a stored status: walked. */
        int refused = c->m->fields_checked && !c->status && !old;
        if ((rc = sched__stage_decode(obj, &st, refused, err)) < 0) {
            err_prefix(err, "document %d", doc->index);
            goto out;
        }
        if (st.kind == MODEL_PRIORITYCLASS) { /* the pods after it are admitted against it */
            struct model_priorityclass pc = st.u.pc;
            pc.name = xstrdup(pc.name);
            sched__class_put(&c->classes, &pc);
        }
        XGROW(c->staged, c->nstaged + 1, c->capstaged);
        c->staged[c->nstaged++] = st;
    }
    if (strcmp(action, "unchanged") != 0 && (rc = store_put(txn, st.kind, obj, NULL, err)) < 0)
        goto out;
    if (old && st.kind == MODEL_POD && (rc = left_job(txn, c, old, obj, err)) < 0)
        goto out;
    rc = record_applied(txn, c, doc, st.kind, key, obj, action, err);
out:
    free(key);
    json_decref(old);
    json_decref(obj);
    return rc;
}

static int is_class_doc(struct model_doc *doc)
{
    return model_doc_is(doc, MODEL_PRIORITYCLASS);
}

static int cmp_line(const void *a, const void *b)
{
    int x = ((const struct sched_apply_line *)a)->document;
    int y = ((const struct sched_apply_line *)b)->document;
    return (x > y) - (x < y);
}

void sched_apply_lines_release(struct sched_apply_lines *lines)
{
    for (size_t i = 0; i < lines->n; i++)
        free(lines->v[i].name);
    free(lines->v);
    memset(lines, 0, sizeof(*lines));
}

/* The lines as the results array of sched_apply (new). */
static json_t *lines_json(const struct sched_apply_lines *l)
{
    json_t *a = json_array();
    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(a, json_pack("{s:i,s:s,s:s,s:s}", "document", l->v[i].document,
                                           "kind", model_kind_name(l->v[i].kind), "name",
                                           l->v[i].name, "action", l->v[i].action));
    return a;
}

/* The documents in the order they are applied: the PriorityClasses first (the pods after
 * them are admitted against them), then the rest (c->order, c->nclasses). */
static void apply_order(struct apply_ctx *c)
{
    size_t k = 0;
    c->order = xcalloc(c->m->n + 1, sizeof(*c->order));
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < c->m->n; i++)
            if (is_class_doc(&c->m->docs[i]) == !pass)
                c->order[k++] = i;
        if (!pass)
            c->nclasses = k;
    }
}

/* The thread that prepares the documents after the classes ahead of the pass (apply.h),
 * when there are APPLY_PREP_SPLIT of them or more; NULL when not. */
static struct apply_ahead *ahead_start(struct apply_ctx *c)
{
    size_t n = c->m->n - c->nclasses;
    if (c->status || n < APPLY_PREP_SPLIT)
        return NULL;
    c->ahead_in = (struct apply_prep_in){&c->classes, c->s->opts.mirrored, c->m->fields_checked,
                                         c->now_ms,   c->s->cycle,         c->by};
    return sched__apply_ahead_start(&c->ahead_in, c->m->docs, c->order + c->nclasses, n);
}

static int apply_fn(MDB_txn *txn, void *ctx, struct err *err)
{
    struct apply_ctx *c = ctx;
    uint64_t rv = 0;
    sched__staged_release(c->staged, c->nstaged);
    c->nstaged = 0;
    c->prepared_used = 0;
    sched_apply_lines_release(c->lines);
    sched__classes_free(&c->classes);
    sched__classes_copy(&c->classes, &c->s->v->classes);
    int rc = store_meta_get_u64(txn, "resource_version", &rv, err);
    for (size_t k = 0; rc == 0 && k < c->nclasses; k++)
        rc = apply_one(txn, c, &c->m->docs[c->order[k]], NULL, &rv, err);
    struct apply_ahead *ahead = rc == 0 ? ahead_start(c) : NULL;
    for (size_t k = 0; rc == 0 && k < c->m->n - c->nclasses; k++) {
        struct model_doc *doc = &c->m->docs[c->order[c->nclasses + k]];
        rc = apply_one(txn, c, doc, ahead ? sched__apply_ahead_take(ahead, k) : NULL, &rv, err);
        if (ahead)
            sched__apply_ahead_done(ahead, k);
    }
    sched__apply_ahead_stop(ahead);
    if (c->nclasses && c->lines->n > 1) /* the lines are in the order applied */
        qsort(c->lines->v, c->lines->n, sizeof(*c->lines->v), cmp_line);
    int topo = 0;
    for (size_t i = 0; i < c->nstaged; i++)
        topo |= c->staged[i].kind == MODEL_NODE || c->staged[i].kind == MODEL_TOPOLOGY;
    if (rc == 0 && topo) /* detailStatus changes in the same transaction */
        rc = sched__topo_status_sync(txn, err);
    if (rc == 0)
        rc = store_meta_put_u64(txn, "resource_version", rv, err);
    c->written_ns = clock_mono_ns();
    return rc;
}

/* A big apply's view takes its objects beside the commit's fsync (staged.h); a commit that
 * fails brings the view back to the store before the pass may run again. */
static void beside_start(void *ctx)
{
    struct apply_ctx *c = ctx;
    if (c->nstaged >= APPLY_PREP_SPLIT)
        c->beside = sched__staged_take_start(c->s->v, c->staged, c->nstaged);
}

static void beside_end(void *ctx, int committed)
{
    struct apply_ctx *c = ctx;
    c->committed_ns = clock_mono_ns();
    if (!c->beside)
        return;
    sched__staged_take_join(c->beside);
    c->beside = NULL;
    c->took = committed;
    if (!committed && sched__rebuild(c->s, &c->rebuild) == 0)
        err_clear(&c->rebuild);
}

static const struct store_beside take_beside = {beside_start, beside_end};

void sched_apply_timed(struct sched *s, enum sched_apply_phase p, int64_t ns)
{
    if (ns > 0)
        atomic_fetch_add_explicit(&s->met.apply_ns[p], (uint64_t)ns, memory_order_relaxed);
}

int sched_apply(struct sched *s, struct model_manifest *m, int64_t now_ms, json_t **results,
                struct err *err)
{
    return sched_apply_by(s, m, now_ms, NULL, results, err);
}

int sched_apply_lines(struct sched *s, struct model_manifest *m, int64_t now_ms,
                      const struct sched_caller *by, int status, struct sched_apply_lines *lines,
                      struct err *err)
{
    struct apply_ctx c = {.s = s,
                          .m = m,
                          .now_ms = now_ms,
                          .by = sched__caller_text(by),
                          .status = status,
                          .lines = lines};
    sched_apply_lines_release(lines);
    json_t *errors = json_array();
    int rc = 0;
    /* the API validated them already; a status update is validated merged (status_merge) */
    for (size_t i = 0; !m->validated && !status && i < m->n; i++) {
        if (model_validate(&m->docs[i], errors) > 0) {
            const char *msg =
                json_string_value(json_object_get(json_array_get(errors, 0), "message"));
            rc = err_set(err, ERR_INVALID, "%s", msg ? msg : "invalid document");
            goto out;
        }
    }
    for (size_t i = 0; i < m->n; i++) { /* the label keys of the manifest's nodes */
        json_t *obj = m->docs[i].obj, *v;
        const char *k;
        if (!model_doc_is(&m->docs[i], MODEL_NODE))
            continue;
        sched__strmap_put(&c.node_keys, MODEL_LABEL_HOSTNAME, 1);
        json_object_foreach(json_object_get(json_object_get(obj, "metadata"), "labels"), k, v)
            sched__strmap_put(&c.node_keys, k, 1);
    }
    apply_order(&c);
    c.staged = xcalloc(m->n + 1, sizeof(*c.staged)); /* one per document at most */
    c.capstaged = m->n + 1;
    int64_t asked = clock_mono_ns();
    sched__lock_long(s);
    int64_t locked = clock_mono_ns();
    rc = s->opts.mirrored || status ? 0 : sched__admit_queues(s->v, m, err);
    if (rc == 0)
        rc = store_write_beside(s->st, apply_fn, &take_beside, &c, err);
    if (c.rebuild.code) /* as a failed cycle's (cycle.c) */
        rc = err_set(err, c.rebuild.code, "rebuilding the view: %s", c.rebuild.msg);
    if (rc == 0) {
        if (!c.took)
            sched__staged_take_all(s->v, c.staged, c.nstaged);
        s->met.apply_prepared += c.prepared_used;
        s->met.applies++;
        sched_apply_timed(s, SCHED_APPLY_LOCK, locked - asked);
        sched_apply_timed(s, SCHED_APPLY_WRITE, c.written_ns - locked);
        sched_apply_timed(s, SCHED_APPLY_COMMIT, c.committed_ns - c.written_ns);
        sched_apply_timed(s, SCHED_APPLY_VIEW, clock_mono_ns() - c.committed_ns);
    }
    sched__unlock_long(s);
out:
    sched__staged_release(c.staged, c.nstaged);
    free(c.staged);
    free(c.order);
    sched__classes_free(&c.classes);
    sched__strmap_free(&c.node_keys);
    free(c.by);
    json_decref(errors);
    if (rc < 0)
        sched_apply_lines_release(lines);
    return rc;
}

/* sched_apply_lines with the results as a tree (results may be NULL). */
static int apply(struct sched *s, struct model_manifest *m, int64_t now_ms,
                 const struct sched_caller *by, int status, json_t **results, struct err *err)
{
    struct sched_apply_lines lines = {0};
    int rc = sched_apply_lines(s, m, now_ms, by, status, &lines, err);
    if (rc == 0 && results)
        *results = lines_json(&lines);
    sched_apply_lines_release(&lines);
    return rc;
}

int sched_apply_by(struct sched *s, struct model_manifest *m, int64_t now_ms,
                   const struct sched_caller *by, json_t **results, struct err *err)
{
    return apply(s, m, now_ms, by, 0, results, err);
}

int sched_apply_status_by(struct sched *s, struct model_manifest *m, int64_t now_ms,
                          const struct sched_caller *by, json_t **results, struct err *err)
{
    return apply(s, m, now_ms, by, 1, results, err);
}
