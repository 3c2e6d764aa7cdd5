/*
 * view_pdb.c - the PodDisruptionBudgets of the view (view_pdb.h): slots by key and the live slots
 * of each namespace. Preemption (preempt_pdb.c) asks only for the budgets of a victim's
 * namespace; with no budget at all it asks nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "strmap.h"
#include "view_pdb.h"
#include "view_wait.h"

static struct sv_pdblist *ns_list(struct sched_view *v, const char *ns, int create)
{
    struct sv_pdbs *ps = &v->pdbs;
    int li = sched__strmap_get(&ps->ns_ix, ns);
    if (li < 0 && !create)
        return NULL;
    if (li < 0) {
        XGROW(ps->lists, ps->nlists + 1, ps->caplists);
        memset(&ps->lists[ps->nlists], 0, sizeof(ps->lists[0]));
        li = (int)ps->nlists++;
        sched__strmap_put(&ps->ns_ix, ns, li);
    }
    return &ps->lists[li];
}

static void list_del(struct sv_pdblist *l, int slot)
{
    for (size_t i = 0; l && i < l->n; i++)
        if (l->slot[i] == slot) {
            memmove(&l->slot[i], &l->slot[i + 1], (l->n - i - 1) * sizeof(int));
            l->n--;
            return;
        }
}

void sched__view_del_pdb(struct sched_view *v, const char *key)
{
    sched__wait_event(v, SV_EV_PDB);
    struct sv_pdbs *ps = &v->pdbs;
    int slot = sched__strmap_get(&ps->ix, key);
    if (slot < 0)
        return;
    struct sv_pdb *b = &ps->b[slot];
    list_del(ns_list(v, b->m.ns, 0), slot);
    sched__strmap_del(&ps->ix, key);
    model_pdb_release(&b->m);
    free(b->key);
    b->key = NULL;
    b->alive = 0;
    ps->live--;
    ps->gen++;
}

void sched__view_put_pdb(struct sched_view *v, struct model_pdb *m)
{
    struct sv_pdbs *ps = &v->pdbs;
    char *key = xasprintf("%s/%s", m->ns, m->name);
    sched__view_del_pdb(v, key);
    size_t slot = 0;
    while (slot < ps->n && ps->b[slot].alive)
        slot++;
    if (slot == ps->n) {
        XGROW(ps->b, ps->n + 1, ps->cap);
        ps->n++;
    }
    struct sv_pdb *b = &ps->b[slot];
    b->key = key;
    b->m = *m;
    b->alive = 1;
    memset(m, 0, sizeof(*m));
    sched__strmap_put(&ps->ix, key, (int)slot);
    struct sv_pdblist *l = ns_list(v, b->m.ns, 1);
    XGROW(l->slot, l->n + 1, l->cap);
    l->slot[l->n++] = (int)slot;
    ps->live++;
    ps->gen++;
}

const int *sched__view_pdbs_in(const struct sched_view *v, const char *ns, size_t *n)
{
    *n = 0;
    if (!v->pdbs.live)
        return NULL;
    int li = sched__strmap_get(&v->pdbs.ns_ix, ns);
    if (li < 0 || !v->pdbs.lists[li].n)
        return NULL;
    *n = v->pdbs.lists[li].n;
    return v->pdbs.lists[li].slot;
}

void sched__view_pdbs_free(struct sched_view *v)
{
    struct sv_pdbs *ps = &v->pdbs;
    for (size_t i = 0; i < ps->n; i++) {
        if (ps->b[i].alive)
            model_pdb_release(&ps->b[i].m);
        free(ps->b[i].key);
    }
    free(ps->b);
    for (size_t i = 0; i < ps->nlists; i++)
        free(ps->lists[i].slot);
    free(ps->lists);
    sched__strmap_free(&ps->ix);
    sched__strmap_free(&ps->ns_ix);
    memset(ps, 0, sizeof(*ps));
}
