/*
 * queue.h - fair share between queues (docs/queues.md): each queue's deserved share,
 * the order a cycle attempts jobs in, the capability an attempt must stay under, and
 * what reclaim may take from other queues.
 *
 * Files: queue_share.c (deserved shares and capabilities, once per cycle), queue_order.c
 * (the cycle's job order), preempt/preempt_reclaim.c
 * (reclaim budgets for preemption, declared in preempt.h); the queue documents of the API
 * are scheduler/queue_api.c, the why's queue part record/why_queue.c.
 *
 * The view keeps each queue's allocation and pending sum exact at all times
 * (view_queue.c); request (their sum), deserved and realcap are the cycle's, computed by
 * sched__queue_shares at its start.
 * A queue's dominant share is allocated / deserved of its largest ratio over the resources
 * it has or deserves ("pods" left out), with Volcano's rule for a resource it deserves none
 * of: 0 when it has none, else 1.
 */
#ifndef MUSTER_SCHED_QUEUE_H
#define MUSTER_SCHED_QUEUE_H

#include <jansson.h>

#include "view.h"

/* Fair share (queue_share.c). total: the allocatable of every schedulable node summed per
 * resource ([v->nres]). Per resource, each level of the tree water-fills its amount (the
 * cluster's for top-level queues, the parent's deserved below): every queue starts at its
 * guarantee, the rest goes by weight to the queues that want more, a queue taking no more
 * than its target (its request, raised to its guarantee, lowered to its capability) and
 * what it leaves going to the others. realcap: the capability, lowered to the parent's and
 * to the level's amount less the other queues' guarantees. */
void sched__queue_shares(struct sched_view *v, const int64_t *total, uint64_t cycle);
/* The queues' pending sums (view.h, sched__queue_pend; a cycle's request is alloc + pend)
 * against a scan of every pod: 0 when every live queue's equal the scan in every resource,
 * else -1 with the first difference in msg. A scan of the whole view: tests only. */
int sched__queue_pend_check(const struct sched_view *v, char *msg, size_t n);
/* The dominant share of queue q; *dom (may be NULL) the resource, -1 when none. */
double sched__queue_share(const struct sched_view *v, int q, int *dom);
/* Queues on q's chain (q, its parent, ...) that asked would take over their realcap:
 * returns the first such queue with *res its resource, or -1 when asked fits. asked is
 * [v->nres]. */
int sched__queue_over_cap(const struct sched_view *v, int q, const int64_t *asked, int *res);

/* 1 when q's allocation, and each ancestor's, is within its realcap in every resource
 * asked ([v->nres]) names, or in every resource when asked is NULL; with more (not NULL,
 * [v->nres]) added to each allocation (requests not in the view yet). */
int sched__queue_within_cap(const struct sched_view *v, int q, const int64_t *asked,
                            const int64_t *more);
/* 1 when queue q is a (or is the) descendant of queue top. */
int sched__queue_under(const struct sched_view *v, int q, int top);

/* The cycle's job order (queue_order.c). Built from the cycle's pending jobs: leaf queues
 * are visited by dominant share (lowest first; creation, then name, break ties) level by
 * level down the tree, the share re-read before every job, so a queue that places jobs
 * moves back; jobs inside a queue by priority, then DRF (the job's dominant share of the
 * cluster, lowest first), then creation, then id. Jobs whose queue does not exist or is
 * not a leaf come last (their attempts say why). Sets every queue's rank. */
struct sched_qorder;
struct sched_qorder *sched__qorder_new(struct sched_view *v, const int *jobs, size_t n,
                                       const int64_t *total);
/* The next job, -1 when none is left. */
int sched__qorder_next(struct sched_qorder *o);
void sched__qorder_free(struct sched_qorder *o);

#endif
