/*
 * place_heap.c - the binpack pick without a scan over the nodes.
 *
 * Each shape keeps its candidates (place_pick.c) in a max-heap of (score, name rank) for
 * one view epoch: the top is the node the full scan would choose (the highest binpack
 * score, the first name on ties) once it is checked. Within an epoch usage only grows,
 * so a node's score only grows and a node that no longer fits never fits again (the
 * scan's own rule: it drops such a node from the candidates for the epoch). Every growth
 * of usage is logged in view.binds (sched__view_usage), so before a pick the shape
 * re-offers the nodes logged since its last pick with their new score; older entries of
 * the same node are found stale at the top (their score is not the node's) and fixed
 * there. A pick costs O(log nodes) per node that changed, where the scan cost O(nodes)
 * whenever the node chosen last filled up.
 */
#include "place_fit.h"
#include "place_heap.h"

static int above(const struct sv_hent *a, const struct sv_hent *b)
{
    return a->score > b->score || (a->score == b->score && a->rank < b->rank);
}

static void sift_down(struct sv_hent *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && above(&h[l], &h[m]))
            m = l;
        if (r < n && above(&h[r], &h[m]))
            m = r;
        if (m == i)
            return;
        struct sv_hent t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void push(struct sv_shape *sh, struct sv_hent e)
{
    XGROW(sh->heap, sh->nheap + 1, sh->capheap);
    size_t i = sh->nheap++;
    while (i > 0 && above(&e, &sh->heap[(i - 1) / 2])) {
        sh->heap[i] = sh->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    sh->heap[i] = e;
}

static void pop(struct sv_shape *sh)
{
    sh->heap[0] = sh->heap[--sh->nheap];
    sift_down(sh->heap, sh->nheap, 0);
}

static struct sv_hent entry(const struct sched_view *v, const struct sv_shape *sh, int ni)
{
    return (struct sv_hent){sched__score(v, &v->nodes[ni], sh), v->node_rank[ni], ni};
}

/* The heap of the shape's candidates (sh->cand, current at v->epoch). */
static void heap_build(struct sched_view *v, struct sv_shape *sh)
{
    size_t nn;
    sched__view_node_order(v, &nn); /* node_rank */
    XGROW(sh->heap, sh->ncand + 1, sh->capheap);
    for (size_t i = 0; i < sh->ncand; i++)
        sh->heap[i] = entry(v, sh, sh->cand[i]);
    sh->nheap = sh->ncand;
    for (size_t i = sh->nheap / 2; i-- > 0;)
        sift_down(sh->heap, sh->nheap, i);
    sh->heap_epoch = v->epoch;
    sh->heap_logpos = v->log_epoch == v->epoch ? v->nbinds : 0;
}

/* Re-offers the nodes whose usage grew since the shape's last pick. */
static void heap_catch_up(struct sched_view *v, struct sv_shape *sh)
{
    size_t end = v->log_epoch == v->epoch ? v->nbinds : 0;
    for (size_t k = sh->heap_logpos; k < end; k++) {
        int ni = v->binds[k];
        if (k > sh->heap_logpos && v->binds[k - 1] == ni)
            continue; /* its entry already has the current score */
        if (sh->nheap && sh->heap[0].node == ni) {
            sh->heap[0].score = sched__score(v, &v->nodes[ni], sh);
            sift_down(sh->heap, sh->nheap, 0);
        } else if (sched__fit_static(&v->nodes[ni], sh) == SCHED_FIT_OK) {
            push(sh, entry(v, sh, ni));
        }
    }
    sh->heap_logpos = end;
}

int sched__pick_heap(struct sched_view *v, struct sv_shape *sh, int pi)
{
    if (sh->heap_epoch != v->epoch)
        heap_build(v, sh);
    else
        heap_catch_up(v, sh);
    while (sh->nheap) {
        struct sv_hent *t = &sh->heap[0];
        const struct sv_node *n = &v->nodes[t->node];
        double s = sched__score(v, n, sh);
        if (s != t->score) { /* stale: an older entry of a node that changed */
            t->score = s;
            sift_down(sh->heap, sh->nheap, 0);
            continue;
        }
        if (sched__fit_res(v, n, sh, pi) >= 0) {
            pop(sh);
            continue;
        }
        return t->node;
    }
    sh->fail_epoch = v->epoch;
    return -1;
}
