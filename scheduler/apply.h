/*
 * apply.h - the part of an apply a second thread does ahead of its transaction
 * (apply_prep.c), and the fields the server owns; sched_apply.c runs the transaction.
 *
 * While the transaction's pass applies a big manifest's documents in order, a thread of
 * its own makes the documents ahead of it into the objects they would create: the copy
 * apply may change, the server's fields, admission, the view's decoded object and the
 * "applied" audit record's text (none of which reads the store). The pass takes each
 * document's when it reaches it (sched__apply_ahead_take; one the thread has not reached it
 * makes itself, and while it waits for one the thread is making it makes the next ones
 * nobody took), and when the object does not exist only writes its resourceVersion into the
 * text made ready (store_ready), puts it and appends the record, in document order: the
 * pass reads a few buffers the thread wrote, not the object's tree, which on another core
 * it would read from memory. A document whose object exists (stored
 * before, or by an earlier document of the manifest), or that could not be made, is
 * applied as a small manifest's is, so a refusal names the same document in the same
 * words.
 */
#ifndef MUSTER_SCHED_APPLY_H
#define MUSTER_SCHED_APPLY_H

#include <jansson.h>

#include "model.h"
#include "staged.h"
#include "store.h"

/* A manifest with this many documents after its classes or more is prepared ahead: below
 * it a thread costs more than it saves. */
#define APPLY_PREP_SPLIT 2000

/* A document made into the object it creates. */
struct apply_prep {
    int ok; /* made: the members below are set */
    enum model_kind kind;
    struct store_ready ready; /* the object (server fields filled, admitted), ready to put */
    json_t *obj;              /* the object, while the pass checks its topology keys, or NULL
                                 (sched__admit_topology_keys_named) */
    struct sched_staged st;   /* obj decoded for the view */
    int staged;               /* st holds it (0 once the pass took it) */
    struct store_jw rec;      /* its "applied" record's text, action "created" */
};

/* What every prepared document shares. */
struct apply_prep_in {
    const struct sv_classes *classes; /* what pods are admitted against */
    int mirrored;                     /* the API server admitted them (sched__admit) */
    int refused;                      /* unsupported fields were refused (sched__stage_decode) */
    int64_t now_ms;                   /* creationTimestamp */
    uint64_t cycle;                   /* the audit records' */
    const char *by;                   /* the caller's text (sched__caller_text), or NULL */
};

struct apply_ahead;

/* Starts the thread that prepares docs[idx[k]] for k = 0, 1, ... n - 1 (idx, in and what
 * they point to are borrowed until sched__apply_ahead_stop). NULL when no thread could be
 * made: the pass then applies every document itself. */
struct apply_ahead *sched__apply_ahead_start(const struct apply_prep_in *in,
                                             const struct model_doc *docs, const size_t *idx,
                                             size_t n);
/* The k-th document's, once made (by the thread, or here when the thread has not reached
 * it): ok 0 when it could not be. Borrowed until sched__apply_ahead_stop; taken in order. */
struct apply_prep *sched__apply_ahead_take(struct apply_ahead *a, size_t k);
/* The pass is done with the k-th document's: released. */
void sched__apply_ahead_done(struct apply_ahead *a, size_t k);
/* Stops the thread where it is, waits for it, and releases every document's (a may be
 * NULL). */
void sched__apply_ahead_stop(struct apply_ahead *a);

/* A copy of document doc that apply may change (new): what apply writes is all direct
 * members of the object, its metadata and its spec; those are copied, every other subtree
 * is shared. */
json_t *sched__apply_writable_copy(json_t *doc);
/* Fills what the server owns in obj: uid and creationTimestamp (kept from the stored
 * object old, or made), and for pods the scheduler's fields (spec.nodeName, status,
 * deletionTimestamp) that a re-applied manifest does not carry. */
void sched__apply_server_fields(enum model_kind kind, json_t *obj, json_t *old, int64_t now_ms);
/* Sets metadata.resourceVersion of obj to rv; the value set (borrowed). */
json_t *sched__apply_version(json_t *obj, uint64_t rv);

#endif
