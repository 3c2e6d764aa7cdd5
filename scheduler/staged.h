/*
 * staged.h - objects decoded for the view while a writer's transaction is open, and
 * handed to the view only after it committed (sched_apply.c, sched_delete.c), so the view
 * never holds what the store does not.
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

#endif
