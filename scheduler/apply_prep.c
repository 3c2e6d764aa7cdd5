/*
 * apply_prep.c - a big manifest's documents made into the objects they create by a thread
 * ahead of the apply's transaction (apply.h); the fields the server owns.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "audit.h"
#include "clock.h"
#include "core.h"
#include "numfmt.h"

static void keep_field(json_t *dst, json_t *src, const char *name)
{
    json_t *v = json_object_get(src, name);
    if (v && !json_object_get(dst, name))
        json_object_set(dst, name, v);
}

void sched__apply_server_fields(enum model_kind kind, json_t *obj, json_t *old, int64_t now_ms)
{
    json_t *meta = json_object_get(obj, "metadata");
    json_t *ometa = old ? json_object_get(old, "metadata") : NULL;
    if (ometa) {
        keep_field(meta, ometa, "uid");
        keep_field(meta, ometa, "creationTimestamp");
        keep_field(meta, ometa, "deletionTimestamp");
    }
    if (!json_object_get(meta, "uid")) {
        char uid[37];
        sched__uuid_v4(uid);
        json_object_set_new(meta, "uid", json_string(uid));
    }
    if (!json_object_get(meta, "creationTimestamp")) {
        char ts[64];
        clock_format_rfc3339(now_ms, ts, sizeof(ts));
        json_object_set_new(meta, "creationTimestamp", json_string(ts));
    }
    if (kind == MODEL_TOPOLOGY && old) /* muster owns status.detailStatus */
        keep_field(obj, old, "status");
    if (kind != MODEL_POD || !old)
        return;
    json_t *spec = json_object_get(obj, "spec"), *ospec = json_object_get(old, "spec");
    if (spec && ospec)
        keep_field(spec, ospec, "nodeName");
    keep_field(obj, old, "status");
}

json_t *sched__apply_version(json_t *obj, uint64_t rv)
{
    char buf[NUMFMT_INT64_LEN + 1], *end = buf + NUMFMT_INT64_LEN;
    *end = '\0';
    json_t *v = json_string(numfmt_u64(end, rv));
    json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", v);
    return v;
}

json_t *sched__apply_writable_copy(json_t *doc)
{
    static const char *const parts[] = {"metadata", "spec"};
    json_t *obj = json_copy(doc);
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        json_t *v = json_object_get(obj, parts[i]);
        if (json_is_object(v))
            json_object_set_new(obj, parts[i], json_copy(v));
    }
    return obj;
}

/* Releases what p[0..n) still holds (not the array). */
static void prep_release(struct apply_prep *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (p[i].staged)
            sched__staged_release(&p[i].st, 1);
        store_ready_release(&p[i].ready);
        json_decref(p[i].obj);
        store_jw_release(&p[i].rec);
        memset(&p[i], 0, sizeof(p[i]));
    }
}

/* One document as sched_apply.c's pass would make it if its object did not exist. The
 * documents share no values, and the classes are only read while the thread runs: the
 * two threads share nothing they change but the documents' states. */
static void prepare_one(const struct apply_prep_in *in, const struct model_doc *doc,
                        struct apply_prep *p)
{
    struct err err = ERR_INIT;
    memset(p, 0, sizeof(*p));
    if (model_doc_kind(doc, &p->kind, &err) < 0)
        return;
    p->obj = sched__apply_writable_copy(doc->obj);
    sched__apply_server_fields(p->kind, p->obj, NULL, in->now_ms);
    p->st.kind = p->kind;
    if (sched__admit(in->classes, p->kind, p->obj, NULL, in->mirrored, &err) < 0 ||
        sched__stage_decode(p->obj, &p->st, in->refused, &err) < 0) {
        prep_release(p, 1);
        return;
    }
    p->staged = 1;
    /* the version is the pass's to write, where the pass would set it */
    if (store_ready_make(&p->ready, p->kind, p->obj, sched__apply_version(p->obj, 0), &err) < 0) {
        prep_release(p, 1);
        return;
    }
    char *job = sched__object_job(p->kind, p->obj);
    struct sched_applied a = {"created", doc->index, in->by, 0};
    sched__audit_applied_text(&p->rec, in->cycle, p->kind, p->ready.key, job, &a);
    free(job);
    if (p->kind != MODEL_POD || !sched__admit_topology_keys_named(p->obj)) {
        json_decref(p->obj); /* on this thread, not the pass's */
        p->obj = NULL;
    }
    p->ok = 1;
}

