/*
 * view_pdb.h - the PodDisruptionBudgets of the view (view_pdb.c): slots by key "ns/name"
 * and the live slots of each namespace (struct sv_pdbs, view_part_types.h).
 *
 * Calls: view_wait.h (a changed budget wakes the jobs that tried preemption).
 */
#ifndef MUSTER_SCHED_VIEW_PDB_H
#define MUSTER_SCHED_VIEW_PDB_H

#include <stddef.h>

#include "view_types.h"

/* Replace by key (takes ownership of b, even on failure); del by key "ns/name". */
void sched__view_put_pdb(struct sched_view *v, struct model_pdb *b);
void sched__view_del_pdb(struct sched_view *v, const char *key);
/* The live budget slots of namespace ns (borrowed until the next budget change), NULL with
 * *n = 0 when it has none. */
const int *sched__view_pdbs_in(const struct sched_view *v, const char *ns, size_t *n);
void sched__view_pdbs_free(struct sched_view *v);

#endif
