/*
 * staged.h - objects decoded for the view while a writer's transaction is open, and
 * handed to the view only once it commits (sched_apply.c, sched_delete.c), so that the view
 * never shows what the store does not hold. A big apply's take runs beside its commit's
 * fsync, under the scheduler's lock, where nobody sees the view; a commit that fails then
 * rebuilds the view from the store, as a failed cycle does.
 */
#ifndef MUSTER_SCHED_STAGED_H
#define MUSTER_SCHED_STAGED_H

#include <jansson.h>

#include "err.h"
#include "model.h"
#include "view.h"

/* One decoded object of kind (its union member by kind). */
struct sched_staged {
    enum model_kind kind;
    union {
        struct model_node node;
        struct model_pod pod;
        struct model_podgroup pg;
        struct model_topology topo;
        struct model_priorityclass pc;
        struct model_queue queue;
        struct model_pdb pdb;
    } u;
    struct sv_pod_keys keys; /* a pod's, made where it was decoded (on the thread ahead) */
};

/* Decodes obj into st (st->kind set by the caller), with a pod's keys. refused: the document's
 * unsupported fields were refused by validation (model.h), so the decoder need not look for them.
 */
int sched__stage_decode(json_t *obj, struct sched_staged *st, int refused, struct err *err);
/* Releases n staged objects' contents (not the array). */
void sched__staged_release(struct sched_staged *st, size_t n);
/* Puts st[0..n) into the view in order (after the commit), each replacing what it held of
 * that name; the view's entries a pod will look up are fetched into the cache a few
 * objects ahead (a big apply's pods miss it, one lookup after another). */
void sched__staged_take(struct sched_view *v, struct sched_staged *st, size_t n);
/* sched__staged_take with the view's room for st's pods and their jobs made first
 * (sched__view_reserve), for many objects. */
void sched__staged_take_all(struct sched_view *v, struct sched_staged *st, size_t n);

/* sched__staged_take_all on a thread of its own, beside the commit of the transaction that
 * wrote st (sched_apply.c): the caller holds the scheduler's lock throughout and touches
 * neither v nor st until sched__staged_take_join. NULL when no thread could be made (nothing
 * was taken). */
struct sched_take_beside;
struct sched_take_beside *sched__staged_take_start(struct sched_view *v, struct sched_staged *st,
                                                   size_t n);
/* Waits for the take to end and frees t (NULL-safe). */
void sched__staged_take_join(struct sched_take_beside *t);

#endif