/* A document's state: nobody took it yet, the thread (or the pass, while it waits for an
 * earlier one) is making it or made it, or the pass made it itself at its turn. */
enum { FREE, MAKING, MADE, OWN };

struct apply_ahead {
    const struct apply_prep_in *in;
    const struct model_doc *docs;
    const size_t *idx;
    size_t n;
    struct apply_prep *prep;
    atomic_int *state;
    atomic_int stop;
    pthread_t thread;
};

/* Makes the k-th document when nobody took it yet (the thread, or the pass while it waits). */
static void make_if_free(struct apply_ahead *a, size_t k)
{
    int expect = FREE;
    if (k >= a->n || !atomic_compare_exchange_strong(&a->state[k], &expect, MAKING))
        return;
    prepare_one(a->in, &a->docs[a->idx[k]], &a->prep[k]);
    atomic_store_explicit(&a->state[k], MADE, memory_order_release);
}

/* The thread: every document nobody took yet, in order, until stopped. */
static void *ahead_main(void *arg)
{
    struct apply_ahead *a = arg;
    for (size_t k = 0; k < a->n && !atomic_load_explicit(&a->stop, memory_order_relaxed); k++)
        make_if_free(a, k);
    return NULL;
}

struct apply_ahead *sched__apply_ahead_start(const struct apply_prep_in *in,
                                             const struct model_doc *docs, const size_t *idx,
                                             size_t n)
{
    struct apply_ahead *a = xcalloc(1, sizeof(*a));
    *a = (struct apply_ahead){.in = in, .docs = docs, .idx = idx, .n = n};
    a->prep = xcalloc(n + 1, sizeof(*a->prep));
    a->state = xcalloc(n + 1, sizeof(*a->state));
    for (size_t k = 0; k < n; k++)
        atomic_init(&a->state[k], FREE);
    atomic_init(&a->stop, 0);
    if (pthread_create(&a->thread, NULL, ahead_main, a) != 0) {
        free(a->prep);
        free(a->state);
        free(a);
        return NULL;
    }
    return a;
}

/* At most this many documents past the one the pass waits for are made by the pass. */
#define STEAL_AHEAD 64

struct apply_prep *sched__apply_ahead_take(struct apply_ahead *a, size_t k)
{
    int expect = FREE;
    if (atomic_compare_exchange_strong(&a->state[k], &expect, OWN)) {
        prepare_one(a->in, &a->docs[a->idx[k]], &a->prep[k]); /* the thread is behind */
        return &a->prep[k];
    }
    /* the thread is making it: a few microseconds, which the pass spends making the
     * documents after it that nobody took yet (the thread skips those), unless it lost its
     * core */
    size_t j = k + 1;
    for (unsigned spins = 0; atomic_load_explicit(&a->state[k], memory_order_acquire) != MADE;) {
        if (j <= k + STEAL_AHEAD && j < a->n) {
            make_if_free(a, j++);
            continue;
        }
        if (++spins > 64)
            sched_yield();
    }
    return &a->prep[k];
}

void sched__apply_ahead_done(struct apply_ahead *a, size_t k)
{
    prep_release(&a->prep[k], 1);
}

void sched__apply_ahead_stop(struct apply_ahead *a)
{
    if (!a)
        return;
    atomic_store(&a->stop, 1);
    pthread_join(a->thread, NULL);
    prep_release(a->prep, a->n);
    free(a->prep);
    free(a->state);
    free(a);
}
