/*
 * store_dry.h - dry sessions (dry.c): a thread's transactions on a read snapshot whose
 * writes stay in memory. Part of store.h, which includes it.
 *
 * Between store_dry_begin and store_dry_end, every transaction this thread begins on st,
 * read or write, is one read snapshot taken by store_dry_begin, and its writes are kept in
 * the session's memory: later reads and iterations of the session see them over the
 * snapshot (every store_* call), a commit or an abort ends nothing, and
 * nothing reaches the file or any other thread. So code that reads and writes the store
 * (the scheduler's apply, delete and cycle) runs unchanged on a copy of the state that
 * costs only what it changes: what-ifs (scheduler/whatif.c). Three exceptions, read from the
 * snapshot alone: the pod indexes (store_pods_on_node, _of_group, _pending,
 * store_pod_groups_count), bulk loads (store_each_par, on the calling thread alone in a
 * session: it runs beside the live scheduler) and the audit verifier; writes to the
 * indexes are dropped. The session holds one LMDB read transaction, which delays the
 * map's growth until it ends, as any reader does: keep sessions short. Nested transactions
 * are refused (ERR_INVALID). One session per thread: ERR_INTERNAL when one is open.
 */
#ifndef MUSTER_STORE_DRY_H
#define MUSTER_STORE_DRY_H

struct store;
struct err;

int store_dry_begin(struct store *st, struct err *err);
/* Ends this thread's session on st and drops its writes. NULL-safe, no-op without one. */
void store_dry_end(struct store *st);

#endif
