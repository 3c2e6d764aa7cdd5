/* staged.c - objects decoded for the view, handed to it after the commit (staged.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "prefault.h"
#include "staged.h"

void sched__staged_release(struct sched_staged *st, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        sched__pod_keys_release(&st[i].keys);
        if (st[i].kind == MODEL_NODE)
            model_node_release(&st[i].u.node);
        else if (st[i].kind == MODEL_POD)
            model_pod_release(&st[i].u.pod);
        else if (st[i].kind == MODEL_PODGROUP)
            model_podgroup_release(&st[i].u.pg);
        else if (st[i].kind == MODEL_PRIORITYCLASS)
            model_priorityclass_release(&st[i].u.pc);
        else if (st[i].kind == MODEL_QUEUE)
            model_queue_release(&st[i].u.queue);
        else if (st[i].kind == MODEL_PDB)
            model_pdb_release(&st[i].u.pdb);
        else
            model_topology_release(&st[i].u.topo);
    }
}

int sched__stage_decode(json_t *obj, struct sched_staged *st, int refused, struct err *err)
{
    memset(&st->u, 0, sizeof(st->u));
    memset(&st->keys, 0, sizeof(st->keys));
    int rc;
    switch (st->kind) {
    case MODEL_NODE:
        return model_node_decode(obj, &st->u.node, err);
    case MODEL_POD:
        rc = refused ? model_pod_decode_refused(obj, &st->u.pod, err)
                     : model_pod_decode(obj, &st->u.pod, err);
        if (rc == 0)
            sched__pod_keys(&st->u.pod, &st->keys);
        return rc;
    case MODEL_PODGROUP:
        return model_podgroup_decode(obj, &st->u.pg, err);
    case MODEL_PRIORITYCLASS:
        return model_priorityclass_decode(obj, &st->u.pc, err);
    case MODEL_QUEUE:
        return model_queue_decode(obj, &st->u.queue, err);
    case MODEL_PDB:
        return model_pdb_decode(obj, &st->u.pdb, err);
    default:
        return model_topology_decode(obj, &st->u.topo, err);
    }
}

static void take(struct sched_view *v, struct sched_staged *st)
{
    if (st->kind == MODEL_NODE)
        sched__view_put_node(v, &st->u.node);
    else if (st->kind == MODEL_POD)
        sched__view_put_pod_keyed(v, &st->u.pod, &st->keys);
    else if (st->kind == MODEL_PODGROUP)
        sched__view_put_pg(v, &st->u.pg);
    else if (st->kind == MODEL_PRIORITYCLASS)
        sched__view_put_class(v, &st->u.pc);
    else if (st->kind == MODEL_QUEUE)
        sched__view_put_queue(v, &st->u.queue);
    else if (st->kind == MODEL_PDB)
        sched__view_put_pdb(v, &st->u.pdb);
    else
        sched__view_put_topo(v, &st->u.topo);
}

/* How many objects ahead the lookups of a pod are prefetched. */
#define AHEAD 8

void sched__staged_take(struct sched_view *v, struct sched_staged *st, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i + AHEAD < n && st[i + AHEAD].kind == MODEL_POD)
            sched__view_pod_ahead(v, &st[i + AHEAD].keys);
        take(v, &st[i]);
    }
}

void sched__staged_take_all(struct sched_view *v, struct sched_staged *st, size_t n)
{
    size_t pods = 0, groups = 0;
    for (size_t i = 0; i < n; i++) {
        pods += st[i].kind == MODEL_POD;
        groups += st[i].kind == MODEL_PODGROUP;
    }
    /* a job a lone pod or a group */
    struct prefault *pf = sched__view_reserve(v, pods, pods + groups);
    sched__staged_take(v, st, n);
    prefault_join(pf);
}

struct sched_take_beside {
    struct sched_view *v;
    struct sched_staged *st;
    size_t n;
    pthread_t thread;
};

static void *take_main(void *arg)
{
    struct sched_take_beside *t = arg;
    sched__staged_take_all(t->v, t->st, t->n);
    return NULL;
}

struct sched_take_beside *sched__staged_take_start(struct sched_view *v, struct sched_staged *st,
                                                   size_t n)
{
    struct sched_take_beside *t = xcalloc(1, sizeof(*t));
    *t = (struct sched_take_beside){.v = v, .st = st, .n = n};
    if (pthread_create(&t->thread, NULL, take_main, t) != 0) {
        free(t);
        return NULL;
    }
    return t;
}

void sched__staged_take_join(struct sched_take_beside *t)
{
    if (!t)
        return;
    pthread_join(t->thread, NULL);
    free(t);
}
